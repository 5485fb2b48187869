"""pass@k over independent samples, as HumanEval defines it, with a 95% interval.

``compare --repeat n`` runs each recipe n times with each LLM: n independent samples
of one task. Of those, c verified within the rounds allowed. The chance that at least
one of k samples drawn from the n verifies is the unbiased estimator of Chen et al.
(2021), ``1 - C(n-c, k) / C(n, k)``; averaged over the recipes it is the LLM's
pass@k. The plain share ("c of n") that a k of 1 gives is the same number.

The interval is Wilson's score interval (z = 1.96), taken over the samples that are
independent for k: with k draws per trial, n samples make n / k trials. For k = 1 it is
the textbook interval of a proportion; for k > 1 it widens as the trials get fewer,
which is the honest direction. Two LLMs whose intervals overlap are not shown apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054


def estimator(n: int, c: int, k: int) -> float:
    """``1 - C(n-c, k) / C(n, k)``: the chance that one of k of the n samples verified.
    k larger than n is capped at n (every sample drawn)."""
    if n <= 0 or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and n > 0 (n={n}, c={c})")
    k = min(k, n)
    if n - c < k:
        return 1.0
    # Python's integers are exact, and int / int rounds once: no drift from a product
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def wilson(p: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval of a share p over ``trials`` (which may be fractional)."""
    if trials <= 0:
        return (0.0, 1.0)
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return (max(0.0, centre - half), min(1.0, centre + half))


MOST_K = 10  # pass@k over samples is given up to pass@10, as HumanEval's tables do


def pass_at_samples(samples: Sequence[tuple[int, int]], k_max: int
                    ) -> dict[str, dict[str, float]] | None:
    """``{"k": {"value", "low", "high"}}`` over recipes given as ``(n, c)``, for k from 1
    to the rounds allowed or the fewest samples of a recipe, whichever is more (at most
    10); None when no recipe has two samples or more."""
    usable = [(n, c) for n, c in samples if n > 0]
    if not usable or max(n for n, _ in usable) < 2:
        return None
    out: dict[str, dict[str, float]] = {}
    top = min(MOST_K, max(k_max, min(n for n, _ in usable)))
    for k in range(1, top + 1):
        value = sum(estimator(n, c, k) for n, c in usable) / len(usable)
        trials = sum(n / min(k, n) for n, _ in usable)
        low, high = wilson(value, trials)
        out[str(k)] = {"value": round(value, 4), "low": round(low, 4), "high": round(high, 4)}
    return out
