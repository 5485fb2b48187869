"""The compare matrix for people: a Markdown table and a self-contained HTML page.

``index.html`` must open offline, from a mail attachment or a CI artefact: no script,
no font, no stylesheet from anywhere; its charts are inline SVG drawn here (pass@k
curves per LLM, time per task, failure kinds). Every name in it (recipe, LLM, model,
message) is foreign text and is escaped.
"""

from __future__ import annotations

import html
from typing import Any

from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.verify.matrix import FAILURE_KINDS, Matrix

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf")
KIND_COLOURS = {"compile": "#ff7f0e", "fault": "#d62728", "timeout": "#9467bd",
                "output": "#1f77b4", "judge": "#8c564b"}


def _md(text: str) -> str:
    return one_line(text).replace("|", "\\|")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _num(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


def markdown(m: Matrix) -> str:
    data = m.to_json()
    ks = [str(k) for k in range(1, m.k_max + 1)]
    lines = [f"# Compare: {len(m.recipes)} recipes x {len(m.llms)} LLMs", "",
             f"Started {m.started}; repeat {m.repeat}."]
    if m.interrupted:
        lines.append(f"Interrupted: {m.not_run} cell(s) did not finish and are left out.")
    lines += ["", "## Per LLM", "",
              "| LLM | cells | verified | " + " | ".join(f"pass@{k}" for k in ks)
              + " | median s | first answer s | models |",
              "|---|---|---|" + "---|" * len(ks) + "---|---|---|"]
    for row in data["summary"]:
        lines.append(f"| {_md(row['llm'])} | {row['cells']} | {row['verified']} | "
                     + " | ".join(_pct(row["pass_at"].get(k)) for k in ks)
                     + f" | {_num(row['median_seconds'])} | "
                     f"{_num(row['median_first_answer_seconds'])} | "
                     f"{_md(', '.join(row['models'])) or '-'} |")
    lines += ["", "## Per recipe and LLM", "",
              "| recipe | LLM | verified | " + " | ".join(f"pass@{k}" for k in ks)
              + " | attempts to verified | median s | failures |",
              "|---|---|---|" + "---|" * len(ks) + "---|---|---|"]
    for row in data["by_recipe"]:
        fails = ", ".join(f"{k} {n}" for k, n in row["failures"].items() if n) or "-"
        lines.append(f"| {_md(row['recipe'])} | {_md(row['llm'])} | "
                     f"{row['verified']}/{row['cells']} | "
                     + " | ".join(_pct(row["pass_at"].get(k)) for k in ks)
                     + f" | {_num(row['mean_attempts_to_verified'])} | "
                     f"{_num(row['median_seconds'])} | {fails} |")
    lines += ["", "## Cells", "",
              "| recipe | LLM | run | status | attempts | verified at | seconds | "
              "first answer s | model | failures |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for c in data["cells"]:
        lines.append(f"| {_md(c['recipe'])} | {_md(c['llm'])} | {c['run']} | {c['status']} | "
                     f"{c['attempts']} | {c['verified_at'] or '-'} | {c['seconds']:.1f} | "
                     f"{_num(c['first_answer_seconds'])} | {_md(c['model']) or '-'} | "
                     f"{', '.join(c['failures']) or '-'} |")
    return "\n".join(lines) + "\n"


# -- charts -----------------------------------------------------------------------

W, H, LEFT, BOTTOM, TOP, RIGHT = 520, 260, 48, 36, 16, 150


def _e(text: object) -> str:
    return html.escape(one_line(str(text)), quote=True)


def _frame(name: str, title: str, body: list[str]) -> str:
    return (f'<figure><figcaption>{_e(title)}</figcaption>'
            f'<svg class="chart" data-chart="{name}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" '
            f'aria-label="{_e(title)}">' + "".join(body) + "</svg></figure>")


def _axes(y_max: float, y_label: str, fmt: str = "{:g}") -> list[str]:
    plot_h = H - TOP - BOTTOM
    out = [f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}" stroke="#444"/>',
           f'<line x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}" '
           'stroke="#444"/>',
           f'<text x="4" y="{TOP - 4}" font-size="10">{_e(y_label)}</text>']
    for i in range(5):
        v = y_max * i / 4
        y = H - BOTTOM - plot_h * i / 4
        out.append(f'<text x="{LEFT - 4}" y="{y + 3:.1f}" font-size="10" '
                   f'text-anchor="end">{_e(fmt.format(v))}</text>')
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" '
                   'stroke="#ddd"/>')
    return out


def _legend(names: list[str], colours: list[str]) -> list[str]:
    out = []
    for i, (name, colour) in enumerate(zip(names, colours, strict=True)):
        y = TOP + 14 * i
        out.append(f'<rect x="{W - RIGHT + 10}" y="{y}" width="10" height="10" '
                   f'fill="{colour}"/><text x="{W - RIGHT + 24}" y="{y + 9}" '
                   f'font-size="10">{_e(name[:24])}</text>')
    return out


def _colour(i: int) -> str:
    return COLOURS[i % len(COLOURS)]


def pass_at_chart(m: Matrix, summary: list[dict[str, Any]]) -> str:
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    k_max = m.k_max
    body = _axes(1.0, "verified share", "{:.0%}")

    def x(k: int) -> float:
        return LEFT + (plot_w * (k - 1) / (k_max - 1) if k_max > 1 else plot_w / 2)

    for k in range(1, k_max + 1):
        body.append(f'<text x="{x(k):.1f}" y="{H - BOTTOM + 14}" font-size="10" '
                    f'text-anchor="middle">{k}</text>')
    body.append(f'<text x="{LEFT + plot_w / 2}" y="{H - 6}" font-size="10" '
                'text-anchor="middle">attempts (k)</text>')
    for i, row in enumerate(summary):
        pts = [(x(k), H - BOTTOM - plot_h * row["pass_at"].get(str(k), 0.0))
               for k in range(1, k_max + 1)]
        path = " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)
        body.append(f'<polyline class="series" data-llm="{_e(row["llm"])}" points="{path}" '
                    f'fill="none" stroke="{_colour(i)}" stroke-width="2"/>')
        body += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{_colour(i)}"/>'
                 for a, b in pts]
    body += _legend([r["llm"] for r in summary], [_colour(i) for i in range(len(summary))])
    return _frame("pass-at-k", "pass@k per LLM", body)


def _bars(name: str, title: str, groups: list[str], series: list[str],
          value: Any, colours: list[str], y_label: str) -> str:
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    top = max([value(g, s) or 0.0 for g in groups for s in series] + [0.0])
    y_max = top * 1.1 if top > 0 else 1.0
    body = _axes(y_max, y_label, "{:.1f}")
    slot = plot_w / max(1, len(groups))
    bar = max(2.0, (slot - 8) / max(1, len(series)))
    for gi, g in enumerate(groups):
        x0 = LEFT + gi * slot + 4
        body.append(f'<text x="{x0 + (slot - 8) / 2:.1f}" y="{H - BOTTOM + 14}" font-size="10" '
                    f'text-anchor="middle">{_e(g[:16])}</text>')
        for si, s in enumerate(series):
            v = value(g, s) or 0.0
            h = plot_h * v / y_max
            body.append(f'<rect class="bar" x="{x0 + si * bar:.1f}" '
                        f'y="{H - BOTTOM - h:.1f}" width="{bar - 1:.1f}" height="{h:.1f}" '
                        f'fill="{colours[si]}"><title>{_e(f"{g} / {s}: {v:g}")}</title></rect>')
    body += _legend(series, colours)
    return _frame(name, title, body)


def time_chart(m: Matrix, by_recipe: list[dict[str, Any]]) -> str:
    rows = {(r["recipe"], r["llm"]): r for r in by_recipe}
    return _bars("time-per-task", "median wall time per task (s)", m.recipes, m.llms,
                 lambda g, s: rows.get((g, s), {}).get("median_seconds"),
                 [_colour(i) for i in range(len(m.llms))], "seconds")


def failure_chart(m: Matrix, summary: list[dict[str, Any]]) -> str:
    rows = {r["llm"]: r for r in summary}
    return _bars("failure-kinds", "failure kinds per LLM (cells)", m.llms, list(FAILURE_KINDS),
                 lambda g, s: float(rows[g]["failures"][s]),
                 [KIND_COLOURS[k] for k in FAILURE_KINDS], "cells")


STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px}
th{background:#f3f3f3}figure{display:inline-block;margin:0 1em 1em 0}
figcaption{font-weight:bold;margin-bottom:4px}.VERIFIED{color:#1a7f37}
.FAILED,.ERROR,.LLM_ERROR,.TARGET_ERROR{color:#c62828}"""


def _table(head: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for i, row in enumerate(rows):
        cls = f' class="{_e(classes[i])}"' if classes else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>")
    return "".join(out) + "</table>"


def index_html(m: Matrix) -> str:
    data = m.to_json()
    ks = [str(k) for k in range(1, m.k_max + 1)]
    summary = _table(["LLM", "cells", "verified", *[f"pass@{k}" for k in ks], "median s",
                      "first answer s", "models"],
                     [[r["llm"], str(r["cells"]), str(r["verified"]),
                       *[_pct(r["pass_at"].get(k)) for k in ks], _num(r["median_seconds"]),
                       _num(r["median_first_answer_seconds"]), ", ".join(r["models"]) or "-"]
                      for r in data["summary"]])
    cells = _table(["recipe", "LLM", "run", "status", "attempts", "verified at", "seconds",
                    "first answer s", "model", "failures", "workspace"],
                   [[c["recipe"], c["llm"], str(c["run"]), c["status"], str(c["attempts"]),
                     str(c["verified_at"] or "-"), f"{c['seconds']:.1f}",
                     _num(c["first_answer_seconds"]), c["model"] or "-",
                     ", ".join(c["failures"]) or "-", c["workspace"]]
                    for c in data["cells"]], [c["status"] for c in data["cells"]])
    note = (f"<p><b>Interrupted</b>: {m.not_run} cell(s) did not finish and are left "
            "out.</p>" if m.interrupted else "")
    charts = (pass_at_chart(m, data["summary"]) + time_chart(m, data["by_recipe"])
              + failure_chart(m, data["summary"]))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>VerifyBot compare {_e(m.started)}</title><style>{STYLE}</style></head>"
            f"<body><h1>Compare: {len(m.recipes)} recipes &times; {len(m.llms)} LLMs</h1>"
            f"<p>Started {_e(m.started)}; repeat {m.repeat}.</p>{note}"
            f"<section id=\"charts\">{charts}</section><h2>Per LLM</h2>{summary}"
            f"<h2>Cells</h2>{cells}</body></html>\n")
