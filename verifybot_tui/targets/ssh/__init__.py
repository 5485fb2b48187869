"""The SSH target: programs run on a Raspberry Pi over one kept-open asyncssh connection.

One connection serves every action (a command on it costs milliseconds, a new
connection a tenth of a second or far more over Wi-Fi with a password), with
keepalives so a dropped link is noticed instead of hanging a read forever.
Each program runs as the leader of its own process group and records the
group's id in its run folder, so a timeout, a cancel or close can stop the
whole tree: an SSH signal first, then ``kill -<pgid>`` over a fresh channel.
Beyond the group: each run carries a marker variable ``VERIFYBOT_RUN=<token>``
(kept in ``.vb_run``), and after the group is stopped every process of our user
on the Pi whose environment holds it had escaped (a setsid double fork): it is
named in the verdict and killed. Where the Pi runs user sessions (probed once
per connection: ``systemd-run --user --scope true`` works), each run also lives
in its own transient scope, which holds even a process that wiped its
environment; its leftovers are killed with the scope.

connection (the link, the remote folder, what it offers) -> launch (the files and
the shell script that start a run) -> channel (the program's output and the
watcher's report, read on one channel) -> process (one program's life: started,
waited for, stopped, its leftovers named) -> packages (the venv and pip there) ->
target (the Target protocol); outcome holds one program's end and the result made
of it. Only ``names_pi`` lives here: choosing a target must not load asyncssh.
"""

from __future__ import annotations

import re

_PI_WORDS = re.compile(
    r"\b(raspberry\s*pi|raspi|rpi|pi\s*(?:zero|[345])(?![.,]?\d)|gpio\d*|i2c|spi|uart|"
    r"sensor\s+pins?|gpiozero|smbus2?|spidev|pigpio|lgpio|picamera2?|sense\s*hat|"
    r"neopixels?|ds18b20|dht(?:11|22)|bcm\s*\d+|(?:on|to)\s+(?:my|the)\s+pi)\b"
    r"|\bRPi\.GPIO\b",
    re.IGNORECASE)


def names_pi(prompt: str) -> bool:
    """Whether a prompt is about Pi hardware, so the loop should pick the SSH target."""
    return bool(_PI_WORDS.search(prompt))
