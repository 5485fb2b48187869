"""The compare page's charts, as inline SVG drawn here (the page loads nothing).

Three charts, each made to stay readable at 20 tasks x 6 LLMs:
- pass@k per LLM: equal curves must not hide each other, so each series is set a few
  pixels apart (a "dodge") with its own marker shape and dash, and named at its right
  end, the names pushed apart until no two overlap;
- time per task: horizontal bars, one band per task, so the task names stand on their
  own lines at the left and never collide however many tasks there are;
- failure kinds per LLM: stacked horizontal bars on a whole-number axis, the cells the
  infrastructure failed in a colour of their own.
Text is escaped; sizes are in the SVG's own units (the page scales it to fit).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

from verifybot_tui.core.base.ansi import one_line

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf")
DASHES = ("", "6 3", "2 2", "8 3 2 3", "4 4", "1 3")
KIND_COLOURS = {"compile": "#ff7f0e", "fault": "#d62728", "timeout": "#9467bd",
                "output": "#1f77b4", "judge": "#8c564b", "no_code": "#7f7f7f",
                "infrastructure": "#e6c229"}
FONT = 11
LINE = 14  # the height a label needs


def esc(text: object) -> str:
    return html.escape(one_line(str(text)), quote=True)


def colour(i: int) -> str:
    return COLOURS[i % len(COLOURS)]


def cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "…"


def frame(name: str, title: str, width: float, height: float, body: list[str]) -> str:
    return (f'<figure><figcaption>{esc(title)}</figcaption>'
            f'<svg class="chart" data-chart="{name}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'role="img" aria-label="{esc(title)}">' + "".join(body) + "</svg></figure>")


def text(x: float, y: float, words: str, anchor: str = "start", cls: str = "label",
         fill: str = "#222") -> str:
    return (f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" font-size="{FONT}" '
            f'text-anchor="{anchor}" fill="{fill}">{esc(words)}</text>')


def spread(wanted: list[float], low: float, high: float, gap: float = LINE) -> list[float]:
    """Label positions as near as can be to ``wanted``, no two closer than ``gap``, all
    between low and high (pushed down, then back up from the bottom)."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    placed = [0.0] * len(wanted)
    last = low - gap
    for i in order:
        last = max(wanted[i], last + gap)
        placed[i] = last
    over = max((placed[i] - high for i in order), default=0.0)
    if over > 0:
        nxt = high + gap
        for i in reversed(order):
            nxt = min(placed[i], nxt - gap)
            placed[i] = nxt
    return placed


def int_ticks(top: float) -> list[int]:
    """Whole-number ticks from 0 to at least ``top``: counts are never 1.1 or 2.2."""
    top = max(1, math.ceil(top))
    step = max(1, math.ceil(top / 5))
    return list(range(0, top + step, step))


def _marker(i: int, x: float, y: float, fill: str, llm: str, k: int) -> str:
    """A marker of its own shape per series: told apart without the colour."""
    tip = f"<title>{esc(llm)}: pass@{k}</title>"
    attrs = f'class="mark" data-llm="{esc(llm)}" fill="{fill}"'
    shape = i % 4
    if shape == 0:
        return f'<circle {attrs} cx="{x:.1f}" cy="{y:.1f}" r="4">{tip}</circle>'
    if shape == 1:
        return (f'<rect {attrs} x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8">'
                f"{tip}</rect>")
    if shape == 2:
        pts = f"{x:.1f},{y - 5:.1f} {x + 5:.1f},{y + 4:.1f} {x - 5:.1f},{y + 4:.1f}"
    else:
        pts = f"{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}"
    return f'<polygon {attrs} points="{pts}">{tip}</polygon>'


def pass_at_chart(k_max: int, summary: list[dict[str, Any]]) -> str:
    """pass@k (verified within k answers) per LLM, each series dodged and named."""
    left, top, bottom, label_w = 48, 16, 40, 150
    width, height = 640, 300
    plot_w, plot_h = width - left - label_w - 20, height - top - bottom
    n = max(1, len(summary))
    dodge = min(8.0, 40.0 / n)  # markers (10 px wide) of equal values stay apart
    body = [f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#444"/>',
            f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
            'stroke="#444"/>']
    for tick in range(0, 101, 25):
        y = top + plot_h * (1 - tick / 100)
        body.append(text(left - 6, y + 4, f"{tick}%", "end", "tick"))
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                    'stroke="#e5e5e5"/>')

    def x_of(k: int, i: float) -> float:
        base = left + 14 + ((plot_w - 28) * (k - 1) / (k_max - 1) if k_max > 1
                            else (plot_w - 28) / 2)
        return base + (i - (n - 1) / 2) * dodge

    for k in range(1, k_max + 1):
        body.append(text(x_of(k, (n - 1) / 2), top + plot_h + 16, str(k), "middle", "tick"))
    body.append(text(left + plot_w / 2, height - 6, "answers (k): verified within k",
                     "middle", "axis"))
    ends = []
    for i, row in enumerate(summary):
        share = row["pass_at"]
        pts = [(x_of(k, i), top + plot_h * (1 - share.get(str(k), 0.0)))
               for k in range(1, k_max + 1)]
        dash = DASHES[i % len(DASHES)]
        body.append(f'<polyline class="series" data-llm="{esc(row["llm"])}" points="'
                    + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + f'" fill="none" '
                    f'stroke="{colour(i)}" stroke-width="2"'
                    + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        body += [_marker(i, a, b, colour(i), row["llm"], k + 1) for k, (a, b) in enumerate(pts)]
        ends.append(pts[-1][1] if pts else top)
    for i, (row, y) in enumerate(zip(summary, spread([e + 4 for e in ends], top + 8,
                                                     top + plot_h + 4), strict=True)):
        last = summary[i]["pass_at"].get(str(k_max))
        words = cut(row["llm"], 16) + (f" {last * 100:.0f}%" if last is not None else "")
        body.append(text(left + plot_w + 10, y, words, fill=colour(i)))
    return frame("pass-at-k", "pass@k per LLM (verified within k answers)", width, height,
                 body)


def _legend(x: float, y: float, names: list[str], fills: list[str], width: float
            ) -> tuple[list[str], float]:
    """A legend that wraps to new lines rather than run into itself; returns its height."""
    out, cx, cy = [], x, y
    for name, fill in zip(names, fills, strict=True):
        words = cut(name, 18)
        w = 16 + 7 * len(words) + 12
        if cx + w > width and cx > x:
            cx, cy = x, cy + LINE
        out.append(f'<rect x="{cx:.1f}" y="{cy - 9:.1f}" width="10" height="10" fill="{fill}"/>')
        out.append(text(cx + 14, cy, words, cls="legend"))
        cx += w
    return out, cy - y + LINE


def time_chart(recipes: list[str], llms: list[str],
               value: Callable[[str, str], float | None]) -> str:
    """Median wall time per task, one band per task and a bar per LLM in it."""
    left, right, width = 170, 60, 640
    bar = 9.0
    band = max(LINE + 4, bar * len(llms) + 6)
    legend, legend_h = _legend(left, 14, llms, [colour(i) for i in range(len(llms))],
                               width - right)
    top = 14 + legend_h + 6
    plot_w = width - left - right
    height = top + band * len(recipes) + 34
    values = [v for r in recipes for s in llms if (v := value(r, s)) is not None]
    x_max = max(values + [1.0]) * 1.05
    body = legend + [f'<line x1="{left}" y1="{top}" x2="{left}" '
                     f'y2="{top + band * len(recipes)}" stroke="#444"/>']
    for tick in range(5):
        v = x_max * tick / 4
        x = left + plot_w * tick / 4
        body.append(text(x, top + band * len(recipes) + 14, f"{v:.0f}" if x_max >= 8
                         else f"{v:.1f}", "middle", "tick"))
    body.append(text(left + plot_w / 2, height - 4, "seconds", "middle", "axis"))
    for ri, r in enumerate(recipes):
        y0 = top + ri * band
        body.append(text(left - 6, y0 + band / 2 + 4, cut(r, 24), "end"))
        for si, s in enumerate(llms):
            v = value(r, s)
            w = plot_w * (v or 0.0) / x_max
            body.append(f'<rect class="bar" x="{left}" y="{y0 + 3 + si * bar:.1f}" '
                        f'width="{w:.1f}" height="{bar - 1:.1f}" fill="{colour(si)}">'
                        f'<title>{esc(f"{r} / {s}: " + ("-" if v is None else f"{v:.1f} s"))}'
                        '</title></rect>')
    return frame("time-per-task", "median wall time per task (s)", width, height, body)


def failure_chart(llms: list[str], counts: Callable[[str, str], int], kinds: list[str]) -> str:
    """Cells per failure kind per LLM, stacked, on a whole-number axis; infrastructure
    failures in their own colour, apart from the model's."""
    left, right, width = 170, 30, 640
    legend, legend_h = _legend(left, 14, [k.replace("_", " ") for k in kinds],
                               [KIND_COLOURS[k] for k in kinds], width - right)
    top = 14 + legend_h + 6
    band = LINE + 8
    plot_w = width - left - right
    height = top + band * len(llms) + 34
    ticks = int_ticks(max([sum(counts(s, k) for k in kinds) for s in llms] + [1]))
    x_max = ticks[-1]
    body = legend + [f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + band * len(llms)}" '
                     'stroke="#444"/>']
    for t in ticks:
        x = left + plot_w * t / x_max
        body.append(text(x, top + band * len(llms) + 14, str(t), "middle", "tick"))
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" '
                    f'y2="{top + band * len(llms)}" stroke="#e5e5e5"/>')
    body.append(text(left + plot_w / 2, height - 4, "cells", "middle", "axis"))
    for si, s in enumerate(llms):
        y0 = top + si * band
        body.append(text(left - 6, y0 + band / 2 + 4, cut(s, 24), "end"))
        x = float(left)
        for k in kinds:
            c = counts(s, k)
            if not c:
                continue
            w = plot_w * c / x_max
            tip = esc(f"{s}: {k.replace('_', ' ')} {c}")
            body.append(f'<rect class="bar" data-kind="{k}" x="{x:.1f}" y="{y0 + 3}" '
                        f'width="{w:.1f}" height="{band - 6}" fill="{KIND_COLOURS[k]}">'
                        f"<title>{tip}</title></rect>")
            x += w
    return frame("failure-kinds", "failure kinds per LLM (cells)", width, height, body)
