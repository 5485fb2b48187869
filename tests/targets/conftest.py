"""The SSH target on the loopback sshd, for the SSH test modules of this folder.

test_local_target defines its own ``target`` (a LocalTarget), which takes precedence there.
"""

from __future__ import annotations

import pytest

from verifybot_tui.targets.ssh.target import SSHTarget


@pytest.fixture
async def target(ssh_config, tmp_path):
    """An SSHTarget with a short stop grace (the stop tests wait through it), closed after."""
    t = SSHTarget(ssh_config, tmp_path / "ws")
    t.stop_grace = 0.5
    yield t
    await t.close()
