"""`doctor --site --repair`: a site change that breaks three signals at once, mended in one
pass into the user's own profile, which the driver and `doctor --page` then use.

The local chat site's Claude hub page is served "renamed": the user's message, the
answer's prose and its toolbar carry new names, and the toolbar puts a thumbs-up
("Good response") before the copy button. The live probe sees three MISS; the repair
runs on the page it saw. The proposing LLM (a replayed transcript) first offers the
thumbs-up for the copy button, which is refused (its name does not say copy and a
click copies nothing), then the real one. The profile lands in the user's config
folder (sites/claude.toml) and, with `site = "claude"` unchanged, a real Chromium
driver then reads the renamed site's answer through the mended copy button.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import open_llm, site_config_file
from chatsite import ChatSite
from chatsite.scenarios import SCENARIOS
from project import verifybot_cmd

from verifybot_tui.llm.browser.repair import Repair, says_copy
from verifybot_tui.llm.browser.saved_page import saved_page
from verifybot_tui.llm.browser.site_profile import load_site_profile, user_site_file
from verifybot_tui.llm.replay import ReplayLLM

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

USER = '[data-cds="UserMessage"] [data-testid="human-message"]'
PROSE = '[data-cds="Markdown"] .markdown-body'
THUMB = '[data-cds="ResponseActions"] button[aria-label="Good response"]'
COPY = '[data-cds="ResponseActions"] button[aria-label="Copy response"]'


def doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), "doctor", *args], capture_output=True, text=True,
                          timeout=250)


def proposals(tmp_path: Path) -> Path:
    """One answer per ask, in the order the repair asks (user_message, assistant_message,
    copy_button, copy_button again with the reason)."""
    path = tmp_path / "proposals.md"
    answers = [USER, PROSE, THUMB, COPY]
    path.write_text("".join(f"## Answer {i}\n\n```css\n{sel}\n```\n\n"
                            for i, sel in enumerate(answers, 1)), encoding="utf-8")
    return path


async def test_three_broken_signals_mended_and_the_driver_then_reads_the_site(
        chatsite: ChatSite, tmp_path: Path) -> None:
    chatsite.configure("probe", claude_layout="renamed")
    cfg = site_config_file(tmp_path, chatsite.claude_url, site="claude",
                           head=f'[run]\nworkspace = "{tmp_path / "ws"}"\n')
    proc = doctor("--site", "--llm", "site", "--yes", "--repair",
                  f"replay:{proposals(tmp_path)}", "--accept", "--config", str(cfg))
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "repair 3 MISS" in out and "user_message, assistant_message, copy_button" in out
    assert f"OK     {USER}" in out and f"OK     {PROSE}" in out
    assert (f'REJECT {THUMB}: its name "Good response" does not say copy, and clicking it '
            "on the page put nothing on the clipboard") in out
    assert f"OK     {COPY}" in out
    own = user_site_file("claude")
    assert f"wrote {own}" in out
    assert "read it from now on, before the built-in profile" in out
    written = own.read_text(encoding="utf-8")
    assert 'extends = "claude"' in written and "Good response" not in written
    checked = doctor("--config", str(cfg)).stdout
    assert f"OK   llm site: site profile {own} (your own, read before the built-in claude" \
        in checked, checked

    # The page the probe saw, read again with `--site claude`: the user's file first.
    page = next((tmp_path / "ws" / "runs" / "log").glob("*_site_probe_page.html"))
    got = json.loads(doctor("--page", str(page), "--site", "claude", "--json").stdout)
    assert got["renderer"] == "claude_hub"
    assert "MISS" not in got["signals"].values(), got["signals"]

    # The driver, site = "claude" as before, on the live renamed page.
    chatsite.configure("answer", claude_layout="renamed")
    async with open_llm(chatsite, tmp_path, "claude") as llm:
        answer = await llm.ask("write the hello program")
        probe = await llm.page.evaluate("() => window.__vb.probe()")
    assert answer.markdown == SCENARIOS["answer"].reply(0).markdown
    assert probe["signals"]["copy_button"]["selector"] == 'button[aria-label="Copy response"]'
    assert probe["signals"]["assistant_message"]["count"] > 0


def test_a_copy_button_is_known_by_its_name_in_any_language() -> None:
    for name in ("Copy", "Copy response", "Kopieren", "Copier la réponse", "응답 복사",
                 "コピー", "复制", "Копировать", "Kopiuj"):
        assert says_copy(name, []), name
    for name in ("Good response", "Bad response", "Retry", "Share", "좋은 응답", ""):
        assert not says_copy(name, []), name
    assert says_copy("Kopírovat odpověď", [])
    assert says_copy("Duplica", ["Duplica"])  # a label of the profile's own texts


ANSWER_MD = "Here it is:\n\n```python\nprint(6 * 7)\n```"
ICON_ROW_PAGE = (
    '<!doctype html><html lang="en"><body><div data-test-render-count="1">'
    '<div data-testid="user-message"><p>print the answer</p></div></div>'
    '<div data-test-render-count="1"><div class="group"><div class="contents">'
    '<div data-is-streaming="false"><div class="font-claude-response">'
    '<div class="standard-markdown"><p>Here it is:</p><pre class="code-block__code">'
    '<code class="language-python">print(6 * 7)\n</code></pre></div></div></div></div>'
    '<div role="group" aria-label="Message actions"><button type="button" class="icon-a">'
    '<svg viewBox="0 0 8 8"><path d="M1 1"></path></svg></button><button type="button" '
    'class="icon-b"><svg viewBox="0 0 8 8"><path d="M2 2"></path></svg></button>'
    '<button type="button" data-testid="action-bar-retry" aria-label="Retry">r</button>'
    '</div></div></div><fieldset><div role="textbox" data-testid="chat-input" '
    'contenteditable="true" class="ProseMirror"><p></p></div></fieldset></body></html>')


async def test_a_nameless_copy_button_is_taken_only_if_a_click_copies_the_answer(
        tmp_path: Path) -> None:
    """Icon-only buttons: the one whose click puts the answer on the clipboard is the copy
    button; the one whose click copies something else is not (the page's own scripts
    stand in as handlers put in the page: a saved page runs none)."""
    page = tmp_path / "icons.html"
    page.write_text(ICON_ROW_PAGE, encoding="utf-8")
    replay = tmp_path / "none.md"
    replay.write_text("## Answer 1\n\nnothing\n", encoding="utf-8")
    profile = load_site_profile("claude")
    said: list[str] = []
    async with saved_page(page, profile) as shown:
        work = Repair(shown, profile, "claude_2026", ReplayLLM(replay), said.append)
        nothing = await work._try("copy_button", ".icon-a")
        assert not nothing.ok
        assert "does not say copy, and clicking it on the page put nothing" in nothing.reason
        await shown.page.evaluate("""md => {
            const row = document.querySelector('[aria-label="Message actions"]');
            row.querySelector('.icon-a').onclick = () => navigator.clipboard.writeText(md);
            row.querySelector('.icon-b').onclick = () => navigator.clipboard.writeText('+1');
        }""", ANSWER_MD)
        other = await work._try("copy_button", ".icon-b")
        assert not other.ok and "put something else on the clipboard" in other.reason
        copies = await work._try("copy_button", ".icon-a")
        assert copies.ok, copies.reason
