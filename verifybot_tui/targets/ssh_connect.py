"""Opening the SSH connection: where settings, secrets and host keys come from.

Every failure here becomes a TargetError whose message names the host, says
what failed and what to do, because it is all the user sees. A password lives
only in memory: it never reaches a log, a transcript, an exception or a file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.base.ports import Prompter
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.core.settings.secrets import (
    read_dotenv,  # noqa: F401 - kept importable here
    remember_typed,
    secret_env,
)

CONNECT_TIMEOUT = 15.0
PASSWORD_TRIES = 3


@dataclass(frozen=True)
class Settings:
    """Where and as whom to connect; deliberately holds no password."""

    host: str
    port: int
    user: str | None  # None: ~/.ssh/config's User, else the local user name
    key_file: str | None  # None: the agent and ~/.ssh defaults
    known_hosts: Path
    password_env: str

    @property
    def where(self) -> str:
        who = f"{self.user}@" if self.user else ""
        return f"{who}{self.host}:{self.port}"

    @property
    def known_hosts_name(self) -> str:
        """The host as a known_hosts line names it."""
        return self.host if self.port == 22 else f"[{self.host}]:{self.port}"


def resolve_settings(config: TargetConfig, workspace: Path) -> tuple[Settings, str | None]:
    """The settings and a password known without asking (env variable, else ``.env``)."""
    dotenv = read_dotenv(workspace / ".env")
    host = config.host or dotenv.get("PI_HOST", "")
    if not host:
        raise TargetError(f"Target {config.name!r}: no host set. Put host = \"...\" in "
                          f"[targets.{config.name}] of the config file.")
    known = (Path(config.known_hosts).expanduser() if config.known_hosts
             else Path.home() / ".ssh" / "known_hosts")
    key_file = str(Path(config.key_file).expanduser()) if config.key_file else None
    settings = Settings(host=host, port=config.port,
                        user=config.user or dotenv.get("PI_USER") or None, key_file=key_file,
                        known_hosts=known, password_env=config.password_env)
    password = secret_env(config.password_env) \
        or dotenv.get("PI_PASSWORD") or None
    return settings, password


class _Client(asyncssh.SSHClient):
    """Records the host key the server showed, asks for passwords, reports a lost link."""

    def __init__(self, password: str | None, prompter: Prompter | None, where: str,
                 on_lost: Callable[[Exception | None], None]) -> None:
        self.presented_key: asyncssh.SSHKey | None = None
        self.password_used: str | None = None
        self._known_password = password
        self._prompter = prompter
        self._where = where
        self._on_lost = on_lost
        self.tries = 0
        self.typed = False
        self._asked = 0.0  # seconds spent waiting for the user's answers so far
        self._up = False  # logged in
        self._asking_since: float | None = None

    def time_asking(self) -> float:
        """How long the user has been answering (a password dialog): not the network's
        time, so the connect deadline leaves it out."""
        now = asyncio.get_running_loop().time()
        return self._asked + (now - self._asking_since if self._asking_since else 0.0)

    def validate_host_public_key(self, host: str, addr: str, port: int,
                                 key: asyncssh.SSHKey) -> bool:
        self.presented_key = key
        return False

    def auth_completed(self) -> None:
        self._up = True

    def connection_lost(self, exc: Exception | None) -> None:
        # Only a link that was up can be lost: an attempt that failed (an unknown host
        # key, before the retry) reports its end late on a busy machine, after the
        # retry connected, and must not mark that connection lost.
        if self._up:
            self._on_lost(exc)

    async def _next_password(self) -> str | None:
        if self.tries >= PASSWORD_TRIES:
            return None
        if self.tries == 0 and self._known_password:
            self.tries = 1
            self.password_used = self._known_password
            return self.password_used
        if self._prompter is None:
            return None
        again = " (the last one was refused)" if self.tries else ""
        self.tries += 1
        self.typed = True
        self._asking_since = asyncio.get_running_loop().time()
        try:
            self.password_used = await self._prompter.secret(
                f"Password for {self._where}{again}:")
        finally:
            self._asked, self._asking_since = self.time_asking(), None
        remember_typed(self.password_used)  # redacted from outputs, transcripts, prompts
        return self.password_used or None

    def _can_try_password(self) -> bool:
        return self.tries < PASSWORD_TRIES and bool(self._known_password or self._prompter)

    async def password_auth_requested(self) -> str | None:  # type: ignore[override]
        return await self._next_password()

    def kbdint_auth_requested(self) -> str | None:
        return "" if self._can_try_password() else None

    async def kbdint_challenge_received(self, name, instructions, lang, prompts):  # type: ignore[override]
        if not prompts:
            return []
        if len(prompts) == 1 and "pass" in prompts[0][0].lower():
            password = await self._next_password()
            return [password] if password is not None else None
        return None


def load_known_hosts(path: Path) -> asyncssh.SSHKnownHosts:
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        return asyncssh.import_known_hosts(text)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise TargetError(f"Cannot read the known_hosts file {path}: {e}. Fix or remove the bad "
                          f"line, or point known_hosts in the target's config at another file.") \
            from None


def known_keys(settings: Settings) -> list[asyncssh.SSHKey]:
    kh = load_known_hosts(settings.known_hosts)
    port = settings.port if settings.port != 22 else None
    return list(kh.match(settings.host, "", port)[0])


def save_host_key(settings: Settings, key: asyncssh.SSHKey) -> None:
    """Append the key as OpenSSH would, creating ~/.ssh (0700) and the file (0600)."""
    path = settings.known_hosts
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    line = f"{settings.known_hosts_name} {key.export_public_key('openssh').decode().split()[0]} " \
           f"{key.export_public_key('openssh').decode().split()[1]}\n"
    needs_newline = path.exists() and path.stat().st_size > 0 and \
        not path.read_bytes().endswith(b"\n")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(("\n" if needs_newline else "") + line)


def fingerprint(key: asyncssh.SSHKey) -> str:
    return key.get_fingerprint("sha256")


def _algorithm(key: asyncssh.SSHKey) -> str:
    return key.get_algorithm().removeprefix("ssh-").upper()


def changed_key_message(settings: Settings, key: asyncssh.SSHKey | None) -> str:
    shown = f" It now shows {_algorithm(key)} key {fingerprint(key)}." if key else ""
    return (f"HOST KEY CHANGED for {settings.known_hosts_name}: the key it shows is not the one "
            f"saved in {settings.known_hosts}.{shown} This can mean someone is intercepting the "
            f"connection, or just that the Pi was reinstalled (a new SD card image makes new "
            f"keys). Refusing to connect. If you know the Pi was reinstalled, remove the old "
            f"line with: ssh-keygen -R '{settings.known_hosts_name}' -f {settings.known_hosts} "
            f"and connect again to trust the new key.")


async def trust_new_key(settings: Settings, key: asyncssh.SSHKey, prompter: Prompter | None,
                        trust_new_host: bool) -> None:
    """Trust on first use: show the fingerprint, ask, save on yes, refuse otherwise."""
    question = (f"The authenticity of host {settings.known_hosts_name} can't be established. "
                f"{_algorithm(key)} key fingerprint is {fingerprint(key)}. Trust it and save it "
                f"to {settings.known_hosts}?")
    if trust_new_host:
        ok = True
    elif prompter is None:
        raise TargetError(f"Unknown host key for {settings.known_hosts_name} "
                          f"({_algorithm(key)} {fingerprint(key)}), and nobody to ask. Check the "
                          f"fingerprint on the Pi (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), "
                          f"then run again with --trust-new-host, or connect once with ssh.")
    else:
        ok = await prompter.confirm(question)
    if not ok:
        kind = key.get_algorithm().removeprefix("ssh-")
        raise TargetError(f"Host key of {settings.known_hosts_name} ({_algorithm(key)} "
                          f"{fingerprint(key)}) not trusted: not connecting. Compare it with "
                          f"`ssh-keygen -lf /etc/ssh/ssh_host_{kind}_key.pub` on the Pi and "
                          f"answer yes if they match.")
    save_host_key(settings, key)


def _client_keys(settings: Settings) -> list | None:
    if settings.key_file is None:
        return None
    try:
        return [asyncssh.read_private_key(settings.key_file)]
    except asyncssh.KeyEncryptionError:
        raise TargetError(f"The key file {settings.key_file} is protected by a passphrase: load "
                          f"it into ssh-agent (ssh-add) and set key_file = \"\" to use the "
                          f"agent.") from None
    except (OSError, asyncssh.KeyImportError, ValueError) as e:
        raise TargetError(f"Cannot use key_file {settings.key_file} for {settings.where}: {e}. "
                          f"Fix key_file in the target's config (empty: agent and ~/.ssh "
                          f"defaults).") from None


async def _within(seconds: float, connecting: asyncio.Task[asyncssh.SSHClientConnection],
                  client: _Client) -> asyncssh.SSHClientConnection:
    """``connecting``'s result if it comes within ``seconds`` plus the time the user spent
    answering; TimeoutError (``connecting`` cancelled) if not.

    asyncssh's own timeouts count a password dialog's time as the network's: a user
    who types for 15 s, or a busy machine that shows the dialog late, would fail.
    """
    loop = asyncio.get_running_loop()
    start = loop.time()
    while True:
        left = start + seconds + client.time_asking() - loop.time()
        if left <= 0:
            connecting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await connecting
            raise TimeoutError
        done, _ = await asyncio.wait({connecting}, timeout=left)
        if done:
            return connecting.result()


async def open_connection(settings: Settings, *, password: str | None,
                          prompter: Prompter | None, trust_new_host: bool,
                          on_lost: Callable[[Exception | None], None],
                          keepalive_interval: float, keepalive_count_max: int,
                          ) -> tuple[asyncssh.SSHClientConnection, str | None]:
    """Connect, handling first-use trust; return the connection and the password that worked."""
    keys = _client_keys(settings)
    for attempt in range(2):
        client = _Client(password, prompter, settings.where, on_lost)
        try:
            conn = await _within(CONNECT_TIMEOUT + 5, asyncio.ensure_future(asyncssh.connect(
                settings.host, port=settings.port, username=settings.user,
                client_keys=keys if keys is not None else (),
                known_hosts=load_known_hosts(settings.known_hosts),
                client_factory=lambda c=client: c,
                keepalive_interval=keepalive_interval,
                keepalive_count_max=keepalive_count_max,
                login_timeout=0,  # _within times the login, leaving out the user's typing
            )), client)
            return conn, client.password_used
        except asyncssh.HostKeyNotVerifiable:
            if attempt or known_keys(settings):
                raise TargetError(changed_key_message(settings, client.presented_key)) from None
            key = client.presented_key or await _fetch_key(settings)
            await trust_new_key(settings, key, prompter, trust_new_host)
        except asyncssh.KeyExchangeFailed as e:
            if known_keys(settings):
                raise TargetError(changed_key_message(settings, await _fetch_key(settings))) \
                    from None
            raise TargetError(f"SSH key exchange with {settings.where} failed: {e.reason}. "
                              f"The Pi's sshd and this client share no algorithm.") from None
        except asyncssh.PermissionDenied:
            raise TargetError(_auth_message(settings, password, client)) from None
        except asyncssh.DisconnectError as e:
            raise TargetError(f"SSH connection to {settings.where} failed: {e.reason}. Check that "
                              f"sshd runs there and lets this user in.") from None
        except TimeoutError:
            raise TargetError(f"Cannot reach {settings.where}: no answer within "
                              f"{CONNECT_TIMEOUT:.0f} s. Is the Pi powered and on this network, "
                              f"is the host name or IP in the config right?") from None
        except OSError as e:
            why = e.strerror or str(e) or type(e).__name__
            if isinstance(e, ConnectionRefusedError):
                why = f"connection refused (nothing listens on port {settings.port} there)"
            raise TargetError(f"Cannot reach {settings.where}: {why}. Is the Pi powered and on "
                              f"this network, is host = \"{settings.host}\" right (try its IP "
                              f"address), and does sshd run there (sudo systemctl enable --now "
                              f"ssh)?") from None
    raise AssertionError("unreachable")  # pragma: no cover


async def _fetch_key(settings: Settings) -> asyncssh.SSHKey:
    try:
        key = await asyncio.wait_for(asyncssh.get_server_host_key(settings.host, settings.port),
                                     CONNECT_TIMEOUT)
    except (TimeoutError, OSError, asyncssh.Error) as e:
        raise TargetError(f"Cannot read the host key of {settings.where}: {e}") from None
    if key is None:
        raise TargetError(f"{settings.where} showed no host key: cannot verify it.")
    return key


def _auth_message(settings: Settings, password: str | None, client: _Client) -> str:
    tried = [f"key file {settings.key_file}" if settings.key_file
             else "the ssh-agent and default keys in ~/.ssh"]
    if password:
        tried.append(f"the password from ${settings.password_env} or .env PI_PASSWORD")
    if client.typed:
        tried.append("the password typed")
    user = settings.user or "(your local user name)"
    return (f"SSH login to {settings.where} refused: authentication failed as user {user} "
            f"(tried {', '.join(tried)}). Check user and key_file in the target's config, "
            f"copy your key to the Pi (ssh-copy-id -p {settings.port} {user}@{settings.host}), "
            f"or set the password in the environment variable {settings.password_env}.")
