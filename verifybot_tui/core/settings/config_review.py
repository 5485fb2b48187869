"""What a ``config import`` would change, key by key, and which changes are risky.

A config someone shared can turn the sandbox off, let programs see secrets,
point an API whose key VerifyBot holds at another server, or set a command
VerifyBot runs. ``config import`` shows every key whose effective value the new
file changes, names these risky ones for what they do, and installs such a file
only after a yes (or ``--trust``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

from verifybot_tui.core.settings.config import (
    API_KINDS,
    DEFAULT_LLMS,
    Config,
    LLMConfig,
    TargetConfig,
    key_env,
)

_SANDBOX_STRENGTH = {"off": 0, "auto": 1, "require": 2}
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_.+-]+$")


@dataclass(frozen=True)
class Change:
    key: str  # dotted: run.env_deny, llm.NAME.base_url, targets.NAME.flash
    old: Any
    new: Any
    risk: str = ""  # what the new value does, when it runs a command or weakens protection

    def __str__(self) -> str:
        text = f"{self.key}: {_show(self.old)} -> {_show(self.new)}"
        return f"{text}  [RISKY: {self.risk}]" if self.risk else text


_ABSENT = object()


def _show(value: Any) -> str:
    return "(not set)" if value is _ABSENT else repr(value)


def _flat(cfg: Config) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for table, obj in (("run", cfg.run), ("ui", cfg.ui), ("mcp", cfg.mcp)):
        for f in fields(obj):
            out[f"{table}.{f.name}"] = getattr(obj, f.name)
    for top, items in (("llm", cfg.llm), ("targets", cfg.targets)):
        for name, item in items.items():
            for f in fields(item):
                if f.name != "name":
                    out[f"{top}.{name}.{f.name}"] = getattr(item, f.name)
    return out


# The [ui.keys] ids whose key runs a program or says yes for the user (tui/keys.toml):
# rebound to a key typed for something else, a run would start by accident.
ACCEPT_KEY_IDS = ("approval.accept", "permission.yes", "toggle_auto_accept")
_LOOPBACK_HOSTS = ("::1", "localhost")


def site_origin(url: str) -> tuple[str, str]:
    """(scheme, host[:port]) of a URL, the default port left out: what "the same site" means."""
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)", url.strip())
    if not m:
        return ("", "")
    scheme, netloc = m.group(1).lower(), m.group(2).lower()
    host = netloc.rsplit("@", 1)[-1]
    default = {"http": ":80", "https": ":443"}.get(scheme, "")
    return (scheme, host.removesuffix(default))


def _chat_url_risk(llm: LLMConfig) -> str:
    """A chat site's url: its own origin, over https, is the site; anything else is a page
    of someone else's opened in the logged-in browser."""
    if not llm.url:
        return ""
    known = DEFAULT_LLMS.get(llm.site)
    scheme, host = site_origin(llm.url)
    if scheme != "https":
        return ("opens this page over plain http (or another scheme) in your logged-in "
                "browser: anyone on the way can change it (weakens protection)")
    if known is None:
        return f"opens this page in your logged-in browser, as site {llm.site!r}"
    if (scheme, host) != site_origin(known.url):
        return (f"opens {host} in your logged-in browser as the {llm.site} site, not "
                f"{site_origin(known.url)[1]} (its pages get the prompts and see the session)")
    return ""


def _llm_risk(field_name: str, llm: LLMConfig, old: Any) -> str:
    api = llm.kind in API_KINDS
    if field_name == "base_url" and api and llm.base_url:
        return f"sends the API key in ${key_env(llm)} to this server"
    if field_name == "api_key_env" and api:
        where = llm.base_url or f"the {llm.kind} API"
        return f"sends the value of ${key_env(llm)} as an API key to {where}"
    if field_name == "browser_path" and llm.browser_path:
        return "runs this program as the browser (runs a command)"
    if field_name in ("url", "site") and not api:
        return _chat_url_risk(llm)
    if field_name == "profile_dir" and llm.profile_dir:
        return ("the browser uses this profile folder: its logins, cookies and extensions "
                "(weakens protection)")
    return ""


def _coordinator_risk(t: TargetConfig) -> str:
    c = t.coordinator.strip().lower()
    if c.startswith("[") and "]" in c:
        host = c[1:c.index("]")]
    else:
        host = c.rsplit(":", 1)[0] if c.count(":") == 1 else c
    if not c or host in _LOOPBACK_HOSTS or host.startswith("127."):
        return ""
    return (f"flashes boards through the labgrid coordinator at {t.coordinator} (firmware "
            "and board traffic go there)")


def _target_risk(field_name: str, t: TargetConfig, old: Any) -> str:
    if field_name == "sandbox":
        was = _SANDBOX_STRENGTH.get(old, 1) if old is not _ABSENT else 1
        if _SANDBOX_STRENGTH.get(t.sandbox, 0) < was:
            return "runs programs with less or no sandbox (weakens protection)"
    if field_name == "network" and t.network and old is False:
        return "gives sandboxed programs the network (weakens protection)"
    if field_name == "flash" and t.flash and not _PLAIN_WORD.match(t.flash):
        return "runs this command to flash a board (runs a command)"
    if field_name == "known_hosts" and t.known_hosts:
        return "trusts the SSH host keys this file lists (weakens protection)"
    if t.kind == "ssh" and field_name in ("host", "port", "password_env") and t.host:
        return f"sends the SSH password in ${t.password_env} to {t.host}:{t.port}"
    if field_name == "coordinator":
        return _coordinator_risk(t)
    return ""


def _run_risk(key: str, old: Any, new: Any) -> str:
    if key == "run.env_deny":
        gone = [p for p in (old if isinstance(old, list) else []) if p not in new]
        if gone:
            return ("programs may see variables these patterns hid: "
                    f"{', '.join(gone)} (weakens protection)")
        return ""
    if key == "mcp.targets" and set(new) - set(old if isinstance(old, list) else []):
        return ("offers targets without a sandbox to MCP clients: their files run there "
                "(weakens protection)")
    if key == "mcp.install" and new is True:
        return "installs packages programs from MCP clients need (weakens protection)"
    if key == "run.auto_accept" and new is True:
        return "runs every version of a program without asking (weakens protection)"
    if key == "run.install" and new is True:
        return ("installs the packages answers name without asking, outside the sandbox "
                "(runs their build code)")
    if key == "run.workspace":
        return "puts programs, outputs, history and the venv in this folder (where results go)"
    if key == "run.judge" and new not in ("", "off"):
        return "lets this judge decide which runs are VERIFIED (it reads their output)"
    return ""


def _keys_risk(old: Any, new: Any) -> str:
    was = old if isinstance(old, dict) else {}
    now = new if isinstance(new, dict) else {}
    moved = [i for i in ACCEPT_KEY_IDS if was.get(i) != now.get(i) and i in now]
    if not moved:
        return ""
    return ("rebinds what says yes for you (" + ", ".join(f"{i} = {now[i]!r}" for i in moved)
            + "): a key pressed for something else would run a program")


def _risk(key: str, cfg: Config, old: Any, new: Any) -> str:
    parts = key.split(".")
    if parts[0] in ("run", "mcp"):
        return _run_risk(key, old, new)
    if key == "ui.keys":
        return _keys_risk(old, new)
    if parts[0] == "llm" and parts[1] in cfg.llm:
        return _llm_risk(parts[2], cfg.llm[parts[1]], old)
    if parts[0] == "targets" and parts[1] in cfg.targets:
        return _target_risk(parts[2], cfg.targets[parts[1]], old)
    return ""


def _defaults(top: str, obj: Any) -> dict[str, Any]:
    return {f"{top}.*.{f.name}": getattr(obj, f.name) for f in fields(obj)}


def _generic(key: str) -> str:
    parts = key.split(".")
    return f"{parts[0]}.*.{parts[2]}" if len(parts) == 3 else key


def config_changes(old: Config, new: Config) -> list[Change]:
    """Every key whose effective value ``new`` changes from ``old``, risky ones named."""
    before, after = _flat(old), _flat(new)
    fresh = {**_defaults("llm", LLMConfig()), **_defaults("targets", TargetConfig())}
    changes = []
    for key in sorted(set(before) | set(after)):
        was, now = before.get(key, _ABSENT), after.get(key, _ABSENT)
        if was == now:
            continue
        table_default = fresh.get(_generic(key), _ABSENT)
        if _ABSENT in (was, now) and (now if was is _ABSENT else was) == table_default:
            continue  # a table added or removed: its keys left at their defaults say nothing
        risk = "" if now is _ABSENT else _risk(key, new, was, now)
        changes.append(Change(key, was, now, risk))
    return changes
