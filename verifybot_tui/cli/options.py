"""The options many commands share, each set up in one place: --config, --workspace,
--target, --llm, --trust, --trust-new-host, --install, --yes, --json and -v.

An option here is its flags, how argparse reads it (a value, or a switch) and its
usual --help text. A command names the ones it takes, in the order its --help lists
them (``shared(p, "--target", "--llm")``), and gives its own text where the option
says more in that command (``shared(p, "--json", text="print ...")``); what only one
command has stays with that command. So --target, --trust or --install cannot mean
one thing in one command and drift in another.
"""

from __future__ import annotations

import argparse
import contextlib

HELP = {
    "--config": "config file, yours: nothing in it is asked about (default: the user "
                "config dir's; a ./config.toml here is a file from others, used once you "
                "approve its content)",
    "--workspace": "where programs/, outputs/, raw_md/, context/ and history.db live "
                   "(default: [run] workspace)",
    "--target": "a [targets.NAME] table (default: [run] default_target, local)",
    "--llm": "an [llm.NAME] table, or replay:PATH (default: [run] default_llm, chatgpt)",
    "--trust": "approve what files from others set that runs commands or weakens "
               "protection (a ./config.toml here, a board file's qemu or compiler, risky "
               "flags; config import's risky keys) without asking; --yes does not "
               "(default: shown and asked in a terminal, refused without one)",
    "--trust-new-host": "trust an SSH host key seen for the first time, for scripts "
                        "(default: show its fingerprint and ask)",
    "--install": "install the packages an answer needs without asking (pip runs outside "
                 "the sandbox; index names only); never --yes or a recipe (default: [run] "
                 "install of your own config, false: asked in a terminal; a headless run "
                 "names the missing packages and goes on)",
}

# The options that take a value, with the word --help shows for it; the others are switches.
VALUES = {"--config": "PATH", "--workspace": "DIR", "--target": "NAME", "--llm": "NAME"}
SHORT = {"--verbose": "-v"}


def shared(p: argparse.ArgumentParser, *names: str, text: str | None = None) -> None:
    """Add the shared options ``names`` to ``p`` in this order, each with its usual help;
    ``text``: one option's help in this command, where it says more than the usual one
    (an option without a usual help, like --yes or --json, always has its command's)."""
    if text is not None and len(names) != 1:
        raise ValueError("text= is the help of one option")
    for name in names:
        flags = (SHORT[name], name) if name in SHORT else (name,)
        if name in VALUES:
            p.add_argument(*flags, metavar=VALUES[name], help=text or HELP[name])
        else:
            p.add_argument(*flags, action="store_true", help=text or HELP[name])


def last_options(p: argparse.ArgumentParser, *, workspace: bool = True) -> None:
    """What every command ends its options with: --config, --trust (unless the command
    set it up itself, saying what it approves there) and --workspace (not for the
    commands that write none)."""
    shared(p, "--config")
    with contextlib.suppress(argparse.ArgumentError):  # run, compare... have their own
        shared(p, "--trust")
    if workspace:
        shared(p, "--workspace")
