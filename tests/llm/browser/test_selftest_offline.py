"""`verifybot selftest --offline`: the whole bridge against VerifyBot's own page on loopback.

Real Chromium, the real driver through the page's site profile, a real local run;
the page ships in the package (not in tests/), and it answers only the self-test
prompt, so a pass means the prompt went through as sent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from browser_fixtures import CHROMIUM
from cli_runs import run_cli
from project import ROOT

STEPS = ["open", "send + answer", "copy capture", "DOM fallback", "extraction", "local run"]


def test_selftest_offline_passes_every_step_and_leaves_nothing(tmp_path: Path) -> None:
    proc = run_cli("selftest", "--offline", cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "VerifyBot's own page, offline" in lines[0] and "http://127.0.0.1:" in lines[0]
    for step in STEPS:
        assert any(line.startswith("OK") and f" {step} " in line for line in lines), \
            (step, proc.stdout)
    assert "printed '165'" in proc.stdout and "same as the copy" in proc.stdout
    assert "this installation's bridge works" in lines[-1]
    assert list(tmp_path.iterdir()) == [], "no workspace files where it ran"


def test_a_browser_that_cannot_start_fails_the_open_step_with_its_time(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[llm.mine]\nkind = "browser"\nbrowser_path = "/nonexistent/chrome"\n')
    proc = run_cli("selftest", "--offline", "--config", str(config), cwd=tmp_path, timeout=120)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    fail = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fail) == 1 and " open " in fail[0], proc.stdout
    assert "/nonexistent/chrome" in fail[0] and "[llm.mine]" in fail[0]


async def test_the_page_answers_only_the_selftest_prompt(tmp_path: Path) -> None:
    from verifybot_tui.cli.selftest import PROMPT
    from verifybot_tui.core.answers.extract import extract
    from verifybot_tui.core.settings.config import LLMConfig
    from verifybot_tui.llm.browser import BrowserLLM
    from verifybot_tui.llm.browser.selftest_site import SelftestSite, site_file

    with SelftestSite() as site:
        cfg = LLMConfig(name="selftest", site=str(site_file()), url=site.url, headless=True,
                        browser_path=CHROMIUM, profile_dir=str(tmp_path / "profile"))
        llm = BrowserLLM(cfg, tmp_path, answer_timeout=30)
        try:
            await llm.start()
            other = await llm.ask("Write a program that prints hello")
            assert extract(other.markdown).programs == []
            changed = await llm.ask(PROMPT.replace("sum(range(1, 11)) * 3", "6 * 7"))
            (program,) = extract(changed.markdown).programs
            assert program.code.strip() == "print(6 * 7)"
            assert llm.conversation_url and "/c/" in llm.conversation_url
        finally:
            await llm.close()


def test_the_page_ships_in_the_package_not_in_tests(tmp_path: Path) -> None:
    """setuptools' build_py is what a wheel or a plain install copies."""
    from verifybot_tui.llm.browser.selftest_site import PAGE_DIR

    assert ROOT / "verifybot_tui" in PAGE_DIR.parents
    subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q",
                    "build_py", "--build-lib", str(tmp_path / "build")], cwd=ROOT, check=True,
                   capture_output=True, timeout=120)
    built = tmp_path / "build" / "verifybot_tui" / "llm" / "browser" / "selftest_page"
    assert sorted(p.name for p in built.iterdir()) == ["index.html", "selftest.toml"]
