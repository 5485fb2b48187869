"""The commands that are one call into a layer below: login, probe, history, doctor,
selftest, config and recipe.

Each imports what it needs when it runs, so the headless commands start fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import sys
import time
from pathlib import Path

from verifybot_tui.cli.common import close_all, config_for
from verifybot_tui.cli.terminal import Stdin, err
from verifybot_tui.core.base.ansi import one_line, visible
from verifybot_tui.core.base.errors import (
    EXIT_SUCCESS,
    EXIT_USAGE,
    ConfigError,
)
from verifybot_tui.core.settings.config import check_llm_spec


async def cmd_login(args: argparse.Namespace) -> int:
    cfg = config_for(args)
    name = args.llm or cfg.run.default_llm
    check_llm_spec(cfg, name, replay=False)  # a replay has nothing to log in to
    if cfg.llm[name].kind != "browser":
        from verifybot_tui.core.settings.config import key_env

        print(f"{name} is an API provider (kind {cfg.llm[name].kind}): it needs no login. "
              f"Its key is read from ${key_env(cfg.llm[name])}; `verifybot doctor` checks it.",
              file=sys.stderr)
        return EXIT_SUCCESS
    from verifybot_tui.llm.browser.chromium import profile_dir
    from verifybot_tui.llm.browser.first_start import LOGIN_STAMP, needs_display
    from verifybot_tui.llm.browser.login import login

    if why := needs_display():
        # A login needs a window the user can type into: say so before a browser fails.
        raise ConfigError(f"`verifybot login` opens a browser window, but {why}. Log in from "
                          "a desktop session (or over `ssh -X`), then use the same profile "
                          f"here: [llm.{name}] profile_dir = \"{profile_dir(cfg.llm[name])}\"")
    print(f"Opening {cfg.llm[name].url} in a browser window: log in there as you normally "
          f"do. The window closes by itself once the chat page shows (within "
          f"{args.timeout:g} s).", file=sys.stderr)
    await login(cfg.llm[name], cfg.workspace, timeout=args.timeout)
    profile = profile_dir(cfg.llm[name])
    with contextlib.suppress(OSError):
        (profile / LOGIN_STAMP).write_text(time.strftime("%Y-%m-%d %H:%M:%S\n"))
    print(f"Logged in to {name}; the profile {profile} keeps the login. Now ask away: "
          f"verifybot --llm {name}", file=sys.stderr)
    return EXIT_SUCCESS



async def cmd_probe(args: argparse.Namespace) -> int:
    from verifybot_tui.targets import make_target

    cfg = config_for(args, writes=True)
    name = args.target or cfg.run.default_target
    target = make_target(cfg, name, cfg.workspace, prompter=Stdin(),
                         trust_new_host=args.trust_new_host)
    try:
        await target.connect()
        text = await target.probe()
    finally:
        await close_all(target)
    print(visible(text))
    err(f"saved as {cfg.workspace / 'context' / (name + '.md')}")
    return EXIT_SUCCESS



async def cmd_history(args: argparse.Namespace) -> int:
    from verifybot_tui.core.loop.recorder import sweep
    from verifybot_tui.core.store.history import History, status_text
    from verifybot_tui.targets import live_runs

    cfg = config_for(args)
    db = cfg.workspace / "history.db"
    if getattr(args, "compare", False):
        from verifybot_tui.cli.compare.command import list_comparisons

        return list_comparisons(cfg, json_out=args.json)
    if not db.exists():
        if args.json:
            print("[]")
        else:
            print(f"no history yet in {cfg.workspace}")
        return EXIT_SUCCESS
    history = History(cfg.workspace)
    try:
        try:
            sweep(history, cfg.workspace)  # a session whose process is gone: INTERRUPTED
            live_runs.sweep_live(cfg.workspace)  # and what its local runs left, killed
        except (OSError, sqlite3.Error) as e:  # a full disk: the listing is still shown
            err(f"cannot mark ended sessions now ({e}); listing them as they are")
        sessions = history.sessions()
        for s in sessions:
            s["attempts"] = history.attempts(s["id"])
    finally:
        history.close()
    if args.json:
        print(json.dumps(sessions, indent=2))
        return EXIT_SUCCESS
    for s in sessions:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s["started_at"]))
        print(one_line(f"#{s['id']} {when} {status_text(s):<12} {s['target']:<8} "
                       f"{shorten(s['prompt'], 60)!r}"))
        for a in s["attempts"]:
            files = ", ".join(a["files"])
            verdict = f"{a['verdict']}: {a['reason']}" if a["verdict"] else ""
            print(one_line(f"    attempt {a['n']}: {a['status']:<12} {files}  "
                           f"{shorten(verdict, 80)}"))
    return EXIT_SUCCESS


def shorten(text: str, most: int) -> str:
    """At most ``most`` characters, cut at a word boundary with an ellipsis
    ("concatenate str…", never "concatenate str (")."""
    text = " ".join(text.split())
    if len(text) <= most:
        return text
    cut = text[:most - 1]
    if " " in cut and not text[most - 1].isspace():
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip(" ,;:(-") + "…"



async def cmd_doctor(args: argparse.Namespace) -> int:
    from verifybot_tui.cli.doctor import run_doctor, run_doctor_page

    if args.page:  # a saved page, offline: no config, no profile, no network
        site = args.site if isinstance(args.site, str) else "chatgpt"
        if args.repair:
            from verifybot_tui.cli.doctor import run_doctor_repair

            return await run_doctor_repair(args, Path(args.page), site)
        return await run_doctor_page(Path(args.page), site, as_json=args.json)
    try:
        cfg = config_for(args)
    except ConfigError as e:
        print(one_line(f"FAIL config: {e}"))
        return EXIT_USAGE
    if args.json:
        print("FAIL --json goes with --page FILE.html (the other doctor checks print lines)")
        return EXIT_USAGE
    if args.repair and not args.site:
        print("FAIL --repair goes with --page FILE.html (a saved page) or --site (the live "
              "page)")
        return EXIT_USAGE
    if args.site:
        if isinstance(args.site, str):
            print(f"FAIL --site {args.site}: a site name goes with --page FILE.html; alone, "
                  f"--site probes the live site of --llm NAME")
            return EXIT_USAGE
        from verifybot_tui.llm.browser.site_probe import probe_site

        name = args.llm or cfg.run.default_llm
        check_llm_spec(cfg, name, replay=False)
        ask = None if args.yes else Stdin().confirm
        if args.repair:
            from verifybot_tui.cli.doctor import run_site_repair

            return await run_site_repair(args, cfg, name, ask)
        return await probe_site(cfg.llm[name], cfg.workspace, confirm=ask)
    return await run_doctor(cfg, trust_new_host=args.trust_new_host)



async def cmd_selftest(args: argparse.Namespace) -> int:
    from verifybot_tui.cli.selftest import run_offline_selftest, run_selftest

    cfg = config_for(args)
    if args.offline:
        return await run_offline_selftest(cfg)
    return await run_selftest(cfg, args.llm or cfg.run.default_llm)



async def _confirm_import(args: argparse.Namespace, changes: list) -> bool:
    """Show every key the import changes; the risky ones take a yes (or --trust).

    False: the user answered no, a choice, not an error. With nobody to answer (no
    terminal) the risky keys are refused: ConfigError."""
    err(f"{args.path} changes {len(changes)} key(s)" + (":" if changes else
                                                       " (same as the installed config)"))
    for change in changes:
        err(f"  {change}")
    risky = [c for c in changes if c.risk]
    if not risky or args.trust:
        if risky:
            err(f"--trust: importing {len(risky)} risky key(s) as shown")
        return True
    names = ", ".join(f"{c.key} ({c.risk})" for c in risky)
    refused = (f"nothing was imported: {args.path} sets keys that run commands or weaken "
               f"protection: {names}. Read them; to import anyway answer yes in a terminal, "
               "or pass --trust")
    if sys.stdin is None or not sys.stdin.isatty():
        raise ConfigError(refused)
    return await Stdin().confirm(f"Import {len(risky)} risky key(s) shown above?")


async def cmd_config(args: argparse.Namespace) -> int:
    from verifybot_tui.core.settings.config_transfer import (
        export_text,
        install,
        review_import,
        write_new,
    )

    if args.action == "import":
        if not args.path:
            raise ConfigError("config import needs the file to install: "
                              "verifybot config import PATH")
        path = Path(args.path).expanduser()
        data, changes = review_import(path)
        if not await _confirm_import(args, changes):
            from verifybot_tui.core.settings.config import user_config_dir

            dest = user_config_dir() / "config.toml"
            err(f"Nothing imported (you answered no): {dest} is as it was."
                if dest.exists() else "Nothing imported (you answered no).")
            return EXIT_SUCCESS
        dest, backup = install(data, path)
        err(f"installed {args.path} as {dest}"
             + (f"; the old config is kept as {backup}" if backup else ""))
        return EXIT_SUCCESS
    text = export_text(config_for(args))
    if not args.path:
        sys.stdout.write(text)
        return EXIT_SUCCESS
    out = Path(args.path).expanduser()
    try:
        write_new(out, text.encode("utf-8"))
    except OSError as e:
        raise ConfigError(f"cannot write {out}: {e.strerror or e}; nothing was "
                          "exported") from None
    from verifybot_tui.core.settings import trust

    # VerifyBot wrote it from the user's own settings: found later as a ./config.toml,
    # it is no file from others (approved by its hash, as a yes would).
    trust.approve(trust.FileToTrust(out.absolute(), trust.digest(text.encode("utf-8"))))
    err(f"wrote {out} (secrets are not in it: only the names of their variables)")
    return EXIT_SUCCESS



async def cmd_recipe(args: argparse.Namespace) -> int:
    from verifybot_tui.cli.recipes import cmd_recipe as run_recipe_command

    # `recipe run` writes into the workspace: one that cannot work is exit 2 before any run.
    return await run_recipe_command(args, config_for(args, writes=args.action == "run"))

