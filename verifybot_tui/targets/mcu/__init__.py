"""Microcontroller targets: firmware cross-compiled here, run in QEMU or on a real board.

boards (boards as TOML data) -> build (board package or the answer's make) ->
elfcheck (fits, sane vectors) -> qemu (emulator, GDB stub, UART) or a real board
(real/: flash tool, serial port, here or on the Pi; farm/: a labgrid place) ->
diagnose (faults, hangs, unmodelled devices).
"""

from __future__ import annotations

import re

_MCU_WORDS = re.compile(
    r"\b(stm32\w*|cortex-?m\d*\+?|firmware|bare[- ]metal|micro-?controllers?|mcus?|"
    r"arduino|atmega\w*|attiny\w*|avr|nrf5\d\w*|rp2040|esp32\w*|lm3s\w*|netduino\w*)\b",
    re.IGNORECASE)


def names_mcu(prompt: str) -> bool:
    """Whether a prompt is about a microcontroller, so the loop should pick an mcu target."""
    return bool(_MCU_WORDS.search(prompt))
