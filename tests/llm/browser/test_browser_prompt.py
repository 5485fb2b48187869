"""Prompts typed into a real prompt box arrive at the site exactly as sent.

The site records every prompt it receives, so each test compares bytes:
newlines (blank lines included), backticks and fences, indentation and tabs,
non-ASCII text and a 3,000-line prompt; also when the editor mangles inserted
newlines (the DOM-injection fallback), and through a user's site profile file
whose send button selector no longer matches (the composer's own submit button,
found by structure, or a clear error: never Enter).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_fixtures import open_llm
from chatsite import ChatSite

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.llm.browser import BrowserLLM

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.timeout(120)]

TRICKY = ("Fix this program.\n\n\n```python\ndef f(x):\n    if x:\n\treturn `x`  \n```\n"
          "  indented line\n- a list item\n1. numbered\n> quoted <b>html</b> & more\n"
          "unicode: é ü 中文 🙂\ntrailing spaces   \n\nlast line")


def long_prompt(lines: int = 3000) -> str:
    return "\n".join(f"{i:04d}    value = compute({i})  # `line` {i}" if i % 7 else ""
                     for i in range(lines))


@pytest.mark.parametrize("prompt", [TRICKY, long_prompt(), "single line", "\n\nlead\n\n"],
                         ids=["tricky", "3000-lines", "single", "blank-lines-around"])
async def test_the_prompt_arrives_byte_for_byte(site_llm: BrowserLLM, chatsite: ChatSite,
                                                prompt: str) -> None:
    chatsite.configure("answer")
    await site_llm.new_chat()
    await site_llm.ask(prompt)
    assert chatsite.received()[-1] == prompt


async def test_a_mangling_editor_falls_back_to_paragraph_injection(
        site_llm: BrowserLLM, chatsite: ChatSite) -> None:
    chatsite.configure("answer", lossy_insert=True)
    await site_llm.new_chat()
    await site_llm.ask(TRICKY)
    assert chatsite.received()[-1] == TRICKY


async def test_no_send_button_is_a_clear_error_and_enter_is_never_pressed(
        chatsite: ChatSite, tmp_path: Path, renderer: str) -> None:
    # Enter would send on this account, but a driver must never rely on it (on some
    # accounts it inserts a newline). The app-shell composer's own submit button is
    # found by structure; the legacy page has none: nothing is sent, and it says why.
    site_file = tmp_path / "mysite.toml"
    site_file.write_text('extends = "chatgpt"\n[selectors]\n'
                         'send_button = ["button[data-testid=\\"no-such-button\\"]"]\n')
    chatsite.configure("answer")
    before = len(chatsite.prompts)
    async with open_llm(chatsite, tmp_path, start=False,
                        settings={"site": str(site_file)}) as llm:
        if renderer == "app_shell":
            answer = await llm.ask("sent by its button\nsecond line")
            assert chatsite.received()[-1] == "sent by its button\nsecond line"
            assert answer.markdown.startswith("Here is a small program.")
            return
        with pytest.raises(LLMError) as e:
            await llm.ask("never sent with Enter\nsecond line")
    assert "shows no send button" in e.value.message and "Nothing was sent" in e.value.message
    assert len(chatsite.prompts) == before
