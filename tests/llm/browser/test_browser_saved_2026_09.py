"""Pages shaped like the second set of real pages (chatgpt.com and claude.ai, 2026-09).

Our own pages in tests/support/chatsite/saved/, built after what that set showed:
ChatGPT's maths rendered as KaTeX HTML only (the TeX in `data-math-source`), tight
lists whose items are each one `<p>`, Claude's 2026-09 model picker (name and effort
word in two spans), a page told apart by its saved-from address or its markup, and a
fragment holding an answer alone. `doctor --page` runs as a user runs it (a
subprocess); the picker also on the live chat site, with the real driver.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import open_llm
from chatsite import ChatSite
from chatsite.scenarios import SCENARIOS
from project import verifybot_cmd

from verifybot_tui.llm.browser.saved_page import inspect_page, saved_page
from verifybot_tui.llm.browser.site_profile import load_site_profile

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

SAVED = Path(__file__).parents[2] / "support" / "chatsite" / "saved"
MATHS = """La vitesse moyenne se calcule ainsi :

$$v=\\frac{d}{t}$$

où $d$ est la distance et $t$ le temps, avec $t \\neq 0$.

- $d$ : la distance en mètres
- $t$ : le temps en secondes

1. Mesurer la distance
   - au mètre près
2. Diviser par le temps

- Une remarque.

  Sur deux paragraphes.

- Fin.

```python
def vitesse(d, t):
    return d / t
```"""


def doctor(page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), "doctor", "--page", str(page), *extra],
                          capture_output=True, text=True, timeout=150,
                          stdin=subprocess.DEVNULL)


async def test_maths_comes_out_as_tex_and_tight_lists_stay_tight() -> None:
    report = await inspect_page(SAVED / "chatgpt-2026-09-maths.html", "chatgpt")
    assert report.renderer == "app_shell" and report.finished
    assert report.answer == MATHS
    assert "\u200b" not in (report.answer or "")


def test_the_site_is_found_from_the_page_without_site() -> None:
    page = SAVED / "claude-2026-09-picker.html"
    proc = doctor(page, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = json.loads(proc.stdout)
    assert got["renderer"] == "claude_hub" and got["finished"] and got["copy_button"]
    assert "MISS" not in got["signals"].values(), got["signals"]
    assert got["answer"] == ("Voici la fonction :\n\n```python\ndef somme_carres(xs):\n"
                             "    return sum(x * x for x in xs)\n```")
    assert "the page is claude's (saved from claude.ai), not chatgpt's" in proc.stderr
    assert "--site claude" in proc.stderr


def test_a_wrong_site_names_the_right_one_and_reads_the_page_with_it() -> None:
    proc = doctor(SAVED / "chatgpt-2026-09-maths.html", "--site", "claude")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert ("site     chatgpt: the page is chatgpt's (saved from chatgpt.com), not claude's; "
            "read as chatgpt (name it with --site chatgpt)") in out
    assert "renderer app_shell" in out and "$$v=\\frac{d}{t}$$" in out


def test_an_answer_alone_is_read_as_an_answer() -> None:
    proc = doctor(SAVED / "claude-answer-only.html")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "its claude markup" in out and "renderer claude_2026" in out
    assert "--   user_turn: not testable here (no user message on the page)" in out
    assert "HIT  assistant_message" in out and "HIT  copy_button" in out
    assert "no conversation" not in out
    assert "finished yes; assistant's copy button found" in out
    assert "answer   (markdown read from the page):\nLe total vaut **42** :\n\n```bash\n" \
           "echo $((40 + 2))\n```" in out


async def test_the_claude_picker_names_the_model_and_keeps_the_effort_apart() -> None:
    profile = load_site_profile("claude")
    async with saved_page(SAVED / "claude-2026-09-picker.html", profile) as shown:
        snap = await shown.page.evaluate("() => window.__vb.snapshot()")
    assert snap["model"] == "Sonnet 5"
    assert snap["effort"] == "Extra"


async def test_the_driver_on_the_2026_09_picker_records_the_model_and_its_effort(
        chatsite: ChatSite, tmp_path: Path) -> None:
    chatsite.configure("answer", claude_layout="hub", claude_picker="cds", effort="Moyen",
                       models=("Opus 5", "Sonnet 5"))
    async with open_llm(chatsite, tmp_path, "claude", settings={"model": "Sonnet 5"}) as llm:
        await llm.new_chat()
        answer = await llm.ask("write the hello program")
    assert answer.markdown == SCENARIOS["answer"].reply(0).markdown
    assert answer.model == "Sonnet 5"  # not "Sonnet 5 Moyen": no other-model notice
    assert "model effort: Moyen" in answer.details
    assert chatsite.prompts[-1].model == "Sonnet 5"
