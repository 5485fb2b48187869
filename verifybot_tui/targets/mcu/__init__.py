"""Microcontroller targets: firmware cross-compiled here, run in QEMU or on a real board.

boards (boards as TOML data) -> build (board package or the answer's make) ->
elfcheck (fits, sane vectors) -> qemu (emulator, GDB stub, UART) or probe (flash
tool, serial port, here or on the Pi) -> diagnose (faults, hangs, unmodelled devices).
"""
