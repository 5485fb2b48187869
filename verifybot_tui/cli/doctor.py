"""``verifybot doctor``: is everything in place for a run?

Each check prints one line, OK / WARN / FAIL, and a FAIL says what to do. It
checks the config, the workspace, each browser LLM's browser and profile, each API
provider (reachable, key taken, model offered: its models list, else a one-token
request), and that each target answers, without sending any prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.base.errors import EXIT_FAILED, EXIT_SUCCESS, EXIT_USAGE, VerifyBotError
from verifybot_tui.core.settings.config import Config, LLMConfig
from verifybot_tui.core.settings.secrets import secret_env


class _Report:
    def __init__(self) -> None:
        self.failed = False

    def line(self, level: str, what: str, text: str) -> None:
        self.failed |= level == "FAIL"
        print(one_line(f"{level:<4} {what}: {text}"), flush=True)  # a server's text too


async def run_doctor(config: Config, *, trust_new_host: bool = False) -> int:
    r = _Report()
    from verifybot_tui.core.settings.config import user_config_path

    r.line("OK", "config", str(config.path) if config.path else
           f"no config file: using the defaults (copy config.toml.example to "
           f"{user_config_path()})")
    ws = config.workspace
    try:
        ws.mkdir(parents=True, exist_ok=True)
        probe = ws / ".verifybot-doctor"
        probe.write_text("ok")
        probe.unlink()
        r.line("OK", "workspace", f"{ws} is writable")
    except OSError as e:
        r.line("FAIL", "workspace", f"{ws} is not writable ({e.strerror}): set [run] workspace")
    if wsl():
        r.line("OK", "system", "Windows (WSL2): the sandbox, QEMU and local runs work inside "
                               "WSL; a visible login browser needs WSLg (Windows 11, or 10 "
                               "with WSLg); serial ports of real boards come in with usbipd "
                               "(usbipd attach --wsl), see the README's Windows section")
    if sys.platform == "linux":
        from verifybot_tui.cli.packages import missing_packages, packages_line

        level, text = packages_line(missing_packages())
        r.line(level, "packages", text)
    for name, llm in sorted(config.llm.items()):
        if llm.kind == "browser":
            await _check_llm(r, name, llm)
        else:
            await _check_api(r, name, llm, config)
    for name in sorted(config.targets):
        await _check_target(r, config, name, trust_new_host)
    return EXIT_FAILED if r.failed else EXIT_SUCCESS


async def _check_llm(r: _Report, name: str, llm: LLMConfig) -> None:
    from playwright.async_api import async_playwright

    from verifybot_tui.llm.browser.chromium import find_browser, profile_dir
    from verifybot_tui.llm.browser.first_start import LOGIN_STAMP, needs_display, profile_state

    what = f"llm {name}"
    async with async_playwright() as pw:
        own = pw.chromium.executable_path
    try:
        found = find_browser(llm, own)
        r.line("OK", what, f"browser {found or own + ' (Playwright’s own)'}")
    except VerifyBotError as e:
        r.line("FAIL", what, str(e))
        return
    from verifybot_tui.llm.browser.site_profile import builtin_sites, user_site_file

    if llm.site in builtin_sites() and (own := user_site_file(llm.site)).is_file():
        r.line("OK", what, f"site profile {own} (your own, read before the built-in "
                           f"{llm.site}; `doctor --repair` wrote it, or you did)")
    if not llm.headless and (why := needs_display()):
        r.line("WARN", what, f"headless = false needs a display, and {why}: run VerifyBot "
                             "in a desktop session (or under xvfb-run), or set headless = true "
                             f"in [llm.{name}] (bot checks catch headless browsers more often)")
    profile = profile_dir(llm)
    state = profile_state(profile)
    if state == "logged_in":
        stamp = profile / LOGIN_STAMP
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp.stat().st_mtime))
        r.line("OK", what, f"profile {profile}: logged in with `verifybot login` on {when} "
                           "(whether it still is, each prompt checks)")
    elif state == "used":
        # A profile only says a browser ran with it, not that anyone logged in.
        r.line("WARN", what, f"profile {profile} exists, login not checked: run "
                             f"`verifybot login --llm {name}` once if the app says logged out")
    elif state == "unused":
        r.line("WARN", what, f"profile {profile} was never used (a browser start left only "
                             f"its lock): run `verifybot login --llm {name}`")
    else:
        r.line("WARN", what, f"no profile at {profile}: run `verifybot login --llm {name}` once")


def wsl(proc_version: Path = Path("/proc/version")) -> bool:
    """Running inside Windows' WSL (its kernel says "microsoft")."""
    try:
        return "microsoft" in proc_version.read_text().lower()
    except OSError:
        return False


async def _check_api(r: _Report, name: str, llm: LLMConfig, config: Config) -> None:
    # The config is the user's own (or a ./config.toml the user approved by its hash:
    # cli.approval.folder_config), so its server may be asked with the key.
    from verifybot_tui.llm.api_check import check_provider

    result = await check_provider(llm, config.workspace)
    r.line("OK" if result.ok else "FAIL", f"llm {name}", result.text)


async def run_doctor_page(path: Path, site: str, *, as_json: bool = False) -> int:
    """`doctor --page FILE.html`: a saved page read offline as the driver reads it.
    0 when a renderer claims it (a MISS is reported, not an error), 1 when none does,
    2 when the file or the site cannot be used."""
    from verifybot_tui.llm.browser.saved_page import fit_site, format_report, inspect_page

    if not path.is_file():
        print(one_line(f"FAIL --page {path}: no such file; give a saved chat page (.html)"))
        return EXIT_USAGE
    site, note = fit_site(path, site)
    if note:  # beside --json's one object, on stderr
        print(one_line(note), file=sys.stderr if as_json else sys.stdout, flush=True)
    try:
        report = await inspect_page(path, site)
    except VerifyBotError as e:
        print(one_line(f"FAIL {e}"))
        return EXIT_USAGE
    if as_json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        for line in format_report(path, report):
            print(line)
    return EXIT_SUCCESS if report.renderer else EXIT_FAILED


async def run_doctor_repair(args: argparse.Namespace, path: Path, site: str,
                            page_llm: str | None = None) -> int:
    """`doctor --page FILE --repair [--llm NAME]`: an LLM proposes selectors for each MISS,
    the saved page decides, the working ones go to the user's own profile (asked first,
    or --accept). 0 when every MISS was fixed and written."""
    from verifybot_tui.cli.common import config_for
    from verifybot_tui.cli.terminal import Stdin
    from verifybot_tui.llm import make_llm
    from verifybot_tui.llm.browser.repair import override_path, repair_page
    from verifybot_tui.llm.browser.saved_page import fit_site

    if not path.is_file():
        print(one_line(f"FAIL --page {path}: no such file; give a saved chat page (.html)"))
        return EXIT_USAGE
    site, note = fit_site(path, site)
    if note:
        print(one_line(note), flush=True)
    try:
        cfg = config_for(args)
        spec = page_llm or (args.repair if isinstance(args.repair, str) else None) or \
            args.llm or cfg.run.default_llm
        llm = make_llm(cfg, spec, cfg.workspace)
    except VerifyBotError as e:
        print(one_line(f"FAIL {e}"))
        return EXIT_USAGE
    override = override_path(site)
    try:
        return await repair_page(path, site, llm, override,
                                 say=lambda line: print(one_line(line), flush=True),
                                 confirm=Stdin().confirm, accept=args.accept)
    except VerifyBotError as e:
        print(one_line(f"FAIL {e}"))
        return e.exit_code
    finally:
        await llm.close()


async def run_site_repair(args: argparse.Namespace, cfg: Config, name: str,
                          ask: Any) -> int:
    """`doctor --site --repair LLM`: the live probe, then the same repair on the page it
    saw (saved as an evidence page), with the user's profile of that site as override."""
    from verifybot_tui.llm.browser.site_probe import probe_site

    proposer = args.repair if isinstance(args.repair, str) else None
    if proposer is None:
        print("FAIL --repair with --site names the LLM that proposes selectors: "
              "--repair NAME (an [llm.NAME] or replay:FILE.md)")
        return EXIT_USAGE
    pages: list[str] = []
    code = await probe_site(cfg.llm[name], cfg.workspace, confirm=ask, keep_page=pages.append)
    if code == EXIT_SUCCESS or not pages:
        return code
    site = cfg.llm[name].site or name
    # The page as the probe saw it, kept beside the probe's evidence: the repair reads
    # it, and so can `doctor --page` afterwards.
    folder = cfg.workspace / "runs" / "log"
    folder.mkdir(parents=True, exist_ok=True)
    page = folder / f"{time.strftime('%Y%m%d-%H%M%S')}_{name}_site_probe_page.html"
    page.write_text(pages[-1], encoding="utf-8")
    return await run_doctor_repair(args, page, site, page_llm=proposer)


def _check_sandbox(r: _Report, what: str, mode: str) -> None:
    """Whether what an answer brings (program, build, QEMU) runs in the bubblewrap
    sandbox here, and what to do if not (README "What is contained where")."""
    from verifybot_tui.targets.sandbox import bubblewrap

    if mode == "off":
        r.line("WARN", what, "sandbox off (sandbox = \"off\"): what an answer brings runs "
                             "with your user's powers (your files, ~/.ssh, the network); "
                             "contained by process group, cgroup, marker and subreaper checks")
    elif bubblewrap.bwrap() is not None:
        r.line("OK", what, "sandbox: bubblewrap, each run in its own PID namespace, no home, "
                           "no capabilities, the system read-only")
    elif mode == "require":
        r.line("FAIL", what, f"no sandbox: {bubblewrap.why_no_sandbox()}; sandbox = "
                             "\"require\" refuses every run")
    else:
        r.line("WARN", what, f"no sandbox: {bubblewrap.why_no_sandbox()}; what an answer "
                             "brings runs with your user's powers, contained by process "
                             "group, cgroup, marker and subreaper checks only")


async def _check_target(r: _Report, config: Config, name: str,
                        trust_new_host: bool = False) -> None:
    from verifybot_tui.targets import make_target

    cfg = config.targets[name]
    what = f"target {name}"
    if cfg.kind == "mcu":
        await _check_mcu(r, config, name)
        return
    if cfg.kind == "local":
        tools = {t: shutil.which(t) for t in ("python3", "bash", "gcc", "g++", "node")}
        have = ", ".join(t for t, p in tools.items() if p)
        missing = ", ".join(t for t, p in tools.items() if not p)
        r.line("OK", what, f"this machine; tools: {have}" + (f"; missing: {missing}"
                                                            if missing else ""))
        _check_sandbox(r, what, cfg.sandbox)
        return
    if cfg.password_env and secret_env(cfg.password_env) is None and not cfg.key_file:
        r.line("WARN", what, f"no key_file and ${cfg.password_env} is not set: "
                             "the agent or ~/.ssh keys must work")
    target = make_target(config, name, config.workspace, trust_new_host=trust_new_host)
    try:
        await asyncio.wait_for(target.connect(), 20)
        r.line("OK", what, f"{cfg.user}@{cfg.host}:{cfg.port} reachable and logged in")
    except VerifyBotError as e:
        r.line("FAIL", what, str(e))
    except TimeoutError:
        r.line("FAIL", what, f"{cfg.host}:{cfg.port} did not answer within 20 s: is the Pi "
                             "on and on this network?")
    finally:
        try:
            await target.close()
        except Exception:
            pass


async def _check_mcu(r: _Report, config: Config, name: str) -> None:
    """Toolchain and emulator here; the flash tool and the serial port where the board is."""
    from verifybot_tui.targets import make_target
    from verifybot_tui.targets.mcu.checks import check_target, remote_checks
    from verifybot_tui.targets.mcu.target import McuTarget

    cfg = config.targets[name]
    base = str(config.path.parent) if config.path else None
    findings = check_target(cfg, base)
    for level, text in findings:
        r.line(level, f"target {name}", text)
    _check_sandbox(r, f"target {name}", cfg.sandbox)  # the build and QEMU run in it
    if cfg.backend == "labgrid":
        from verifybot_tui.targets.mcu.farm.session import farm_findings

        for level, text in await farm_findings(cfg):
            r.line(level, f"target {name}", text)
        return
    if not cfg.via or any(level == "FAIL" for level, _ in findings[:1]):
        return
    target = make_target(config, name, config.workspace)
    assert isinstance(target, McuTarget) and target.via is not None
    try:
        await asyncio.wait_for(target.connect(), 20)
        for level, text in await remote_checks(target.via, cfg):
            r.line(level, f"target {name}", text)
    except (VerifyBotError, TimeoutError) as e:
        r.line("FAIL", f"target {name}", f"{cfg.via} could not be reached to check the "
                                        f"board: {e or 'no answer within 20 s'}")
    finally:
        await target.close()
