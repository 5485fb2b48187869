"""Scripted answers for the test chat site, one list of replies per scenario.

A reply is the model's markdown plus how it is delivered: a token rate, a
pause before the first token (the "thinking" time, stop button shown), pauses
in the middle, or an event instead of a normal ending (limit, error, dropped
connection, never finishing). Scenarios with a `page` show a state instead of
the chat (logged out, account picker, bot check, limit banner).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Reply:
    markdown: str = ""
    rate: float = 4000.0  # characters per second
    pause_before: float = 0.0  # seconds with the stop button shown and no text
    pauses: list[tuple[int, float]] = field(default_factory=list)  # (at character, seconds)
    # "", "limit", "error", "drop" (connection lost at drop_at), "never", "downgrade",
    # "cut" (stops at drop_at with a Continue button; the rest follows when clicked),
    # "delivery" (an in-turn "Message delivery timed out" with a regenerate button),
    # "retry" (an error line and a Retry button in the turn, no toast)
    event: str = ""
    drop_at: int = 0
    artifact: dict | None = None  # claude: code kept in an artifact, not in the text

    def as_json(self) -> dict:
        return asdict(self)


@dataclass
class Scenario:
    replies: list[Reply]
    # "chat", "login_buttons", "account_picker", "bot_check", "limit_banner"
    page: str = "chat"

    def reply(self, index: int) -> Reply:
        return self.replies[min(index, len(self.replies) - 1)]


HELLO = '''Here is a small program.

```python
print("hello from the test site")
```'''

CODE_BLOCKS = '''## Plan

The program is split into **two files** and a `Makefile`-free run command.

**`main.py`**

```python
from helper import greet


def main():
    for name in ["Pi", "desk"]:
        print(greet(name))  # one line each


if __name__ == "__main__":
    main()
```

**`helper.py`**

```python
def greet(name):
\t"""Tabs, <angle brackets> & ampersands survive."""
    return f"Hello, {name}!"\x20\x20
```

A C version for comparison, `hello.c`:

```c
#include <stdio.h>

int main(void) {
    printf("a < b && c > d\\n");
    return 0;
}
```

Run it with:

```bash
python3 main.py
```

Expected output (the last line is empty):

```text
Hello, Pi!
Hello, desk!

```

1. `main.py` imports the helper
2. `helper.py` holds *greet*

- no extra packages
- works on a Raspberry Pi'''


def _long_answer(lines: int = 1500) -> str:
    body = "\n".join(f"    total += {i}  # line {i} of a long answer" for i in range(lines))
    return ("A very long program follows.\n\n```python\ndef long_sum():\n    total = 0\n"
            f"{body}\n    return total\n\n\nprint(long_sum())\n```\n\nThat was long.")


PAUSED = '''Thinking done. Here is the answer after a pause.

```bash
echo "paused answer"
```

The end.'''

STREAM = ("Streaming text arrives in pieces. " * 12).strip() + "\n\n```python\nprint(42)\n```"

FAILING = '''This program reads the configuration.

```python
import json
print(json.loads("{not json"))
```'''

WORKING = '''Sorry, the string was not valid JSON. Fixed:

```python
import json
print(json.loads('{"ok": true}')["ok"])
```'''


def program_150() -> str:
    """A 150-line program (CodeMirror shows about 36 of its lines at a time)."""
    body = "\n".join(f"    total += {i}  # step {i:03d}: add {i} to the running total"
                     for i in range(144))
    return ("A long program in one block.\n\n```python\ndef main():\n    total = 0\n"
            f"{body}\n    print(total)\n\n\nmain()\n```")


CUT_AT = CODE_BLOCKS.index("\n\nA C version")

ARTIFACT_TEXT = "I put the program in an artifact: run it with `python3 hello_art.py`."
ARTIFACT = {"id": "hello-art", "type": "application/vnd.ant.code", "language": "python",
            "title": "hello_art.py",
            "content": 'print("hello from an artifact")\nprint(6 * 7)\n'}
ARTIFACT_ANSWER = (ARTIFACT_TEXT + "\n\n**hello_art.py**\n\n```python\n"
                   'print("hello from an artifact")\nprint(6 * 7)\n```')

SELFTEST = """Here is the program.

```python
print(sum(range(1, 11)) * 3)
```"""


LONG_THOUGHT = ("After thinking it through, here is the whole program.\n\n"
                + "".join(f"- step {i}: checked case {i} of the task\n" for i in range(40))
                + "\n" + HELLO)


def bench_words(n: int = 120) -> str:
    return " ".join(f"w{i:04d}" for i in range(n))


SCENARIOS: dict[str, Scenario] = {
    "answer": Scenario([Reply(HELLO)]),
    "code_blocks": Scenario([Reply(CODE_BLOCKS, rate=3000)]),
    "long": Scenario([Reply(_long_answer(), rate=400_000)]),
    "stream": Scenario([Reply(STREAM, rate=600)]),
    "pause_before": Scenario([Reply(PAUSED, pause_before=1.2, rate=2000)]),
    "pause_during": Scenario([Reply(PAUSED, rate=2000, pauses=[(20, 0.8), (70, 0.6)])]),
    "slow": Scenario([Reply(STREAM, pause_before=0.6, rate=150),
                      Reply("Continuing where we were: **done**.")]),
    # the site probe's answer: the stop button shown, then about 1.5 s of text (long
    # enough to sample the generating state; "slow" takes 3.5 s)
    "probe": Scenario([Reply(STREAM, pause_before=0.4, rate=300)]),
    "two_answers": Scenario([Reply(HELLO), Reply(PAUSED, pause_before=0.2)]),
    "never": Scenario([Reply("This answer never finishes", rate=500, event="never"),
                       Reply("A short answer after the stop.")]),
    "limit": Scenario([Reply("", event="limit", pause_before=0.2)]),
    "error": Scenario([Reply("", event="error", pause_before=0.2)]),
    "drop": Scenario([Reply(STREAM, rate=800, event="drop", drop_at=60)]),
    "downgrade": Scenario([Reply(HELLO, event="downgrade", pause_before=0.2)]),
    "fix_loop": Scenario([Reply(FAILING), Reply(WORKING)]),
    "bench": Scenario([Reply(bench_words(), rate=1500)]),
    "bench_pause": Scenario([Reply(bench_words(60), rate=1500, pause_before=0.5,
                                   pauses=[(150, 0.4)])]),
    "thinking": Scenario([Reply(PAUSED, pause_before=0.8, rate=2000,
                                pauses=[(40, 0.5)])]),
    "long_think": Scenario([Reply(PAUSED, pause_before=2.5, rate=300)]),
    "cut": Scenario([Reply(CODE_BLOCKS, rate=6000, event="cut", drop_at=CUT_AT)]),
    "delivery": Scenario([Reply("", event="delivery", pause_before=0.2), Reply(HELLO)]),
    "retry": Scenario([Reply("", event="retry", pause_before=0.3), Reply(HELLO)]),
    # Thinks for 4 s, then writes slowly for about 3 s: longer than a short timeout.
    "long_thinking": Scenario([Reply(LONG_THOUGHT, pause_before=4.0, rate=500)]),
    "long_cm": Scenario([Reply(program_150(), rate=200_000)]),
    "artifact": Scenario([Reply(ARTIFACT_TEXT, artifact=ARTIFACT)]),
    "selftest": Scenario([Reply(SELFTEST)]),
    "login_buttons": Scenario([Reply(HELLO)], page="login_buttons"),
    "account_picker": Scenario([Reply(HELLO)], page="account_picker"),
    "bot_check": Scenario([Reply(HELLO)], page="bot_check"),
    "limit_banner": Scenario([Reply(HELLO)], page="limit_banner"),
}
