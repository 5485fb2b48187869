"""`verifybot doctor --site` and `verifybot selftest` against the test site.

The probe is run as a user would (the CLI, headless through the config and
--yes in place of the window's confirmation) with one selector of the
profile broken on purpose: it must say MISS for that signal in the state
where the element exists, "not testable here" for elements of other states,
and save an evidence file from which the right selector can be read: the test
reads it back, writes that selector into the profile, and the probe passes.
The page no renderer knows is probed in-process with a short page_timeout: the
probe waits half of it for a renderer before calling the page unknown, and the
CLI's 30 s would make that 15 s of waiting for nothing.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import site_config, site_config_file
from chatsite import ChatSite
from project import verifybot_cmd

from verifybot_tui.core.base.errors import EXIT_FAILED
from verifybot_tui.llm.browser.site_probe import PROBE_PROMPT, probe_site

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def config(tmp_path: Path, url: str, site: str) -> Path:
    return site_config_file(tmp_path, url, site=site,
                            head=f'[run]\nworkspace = "{tmp_path / "ws"}"\n')


def verifybot(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=150, stdin=subprocess.DEVNULL)


BROKEN = {
    "legacy": ('[data-testid="stop-button"]', "stop-button"),
    "app_shell": ('form[data-chatgpt-composer] button[aria-label="Stop"]', "Stop"),
}


@pytest.mark.parametrize("page", ["legacy", "app_shell"])
def test_the_probe_finds_a_broken_selector_and_its_evidence_names_the_right_one(
        chatsite: ChatSite, tmp_path: Path, page: str) -> None:
    chatsite.configure("probe", renderer=page)
    broken = tmp_path / "broken.toml"
    broken.write_text(f'extends = "chatgpt"\n[renderers.{page}.selectors]\n'
                      "stop_button = ['form button[aria-label=\"Halt\"]']\n")
    proc = verifybot(tmp_path, "doctor", "--site", "--llm", "site", "--yes", "--config",
                     str(config(tmp_path, chatsite.url, str(broken))))
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert f"renderer {page}" in out
    assert "  MISS stop_button: none of form button[aria-label=\"Halt\"]" in out
    assert out.count("MISS") == 2  # the line, and the summary naming it
    assert "1 MISS: stop_button (generating)" in out
    # elements of other states are not broken, just not there yet
    idle = out.split("state idle:")[1].split("state typed:")[0]
    assert "--   send_button: not testable here (exists only when typed)" in idle
    assert "--   copy_button: not testable here (exists only when finished)" in idle
    for state in ("typed", "generating", "finished"):
        assert f"state {state}:" in out
    assert "HIT  send_button" in out.split("state typed:")[1].split("state generating:")[0]
    assert "HIT  copy_button" in out.split("state finished:")[1]

    # the evidence file: redacted, and the stop button is in it
    (path,) = re.findall(r"Evidence \(no conversation text\): (\S+\.json)\.", out)
    text = Path(path).read_text(encoding="utf-8")
    assert Path(path).parent.parts[-2:] == ("runs", "log")
    assert PROBE_PROMPT not in text and "ready" not in text.lower().replace('"ready', "")
    ev = json.loads(text)
    assert ev["renderer"] == page and ev["misses"] == ["stop_button (generating)"]
    states = ev["states"]
    assert set(states) == {"idle", "typed", "generating", "finished"}
    for state in states.values():
        assert state["dataAttributes"] and "lastTurnAncestors" in state
    attr, value = BROKEN[page][0].rsplit("[", 1)[1].rstrip("]").split("=")
    stop = [b for b in states["generating"]["composerButtons"]
            if f'[{attr}={value}]' in b]
    assert stop, states["generating"]["composerButtons"]
    assert not [b for b in states["idle"]["composerButtons"] if f'[{attr}={value}]' in b]
    assert "x" in states["finished"]["lastTurnMarkup"]  # text kept as shape only

    # the selector read from the evidence mends the profile
    fixed = tmp_path / "fixed.toml"
    fixed.write_text(f'extends = "chatgpt"\n[renderers.{page}.selectors]\n'
                     f"stop_button = ['form button[{attr}={value}]']\n")
    chatsite.configure("probe", renderer=page)
    again = verifybot(tmp_path, "doctor", "--site", "--llm", "site", "--yes", "--config",
                      str(config(tmp_path, chatsite.url, str(fixed))))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "MISS" not in again.stdout and "OK   every testable signal" in again.stdout
    assert f"HIT  stop_button: form button[{attr}={value}]" in again.stdout


def test_without_yes_the_probe_asks_before_sending(chatsite: ChatSite, tmp_path: Path) -> None:
    chatsite.configure("answer")
    sent = len(chatsite.prompts)
    proc = verifybot(tmp_path, "doctor", "--site", "--llm", "site", "--config",
                     str(config(tmp_path, chatsite.url, "chatgpt")))
    assert "Send a short test prompt" in proc.stderr
    assert "Stopped before sending" in proc.stdout
    assert "state generating" not in proc.stdout
    assert len(chatsite.prompts) == sent
    assert proc.returncode == 0, proc.stdout


async def test_a_page_no_renderer_knows_is_a_miss_with_evidence(chatsite: ChatSite,
                                                                tmp_path: Path) -> None:
    chatsite.configure("answer")
    mine = tmp_path / "mine.toml"
    mine.write_text('extends = "chatgpt"\n[renderers.app_shell]\nsignature = ["#gone-1"]\n'
                    '[renderers.legacy]\nsignature = ["#gone-2"]\n')
    said: list[str] = []
    code = await probe_site(site_config(chatsite, tmp_path / "profile", site=str(mine)),
                            tmp_path / "ws", say=said.append, page_timeout=6)
    out = "\n".join(said)
    assert code == EXIT_FAILED == 1, out
    assert "MISS renderer: no renderer's signature is on the page" in out
    logs = list((tmp_path / "ws" / "runs" / "log").glob("*_site_probe.json"))
    assert len(logs) == 1 and json.loads(logs[0].read_text())["misses"] == ["renderer"]


@pytest.mark.parametrize("page", ["legacy", "app_shell", "claude"])
def test_selftest_runs_every_step_and_names_a_broken_one(chatsite: ChatSite, tmp_path: Path,
                                                         page: str) -> None:
    claude = page == "claude"
    cfg = config(tmp_path, chatsite.claude_url if claude else chatsite.url,
                 "claude" if claude else "chatgpt")
    chatsite.configure("selftest", renderer="legacy" if claude else page)
    proc = verifybot(tmp_path, "selftest", "--llm", "site", "--config", str(cfg))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for step in ("open", "send + answer", "copy capture", "DOM fallback", "extraction",
                 "local run"):
        assert re.search(rf"^OK   {re.escape(step)} +\d+ ms", proc.stdout, re.M), proc.stdout
    assert "same as the copy" in proc.stdout and "printed '165'" in proc.stdout
    renderer = "claude_2026" if claude else page
    assert f"renderer {renderer}" in proc.stdout

    chatsite.configure("selftest", renderer="legacy" if claude else page, copy_button=False)
    broken = verifybot(tmp_path, "selftest", "--llm", "site", "--config", str(cfg))
    assert broken.returncode == 1
    assert re.search(r"^FAIL copy capture .*the copy button gave nothing", broken.stdout, re.M)
    assert re.search(r"^OK   local run", broken.stdout, re.M)
