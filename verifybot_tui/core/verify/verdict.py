"""Decide what a run showed, and spot programs that are not meant to end.

The verdict trusts only what the target reported (exit status, output, files,
timeout), never the model's claims. The static analysis exists so a timeout
is explained instead of retried blindly: a server or a sensor-polling loop
that runs until killed is a design choice the feedback prompt must address.
"""

from __future__ import annotations

import ast
import re
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from verifybot_tui.core.base import python_scan
from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.base.ports import RunResult

if TYPE_CHECKING:
    from verifybot_tui.core.verify.criterion import Check
    from verifybot_tui.core.verify.sanity import Hit


@dataclass
class Verdict:
    status: str  # "success", "success_timeout", "failure", "timeout_silent", "timeout_stderr",
    #              "compile_error", "cancelled", "target_error"
    #              "criteria_unmet" (exited 0 but missed a success criterion)
    #              "silent" (exited 0 and printed nothing: the rules ask it to print)
    ok: bool  # success or success_timeout
    reason: str  # one plain-text sentence for the transcript and the feedback prompt
    long_running: list[str] = field(default_factory=list)
    retry_hint: str = ""  # an instruction for the feedback prompt, "" when none applies
    checks: list[Check] = field(default_factory=list)  # success criteria, met or not
    held: list[Hit] = field(default_factory=list)  # sanity checks that fired on a pass


# --------------------------------------------------------------------------- Python

_SERVE_CALLS = {
    "serve_forever": "serves forever (`serve_forever()`)",
    "run_forever": "runs an event loop forever (`run_forever()`)",
    "mainloop": "opens a GUI window (`mainloop()`): there is no display",
    "wait_for_edge": "waits for a GPIO edge (`wait_for_edge()`)",
    "wait_for_press": "waits for a button press (`wait_for_press()`)",
    "wait_for_release": "waits for a button release (`wait_for_release()`)",
    "wait_for_motion": "waits for motion (`wait_for_motion()`)",
    "wait_for_active": "waits for a GPIO input (`wait_for_active()`)",
    "run_app": "runs a web server (`run_app()`)",
}
_WEB_MODULES = {"flask", "fastapi", "uvicorn", "aiohttp", "bottle", "django", "tornado",
                "sanic", "quart", "dash", "streamlit", "gradio"}


def _call_name(node: ast.Call) -> tuple[str, str]:
    """(object, attribute) for ``obj.attr(...)``; ("", name) for ``name(...)``."""
    func = node.func
    if isinstance(func, ast.Attribute):
        value = func.value
        base = value.id if isinstance(value, ast.Name) else (
            value.attr if isinstance(value, ast.Attribute) else "")
        return base, func.attr
    if isinstance(func, ast.Name):
        return "", func.id
    return "", ""


def _always_true(test: ast.expr) -> bool:
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return isinstance(test.operand, ast.Constant) and not test.operand.value
    return False


def _exits(body: list[ast.stmt]) -> bool:
    """Whether a loop body can leave the loop: break, return, raise or sys.exit.

    Breaks of nested loops and code in nested functions do not count.
    """
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Return, ast.Raise)):
            return True
        if isinstance(node, ast.Call):
            base, name = _call_name(node)
            if name in ("exit", "quit", "_exit") or (base == "sys" and name == "exit"):
                return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            # A break in a nested loop leaves only that loop; a return still leaves.
            stack.extend(n for n in ast.walk(node) if isinstance(n, (ast.Return, ast.Raise)))
            stack.extend(n for n in ast.walk(node) if isinstance(n, ast.Call))
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _sleeps(body: list[ast.stmt]) -> bool:
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and _call_name(node)[1] in ("sleep", "sleep_ms",
                                                                     "sleep_us"):
                return True
    return False


class _Signs:
    """The Python signs of a program, gathered chunk by chunk (core.base.python_scan).

    Two signs depend on the whole program: a bare ``pause()`` or ``app.run()``
    on what it imports, an ``accept()`` on whether it loops forever somewhere.
    Those wait, as (line, sign, condition), until every chunk was seen.
    """

    words: tuple[str, ...] = ("while", "for", "import", "input", "stdin", "pause", "run",
                              "serve", "mainloop", "wait_for", "add_event_detect", "sleep",
                              "accept")

    def __init__(self) -> None:
        self.imported: set[str] = set()
        self.loops_forever = False
        self.signs: list[tuple[int, str]] = []
        self.pending: list[tuple[int, str, str]] = []

    def visit(self, tree: ast.Module, first_line: int) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self.imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                self.imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.While) and _always_true(node.test):
                self.loops_forever = True
            if isinstance(node, (ast.While, ast.For, ast.AsyncFor, ast.Call)):
                self._node(node, getattr(node, "lineno", 0) + first_line)

    def _node(self, node: ast.AST, line: int) -> None:
        if isinstance(node, ast.While) and _always_true(node.test) and not _exits(node.body):
            src = ast.unparse(node.test)
            if _sleeps(node.body):
                self.signs.append((line, f"an endless polling loop (`while {src}` with sleep, "
                                         f"line {line})"))
            else:
                self.signs.append((line, f"an endless `while {src}` loop (line {line})"))
        elif isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and \
                _call_name(node.iter) in (("itertools", "count"), ("", "count"),
                                          ("itertools", "cycle"), ("", "cycle")) \
                and not _exits(node.body):
            self.signs.append((line, f"an endless `for` loop over {_call_name(node.iter)[1]}() "
                                     f"(line {line})"))
        elif isinstance(node, (ast.For, ast.AsyncFor)) and ast.unparse(node.iter) == "sys.stdin":
            self.signs.append((line, f"reads stdin (`for ... in sys.stdin`, line {line}): "
                                     "stdin is closed"))
        elif isinstance(node, ast.Call):
            self._call(node, line)

    def _call(self, node: ast.Call, line: int) -> None:
        base, name = _call_name(node)
        if base == "" and name == "input":
            self.signs.append((line, f"waits for input() (line {line}): stdin is closed"))
        elif base == "stdin" and name in ("read", "readline", "readlines"):
            self.signs.append((line, f"reads stdin (`sys.stdin.{name}()`, line {line}): "
                                     "stdin is closed"))
        elif name == "pause" and base in ("signal", ""):
            sign = f"waits for a signal forever (`pause()`, line {line})"
            self.pending.append((line, sign, "signal" if base == "" else ""))
        elif name in _SERVE_CALLS:
            self.signs.append((line, f"{_SERVE_CALLS[name]} (line {line})"))
        elif name == "run" and (base in ("app", "uvicorn", "server", "socketio", "web")
                                or base.endswith("app")):
            self.pending.append((line, f"runs a web server (`{base}.run()`, line {line})", "web"))
        elif name == "add_event_detect":
            self.signs.append((line, f"reacts to GPIO events (`add_event_detect()`, line {line})"))
        elif name == "sleep" and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, (int, float)) \
                and node.args[0].value >= 60:
            self.signs.append((line, f"sleeps for {node.args[0].value:g} s (line {line})"))
        elif name == "accept" and base:
            self.pending.append((line, f"accepts connections in a loop (`accept()`, "
                                       f"line {line})", "loop"))

    def result(self) -> list[str]:
        holds = {"": True, "signal": bool({"signal", "gpiozero"} & self.imported),
                 "web": bool(self.imported & _WEB_MODULES), "loop": self.loops_forever}
        signs = self.signs + [(line, sign) for line, sign, need in self.pending if holds[need]]
        signs.sort()
        return list(dict.fromkeys(s for _, s in signs))


python_scan.register("long_running_signs", _Signs)


def _python_signs(code: str) -> list[str]:
    found = python_scan.collected(code, "long_running_signs")
    return list(found) if isinstance(found, list) else []


# --------------------------------------------------------------------------- C, JS, shell

def _blank_comments_and_strings(code: str, hash_comments: bool = False) -> str:
    """Comments and string contents turned to spaces, newlines kept for line numbers."""
    pattern = (r"#[^\n]*|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\])*\"" if hash_comments else
               r"//[^\n]*|/\*.*?\*/|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`(?:\\.|[^`\\])*`")

    def blank(m: re.Match[str]) -> str:
        text = m.group(0)
        keep = text[0] if text[0] in "'\"`" else ""
        inner = re.sub(r"[^\n]", " ", text[len(keep): len(text) - len(keep)])
        return keep + inner + keep

    return re.sub(pattern, blank, code, flags=re.S)


def _line_of(code: str, pos: int) -> int:
    return code.count("\n", 0, pos) + 1


def _brace_body(code: str, start: int) -> str:
    """The statement or ``{...}`` block that starts at or after ``start``."""
    i = start
    while i < len(code) and code[i] in " \t\n":
        i += 1
    if i >= len(code) or code[i] != "{":
        end = code.find(";", i)
        return code[i: end + 1 if end >= 0 else len(code)]
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return code[i: j + 1]
    return code[i:]


_C_EXIT_RE = re.compile(r"\b(?:break|return|exit|_exit|goto|abort|throw)\b")
_C_SLEEP_RE = re.compile(r"\b(?:sleep|usleep|nanosleep|sleep_for|delay|Sleep)\s*\(")


def _brace_language_signs(code: str, language: str) -> list[str]:
    text = _blank_comments_and_strings(code)
    signs: list[tuple[int, str]] = []
    loop_re = re.compile(r"\bwhile\s*\(\s*(?:1|true|TRUE|!0)\s*\)|\bfor\s*\(\s*;\s*;\s*\)")
    for m in loop_re.finditer(text):
        body = _brace_body(text, m.end())
        if _C_EXIT_RE.search(body):
            continue
        line = _line_of(text, m.start())
        head = re.sub(r"\s+", "", m.group(0)).replace("while(", "while (").replace(
            "for(", "for (")
        if _C_SLEEP_RE.search(body) or "setTimeout" in body:
            signs.append((line, f"an endless polling loop (`{head}` with sleep, line {line})"))
        else:
            signs.append((line, f"an endless `{head}` loop (line {line})"))
    patterns: list[tuple[str, str]]
    if language == "javascript":
        patterns = [
            (r"\bsetInterval\s*\(", "repeats forever with setInterval (line {n})"),
            (r"\.listen\s*\(", "listens for connections (`.listen()`, line {n})"),
            (r"\bprocess\.stdin\b", "reads stdin (`process.stdin`, line {n}): stdin is closed"),
            (r"\breadline\.createInterface\s*\(", "reads lines from stdin (`readline`, "
                                                  "line {n}): stdin is closed"),
            (r"\bprompt\s*\(", "waits for input (`prompt()`, line {n}): stdin is closed"),
        ]
    else:
        patterns = [
            (r"\bscanf\s*\(|\bgetchar\s*\(|\bfgets\s*\([^;]*\bstdin\b|\bgetline\s*\([^;]*\bstdin\b",
             "reads stdin (line {n}): stdin is closed"),
            (r"\bstd::cin\b|\bcin\s*>>|\bgetline\s*\(\s*(?:std::)?cin\b",
             "reads stdin (`cin`, line {n}): stdin is closed"),
            (r"\bread\s*\(\s*(?:0|STDIN_FILENO)\s*,", "reads stdin (`read(0, ...)`, line {n}): "
                                                      "stdin is closed"),
            (r"\baccept\s*\(", "accepts network connections (`accept()`, line {n})"),
            (r"\bpause\s*\(\s*\)", "waits for a signal forever (`pause()`, line {n})"),
        ]
    for pat, phrase in patterns:
        found = re.search(pat, text)
        if found:
            line = _line_of(text, found.start())
            signs.append((line, phrase.format(n=line)))
    signs.sort()
    return [s for _, s in signs]


_SH_LOOP_RE = re.compile(
    r"^[ \t]*(?:while|until)\s+(true|:|\[\s*1\s*\]|\[\[\s*1\s*\]\]|sleep\s+[\d.]+|false)"
    r"\s*(?:;\s*do\b|\n\s*do\b)", re.M)


def _shell_loop_body(lines: list[str], start: int) -> list[str]:
    depth = 0
    body: list[str] = []
    for line in lines[start:]:
        words = re.findall(r"(?:^|[;\s])(do|done)(?=$|[;\s])", line)
        for w in words:
            depth += 1 if w == "do" else -1
        body.append(line)
        if depth <= 0 and words:
            break
    return body


def _shell_signs(code: str) -> list[str]:
    text = _blank_comments_and_strings(code, hash_comments=True)
    lines = text.split("\n")
    signs: list[tuple[int, str]] = []
    for m in _SH_LOOP_RE.finditer(text):
        kind = m.group(1)
        if m.group(0).lstrip().startswith("until") and kind != "false":
            continue
        line = _line_of(text, m.start())
        body = "\n".join(_shell_loop_body(lines, line - 1))
        if re.search(r"\b(?:break|exit|return)\b", body):
            continue
        head = m.group(0).strip().split("\n")[0].split(";")[0]
        if kind.startswith("sleep") or re.search(r"\bsleep\b", body):
            signs.append((line, f"an endless polling loop (`{head}` with sleep, line {line})"))
        else:
            signs.append((line, f"an endless `{head}` loop (line {line})"))
    checks = [
        (r"(?:^[ \t]*|[;&|]\s*|\b(?:then|do|else)\s+)read\b(?![^\n]*<)",
         "reads stdin (`read`, line {n}): stdin is closed"),
        (r"\btail\s+(?:-\w*\s+)*-f\b|\btail\s+-F\b",
         "follows a file forever (`tail -f`, line {n})"),
        (r"\b(?:nc|netcat|ncat)\s+[^\n]*-l", "listens for connections (`nc -l`, line {n})"),
        (r"\bhttp\.server\b", "runs a web server (`http.server`, line {n})"),
        (r"\bsleep\s+infinity\b", "sleeps forever (`sleep infinity`, line {n})"),
    ]
    redirected_reads = re.search(r"\bdone\s*<", text) or re.search(r"\|\s*while\s+read\b", text)
    for pat, phrase in checks:
        for m in re.finditer(pat, text, re.M):
            if phrase.startswith("reads stdin") and (
                    redirected_reads or "|" in text[text.rfind("\n", 0, m.start()) + 1:m.start()]):
                continue
            line = _line_of(text, m.start())
            signs.append((line, phrase.format(n=line)))
            break
    signs.sort()
    return [s for _, s in signs]


def long_running_signs(code: str, language: str) -> list[str]:
    """Static signs that a program may not end by itself, as short phrases."""
    if language == "python":
        return _python_signs(code)
    if language in ("c", "cpp", "javascript"):
        return _brace_language_signs(code, language)
    if language == "bash":
        return _shell_signs(code)
    return []


# --------------------------------------------------------------------------- the verdict

def _last_line(text: str, limit: int = 200) -> str:
    lines = [ln.strip() for ln in text.strip().split("\n") if ln.strip()]
    if not lines:
        return ""
    line = lines[-1]
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _first_error(text: str, limit: int = 200) -> str:
    for ln in text.split("\n"):
        if re.search(r"\berror\b", ln, re.I):
            ln = ln.strip()
            return ln if len(ln) <= limit else ln[: limit - 3] + "..."
    return _last_line(text, limit)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _exit_description(code: int | None) -> str:
    if code is None:
        return "the program ended without an exit status"
    if code < 0:
        return f"the program was killed by {_signal_name(-code)}"
    if code > 128 and code - 128 < 65:
        killer = _signal_name(code - 128)
        return f"the program exited with status {code} (likely killed by {killer})"
    return f"the program exited with status {code}"


def judge(result: RunResult, long_running: list[str], *, timeout: float | None = None) -> Verdict:
    """What the run showed. ``timeout`` (the limit used) makes the reason exact."""
    signs = list(long_running)
    limit = timeout if timeout is not None else result.duration
    limit_text = f"{limit:.0f} s" if limit >= 1 else f"{limit:.1f} s"
    stdin_signs = [s for s in signs if "stdin" in s]
    loop_signs = [s for s in signs if s not in stdin_signs]

    def verdict(status: str, reason: str, hint: str = "") -> Verdict:
        ok = status in ("success", "success_timeout")
        if result.escaped:
            reason += (f"; {len(result.escaped)} process(es) escaped the program's process "
                       f"tree: {', '.join(result.escaped[:5])}")
        # The reason quotes the program (its last line, its file names): whatever
        # shows it, a terminal or a file, sees escapes as text, never acting.
        reason = one_line(reason)
        return Verdict(status, ok, reason, signs, "" if ok else hint)

    if result.target_error:
        return verdict("target_error", f"the target failed, not the program: {result.target_error}")
    if result.cancelled:
        return verdict("cancelled", "the run was stopped by the user before the program ended")
    if result.compile_failed:
        first = _first_error(result.stderr or result.stdout)
        return verdict("compile_error", "the program did not compile" + (
            f": {first}" if first else ""))
    if result.diagnosis:  # a firmware's fault, hang or silence, seen from outside it
        return verdict(_diagnosed_status(result), result.diagnosis)
    if not result.timed_out:
        return _exited(result, stdin_signs, verdict)

    finish_hint = (f"make the program finish on its own within {limit_text}, e.g. run the loop "
                   "a fixed number of times or stop after a set time, and print progress "
                   "as it goes (flush stdout after each line: it is a pipe, not a terminal)")
    if stdin_signs:
        finish_hint = ("do not wait for input: nobody types while it runs and stdin is closed; "
                       "use fixed values instead, then " + finish_hint[0].lower() + finish_hint[1:])
    design = f" (static analysis found: {'; '.join(signs)})" if signs else ""
    if result.stdout.strip() or result.files_changed:
        what = "producing output" if result.stdout.strip() else (
            "writing files (" + ", ".join(result.files_changed[:5]) + ")")
        return verdict("success_timeout",
                       f"ran until the {limit_text} timeout while {what}{design}: "
                       "a long-running program, treated as working")
    if result.stderr.strip():
        last = _last_line(result.stderr)
        return verdict("timeout_stderr",
                       f"the program wrote only to stderr and was stopped at the {limit_text} "
                       f"timeout{design}: {last}", finish_hint)
    if loop_signs:
        return verdict("timeout_silent",
                       f"the program runs endlessly by design ({'; '.join(loop_signs)}); it "
                       f"printed nothing before the {limit_text} timeout", finish_hint)
    if stdin_signs:
        return verdict("timeout_silent",
                       f"the program waited for input ({'; '.join(stdin_signs)}) and printed "
                       f"nothing before the {limit_text} timeout", finish_hint)
    return verdict("timeout_silent",
                   f"the program printed nothing and did not finish within the {limit_text} "
                   "timeout: it may be stuck or waiting for something", finish_hint)


def _diagnosed_status(result: RunResult) -> str:
    """A target's diagnosis (mcu) is a failure, a silent one when nothing came out."""
    return "timeout_silent" if result.timed_out and not result.stdout.strip() else "failure"


# The rule the first prompt states (prompts.RULES, rule 5), quoted back when it is broken.
PRINT_RULE = "It must finish by itself and print what it did."
SILENT_HINT = (f'The rules say: "{PRINT_RULE}" A program that prints nothing shows nothing '
               "was done (a fragment run alone, a function never called): make it run the "
               "task and print its results on standard output.")


def _exited(result: RunResult, stdin_signs: list[str],
            verdict: Callable[..., Verdict]) -> Verdict:
    """The verdict on a program that ended by itself (before any timeout)."""
    if result.exit_code == 0 and not result.stdout.strip():
        only = _last_line(result.stderr)
        return verdict("silent", "the program exited with status 0 but printed nothing"
                       + (f" on stdout (its stderr ends: {only})" if only else ""),
                       SILENT_HINT)
    if result.exit_code == 0:
        return verdict("success", "the program exited with status 0")
    reason = _exit_description(result.exit_code)
    last = _last_line(result.stderr)
    if last:
        reason += f": {last}"
    hint = ""
    if stdin_signs and re.search(r"EOF", result.stderr):
        reason += f" (static analysis found: {stdin_signs[0]})"
        hint = ("do not read from stdin: nobody types while it runs; use fixed values, "
                "command-line arguments or defaults instead")
    return verdict("failure", reason, hint)
