"""Reports of a recipe run that CI systems read: JUnit XML and JSON.

JUnit XML in the shape Jenkins, GitLab and GitHub test reporters accept (the
junit-10 schema): ``<testsuites>`` holding one ``<testsuite>`` with the counts,
one ``<testcase>`` per recipe. A recipe that ended FAILED, STOPPED, INTERRUPTED
or merely PASSED (not verified) is a ``<failure>``; an LLM, target or internal
error is an ``<error>``: the task was not tried to the end, which CI shows apart.
"""

from __future__ import annotations

import json
import socket
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from typing import Any

from verifybot_tui.core.base.outcome import Status

ERRORS = (Status.LLM_ERROR, Status.TARGET_ERROR, Status.ERROR)


@dataclass
class RecipeResult:
    name: str
    file: str
    status: str
    exit_code: int
    duration: float
    message: str = ""
    attempts: int = 0
    transcript: str = ""
    session: int | None = None
    judgements: list[str] = field(default_factory=list)
    target: str = ""
    started: float = 0.0  # wall clock (time.time()) when the recipe began and ended
    finished: float = 0.0

    @property
    def verified(self) -> bool:
        return self.status == Status.VERIFIED


def junit_xml(results: list[RecipeResult], *, suite: str = "verifybot recipes",
              started: float | None = None) -> str:
    failures = sum(1 for r in results if not r.verified and r.status not in ERRORS)
    errors = sum(1 for r in results if r.status in ERRORS)
    total = f"{sum(r.duration for r in results):.3f}"
    counts = {"tests": str(len(results)), "failures": str(failures), "errors": str(errors)}
    root = ET.Element("testsuites", {"name": "verifybot", **counts, "time": total})
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started or time.time()))
    ts = ET.SubElement(root, "testsuite", {
        "name": suite, **counts, "skipped": "0", "time": total, "timestamp": stamp,
        "hostname": socket.gethostname(), "id": "0", "package": "verifybot"})
    for r in results:
        case = ET.SubElement(ts, "testcase", {"name": r.name, "classname": "verifybot.recipe",
                                              "file": r.file, "time": f"{r.duration:.3f}"})
        if not r.verified:
            tag = "error" if r.status in ERRORS else "failure"
            el = ET.SubElement(case, tag, {"message": f"{r.status}: {r.message}"[:500],
                                           "type": str(r.status)})
            el.text = "\n".join([f"status: {r.status}", f"message: {r.message}",
                                 f"attempts: {r.attempts}", *r.judgements])
        out = ET.SubElement(case, "system-out")
        out.text = (f"status: {r.status}\nattempts: {r.attempts}\n"
                    f"transcript: {r.transcript}\n")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def json_report(results: list[RecipeResult]) -> dict[str, Any]:
    return {"total": len(results), "verified": sum(r.verified for r in results),
            "all_verified": all(r.verified for r in results),
            "recipes": [asdict(r) for r in results]}


def json_text(results: list[RecipeResult]) -> str:
    return json.dumps(json_report(results), indent=2)


def summary_table(results: list[RecipeResult]) -> str:
    rows = [("RECIPE", "STATUS", "ATTEMPTS", "SECONDS", "MESSAGE")]
    rows += [(r.name, str(r.status), str(r.attempts), f"{r.duration:.1f}", r.message[:60])
             for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True))
             + "  " + row[4] for row in rows]
    verified = sum(r.verified for r in results)
    lines.append(f"{verified} of {len(results)} verified")
    return "\n".join(line.rstrip() for line in lines)
