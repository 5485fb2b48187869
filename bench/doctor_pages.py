"""`verifybot doctor --page --json` over a folder of saved chat pages: one line per page.

For checking the driver against pages saved from the real sites (the browser's
"Save page as", or evidence HTML from runs/log/): each page is read offline by
the real command (a subprocess), and its line says the renderer, the page state,
whether the finished answer and the assistant's copy button were found, the
signals that MISSed, and the code blocks of the answer (language and length,
through the same extraction a run uses).

Run: .venv/bin/python bench/doctor_pages.py FOLDER [--site chatgpt|claude]
(for example ../shared/reference/real-pages/). Exit 1 when a page could not be read.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from verifybot_tui.core.answers.extract import extract  # noqa: E402


def verifybot() -> list[str]:
    exe = Path(sys.executable).with_name("verifybot")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "verifybot_tui"]


def one_line(folder: Path, page: Path, site: str) -> tuple[bool, str]:
    proc = subprocess.run([*verifybot(), "doctor", "--page", str(page), "--site", site,
                           "--json"], capture_output=True, text=True, timeout=180)
    name = page.relative_to(folder)
    try:
        got = json.loads(proc.stdout)
    except json.JSONDecodeError:
        why = (proc.stdout.strip() or proc.stderr.strip() or "no output").splitlines()[0]
        return False, f"{name}: FAIL (exit {proc.returncode}) {why[:160]}"
    misses = [k for k, v in got["signals"].items() if v == "MISS"]
    answer = got["answer"]
    if answer is None:
        said = "answer none"
    else:
        blocks = extract(answer).blocks
        code = ", ".join(f"{b.language or '?'} {len(b.code.rstrip(chr(10)))} chars"
                         for b in blocks) or "no code blocks"
        said = (f"answer {len(answer)} chars, {answer.count('`') and 'with' or 'no'} "
                f"backticks, code: {code}")
    return True, (f"{name}: renderer {got['renderer']}, state {got['state']}, finished "
                  f"{'yes' if got['finished'] else 'no'}, copy button "
                  f"{'yes' if got['copy_button'] else 'no'}, "
                  f"MISS {', '.join(misses) if misses else 'none'}; {said}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--site", default="chatgpt")
    args = ap.parse_args()
    pages = sorted(p for p in args.folder.rglob("*.html") if p.is_file())
    if not pages:
        print(f"no .html files under {args.folder}")
        return 1
    ok = True
    for page in pages:
        good, line = one_line(args.folder, page, args.site)
        ok &= good
        print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
