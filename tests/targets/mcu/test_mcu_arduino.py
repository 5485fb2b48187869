"""Arduino sketches on the Uno, built against Debian's Arduino AVR core, run in QEMU.

A sketch with Serial, millis(), a Timer1 interrupt and EEPROM; C++ written as a sketch
using a function before its definition, with the core's Wire and SPI; a sketch needing a
library that is not installed; and an answer whose ``blink.ino`` goes through the CLI
(extraction keeps its name). Real avr-g++, the core's own sources, real QEMU.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_runs import answers, run_cli
from mcu_fixtures import Recorder, qemu_pids, request
from project import need

from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets.mcu.sources import arduino

SKETCH = """\
#include <EEPROM.h>

volatile unsigned int ticks = 0;

ISR(TIMER1_COMPA_vect)
{
  ticks++;
}

void setup() {
  Serial.begin(115200);
  Serial.println("sketch up");
  EEPROM.write(0, 42);
  startTimer();
}

void loop() {
  if (ticks >= 3) {
    TIMSK1 = 0;
    unsigned long now = millis();
    Serial.print("ticks ok, millis ");
    Serial.println(now);
    Serial.print("eeprom ");
    Serial.println(EEPROM.read(0));
    Serial.println("PASSED");
    while (true) {
    }
  }
}

void startTimer() {
  noInterrupts();
  TCCR1A = 0;
  TCCR1B = (1 << WGM12) | (1 << CS10);
  OCR1A = 1000;
  TIMSK1 = 1 << OCIE1A;
  interrupts();
}
"""

CPP_SKETCH = """\
#include <Wire.h>
#include <SPI.h>

void setup() {
  Serial.begin(9600);
  Serial.print("sum ");
  Serial.println(sumTo(10));
  Serial.println(sumTo(10) == 55 ? "PASSED" : "FAILED");
}

void loop() {
}

int sumTo(int n) {
  return n ? n + sumTo(n - 1) : 0;
}
"""

SERVO = """\
#include <Servo.h>

Servo arm;

void setup() {
  arm.attach(9);
  Serial.begin(9600);
  Serial.println("PASSED");
}

void loop() {}
"""


@pytest.fixture
def uno(mcu):  # type: ignore[no-untyped-def]
    need("avr-g++")
    assert arduino.installed(), f"the Arduino AVR core ({arduino.PACKAGE}) is not installed"
    return mcu("arduino-uno")


async def test_a_sketch_with_serial_millis_a_timer_and_eeprom_runs(uno):
    r = await uno.run(request("sketch_1", {"sketch.ino": SKETCH}, timeout=15), Recorder())
    assert r.stdout == "sketch up\nticks ok, millis 0\neeprom 0\nPASSED\n", r.stderr
    assert judge(r, []).ok
    assert "[parts: sketch sketch.ino made C++ as the Arduino tools do (#include <Arduino.h>, " \
           "prototypes: vb_build/sketch/sketch.ino.cpp); Arduino AVR core" in r.command
    assert "for arduino:avr:uno (atmega328p, 16 MHz)" in r.command
    assert "libraries EEPROM from the core" in r.command
    # what QEMU does not do as the chip does is said, not hidden
    assert "note: millis(), micros() and delay() count Timer0's overflows, and QEMU does " \
           "not model Timer0" in r.stderr
    assert "note: QEMU does not model the EEPROM" in r.stderr
    made = Path(r.workdir) / "vb_build" / "sketch" / "sketch.ino.cpp"
    assert "void startTimer();\n#line 10 \"sketch.ino\"\nvoid setup() {" in made.read_text()


async def test_the_core_is_compiled_once_then_only_linked(uno):
    await uno.run(request("cached_1", {"sketch.ino": SKETCH}, timeout=15), Recorder())
    cache = uno.workspace / "runs" / ".vb_board_cache"
    cores = sorted(cache.glob("arduino-uno-core-*.a"))
    assert len(cores) == 1
    before = os.stat(cores[0]).st_mtime_ns
    r = await uno.run(request("cached_2", {"sketch.ino": SKETCH}, timeout=15), Recorder())
    assert judge(r, []).ok
    assert os.stat(cores[0]).st_mtime_ns == before
    assert "cores/arduino/wiring.c" not in r.command  # linked from the archive, not compiled


async def test_cpp_written_as_a_sketch_gets_prototypes_and_the_core_libraries(uno):
    r = await uno.run(request("sketch_cpp", {"main.cpp": CPP_SKETCH}, timeout=15), Recorder())
    assert r.stdout == "sum 55\nPASSED\n", r.stderr
    assert "libraries SPI, Wire from the core" in r.command


async def test_a_missing_library_is_named(uno):
    r = await uno.run(request("sketch_servo", {"servo.ino": SERVO}, timeout=15), Recorder())
    assert r.compile_failed and not judge(r, []).ok
    assert "note: Servo.h is not found: it belongs to an Arduino library (Servo) that is not " \
           "installed here. The Arduino AVR core's libraries are EEPROM" in r.stderr


def test_an_ino_answer_keeps_its_name_and_verifies_through_the_cli(tmp_path):
    need("avr-gcc", "qemu-system-avr")
    (tmp_path / "config.toml").write_text(
        '[run]\nworkspace = "ws"\n\n[targets.uno]\nkind = "mcu"\nboard = "arduino-uno"\n')
    blink = "Here is the sketch for the Uno:\n\n**blink.ino**\n```cpp\n" + CPP_SKETCH + "```\n"
    (tmp_path / "t.md").write_text(answers(blink))
    proc = run_cli("run", "sum 1 to 10 on the Uno as a sketch", "--config", "config.toml",
                   "--target", "uno", "--llm", "replay:t.md", "--yes", "--judge", "off",
                   "--max-retries", "0", "--timeout", "15", "--json", "--expect",
                   "contains:sum 55", cwd=tmp_path)
    record = json.loads(proc.stdout)
    assert record["status"] == "VERIFIED", proc.stderr[-3000:]
    ws = tmp_path / "ws"
    assert [p.name for p in (ws / "programs").iterdir()] == ["blink_1.ino"]
    assert (ws / "runs" / "sum_1_to_10_on_the_1" / "blink.ino").is_file()
    transcript = next((ws / "raw_md").glob("*.md")).read_text()
    assert "[parts: sketch blink.ino made C++ as the Arduino tools do" in transcript
    assert qemu_pids(tmp_path / "ws") == []


def test_the_unos_context_tells_the_llm_sketches_work():
    from verifybot_tui.targets.mcu.boards import load_board
    from verifybot_tui.targets.mcu.context import board_context

    text = board_context(load_board("arduino-uno"), backend="qemu", where="")
    assert "Arduino sketches work too" in text and "arduino:avr:uno (16 MHz)" in text
    assert "millis() stays 0" in text


def test_doctor_names_the_arduino_core():
    from verifybot_tui.targets.mcu import checks
    from verifybot_tui.targets.mcu.boards import load_board

    found = checks.toolchain(load_board("arduino-uno"))
    assert ("OK", f"Arduino sketches: arduino-core-avr {arduino.core_version()} (EEPROM, HID, "
                  "SPI, SoftwareSerial, Wire)") in found
    assert not any("Arduino" in text for _, text in checks.toolchain(load_board("lm3s6965evb")))


def test_two_ino_files_are_one_sketch_with_prototypes_for_both():
    """As the Arduino builder: the main sketch first, prototypes before its first function
    for what either file defines (one declared only later in the other file too)."""
    from verifybot_tui.targets.mcu.sources import sketch

    main = "void setup() {\n  blink(2);\n  Serial.println(twice(3));\n}\n\nvoid loop() {}\n"
    other = "// helpers.ino\nvoid blink(int n) {\n  digitalWrite(13, n & 1);\n}\n" \
            "int twice(int x);\nint twice(int x) { return 2 * x; }\n"
    made = sketch.to_cpp([("main.ino", main), ("helpers.ino", other)])
    assert made.startswith('#include <Arduino.h>\n#line 1 "main.ino"\n'
                           'void blink(int n);\nint twice(int x);\n#line 1 "main.ino"\n'
                           'void setup() {')
    assert '#line 1 "helpers.ino"\n// helpers.ino\nvoid blink(int n) {' in made
