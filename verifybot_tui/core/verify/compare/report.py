"""The compare matrix for people: a Markdown table and a self-contained HTML page.

``index.html`` must open offline, from a mail attachment or a CI artefact: no script,
no font, no stylesheet from anywhere; its charts are inline SVG drawn here (pass@k
curves per LLM, time per task, failure kinds). Every name in it (recipe, LLM, model,
message) is foreign text and is escaped.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.verify.compare import charts
from verifybot_tui.core.verify.compare.charts import esc as _e
from verifybot_tui.core.verify.compare.matrix import FAILURE_KINDS, INFRASTRUCTURE, Matrix

PASS_AT_NOTE = ("pass@k (rounds): the share of cells verified within k answers of the LLM, "
                "feedback between them; pass@k (samples, with --repeat n): the chance that "
                "one of k independent runs verifies, 1 - C(n-c,k)/C(n,k) per recipe, "
                "averaged, with a 95% Wilson interval. Cells the infrastructure failed "
                "are in neither.")


def _md(text: str) -> str:
    return one_line(text).replace("|", "\\|")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _num(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


def _samples(row: dict[str, Any], k: str) -> str:
    s = (row.get("pass_at_samples") or {}).get(k)
    return "-" if s is None else (f"{s['value'] * 100:.0f}% "
                                  f"[{s['low'] * 100:.0f}-{s['high'] * 100:.0f}]")


def _sample_ks(summary: list[dict[str, Any]]) -> list[str]:
    """The k of pass@k over samples that any LLM has, in order."""
    ks = {k for row in summary for k in (row.get("pass_at_samples") or {})}
    return sorted(ks, key=int)


def _tokens(t: dict[str, int] | None) -> str:
    return "-" if not t else f"{t['in']:,} / {t['out']:,}"


def _cost(c: float | None) -> str:
    return "-" if c is None else f"${c:.4f}"


def _check_lines(m: Matrix) -> list[str]:
    if m.check is None:
        return []
    if m.check.get("ok"):
        return ["", "Benchmark check: **passed** (every solution verified, every wrong "
                "answer failed for its stated reason)."]
    return ["", "Benchmark check: **failed**:", ""] + [f"- {_md(p)}"
                                                        for p in m.check.get("problems", [])]


def markdown(m: Matrix) -> str:
    data = m.to_json()
    ks = [str(k) for k in range(1, m.k_max + 1)]
    lines = [f"# Compare: {len(m.recipes)} recipes x {len(m.llms)} LLMs", "",
             f"Started {m.started}; repeat {m.repeat}"
             + (f"; VerifyBot {m.version}" if m.version else "") + ".", "", PASS_AT_NOTE]
    if m.interrupted:
        lines.append(f"Interrupted: {m.not_run} cell(s) did not finish and are left out.")
    lines += _check_lines(m)
    lines += ["", "## Per LLM", "",
              "| LLM | cells | verified | " + " | ".join(f"pass@{k}" for k in ks)
              + " | median s | first answer s | infrastructure | tokens in / out | cost "
              "| models |",
              "|---|---|---|" + "---|" * len(ks) + "---|---|---|---|---|---|"]
    for row in data["summary"]:
        lines.append(f"| {_md(row['llm'])} | {row['cells']} | {row['verified']} | "
                     + " | ".join(_pct(row["pass_at"].get(k)) for k in ks)
                     + f" | {_num(row['median_seconds'])} | "
                     f"{_num(row['median_first_answer_seconds'])} | "
                     f"{row['infrastructure_cells']} | {_tokens(row['tokens'])} | "
                     f"{_cost(row['cost'])} | {_md(', '.join(row['models'])) or '-'} |")
    sks = _sample_ks(data["summary"])
    if sks:
        lines += ["", "## pass@k over independent samples (95% interval)", "",
                  "| LLM | " + " | ".join(f"pass@{k}" for k in sks) + " |",
                  "|---|" + "---|" * len(sks)]
        lines += [f"| {_md(row['llm'])} | " + " | ".join(_samples(row, k) for k in sks)
                  + " |" for row in data["summary"]]
    infra = [c for c in data["cells"] if c.get("infrastructure")]
    if infra:
        lines += ["", "## Failed for the infrastructure (left out of pass@k)", ""]
        lines += [f"- {_md(c['recipe'])} x {_md(c['llm'])} #{c['run']}: "
                  f"{_md(c['infrastructure'])}" for c in infra]
    lines += ["", "## Per recipe and LLM", "",
              "| recipe | LLM | verified | " + " | ".join(f"pass@{k}" for k in ks)
              + " | answers to verified | median s | failures |",
              "|---|---|---|" + "---|" * len(ks) + "---|---|---|"]
    for row in data["by_recipe"]:
        fails = ", ".join(f"{k} {n}" for k, n in row["failures"].items() if n) or "-"
        lines.append(f"| {_md(row['recipe'])} | {_md(row['llm'])} | "
                     f"{row['verified']}/{row['cells']} | "
                     + " | ".join(_pct(row["pass_at"].get(k)) for k in ks)
                     + f" | {_num(row['mean_attempts_to_verified'])} | "
                     f"{_num(row['median_seconds'])} | {fails} |")
    lines += ["", "## Cells", "",
              "| recipe | LLM | run | status | answers | verified at | seconds | "
              "first answer s | start-up s | build s | model | failures |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in data["cells"]:
        lines.append(f"| {_md(c['recipe'])} | {_md(c['llm'])} | {c['run']} | {c['status']} | "
                     f"{c['attempts']} | {c['verified_at'] or '-'} | {c['seconds']:.1f} | "
                     f"{_num(c['first_answer_seconds'])} | {_num(c.get('startup_seconds'))} | "
                     f"{_num(c.get('build_seconds'))} | "
                     f"{_md(c['model']) or '-'} | {', '.join(c['failures']) or '-'} |")
    return "\n".join(lines) + "\n"


# -- the page ---------------------------------------------------------------------

STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px}
th{background:#f3f3f3}figure{display:inline-block;margin:0 1em 1em 0;max-width:100%}
svg.chart{max-width:100%;height:auto}figcaption{font-weight:bold;margin-bottom:4px}
.VERIFIED{color:#1a7f37}.FAILED{color:#c62828}.infra{color:#8a6d00}
.grid td{text-align:center;font-family:ui-monospace,monospace}
.grid td.v{background:#dff3e3}.grid td.f{background:#fde0e0}.grid td.i{background:#fff3c4}
.grid td.x{background:#eee}.grid a{color:inherit}.note{color:#555;max-width:60em}
.scroll{overflow-x:auto}"""

LETTERS = {"v": "V", "f": "F", "i": "I", "x": "-"}
GRID_KEY = ("V3: verified at answer 3 · F: failed (its first failure kind) · I: failed for "
            "the infrastructure, left out of pass@k · -: not run")


def _table(head: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    out = ["<div class=\"scroll\"><table><tr>"
           + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for i, row in enumerate(rows):
        cls = f' class="{_e(classes[i])}"' if classes else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>")
    return "".join(out) + "</table></div>"


def _href(path: str) -> str:
    """A link to a file of the report's folder, relative, each part escaped, and always
    starting "./": a compare.json from others may name a workspace "javascript:..."."""
    if not path:
        return ""
    return "./" + "/".join(_e(part) for part in PurePosixPath(path.replace("\\", "/")).parts)


def _grid_cell(cells: list[dict[str, Any]]) -> str:
    if not cells:
        return '<td class="x" title="not run">-</td>'
    parts = []
    for c in cells:
        kind = ("i" if c.get("infrastructure") else "v" if c["verified_at"] is not None
                else "f")
        word = LETTERS[kind] + (str(c["verified_at"]) if kind == "v" else "")
        why = (c.get("infrastructure") or (", ".join(c["failures"]) if kind == "f" else "")
               or c.get("message") or "")
        title = f"{c['status']} #{c['run']}: {why}".strip(": ")
        link = _href(c.get("transcript_link", ""))
        out = _href(c.get("output_link", ""))
        body = f'<a href="{link}">{word}</a>' if link else word
        if out:
            body += f' <a href="{out}" title="outputs">out</a>'
        parts.append(f'<span class="{kind}" title="{_e(title)}">{body}</span>')
    first = ("i" if all(c.get("infrastructure") for c in cells) else
             "v" if any(c["verified_at"] is not None for c in cells) else "f")
    return f'<td class="{first}">' + " ".join(parts) + "</td>"


def grid(data: dict[str, Any]) -> str:
    """Recipes down, LLMs across: each cell a colour and a letter (readable without the
    colour), linking to its transcript and its outputs."""
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for c in data["cells"]:
        by.setdefault((c["recipe"], c["llm"]), []).append(c)
    head = "<tr><th>recipe</th>" + "".join(f"<th>{_e(llm)}</th>" for llm in data["llms"])
    rows = [head + "</tr>"]
    for r in data["recipes"]:
        date = data.get("dates", {}).get(r)
        label = _e(r) + (f' <small>({_e(date)})</small>' if date else "")
        rows.append(f"<tr><th>{label}</th>"
                    + "".join(_grid_cell(by.get((r, llm), [])) for llm in data["llms"])
                    + "</tr>")
    return (f'<p class="note">{_e(GRID_KEY)}</p><div class="scroll"><table class="grid">'
            + "".join(rows) + "</table></div>")


def _with_links(data: dict[str, Any]) -> None:
    """Each cell's transcript and outputs folder, relative to the report's folder."""
    for c in data["cells"]:
        ws = c.get("workspace") or ""
        t = c.get("transcript") or ""
        if ws and not ws.startswith("/"):
            c["output_link"] = f"{ws}/outputs/"
            name = PurePosixPath(t.replace("\\", "/")).name
            c["transcript_link"] = f"{ws}/raw_md/{name}" if name else ""


def _check_html(m: Matrix) -> str:
    if m.check is None:
        return ""
    if m.check.get("ok"):
        return ("<p><b>Benchmark check passed</b>: every solution verified, every wrong "
                "answer failed for its stated reason.</p>")
    items = "".join(f"<li>{_e(p)}</li>" for p in m.check.get("problems", []))
    return f"<p><b>Benchmark check failed</b>:</p><ul>{items}</ul>"


def index_html(m: Matrix) -> str:
    data = m.to_json()
    _with_links(data)
    ks = [str(k) for k in range(1, m.k_max + 1)]
    sks = _sample_ks(data["summary"])
    summary = _table(["LLM", "cells", "verified", *[f"pass@{k}" for k in ks],
                      *[f"pass@{k} samples" for k in sks], "median s",
                      "first answer s", "infrastructure", "tokens in / out", "cost", "models"],
                     [[r["llm"], str(r["cells"]), str(r["verified"]),
                       *[_pct(r["pass_at"].get(k)) for k in ks],
                       *[_samples(r, k) for k in sks],
                       _num(r["median_seconds"]), _num(r["median_first_answer_seconds"]),
                       str(r["infrastructure_cells"]), _tokens(r["tokens"]), _cost(r["cost"]),
                       ", ".join(r["models"]) or "-"]
                      for r in data["summary"]])
    cells = _table(["recipe", "LLM", "run", "status", "answers", "verified at", "seconds",
                    "first answer s", "model", "failures", "message"],
                   [[c["recipe"], c["llm"], str(c["run"]), c["status"], str(c["attempts"]),
                     str(c["verified_at"] or "-"), f"{c['seconds']:.1f}",
                     _num(c["first_answer_seconds"]), c["model"] or "-",
                     ", ".join(c["failures"]) or "-",
                     (c.get("infrastructure") or c.get("message") or "")[:160]]
                    for c in data["cells"]],
                   ["infra" if c.get("infrastructure") else c["status"] for c in data["cells"]])
    note = (f"<p><b>Interrupted</b>: {m.not_run} cell(s) did not finish and are left "
            "out.</p>" if m.interrupted else "")
    rows = {(r["recipe"], r["llm"]): r for r in data["by_recipe"]}
    sums = {r["llm"]: r for r in data["summary"]}
    infra = {llm: row["infrastructure_cells"] for llm, row in sums.items()}
    kinds = [*FAILURE_KINDS, INFRASTRUCTURE]

    def count(llm: str, kind: str) -> int:
        return int(infra[llm] if kind == INFRASTRUCTURE else sums[llm]["failures"].get(kind, 0))

    figures = (charts.pass_at_chart(m.k_max, data["summary"])
               + charts.time_chart(m.recipes, m.llms,
                                   lambda r, s: rows.get((r, s), {}).get("median_seconds"))
               + charts.failure_chart(m.llms, count, kinds))
    version = f"; VerifyBot {_e(m.version)}" if m.version else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width\">"
            f"<title>VerifyBot compare {_e(m.started)}</title><style>{STYLE}</style></head>"
            f"<body><h1>Compare: {len(m.recipes)} recipes &times; {len(m.llms)} LLMs</h1>"
            f"<p>Started {_e(m.started)}; repeat {m.repeat}{version}.</p>{note}"
            f"{_check_html(m)}<p class=\"note\">{_e(PASS_AT_NOTE)}</p>"
            f"<h2>Recipes and LLMs</h2>{grid(data)}"
            f"<section id=\"charts\">{figures}</section><h2>Per LLM</h2>{summary}"
            f"<h2>Cells</h2>{cells}</body></html>\n")
