"""No secret is readable from a process of ours nor written anywhere (issue 21, point 4).

Each test is one reproduction of the adversarial pass: a program that reads
/proc/<pid>/environ of every process it can see, secrets matched by ``env_deny``
and URL-encoded, a secret typed in the prompt, a config file that spells a key
with TOML escapes or is swapped while it is imported, and an export that meets a
symlink or a folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from api_fixtures import KEY, KEY_ENV, llm_table, write_config
from apiserver import ApiServer
from cli_runs import db_rows, python_answer, replay, run_cli
from project import verifybot_cmd

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings import config_transfer

TOKEN = "gh p/tok+en=4242&zz"  # matched by env_deny (*TOKEN*); URL-encoding changes it
PI_PW = "hunter2-pi-password"


def leaks(ws: Path, *secrets: str) -> list[str]:
    """Files under ``ws`` whose name or bytes hold one of ``secrets``."""
    found = []
    for p in ws.rglob("*"):
        if any(s in str(p) for s in secrets):
            found.append(f"name: {p}")
        elif p.is_file() and any(s.encode() in p.read_bytes() for s in secrets):
            found.append(str(p))
    return found


# -- no process of ours holds a secret in its environment ------------------------------

HOLDERS = """
    import os, time
    secrets = [s.encode() for s in SECRETS]
    open(READY, "w").write(str(os.getpid()))
    while not os.path.exists(GO):
        time.sleep(0.02)
    for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
        try:
            env = open(f"/proc/{pid}/environ", "rb").read()
        except OSError:
            continue
        if any(s in env for s in secrets):
            print("HOLDS", pid)
    print("scan done")
"""


def environ_holders(*secrets: str) -> list[int]:
    """Processes other than this one whose /proc/PID/environ holds a secret."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                env = Path(f"/proc/{entry.name}/environ").read_bytes()
            except OSError:
                continue
            if any(s.encode() in env for s in secrets):
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_no_process_of_ours_holds_a_secret_in_its_environment(
        tmp_path: Path, api_server: ApiServer, sandbox: str) -> None:
    """The API key still works, yet neither VerifyBot nor the program (nor anything
    else of ours) carries the key or an env_deny match in /proc/PID/environ."""
    # Secrets of this test alone: other test runs on the machine use the fixture's KEY.
    key, token = f"vb-key-{uuid.uuid4().hex}", f"{TOKEN}-{uuid.uuid4().hex[:8]}"
    api_server.key = key
    # The handshake files are in the run folder, the one place a sandboxed program writes.
    code = HOLDERS.replace("SECRETS", repr([key, token])).replace(
        "READY", repr("ready")).replace("GO", repr("go"))
    api_server.answers = [python_answer(code)]
    local = f'[targets.local]\nsandbox = "{sandbox}"\n' if sandbox != "auto" else ""
    config = write_config(tmp_path, llm_table("api", "openai", api_server.url, "coder"),
                          local, default_llm="api")
    env = {**os.environ, KEY_ENV: key, "GITHUB_TOKEN": token}
    proc = subprocess.Popen(
        [*verifybot_cmd(), "run", "scan", "--config", str(config), "--target", "local",
         "--yes", "--max-retries", "0", "--workspace", str(tmp_path / "ws")],
        cwd=tmp_path, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 90
        ready: list[Path] = []
        while not ready and proc.poll() is None and time.monotonic() < end:
            ready = list((tmp_path / "ws" / "runs").glob("*/ready"))
            time.sleep(0.05)
        assert ready, proc.communicate(timeout=30)
        holders = environ_holders(key, token)  # seen from outside: root sees them all
        (ready[0].parent / "go").write_text("")
        out, errs = proc.communicate(timeout=90)
    finally:
        proc.kill()
    assert proc.returncode == 0, errs
    assert "scan done" in out and "HOLDS" not in out, out
    assert holders == [], f"secrets in the environment of {holders} (VerifyBot is {proc.pid})"
    assert api_server.chats(), "the key must still reach the API server"


# -- redaction: env_deny values, URL-encoded forms, the prompt --------------------------


def test_env_deny_values_are_redacted_in_every_spelling(tmp_path: Path) -> None:
    """The program finds the token in a file (not in its environment) and prints it
    plain, URL-encoded and form-encoded: every copy is cut from every file."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "found.txt").write_text(TOKEN)
    code = f"""
        import sys, urllib.parse
        t = open({str(tmp_path / 'found.txt')!r}).read()
        print("plain", t)
        print("url", urllib.parse.quote(t, safe=""))
        print("form", urllib.parse.quote_plus(t))
        sys.exit(1)
    """
    llm = replay(tmp_path, python_answer(code), python_answer("print('ok')"))
    # Outside the sandbox, which would hide the file (tests/targets/test_sandbox_secrets.py)
    proc = run_cli("run", "show it", "--llm", llm, "--target", "local", "--yes",
                   "--workspace", str(ws), cwd=tmp_path,
                   env={"GITHUB_TOKEN": TOKEN, "VERIFYBOT_NO_SANDBOX": "1"})
    assert proc.returncode == 0, proc.stderr
    first = (ws / "outputs" / "show_it_1.txt").read_text()
    assert "plain [redacted]" in first and "url [redacted]" in first
    assert "form [redacted]" in first
    spellings = (TOKEN, quote(TOKEN, safe=""), quote_plus(TOKEN))
    assert leaks(ws, *spellings) == []
    assert not any(s in proc.stdout + proc.stderr for s in spellings)


def test_a_secret_typed_in_the_prompt_is_never_written(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    config = tmp_path / "config.toml"
    config.write_text('[targets.pi]\nkind = "ssh"\nhost = "127.0.0.1"\n'
                      'password_env = "MY_PI_PW"\n')
    prompt = f"log in with {PI_PW} then print hi"
    proc = run_cli("run", prompt, "--llm", replay(tmp_path, python_answer("print('hi')")),
                   "--target", "local", "--yes", "--workspace", str(ws),
                   "--config", str(config), cwd=tmp_path, env={"MY_PI_PW": PI_PW})
    assert proc.returncode == 0, proc.stderr
    assert db_rows(ws, "SELECT prompt FROM sessions")[0][0] == \
        "log in with [redacted] then print hi"
    assert leaks(ws, PI_PW, "hunter2") == []
    history = run_cli("history", "--json", "--workspace", str(ws), cwd=tmp_path,
                      env={"MY_PI_PW": PI_PW})
    assert "[redacted]" in history.stdout and "hunter2" not in history.stdout


def test_the_system_prompt_goes_out_redacted(tmp_path: Path, api_server: ApiServer) -> None:
    api_server.answers = [python_answer("print('hi')")]
    config = write_config(tmp_path, llm_table("api", "openai", api_server.url, "coder",
                                              system=f"Our deploy token is {TOKEN}."),
                          default_llm="api")
    proc = run_cli("run", "say hi", "--config", str(config), "--target", "local", "--yes",
                   "--workspace", str(tmp_path / "ws"), cwd=tmp_path,
                   env={KEY_ENV: KEY, "GITHUB_TOKEN": TOKEN})
    assert proc.returncode == 0, proc.stderr
    system = api_server.chats()[0].body["messages"][0]
    assert system["role"] == "system"
    assert system["content"] == "Our deploy token is [redacted]."


# -- config import: one read, every TOML spelling ---------------------------------------


def escaped(value: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in value)


SPELLINGS = {
    "unicode escapes": lambda v: f'"{escaped(v)}"',
    "literal": lambda v: f"'{v}'",
    "multi-line with a line-ending backslash": lambda v: f'"""{v[:5]}\\\n    {v[5:]}"""',
    "long unicode escape": lambda v: '"' + "".join(f"\\U{ord(c):08x}" for c in v) + '"',
}


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "verifybot" / "config.toml"


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_import_refuses_a_secret_in_any_toml_spelling(tmp_path: Path, spelling: str) -> None:
    path = tmp_path / "in.toml"
    path.write_text('[llm.api]\nkind = "openai"\nmodel = "m"\napi_key_env = "VB_K"\n'
                    f"system = {SPELLINGS[spelling](PI_PW)}\n")
    proc = run_cli("config", "import", str(path), cwd=tmp_path,
                   env={"VB_K": PI_PW, "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert proc.returncode == 2, proc.stderr
    assert "$VB_K (a secret)" in proc.stderr
    assert not (tmp_path / "xdg" / "verifybot" / "config.toml").exists()


def test_import_refuses_the_value_of_an_env_deny_match(tmp_path: Path) -> None:
    path = tmp_path / "in.toml"
    path.write_text(f'[llm.api]\nkind = "openai"\nmodel = "m"\nsystem = "{TOKEN}"\n')
    proc = run_cli("config", "import", str(path), cwd=tmp_path,
                   env={"GITHUB_TOKEN": TOKEN, "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert proc.returncode == 2 and "$GITHUB_TOKEN (a secret)" in proc.stderr, proc.stderr


def test_import_opens_the_file_once_and_installs_what_it_checked(
        tmp_path: Path, user_home: Path) -> None:
    path = tmp_path / "in.toml"
    path.write_text('[run]\nmax_retries = 4\n')
    opened: list[str] = []
    watching = [True]

    def hook(event: str, args: tuple) -> None:
        if watching[0] and event == "open" and str(args[0]) == str(path):
            opened.append(event)

    sys.addaudithook(hook)
    try:
        config_transfer.import_file(path)
    finally:
        watching[0] = False
    assert len(opened) == 1
    assert user_home.read_bytes() == path.read_bytes()


def test_import_of_a_file_swapped_meanwhile_never_installs_a_secret(
        tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer swaps a clean file and one holding the key as fast as it can; whatever
    each import read, what it installed is what it checked."""
    monkeypatch.setenv("VB_K", PI_PW)
    clean = '[llm.api]\nkind = "openai"\nmodel = "m"\napi_key_env = "VB_K"\n'
    dirty = clean + f'system = "{PI_PW}"\n'
    path = tmp_path / "in.toml"
    path.write_text(clean)
    stop = threading.Event()

    def swap() -> None:
        n = 0
        while not stop.is_set():
            tmp = tmp_path / f"swap{n % 2}"
            tmp.write_text(dirty if n % 2 else clean)
            os.replace(tmp, path)
            n += 1

    writer = threading.Thread(target=swap, daemon=True)
    writer.start()
    installed_dirty = refused = 0
    try:
        for _ in range(150):
            try:
                config_transfer.import_file(path)
            except ConfigError:
                refused += 1
                continue
            installed_dirty += PI_PW in user_home.read_text()
    finally:
        stop.set()
        writer.join()
    assert installed_dirty == 0, f"{installed_dirty} of 150 imports installed the secret"


# -- config export: no symlink followed, no temporary file left ------------------------


def test_export_never_writes_through_a_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".settings.toml.tmp").symlink_to(victim)  # where the old code wrote first
    (out / "link.toml").symlink_to(victim)
    first = run_cli("config", "export", str(out / "settings.toml"), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert victim.read_text() == "precious\n"
    second = run_cli("config", "export", str(out / "link.toml"), cwd=tmp_path)
    assert second.returncode == 2 and "symbolic link" in second.stderr
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in out.iterdir()) == [".settings.toml.tmp", "link.toml",
                                                      "settings.toml"]


def test_an_export_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "settings.toml").mkdir(parents=True)  # a folder where the file should go
    proc = run_cli("config", "export", str(out / "settings.toml"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "folder" in proc.stderr
    assert [p.name for p in out.iterdir()] == ["settings.toml"]
