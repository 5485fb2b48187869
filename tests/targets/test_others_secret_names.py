"""Secrets under the names tools give them (``SSHPASS``, ``MYSQL_PWD``, a ``*_PAT``, an
``*AUTH*`` token, a ``*_KEY``, a ``*CREDENTIAL*``) and passwords inside URLs
(``DATABASE_URL``, ``PIP_INDEX_URL``) do not reach a program, and a password that reaches
it some other way (here: pieced together) is redacted from the output, outputs/, the
transcript and history.db. Run as root and as an ordinary user, sandboxed and not.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_runs import python_answer, replay
from other_users import USER_IDS, USERS, give, open_folder, verifybot_as

SECRETS = {
    "SSHPASS": "sshpass-planted-7731",
    "MYSQL_PWD": "mysql-planted-7732",
    "GITHUB_PAT": "ghp_planted_7733",
    "GH_AUTH": "gh-auth-planted-7734",
    "AWS_CREDENTIALS": "aws-cred-planted-7735",
    "DEPLOY_KEY": "deploy-key-planted-7736",
}
DB_PASSWORD = "db-pw-planted-7737"
INDEX_PASSWORD = "idx/pw-planted-7738"  # URL-encoded in the URL: idx%2Fpw-...
URLS = {
    "DATABASE_URL": f"postgres://app:{DB_PASSWORD}@127.0.0.1:5432/shop",
    "PIP_INDEX_URL": "https://builder:idx%2Fpw-planted-7738@127.0.0.1/simple/",
}

HOSTILE = r'''
import os
for name in sorted(os.environ):
    print("ENV", name, "=", os.environ[name])
print("PIECED", "db-pw-" + "planted-7737")
print("PIECED", "idx/pw-" + "planted-7738")
print("PIECED", "sshpass-" + "planted-7731")
print("CWD", os.environ.get("PWD", "no PWD"))
'''


def _leaks(text: str) -> list[str]:
    values = [*SECRETS.values(), DB_PASSWORD, INDEX_PASSWORD, "idx%2Fpw-planted-7738"]
    return [v for v in values if v in text]


@pytest.mark.parametrize("sandbox", ["auto", "off"])
@pytest.mark.parametrize("user", USERS, ids=USER_IDS)
def test_secret_names_and_url_passwords_reach_no_program_and_no_record(user, sandbox):
    with open_folder() as home:
        llm = replay(home, python_answer(HOSTILE))
        (home / "vb.toml").write_text(f'[targets.local]\nsandbox = "{sandbox}"\n')
        give(user, home)
        ws = home / "ws"
        proc = verifybot_as(user, "run", "show env", "--llm", llm, "--target", "local",
                            "--yes", "--max-retries", "0", "--workspace", str(ws),
                            "--config", str(home / "vb.toml"), cwd=home,
                            env={**SECRETS, **URLS, "PWD": str(home)})
        out = proc.stdout + proc.stderr
        assert "ENV PATH =" in proc.stdout, out
        for name in SECRETS:
            assert f"ENV {name} =" not in proc.stdout, name
        # The URLs stay, without their passwords (the user part kept).
        assert "ENV DATABASE_URL = postgres://app@127.0.0.1:5432/shop" in proc.stdout
        assert "ENV PIP_INDEX_URL = https://builder@127.0.0.1/simple/" in proc.stdout
        assert "PIECED [redacted]" in proc.stdout and "CWD no PWD" not in proc.stdout
        assert _leaks(out) == []
        written = "".join(p.read_text(errors="replace") for p in ws.rglob("*")
                          if p.is_file() and p.suffix in (".txt", ".md"))
        assert "PIECED [redacted]" in written and _leaks(written) == []
        stored = b"".join(p.read_bytes() for p in ws.glob("history.db*"))
        assert stored, "history.db holds the run"  # what the leak check below reads
        assert _leaks(stored.decode("utf-8", "replace")) == []


def test_a_folder_variable_is_no_secret(tmp_path: Path) -> None:
    """``*PWD*`` is about MYSQL_PWD: the current folder (PWD, OLDPWD) stays, unredacted."""
    from verifybot_tui.core.settings.secrets import program_env, secret_values

    env = {"PWD": str(tmp_path), "OLDPWD": "/srv", "MYSQL_PWD": "mysql-planted-7732",
           "HOME": os.environ.get("HOME", "/root")}
    assert set(program_env(env, None)) == {"PWD", "OLDPWD", "HOME"}
    assert secret_values(None, None, env) == {"mysql-planted-7732"}
