"""Success criteria: what a run must show beyond exiting 0, and the evidence either way.

A program that exits 0 while printing ``Apogee: 0.0 m`` is not a success. The user
states what success looks like (``--expect KIND:SPEC``, a criteria file, a recipe);
the criteria go to the LLM in the first prompt so it aims for them, every run is
checked against them, and each unmet criterion goes back in the feedback with the
evidence (the line seen, the value read) so the fix addresses the real symptom.

One grammar everywhere (CLI, criteria files, recipes): ``KIND:SPEC`` strings.

- ``contains:TEXT``          some line of the output holds TEXT
- ``not:TEXT``               no line of the output holds TEXT
- ``regex:PATTERN``          some line of the output matches PATTERN (re.search)
- ``regex-whole:PATTERN``    the whole output matches PATTERN (re.search, DOTALL|MULTILINE)
- ``exit:N``                 the exit status is N
- ``range:PATTERN:LO..HI``   PATTERN's first group (or whole match) on the first matching
                             line is a number within LO..HI (either bound may be empty)
- ``file:GLOB[:MINSIZE]``    a file matching GLOB exists in the run folder (at least
                             MINSIZE bytes)
- ``no-stderr``              nothing on stderr
- ``duration:<=S``           the run took at most S seconds
- ``compiles-clean``         the build passed without a word from the compiler: an error
                             fails it, and so does a warning (anything the compiler wrote
                             on stderr in a build that passed; with -Werror it is an error)

"The output" is the program's stdout as the target reported it (a very long output is
cut in the middle by the target; the whole output stays in outputs/).
"""

from __future__ import annotations

import math
import re
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.ports import RunResult
from verifybot_tui.core.base.toml_file import TomlFileError, read_toml
from verifybot_tui.core.verify.criterion import BARE_KINDS, Check, Criterion, last_line, quote
from verifybot_tui.core.verify.output_scan import (
    LINE_KINDS,
    REGEX_SECONDS,
    OutputScan,
    compile_pattern,
)

KINDS = ("contains", "not", "regex", "regex-whole", "exit", "range", "file", "no-stderr",
         "duration", "compiles-clean")

USAGE = ("expected KIND:SPEC with KIND one of contains, not, regex, regex-whole, exit, "
         "range (range:PATTERN:LO..HI), file (file:GLOB[:MINSIZE]), no-stderr, "
         "duration (duration:<=S), compiles-clean")


def _bad(text: str, why: str, where: str) -> ConfigError:
    return ConfigError(f"{where}: bad criterion {text!r}: {why}. {USAGE}")


def _number(text: str, what: str, full: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _bad(full, f"{what} {text!r} is not a number", where) from None
    if math.isnan(value):
        raise _bad(full, f"{what} is NaN", where)
    return value


def parse(text: str, where: str = "--expect") -> Criterion:
    """One ``KIND:SPEC`` string as a Criterion; a clear ConfigError (exit 2) if bad."""
    raw = text.strip()
    kind, sep, spec = raw.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise _bad(text, f"unknown kind {kind!r}", where)
    if kind in BARE_KINDS:
        if spec.strip():
            raise _bad(text, f"{kind} takes no value", where)
        return Criterion(kind)
    if not sep or not spec:
        raise _bad(text, f"{kind} needs a value after the colon", where)
    if kind in ("regex", "regex-whole"):
        _compile(spec, text, where)
        return Criterion(kind, spec)
    if kind == "exit":
        try:
            return Criterion(kind, spec, code=int(spec.strip()))
        except ValueError:
            raise _bad(text, f"exit status {spec!r} is not an integer", where) from None
    if kind == "range":
        pattern, colon, bounds = spec.rpartition(":")
        lo, dots, hi = bounds.partition("..")
        if not colon or not pattern or not dots or not (lo.strip() or hi.strip()):
            raise _bad(text, "range needs PATTERN:LO..HI "
                       "(e.g. range:Apogee: ([0-9.]+) m:100..5000)", where)
        if _compile(pattern, text, where).groups > 1:
            raise _bad(text, "the pattern may hold at most one group (the number)", where)
        low = _number(lo.strip(), "the low bound", text, where) if lo.strip() else None
        high = _number(hi.strip(), "the high bound", text, where) if hi.strip() else None
        if low is not None and high is not None and low > high:
            raise _bad(text, f"the low bound {low:g} is above the high bound {high:g}", where)
        return Criterion(kind, spec, low=low, high=high)
    if kind == "file":
        glob, colon, size = spec.rpartition(":")
        if colon and size.strip().isdigit():
            if not glob:
                raise _bad(text, "file needs a glob before the size", where)
            _inside_run_folder(glob, text, where)
            return Criterion(kind, spec, min_size=int(size))
        _inside_run_folder(spec, text, where)
        return Criterion(kind, spec)
    if kind == "duration":
        limit = spec.strip().removeprefix("<=").strip()
        value = _number(limit, "the limit", text, where)
        if value <= 0:
            raise _bad(text, "the limit must be above 0 seconds", where)
        return Criterion(kind, spec, high=value)
    # contains / not
    return Criterion(kind, spec)


def _inside_run_folder(glob: str, text: str, where: str) -> None:
    """file: looks in the run folder only: an absolute glob or a '..' would leave it."""
    parts = glob.replace("\\", "/").split("/")
    if glob.startswith(("/", "~")) or ".." in parts:
        raise _bad(text, "the file pattern must stay inside the run folder (no leading /, "
                   "~ or '..'): write it relative to where the program runs, e.g. "
                   "file:out/*.csv", where)


def _compile(pattern: str, text: str, where: str) -> Any:
    import regex  # loaded with the first pattern (see output_scan)

    try:
        return compile_pattern(pattern)
    except (regex.error, re.error, OverflowError, RecursionError, ValueError) as e:
        raise _bad(text, f"the regular expression does not compile ({e})", where) from None


def parse_all(texts: list[str], where: str = "--expect") -> list[Criterion]:
    return [parse(t, where) for t in texts]


def from_table(data: dict[str, Any], where: str) -> list[Criterion]:
    """The ``expect = ["KIND:SPEC", ...]`` list of a criteria file or a recipe."""
    value = data.get("expect", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: key 'expect' must be a list of strings like "
                          "\"contains:Apogee\"")
    return [parse(v, f"{where}: key 'expect'") for v in value]


def load_file(path: Path) -> tuple[list[Criterion], bool]:
    """A criteria file: ``expect = [...]`` and ``sanity = true|false``; (criteria, sanity)."""
    try:
        data = read_toml(path)
    except TomlFileError as e:
        raise ConfigError(f"{path}: {e}") from None
    unknown = sorted(set(data) - {"expect", "sanity"})
    if unknown:
        raise ConfigError(f"{path}: unknown key '{unknown[0]}' (a criteria file holds "
                          "expect = [\"KIND:SPEC\", ...] and sanity = true|false)")
    sanity = data.get("sanity", True)
    if not isinstance(sanity, bool):
        raise ConfigError(f"{path}: key 'sanity' must be true or false")
    return from_table(data, str(path)), sanity


# -- evaluation ------------------------------------------------------------------


def _check_file(c: Criterion, result: RunResult, run_dir: Path | None) -> Check:
    """Only what the program wrote or changed during the run counts (files_changed, inside
    the run folder): never the program's own source, never a file that was there before."""
    glob = c.pattern
    names = [n for n in result.files_changed if PurePosixPath(n).match(glob)]
    if not names:
        return Check(c, False, f"no file matching {glob} among the {len(result.files_changed)} "
                     "files the run wrote or changed in its folder")
    if run_dir is None or not run_dir.is_dir():  # a remote run folder: sizes unknown
        if c.min_size:
            return Check(c, False, f"{names[0]} exists but its size cannot be read on this "
                         "target")
        return Check(c, True, names[0])
    sizes = [(n, _size(run_dir / n)) for n in names]
    big = [(n, size) for n, size in sizes if size >= c.min_size]
    if not big:
        shown = ", ".join(f"{n} ({size} bytes)" for n, size in sizes[:5])
        return Check(c, False, f"found only {shown}, smaller than {c.min_size} bytes")
    return Check(c, True, f"{big[0][0]} ({big[0][1]} bytes)")


def _size(path: Path) -> int:
    """A file's size, not following a link out of the folder (-1: gone or not a file)."""
    try:
        st = path.lstat()
    except OSError:
        return -1
    return st.st_size if stat.S_ISREG(st.st_mode) else -1

def _regex_whole(c: Criterion, result: RunResult, lines: list[str],
                 run_dir: Path | None, whole: str | None = None) -> Check:
    import regex

    pattern = compile_pattern(c.spec, regex.S | regex.M)
    try:
        m = pattern.search(result.stdout if whole is None else whole, timeout=REGEX_SECONDS,
                           concurrent=True)
    except TimeoutError:
        return Check(c, False, f"the regular expression took more than {REGEX_SECONDS:g} s "
                     "on the output: it backtracks too much; simplify it")
    if m:
        first = m.group(0).splitlines()[0] if m.group(0) else ""
        return Check(c, True, f"matched {quote(first)}")
    return Check(c, False, f"the output does not match; {last_line(lines)}")


def _exit(c: Criterion, result: RunResult, lines: list[str], run_dir: Path | None) -> Check:
    code = result.exit_code
    seen = "no exit status (killed or never started)" if code is None else f"exit status {code}"
    return Check(c, code == c.code, seen)


def _file(c: Criterion, result: RunResult, lines: list[str], run_dir: Path | None) -> Check:
    return _check_file(c, result, run_dir)


def _no_stderr(c: Criterion, result: RunResult, lines: list[str],
               run_dir: Path | None) -> Check:
    err = [line for line in result.stderr.splitlines() if line.strip()]
    if err:
        return Check(c, False, f"stderr line 1: {quote(err[0])} ({len(err)} lines)")
    return Check(c, True, "stderr was empty")


def _duration(c: Criterion, result: RunResult, lines: list[str],
              run_dir: Path | None) -> Check:
    limit = c.high or 0.0
    return Check(c, result.duration <= limit, f"took {result.duration:.2f} s")


def _compiles_clean(c: Criterion, result: RunResult, builds: bool) -> Check:
    if not builds:
        return Check(c, False, "there was no compile step (the language is not compiled): "
                     "compiles-clean cannot hold; drop it for this language")
    if result.compile_failed:
        return Check(c, False, "the build failed: "
                     + quote(_telling_line(result.stderr + "\n" + result.stdout)))
    if result.build_stderr.strip():
        return Check(c, False, f"the compiler warned: {quote(_telling_line(result.build_stderr))}")
    if result.build_unchecked:
        return Check(c, False, "could not tell whether the recipe's compiler and flags held: "
                     + result.build_unchecked)
    return Check(c, True, "the build passed")


def _telling_line(text: str) -> str:
    """The compiler's first warning or error line, else its first line."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return next((ln for ln in lines if re.search(r"\b(error|warning)\b", ln, re.I)),
                lines[0] if lines else "")


_CHECKS = {
    "exit": _exit, "file": _file, "no-stderr": _no_stderr,
    "duration": _duration,
}


def check(c: Criterion, result: RunResult, run_dir: Path | None = None) -> Check:
    """One criterion against one run: each kind has its own small checker."""
    return evaluate([c], result, run_dir)[0]


def evaluate(criteria: list[Criterion], result: RunResult, run_dir: Path | None = None,
             scan: OutputScan | None = None, builds: bool = True) -> list[Check]:
    """Every criterion against one run, in the order given.

    ``scan``: the whole stdout as it streamed (the loop's); without it the run's kept
    stdout is scanned here. The line kinds are decided by the scan, line by line.
    ``builds``: the language has a compile step (compiles-clean fails without one).
    """
    if scan is None:
        scan = OutputScan(criteria)
        scan.feed(result.stdout)
    line_checks = iter(scan.result())
    last = list(scan.last)
    whole = scan.whole_text if scan.keep_whole else None
    checks = []
    for c in criteria:
        if c.kind in LINE_KINDS:  # decided line by line by the scan
            checks.append(next(line_checks))
        elif c.kind == "regex-whole":
            checks.append(_regex_whole(c, result, last, run_dir, whole))
        elif c.kind == "compiles-clean":
            checks.append(_compiles_clean(c, result, builds or result.compile_failed))
        else:
            checks.append(_CHECKS[c.kind](c, result, last, run_dir))
    return checks


def unmet(checks: list[Check]) -> list[Check]:
    return [ch for ch in checks if not ch.met]


# -- plain text for the LLM --------------------------------------------------------


def prompt_text(criteria: list[Criterion]) -> str:
    """The criteria as the first prompt tells them (plain text, no markdown)."""
    if not criteria:
        return ""
    lines = [f"- {c.describe()}" for c in criteria]
    return ("The run is checked against these success criteria; all must hold:\n"
            + "\n".join(lines))


def feedback_text(checks: list[Check]) -> str:
    """Each unmet criterion with its evidence, for the feedback prompt."""
    missed = unmet(checks)
    if not missed:
        return ""
    lines = [f"- {ch.criterion.describe()}: NOT MET. Seen: {ch.evidence}" for ch in missed]
    return "These success criteria are not met:\n" + "\n".join(lines)


def summary(checks: list[Check]) -> str:
    """One line per criterion (met or not) for transcripts and front ends."""
    return "\n".join(f"- [{'met' if ch.met else 'NOT MET'}] {ch.criterion.text}: {ch.evidence}"
                     for ch in checks)
