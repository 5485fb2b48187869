"""`verifybot recipe run --parallel 2` on two targets at once: this machine and a real sshd."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_runs import run_cli
from project import EXAMPLES

pytestmark = pytest.mark.ssh


def test_two_recipes_on_two_targets_run_at_once(sshd, remote_dir, tmp_path: Path):
    cfg = sshd.write_config_toml(tmp_path / "config.toml", remote_dir[0])
    shutil.copy(EXAMPLES / "rocket.md", tmp_path / "rocket.md")
    here = (EXAMPLES / "rocket.toml").read_text()
    (tmp_path / "here.toml").write_text(here)
    (tmp_path / "pi.toml").write_text(here.replace('name = "rocket-apogee"', 'name = "on-pi"')
                                      .replace('target = "local"', 'target = "pi"'))
    # pi.toml runs the answers it brings on the Pi, where nothing is sandboxed: --trust.
    r = run_cli("recipe", "run", "here.toml", "pi.toml", "--parallel", "2", "--json",
                "--config", str(cfg), "--workspace", str(tmp_path / "ws"), "--trust",
                cwd=tmp_path, stdin="")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "--trust: running what" in r.stderr and "target = pi" in r.stderr
    a, b = json.loads(r.stdout)["recipes"]
    assert [(a["target"], a["status"]), (b["target"], b["status"])] == [
        ("local", "VERIFIED"), ("pi", "VERIFIED")]
    # Both were under way at once (each began before the other ended).
    assert a["started"] < b["finished"] and b["started"] < a["finished"]


async def test_a_recipes_flags_build_on_the_pi(ssh_config, tmp_path: Path):
    """-Wall -Werror reach gcc over SSH; a warning of a passing build is kept for the check."""
    from cli_runs import CLEAN, UNUSED, c_request, clean

    from verifybot_tui.targets.ssh.target import SSHTarget

    target = SSHTarget(ssh_config, tmp_path / "ws")
    try:
        failed = await target.run(c_request(UNUSED, "pw_1", ["-Wall", "-Werror"]),
                                  lambda s, t: None)
        warned = await target.run(c_request(UNUSED, "pw_2", ["-Wall"]), lambda s, t: None)
        passed = await target.run(c_request(CLEAN, "pw_3", ["-Wall", "-Werror"], "gcc"),
                                  lambda s, t: None)
    finally:
        await target.close()
    assert failed.compile_failed and "gcc -Wall -Werror -o prog" in failed.command
    assert not clean(failed).met and "unused variable" in clean(failed).evidence
    assert warned.exit_code == 0 and "unused variable" in warned.build_stderr
    assert clean(warned).evidence.startswith("the compiler warned:")
    assert passed.exit_code == 0 and passed.stdout == "hi\n" and clean(passed).met
