"""Site profiles, page-state judgement, finding Chromium and profile locks (no browser).

These are the parts a user meets when a site changes its markup (a profile
file of their own), when no browser is installed, or after a crash left lock
files behind: each must end in a message that names what to fix.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

from verifybot_tui.core.base.errors import EXIT_LLM, LLMError
from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.browser.chromium import (
    check_profile,
    find_browser,
    launch_args,
    profile_dir,
    read_lock,
)
from verifybot_tui.llm.browser.pagestate import PageState, classify, message
from verifybot_tui.llm.browser.site_profile import SITES_DIR, builtin_sites, load_site_profile

MINIMAL = """
name = "mine"
conversation_url_pattern = '/chat/[0-9a-f-]{36}'
[selectors]
prompt_box = ["#box"]
send_button = ["#send"]
stop_button = ["#stop"]
user_turn = [".user"]
assistant_turn = [".bot"]
finished_markers = [".done"]
"""


def write(tmp_path: Path, text: str, name: str = "site.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def loading_error(tmp_path: Path, text: str) -> LLMError:
    """The error loading ``text`` as the user's site file raises; it names the file."""
    path = write(tmp_path, text)
    with pytest.raises(LLMError) as e:
        load_site_profile(str(path))
    assert str(path) in e.value.message
    return e.value


# --- site profiles ------------------------------------------------------------------


def test_builtin_profiles_load_and_recognise_saved_chat_urls() -> None:
    assert builtin_sites() == ["chatgpt", "claude"]
    gpt = load_site_profile("chatgpt")
    uuid = "12345678-9abc-def0-1234-56789abcdef0"
    assert gpt.conversation_id(f"https://chatgpt.com/c/{uuid}")
    assert gpt.conversation_id(f"https://chatgpt.com/g/g-p-abc/c/{uuid}")
    assert not gpt.conversation_id("https://chatgpt.com/c/WEB:5f1c2a")
    assert not gpt.conversation_id("https://chatgpt.com/c/local-1234")
    assert not gpt.conversation_id("https://chatgpt.com/")
    claude = load_site_profile("claude")
    assert claude.conversation_id(f"https://claude.ai/chat/{uuid}")
    assert not claude.conversation_id("https://claude.ai/new")


def test_a_users_profile_file_is_loaded_from_its_path(tmp_path: Path) -> None:
    p = load_site_profile(str(write(tmp_path, MINIMAL)))
    assert p.name == "mine" and p.sel("prompt_box") == ["#box"]
    assert p.sel("copy_button") == []  # optional lists default to empty


def test_extends_keeps_the_builtin_lists_it_does_not_replace(tmp_path: Path) -> None:
    p = load_site_profile(str(write(tmp_path, 'extends = "chatgpt"\n[selectors]\n'
                                              'send_button = ["#mine"]\n')))
    assert p.sel("send_button") == ["#mine"]
    assert p.sel("prompt_box") == load_site_profile("chatgpt").sel("prompt_box")


@pytest.mark.parametrize(("text", "names"), [
    (MINIMAL.replace('send_button = ["#send"]\n', ""), "selectors.send_button"),
    (MINIMAL.replace('["#stop"]', '"#stop"'), "selectors.stop_button"),
    (MINIMAL.replace('["#stop"]', "[1, 2]"), "selectors.stop_button"),
    (MINIMAL.replace('[".done"]', "[]"), "selectors.finished_markers"),
    (MINIMAL.replace("conversation_url_pattern = '/chat/[0-9a-f-]{36}'", ""),
     "conversation_url_pattern"),
    (MINIMAL.replace("{36}'", "{36}('"), "conversation_url_pattern"),
    (MINIMAL + 'prompt_bx = ["x"]\n', "selectors.prompt_bx"),
    (MINIMAL + '[texts]\nlimit = "busy"\n', "texts.limit"),
    ('extends = "gemini"\n', "extends"),
    ("name = [", "not valid TOML"),
])
def test_a_bad_profile_file_names_the_file_and_the_key(tmp_path: Path, text: str,
                                                       names: str) -> None:
    error = loading_error(tmp_path, text)
    assert names in error.message
    assert error.exit_code == EXIT_LLM


def test_chatgpt_has_two_renderers_each_with_its_signature_and_claude_its_2026_page() -> None:
    gpt = load_site_profile("chatgpt")
    assert [r.name for r in gpt.renderers] == ["app_shell", "legacy"]
    shell = gpt.renderer("app_shell")
    # claimed by what a page opened directly always has (the real capture has no
    # active-page marker); scoped to the active route only when the marker exists
    assert shell.signature[:2] == ["[data-app-shell-frame]", "form[data-chatgpt-composer]"]
    assert shell.scope == ['[data-app-shell-active-page="true"]']
    assert shell.sel("action_row") == [".turn-action-controls"]
    assert shell.sel("exchange") == ["[data-turn-key]"]
    assert gpt.renderer("legacy").join_messages  # several assistant nodes in one turn
    assert 'button.__composer-pill[aria-haspopup="menu"]' in \
        gpt.renderer("legacy").sel("model_picker")
    assert "#prompt-textarea" not in shell.sel("prompt_box")
    # lists shared by every page come from the top [selectors] table
    assert shell.sel("bot_check_markers") == gpt.renderer("legacy").sel("bot_check_markers")
    claude = load_site_profile("claude")
    # the 2026-10 hub layout first (its pages have the 2026 chat box too)
    assert [r.name for r in claude.renderers] == ["claude_hub", "claude_2026"]
    assert all(r.join_messages for r in claude.renderers)
    assert claude.renderer("claude_hub").sel("message_exclude") == [
        '[data-cds="TurnStatus"]', '[data-cds="MessageActions"]']
    assert 'button[data-testid="login-with-google"]' in claude.sel("login_markers")
    assert "approaching your usage limit" in claude.texts["not_limit"]


@pytest.mark.parametrize(("text", "names"), [
    ('extends = "chatgpt"\n[renderers.app_shell]\nsignatur = ["x"]\n',
     "renderers.app_shell.signatur"),
    ('extends = "chatgpt"\nrenderer_order = ["app_shell", "new_page"]\n', "new_page"),
    ('extends = "chatgpt"\n[renderers.app_shell.selectors]\nstop_button = []\n',
     "renderers.app_shell.selectors.stop_button"),
    ('extends = "chatgpt"\n[renderers.app_shell]\njoin_messages = "yes"\n',
     "renderers.app_shell.join_messages"),
])
def test_a_bad_renderer_names_the_file_and_the_key(tmp_path: Path, text: str,
                                                   names: str) -> None:
    assert names in loading_error(tmp_path, text).message


def test_an_unknown_site_name_lists_the_builtins() -> None:
    with pytest.raises(LLMError, match="chatgpt, claude"):
        load_site_profile("gemini")


# --- page states --------------------------------------------------------------------

GPT = load_site_profile("chatgpt")
READY = {"path": "/", "title": "ChatGPT", "promptBox": True, "login": "", "botCheck": "",
         "picker": "", "pickerInDialog": False, "limit": "", "error": ""}


@pytest.mark.parametrize(("facts", "state"), [
    ({}, PageState.READY),
    ({"promptBox": False}, PageState.LOADING),
    ({"path": "/auth/login", "promptBox": False}, PageState.LOGGED_OUT),
    ({"login": "Log in"}, PageState.LOGGED_OUT),
    ({"promptBox": False, "picker": "Welcome back"}, PageState.ACCOUNT_PICKER),
    # a greeting on a working chat page is not an account picker
    ({"picker": "Welcome back"}, PageState.READY),
    ({"picker": "Welcome back", "pickerInDialog": True}, PageState.ACCOUNT_PICKER),
    ({"promptBox": False, "botCheck": "Just a moment", "login": "Log in"}, PageState.BOT_CHECK),
    # bot-management scripts on a rendered app are not a bot check
    ({"botCheck": "challenge", "renderer": "app_shell"}, PageState.READY),
    ({"promptBox": False, "botCheck": "challenge", "renderer": "legacy"}, PageState.LOADING),
    ({"limit": "You've reached our limit of messages"}, PageState.LIMIT),
    ({"error": "Something went wrong"}, PageState.ERROR),
])
def test_page_states_are_told_apart(facts: dict, state: PageState) -> None:
    assert classify({**READY, **facts}, GPT).state is state


def test_each_blocking_state_says_what_to_do() -> None:
    texts = {}
    for state, facts in [(PageState.LOGGED_OUT, {"login": "Log in"}),
                         (PageState.ACCOUNT_PICKER, {"promptBox": False, "picker": "Welcome"}),
                         (PageState.BOT_CHECK, {"promptBox": False, "botCheck": "x"}),
                         (PageState.LIMIT, {"limit": "usage cap"}),
                         (PageState.ERROR, {"error": "Something went wrong"})]:
        v = classify({**READY, **facts}, GPT)
        assert v.state is state
        texts[state] = message(v, llm="gpt", site="chatgpt", headless=True, profile_dir="/p")
    assert "verifybot login --llm gpt" in texts[PageState.LOGGED_OUT]
    assert "pick your account" in texts[PageState.ACCOUNT_PICKER]
    assert "headless = false" in texts[PageState.BOT_CHECK]
    assert "Wait for the limit" in texts[PageState.LIMIT] and "usage cap" in texts[PageState.LIMIT]
    assert "Something went wrong" in texts[PageState.ERROR]
    assert len(set(texts.values())) == 5


# --- finding Chromium -----------------------------------------------------------------


def test_browser_path_wins_and_a_wrong_one_is_named(tmp_path: Path) -> None:
    fake = tmp_path / "my-chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_browser(LLMConfig(name="x", browser_path=str(fake))) == str(fake)
    with pytest.raises(LLMError, match=r"browser_path .*nope.* \[llm\.x\]"):
        find_browser(LLMConfig(name="x", browser_path=str(tmp_path / "nope")))


def test_no_browser_anywhere_names_the_install_commands(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    from verifybot_tui.llm.browser import chromium

    monkeypatch.setattr(chromium, "SYSTEM_CANDIDATES", ())
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LLMError) as e:
        find_browser(LLMConfig(name="x"), playwright_executable=str(tmp_path / "absent"))
    assert "sudo apt install chromium" in e.value.message
    assert "playwright install chromium" in e.value.message
    # Playwright's own Chromium, when it exists, means "let Playwright pick"
    own = tmp_path / "chrome"
    own.write_text("")
    assert find_browser(LLMConfig(name="x"), playwright_executable=str(own)) is None


def test_quiet_flags_and_no_sandbox_as_root() -> None:
    args = launch_args()
    for flag in ("--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"):
        assert flag in args
    assert ("--no-sandbox" in args) == (os.geteuid() == 0)


def test_profile_folder_per_site_in_the_user_data_dir(tmp_path: Path) -> None:
    assert profile_dir(LLMConfig(name="x", site="claude")).parts[-2:] == ("profiles", "claude")
    assert profile_dir(LLMConfig(profile_dir=str(tmp_path))) == tmp_path


# --- lock files -----------------------------------------------------------------------


def lock(profile: Path, target: str) -> None:
    profile.mkdir(parents=True, exist_ok=True)
    os.symlink(target, profile / "SingletonLock")
    os.symlink(f"{profile}/socket", profile / "SingletonSocket")
    (profile / "SingletonCookie").write_text("1")


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.mark.parametrize("target", [
    f"{socket.gethostname()}-{dead_pid()}",  # a crashed run on this machine
    "another-host-4242",  # a profile folder copied from another machine
    f"{socket.gethostname()}-{os.getpid()}",  # a live pid that is not a browser
], ids=["dead-pid", "another-host", "live-pid-not-a-browser"])  # same ids in every process
def test_stale_lock_files_are_removed(tmp_path: Path, target: str) -> None:
    lock(tmp_path, target)
    check_profile(tmp_path)
    assert not any(p.name.startswith("Singleton") for p in tmp_path.iterdir())
    assert read_lock(tmp_path) is None


def test_a_lock_held_by_a_live_browser_is_refused(tmp_path: Path) -> None:
    # A process whose command line looks like a browser's stands for a live Chromium.
    proc = subprocess.Popen(["bash", "-c", "exec -a chromium-browser sleep 30"])
    try:
        cmdline = Path(f"/proc/{proc.pid}/cmdline")
        # Until bash has exec'd under the new name: bash's own command line holds the word
        # too, and a check that reads it while the exec swaps it finds nothing (failed once).
        deadline = time.monotonic() + 60
        while not cmdline.read_bytes().startswith(b"chromium-browser\0"):
            assert time.monotonic() < deadline, f"never renamed: {cmdline.read_bytes()!r}"
            time.sleep(0.01)
        lock(tmp_path, f"{socket.gethostname()}-{proc.pid}")
        with pytest.raises(LLMError) as e:
            check_profile(tmp_path)
        assert f"pid {proc.pid}" in e.value.message and "in use" in e.value.message
        assert (tmp_path / "SingletonLock").is_symlink()  # never removed from under it
    finally:
        proc.kill()
        proc.wait()


def test_temporary_chats_need_the_sites_query(tmp_path: Path) -> None:
    from verifybot_tui.llm.browser import BrowserLLM

    gpt = BrowserLLM(LLMConfig(name="g", site="chatgpt", url="https://chatgpt.com/",
                               temporary=True), tmp_path)
    assert gpt.new_chat_url() == "https://chatgpt.com/?temporary-chat=true"
    claude = BrowserLLM(LLMConfig(name="c", site="claude", url="https://claude.ai/new",
                                  temporary=True), tmp_path)
    with pytest.raises(LLMError, match=r"\[llm\.c\] temporary = true.*temporary_chat_query"):
        claude.new_chat_url()


def test_texts_per_language_and_a_users_file_adds_one() -> None:
    gpt = load_site_profile("chatgpt")
    assert {"en", "de", "fr", "es", "ko", "ja"} <= set(gpt.languages)
    # every language's texts are hints together: the Korean copy label is one of them
    assert "복사" in gpt.texts["copy"] and "Copy" in gpt.texts["copy"]
    assert "Kopieren" in gpt.texts["copy"] and "コピー" in gpt.texts["copy"]
    tables = tomllib.loads((SITES_DIR / "chatgpt.toml").read_text(encoding="utf-8"))["texts"]
    for lang in ("en", "de", "fr", "es", "ko", "ja"):
        for key in ("stop", "copy", "regenerate", "thinking", "answer_now", "limit", "error",
                    "login_buttons", "bot_check_titles", "dialog_close"):
            assert tables[lang][key], (lang, key)


def test_a_users_file_adds_a_language_and_replaces_one_list(tmp_path: Path) -> None:
    path = write(tmp_path, 'extends = "chatgpt"\n[texts.it]\nlimit = ["raggiunto il limite"]\n'
                           'stop = ["Interrompi"]\n[texts.ko]\ncopy = ["복사하기"]\n')
    mine = load_site_profile(str(path))
    assert "it" in mine.languages and "raggiunto il limite" in mine.texts["limit"]
    assert "Interrompi" in mine.texts["stop"]
    # [texts.ko] copy replaced; the other Korean lists and the other languages stay
    assert "복사하기" in mine.texts["copy"] and "복사" not in mine.texts["copy"]
    assert "중지" in mine.texts["stop"] and "Kopieren" in mine.texts["copy"]
    facts = {"promptBox": True, "renderer": "legacy", "limit": "Hai raggiunto il limite"}
    assert classify(facts, mine).state is PageState.LIMIT
    assert classify({"promptBox": True, "renderer": "legacy", "unreadable": "Avviso"},
                    mine).state is PageState.UNREADABLE


@pytest.mark.parametrize(("text", "names"), [
    ('extends = "chatgpt"\n[texts.Italiano]\nstop = ["x"]\n', "[texts.Italiano] is not a language"),
    ('extends = "chatgpt"\n[texts.it]\nstopp = ["x"]\n', "unknown key 'texts.it.stopp'"),
    ('extends = "chatgpt"\n[texts.it]\nstop = "x"\n', "'texts.it.stop' must be a list"),
])
def test_a_bad_language_table_names_the_file_and_the_key(tmp_path: Path, text: str,
                                                         names: str) -> None:
    assert names in loading_error(tmp_path, text).message


def test_an_unreadable_page_state_says_what_to_do() -> None:
    gpt = load_site_profile("chatgpt")
    v = classify({"promptBox": True, "renderer": "app_shell", "unreadable": "Avviso importante"},
                 gpt)
    text = message(v, llm="chatgpt", site="chatgpt", headless=False, profile_dir="/p")
    assert "the page shows a message VerifyBot cannot read" in text
    assert '"Avviso importante"' in text and "[texts.LANG]" in text
