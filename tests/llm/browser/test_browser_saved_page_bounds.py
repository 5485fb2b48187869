"""`doctor --page` bounds: a saved page is someone else's file, opened offline.

A file over the size cap is refused with what to give instead; nothing the page
names is fetched (frames over http and https, a preconnect hint, an image, a
stylesheet: a loopback listener counts every connection attempt, and must see
none); every text the page puts in the report is shown escaped, in the lines and
in --json, so an escape sequence in a saved page cannot act on a terminal.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from project import verifybot_cmd

from verifybot_tui.llm.browser.saved_page import MAX_PAGE_BYTES

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

ESC_ANSWER = "Done \x1b[2J\x1b]52;c;cm0gLXJm\x07 here \u202eevil"


def claude_page(extra: str = "", answer: str = "Hello") -> str:
    """A claude.ai 2025-26 shaped page: body.font-ui, the bar under the grandparent."""
    return ('<!doctype html><html lang="en"><body class="font-ui">'
            '<div data-test-render-count="1"><div class="group">'
            '<div data-testid="user-message"><p>hi</p></div></div></div>'
            '<div data-test-render-count="1"><div class="group"><div class="contents">'
            '<div data-is-streaming="false" class="group relative">'
            '<div class="font-claude-response">'
            f'<div class="standard-markdown"><p>{answer}</p></div></div></div></div>'
            '<div role="group" aria-label="Message actions"><button type="button" '
            'data-testid="action-bar-copy" aria-label="Copy">c</button></div></div></div>'
            f'{extra}<fieldset><div role="textbox" data-testid="chat-input" '
            'contenteditable="true" class="ProseMirror"><p></p></div></fieldset></body></html>')


def doctor(page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), "doctor", "--page", str(page), "--site", "claude",
                           *extra], capture_output=True, text=True, timeout=150,
                          stdin=subprocess.DEVNULL)


class Listener:
    """A loopback port that counts every connection made to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


def test_a_page_over_the_size_cap_is_refused_with_what_to_give(tmp_path: Path) -> None:
    page = tmp_path / "huge.html"
    with page.open("wb") as f:
        f.truncate(MAX_PAGE_BYTES + 1)
    proc = doctor(page)
    assert proc.returncode == 2
    assert f"a chat page is at most {MAX_PAGE_BYTES // 1048576} MB" in proc.stdout
    assert "Save page as" in proc.stdout


def test_nothing_the_page_names_is_fetched_frames_included(tmp_path: Path) -> None:
    listener = Listener()
    try:
        base = f"127.0.0.1:{listener.port}"
        extra = (f'<iframe src="http://{base}/frame"></iframe>'
                 f'<iframe src="https://{base}/frame2"></iframe>'
                 f'<iframe srcdoc="<img src=http://{base}/inner.png>"></iframe>'
                 f'<link rel="preconnect" href="https://{base}">'
                 f'<link rel="dns-prefetch" href="https://{base}">'
                 f'<link rel="stylesheet" href="http://{base}/s.css">'
                 f'<img src="http://{base}/i.png"><video src="http://{base}/v.mp4"></video>'
                 f'<object data="http://{base}/o"></object>'
                 f'<embed src="http://{base}/e">')
        page = tmp_path / "frames.html"
        page.write_text(claude_page(extra), encoding="utf-8")
        proc = doctor(page, "--json")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert json.loads(proc.stdout)["answer"] == "Hello"
    finally:
        listener.close()
    assert listener.accepted == 0


def test_escape_sequences_from_the_page_are_shown_escaped(tmp_path: Path) -> None:
    page = tmp_path / "esc.html"
    page.write_text(claude_page(answer=ESC_ANSWER), encoding="utf-8")
    lines = doctor(page)
    assert lines.returncode == 0, lines.stdout + lines.stderr
    assert "\x1b" not in lines.stdout and "\u202e" not in lines.stdout
    assert "Done \\x1b[2J\\x1b]52;c;cm0gLXJm\\x07 here \\u202eevil" in lines.stdout
    raw = doctor(page, "--json")
    assert "\x1b" not in raw.stdout and "\u202e" not in raw.stdout
    got = json.loads(raw.stdout)
    assert got["answer"] == "Done \\x1b[2J\\x1b]52;c;cm0gLXJm\\x07 here \\u202eevil"


def test_with_no_renderer_there_is_no_finished_and_no_copy_button(tmp_path: Path) -> None:
    # An answer with its marker and its toolbar, but nothing any renderer's signature names.
    page = tmp_path / "unclaimed.html"
    page.write_text('<html><body><div data-testid="assistant-message" '
                    'data-is-streaming="false"><p>hi</p><div data-cds="MessageActions" '
                    'role="toolbar"><button aria-label="Copy">c</button></div></div>'
                    "</body></html>", encoding="utf-8")
    proc = doctor(page)
    assert proc.returncode == 1
    assert "renderer none: no renderer signature is on the page" in proc.stdout
    assert "finished --; assistant's copy button --: no renderer claims the page" in proc.stdout
    got = json.loads(doctor(page, "--json").stdout)
    assert got["renderer"] is None
    assert got["finished"] is False and got["copy_button"] is False
