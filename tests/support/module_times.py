"""How long each test module took, so the four test processes end together.

pytest-xdist's loadscope hands whole modules to the workers in the order they
were collected; a long module handed out last runs alone at the end while the
other workers wait (23 s of a 433 s run, simulated from one run's times and
matching what was measured). tests/conftest.py puts the modules longest first,
from the times in tests/module_times.json. The order only changes when tests
end, never what they check; a module missing from the file is weighed by its
number of tests at the average test's time.

Refresh the file after a change that moves times a lot:
    scripts/test --junitxml=/tmp/times.xml
    .venv/bin/python tests/support/module_times.py /tmp/times.xml
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

TIMES = Path(__file__).resolve().parent.parent / "module_times.json"


def load() -> dict[str, list[float]]:
    """{module path: [seconds, tests]}, or nothing when the file is missing or broken."""
    try:
        data = json.loads(TIMES.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items()
            if isinstance(v, list) and len(v) == 2 and all(isinstance(x, int | float) for x in v)}


def weights(modules: dict[str, int]) -> dict[str, float]:
    """Seconds expected for each module in ``modules`` ({path: number of tests})."""
    known = load()
    tests = sum(n for _, n in known.values())
    per_test = sum(s for s, _ in known.values()) / tests if tests else 1.0
    return {m: known[m][0] if m in known else n * per_test for m, n in modules.items()}


def main(junit: str) -> None:
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for case in ET.parse(junit).iter("testcase"):
        module = case.get("classname", "").replace(".", "/") + ".py"
        seconds[module] += float(case.get("time") or 0)
        counts[module] += 1
    data = {m: [round(seconds[m], 1), counts[m]] for m in sorted(seconds)}
    lines = [f"  {json.dumps(m)}: {json.dumps(v)}" for m, v in data.items()]
    TIMES.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"{len(data)} modules, {sum(seconds.values()):.0f} s in all -> {TIMES}")


if __name__ == "__main__":
    main(sys.argv[1])
