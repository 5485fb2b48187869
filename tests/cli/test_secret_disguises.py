"""Secrets are cut in their common disguises too: a real `verifybot run` whose program
prints a planted fake secret spaced out, base64, hex and URL-encoded; none of them
reaches the feedback, the transcript, history.db or outputs/*.txt."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

from cli_runs import python_answer, replay, run_cli

from verifybot_tui.core.settings.secrets import Redactor, contains_secret

SECRET = "vb-Sec/ret+7f3a9c1e5d2b"  # held in VB_TEST_DEPLOY_TOKEN: env_deny matches *TOKEN*


def disguises(s: str) -> dict[str, str]:
    raw = s.encode()
    return {
        "spaced": " ".join(s),
        "dotted": ". ".join(s),
        "one per line": "\n".join(s),
        "base64": base64.b64encode(b"DEPLOY_TOKEN=" + raw).decode(),
        "base64 alone": base64.b64encode(raw).decode(),
        "base64 url-safe": base64.urlsafe_b64encode(b"K=" + raw).decode(),
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
        "hex bytes": " ".join(f"{b:02x}" for b in raw),
        "c array": ", ".join(f"0x{b:02X}" for b in raw),
        "escaped": "".join(f"\\x{b:02x}" for b in raw),
        "url": quote(s, safe=""),
    }


# The program rebuilds the secret from its reverse (not a disguise: the answer itself
# holds no form of it) and prints every disguise, then fails so that a feedback goes out.
PROGRAM = f"""
    import base64, sys, urllib.parse
    s = {SECRET[::-1]!r}[::-1]
    raw = s.encode()
    print("spaced", " ".join(s))
    print("dotted", ". ".join(s))
    print("lines"); print("\\n".join(s))
    print("b64", base64.b64encode(b"DEPLOY_TOKEN=" + raw).decode())
    print("b64alone", base64.b64encode(raw).decode())
    print("b64url", base64.urlsafe_b64encode(b"K=" + raw).decode())
    print("hex", raw.hex(), raw.hex().upper())
    print("bytes", " ".join(f"{{b:02x}}" for b in raw))
    print("carray", ", ".join(f"0x{{b:02X}}" for b in raw))
    print("escaped", "".join(f"\\\\x{{b:02x}}" for b in raw))
    print("url", urllib.parse.quote(s, safe=""))
    sys.exit(1)
"""


def leaks(ws: Path, forms: dict[str, str]) -> list[str]:
    found = []
    for p in ws.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            found += [f"{p.name}: {what}" for what, form in forms.items()
                      if form.encode() in data]
    return found


def test_no_disguise_of_a_secret_reaches_the_feedback_transcript_or_outputs(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    llm = replay(tmp_path, python_answer(PROGRAM), python_answer("print('ok')"))
    proc = run_cli("run", "show it", "--llm", llm, "--target", "local", "--yes",
                   "--max-retries", "1", "--workspace", str(ws), cwd=tmp_path,
                   env={"VB_TEST_DEPLOY_TOKEN": SECRET})
    assert proc.returncode == 0, proc.stderr
    forms = disguises(SECRET) | {"plain": SECRET}
    first = (ws / "outputs" / "show_it_1.txt").read_text()
    for label in ("spaced", "dotted", "b64", "b64alone", "b64url", "hex", "bytes", "carray",
                  "escaped", "url"):
        line = next(x for x in first.splitlines() if x.startswith(f"{label} "))
        assert "[redacted]" in line, line
    assert "lines\n[redacted]" in first
    # The feedback (the second prompt) went out with the output, cut.
    transcript = next((ws / "raw_md").glob("*.md")).read_text()
    assert "[redacted]" in transcript and "b64alone [redacted]" in transcript
    assert leaks(ws, forms) == []
    assert not any(form in proc.stdout + proc.stderr for form in forms.values())


def test_the_redactor_cuts_each_disguise_and_leaves_ordinary_text():
    cut = Redactor([SECRET])
    for what, form in disguises(SECRET).items():
        assert contains_secret(f"before {form} after", SECRET), what
        out = cut(f"before {form} after")
        assert out.startswith("before ") and out.endswith(" after"), (what, out)
        assert "[redacted]" in out, what
    ordinary = "v b S e c and 76 62 2d, base64 dmI= and Sec/ret later"
    assert cut(ordinary) == ordinary
