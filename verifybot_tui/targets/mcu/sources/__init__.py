"""The ways an answer's sources become firmware besides the board package's own build:
the answer's own Makefile (``own_make``), its own start-up and linker script
(``own_startup``), and Arduino sketches (``sketch``: the .ino as the Arduino tools
read it; ``arduino``: the sketch built against Debian's Arduino AVR core)."""
