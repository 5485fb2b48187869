"""`verifybot doctor --page FILE --repair`: an LLM proposes, the saved page decides.

The page is a Claude 2025-26 page whose answer blocks were renamed (the profile's
`.standard-markdown` matches nothing: assistant_message MISSes, and the driver's
fallback reads the whole turn). The LLM first proposes
wrong selectors (the whole thread's divs, the user's message), which are rejected
with their reasons; asked again with those reasons, it proposes the right one,
which is written to the user's own profile (never the built-in one) once accepted;
`doctor --page` with that profile then reads the answer exactly. The LLM is a
replayed transcript, then the loopback API server (a real HTTP backend, both APIs):
what it received is an outline with no more of the conversation than first words,
and a PNG screenshot of the page as the API's image part. Then
`doctor --site --repair` on the live test site (Claude's hub layout, a broken copy
button selector in the user's own site file).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from api_fixtures import KEY, llm_table, run_cli, write_config
from apiserver import ApiServer
from browser_fixtures import site_config_file
from chatsite import ChatSite
from project import verifybot_cmd

from verifybot_tui.core.base.ports import Answer
from verifybot_tui.llm.browser.repair import parse_proposals, repair_page
from verifybot_tui.llm.browser.site_profile import SITES_DIR, user_site_file
from verifybot_tui.llm.replay import ReplayLLM

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

LONG = ("This sentence is the conversation's own text and is long enough that the outline "
        "the LLM gets must cut it to its first words.")
CODE = 'print("hello")\nprint(6 * 7)'
ANSWER = f"{LONG}\n\n```python\n{CODE}\n```"
WRONG = "Try these:\n\n```css\ndiv\n[data-testid=\"user-message\"]\n```\n"
RIGHT = "Then this one:\n\n```css\n.prose-markdown\n```\n"


def renamed_page() -> str:
    """claude.ai's 2025-26 page, its answer blocks renamed (.prose-markdown, .response-body)."""
    return ('<!doctype html><html lang="en"><body class="font-ui">'
            '<div data-test-render-count="1"><div class="mb-1 mt-6 group">'
            '<div data-testid="user-message"><p>write the hello program</p></div>'
            '<div role="group" aria-label="Message actions"><button type="button" '
            'data-testid="action-bar-copy" aria-label="Copy">c</button></div></div></div>'
            '<div data-test-render-count="1"><div class="group"><div class="contents">'
            '<div data-is-streaming="false" class="group relative">'
            '<div class="response-body">'
            '<div class="grid"><div class="row-start-1 col-start-1"><button '
            'class="group/status"><span>Thought for 2s</span></button><div class="font-ui">'
            '<div class="prose-markdown"><p>THINKING: what the user wants</p></div></div>'
            '</div></div>'
            f'<div class="prose-markdown"><p>{LONG}</p></div>'
            '<div class="prose-markdown"><div class="relative group/copy"><div class="sticky">'
            '<button aria-label="Copy to clipboard">c</button></div>'
            '<div class="text-text-500">python</div><div><pre class="code-block__code">'
            f'<code class="language-python">{CODE}\n</code></pre></div></div></div>'
            '</div></div></div><div role="group" aria-label="Message actions">'
            '<button type="button" data-testid="action-bar-copy" aria-label="Copy">c</button>'
            '<button type="button" data-testid="action-bar-retry" aria-label="Retry">r'
            '</button></div></div></div>'
            '<fieldset><div role="textbox" data-testid="chat-input" contenteditable="true" '
            'class="ProseMirror"><p></p></div></fieldset></body></html>')


def doctor(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), "doctor", *args], capture_output=True, text=True,
                          timeout=200, input=stdin)


@pytest.fixture
def page(tmp_path: Path) -> Path:
    p = tmp_path / "renamed.html"
    p.write_text(renamed_page(), encoding="utf-8")
    return p


def check_before(page: Path) -> None:
    got = json.loads(doctor("--page", str(page), "--site", "claude", "--json").stdout)
    assert got["signals"]["assistant_message"] == "MISS"


def check_after(page: Path, override: Path) -> None:
    assert override.is_file()
    text = override.read_text(encoding="utf-8")
    assert 'extends = "claude"' in text and "[renderers.claude_2026.selectors]" in text
    assert ".prose-markdown" in text
    assert ".prose-markdown" not in (SITES_DIR / "claude.toml").read_text(encoding="utf-8")
    got = json.loads(doctor("--page", str(page), "--site", str(override), "--json").stdout)
    assert got["signals"]["assistant_message"] == "HIT"
    assert "MISS" not in got["signals"].values(), got["signals"]
    assert got["answer"] == ANSWER


def test_a_replayed_llm_proposes_wrong_then_right_and_the_user_accepts(
        tmp_path: Path, page: Path) -> None:
    check_before(page)
    replay = tmp_path / "proposals.md"
    replay.write_text(f"## Answer 1\n\n{WRONG}\n## Answer 2\n\n{RIGHT}", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text("[run]\n", encoding="utf-8")
    proc = doctor("--page", str(page), "--site", "claude", "--repair", "--llm",
                  f"replay:{replay}", "--config", str(config), stdin="y\n")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "repair 1 MISS" in out and "assistant_message" in out
    assert ("REJECT div: matches too much: an element it matches holds the user's message "
            "too") in out
    assert 'REJECT [data-testid="user-message"]: matches the user\'s message' in out
    assert "asking again, with the 2 reason(s)" in out
    assert "OK     .prose-markdown: HIT, the answer reads" in out
    override = user_site_file("claude")  # the user's own, read before the built-in one
    assert f"+++ {override} (repaired)" in out
    assert '+assistant_message = [' in out
    assert "Write this to" in out + proc.stderr and f"wrote {override}" in out
    check_after(page, override)


def test_declined_writes_nothing(tmp_path: Path, page: Path) -> None:
    replay = tmp_path / "proposals.md"
    replay.write_text(f"## Answer 1\n\n{RIGHT}", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text("[run]\n", encoding="utf-8")
    proc = doctor("--page", str(page), "--site", "claude", "--repair", "--llm",
                  f"replay:{replay}", "--config", str(config), stdin="n\n")
    assert proc.returncode == 1
    assert "Not written." in proc.stdout
    assert not user_site_file("claude").exists()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_the_loopback_api_server_as_the_llm(tmp_path: Path, page: Path, kind: str) -> None:
    server = ApiServer(key=KEY, answers=[WRONG, RIGHT]).start()
    try:
        url = server.url if kind == "openai" else server.anthropic_url
        config = write_config(tmp_path, llm_table("api", kind, url, "coder"),
                              default_llm="api")
        # the user's own file, already there: the fix goes into it, next to its lists
        override = tmp_path / "my-claude.toml"
        override.write_text('extends = "claude"\n\n[texts]\nlimit = ["my limit text"]\n',
                            encoding="utf-8")
        proc = run_cli("doctor", "--page", str(page), "--site", str(override), "--repair",
                       "--llm", "api", "--accept", "--config", str(config), cwd=tmp_path)
        out = proc.stdout
        assert proc.returncode == 0, out + proc.stderr
        assert 'REJECT [data-testid="user-message"]: matches the user\'s message' in out
        assert "OK     .prose-markdown" in out
        assert "KB screenshot" in out
        bodies = [r.body for r in server.chats()]
        prompts = [json.dumps(b) for b in bodies]
    finally:
        server.stop()
    assert len(prompts) == 2
    # the screenshot went with each round's prompt, as this API's image part, a PNG
    part = {"openai": {"type": "image_url"}, "anthropic": {"type": "image"}}[kind]
    for body in bodies:
        asked = body["messages"][-1]["content"]
        assert [p["type"] for p in asked] == \
            (["text", "image_url"] if kind == "openai" else ["image", "text"])
        assert any(p.items() >= part.items() for p in asked)
    if kind == "openai":
        assert bodies[0]["messages"][-1]["content"][1]["image_url"]["url"].startswith(
            "data:image/png;base64,iVBORw0KGgo")
    else:
        assert bodies[0]["messages"][-1]["content"][0]["source"]["media_type"] == "image/png"
    assert isinstance(bodies[1]["messages"][0]["content"], str)  # kept as text, sent once
    assert len(server.images) == 2
    assert all(media == "image/png" and png.startswith(b"\x89PNG\r\n\x1a\n")
               and len(png) > 1000 for media, png in server.images)
    assert "prose-markdown" in prompts[0] and "assistant_message" in prompts[0]
    assert LONG not in prompts[0]  # the conversation's text cut to its first words
    assert "matches the user's message" in prompts[1]  # the reason went back
    assert "my limit text" in override.read_text(encoding="utf-8")
    check_after(page, override)


def test_proposals_are_read_from_fences_or_inline_code() -> None:
    assert parse_proposals(WRONG) == ["div", '[data-testid="user-message"]']
    assert parse_proposals("Use `.a > .b` or `[data-x]`.") == [".a > .b", "[data-x]"]
    assert parse_proposals("```\n- '.q'\n1. .r,\n/* note */\n```") == [".q", ".r"]


def test_doctor_site_repair_mends_a_broken_copy_button_on_the_live_hub_page(
        chatsite: ChatSite, tmp_path: Path) -> None:
    # The live probe sees the page, then the same repair runs on what it saw; the
    # user's own site file (site = "...") is the override written.
    chatsite.configure("probe", claude_layout="hub")
    broken = tmp_path / "my-claude.toml"
    broken.write_text('extends = "claude"\n[renderers.claude_hub.selectors]\n'
                      "copy_button = ['[data-cds=\"OldActions\"] button']\n", encoding="utf-8")
    cfg = site_config_file(tmp_path, chatsite.claude_url, site=str(broken),
                           head=f'[run]\nworkspace = "{tmp_path / "ws"}"\n')
    replay = tmp_path / "proposals.md"
    replay.write_text("## Answer 1\n\n```css\nbutton[aria-label=\"Edit\"]\n"
                      "[data-cds=\"MessageActions\"] button\n```\n\n## Answer 2\n\n```css\n"
                      "[data-cds=\"AssistantMessage\"] [role=\"toolbar\"] "
                      "button[aria-label=\"Copy\"]\n```\n", encoding="utf-8")
    proc = doctor("--site", "--llm", "site", "--yes", "--repair", f"replay:{replay}",
                  "--accept", "--config", str(cfg))
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "renderer claude_hub once the answer is on the page" in out
    assert "1 MISS: copy_button (finished)" in out
    assert ('REJECT button[aria-label="Edit"]: matches a button of the user\'s message, not the '
            "answer's") in out
    assert ('REJECT [data-cds="MessageActions"] button: matches too much: 2 buttons of the '
            "last answer") in out
    assert 'OK     [data-cds="AssistantMessage"] [role="toolbar"] button[aria-label="Copy"]' \
        in out
    assert "AssistantMessage" in broken.read_text(encoding="utf-8")
    assert len(list((tmp_path / "ws" / "runs" / "log").glob("*_site_probe_page.html"))) == 1
    again = doctor("--site", "--llm", "site", "--yes", "--config", str(cfg))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "OK   every testable signal of claude_hub matched" in again.stdout


class ImageTakingLLM(ReplayLLM):
    """The replay backend plus ask_with_images, as a backend that takes images has it."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.images: list[bytes] = []

    async def ask_with_images(self, prompt: str, images: list[bytes]) -> Answer:
        self.images += images
        return await self.ask(prompt)


async def test_an_llm_that_takes_images_gets_a_screenshot_of_the_page(
        tmp_path: Path, page: Path) -> None:
    replay = tmp_path / "proposals.md"
    replay.write_text(f"## Answer 1\n\n{RIGHT}", encoding="utf-8")
    llm = ImageTakingLLM(replay)
    said: list[str] = []
    override = tmp_path / "sites" / "claude.toml"
    code = await repair_page(page, "claude", llm, override, say=said.append, confirm=None,
                             accept=True)
    assert code == 0, said
    assert len(llm.images) == 1 and llm.images[0].startswith(b"\x89PNG\r\n\x1a\n")
    assert any("KB screenshot" in line for line in said)
    check_after(page, override)


def test_repair_without_a_page_or_a_proposer_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[run]\n", encoding="utf-8")
    alone = doctor("--repair", "--config", str(config))
    assert alone.returncode == 2 and "--repair goes with --page FILE.html" in alone.stdout
    live = doctor("--site", "--llm", "claude", "--repair", "--config", str(config))
    assert live.returncode == 2
    assert "--repair with --site names the LLM that proposes selectors" in live.stdout
