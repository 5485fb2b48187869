"""How long extraction, the static analysis and dependency detection take.

Run: .venv/bin/python bench/bench_extract.py
Prints figures; no thresholds (the goal: a typical answer well under 50 ms,
so extraction never shows as a pause between the answer and the approval bar).
"""

from __future__ import annotations

import time
import tracemalloc

from verifybot_tui.core.answers.deps import imported_modules
from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.verify.verdict import long_running_signs

TYPICAL = """Here's the script.

### 1. Install

```bash
pip install requests
```

### 2. `fetch.py`

```python
import time
import requests

for _ in range(3):
    r = requests.get("http://127.0.0.1:8000/")
    print(r.status_code)
    time.sleep(1)
```

Run it:

```bash
python3 fetch.py
```

Expected output:

```
200
200
200
```

TIMEOUT: 30
DEPENDENCIES: requests
"""


def timed(label: str, fn, repeat: int) -> None:  # type: ignore[no-untyped-def]
    fn()  # warm up (imports, regex compilation)
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    ms = (time.perf_counter() - t0) * 1000 / repeat
    print(f"{label:<52} {ms:8.2f} ms")


def main() -> None:
    t0 = time.perf_counter()
    extract("```\nprint('first untagged block loads the Pygments lexers')\n```\n")
    print(f"{'first extract with a Pygments guess (cold)':<52} "
          f"{(time.perf_counter() - t0) * 1000:8.2f} ms")
    timed("typical answer (4 blocks, 0.5 KB)", lambda: extract(TYPICAL), 200)
    big_code = "\n".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(2000))
    big = f"**big.py**\n\n```python\n{big_code}\n```\n"
    timed(f"one block of {len(big) // 1024} KB", lambda: extract(big), 10)
    many = "\n\n".join(f"Step {i}: `s{i}.py`\n\n```python\nprint({i})\n```" for i in range(200))
    timed(f"200 tagged blocks, {len(many) // 1024} KB", lambda: extract(many), 5)
    untagged = "\n\n".join(f"```\nimport os\nprint({i})\n```" for i in range(50))
    timed("50 untagged blocks (Pygments guess each)", lambda: extract(untagged), 3)
    timed(f"long_running_signs on {len(big_code) // 1024} KB of Python",
          lambda: long_running_signs(big_code, "python"), 10)
    c_code = "int main(void) {\n" + "  if (x) { y(); }\n" * 5000 + "  while (1) { }\n}\n"
    timed(f"long_running_signs on {len(c_code) // 1024} KB of C",
          lambda: long_running_signs(c_code, "c"), 10)
    timed(f"imported_modules on {len(big_code) // 1024} KB of Python",
          lambda: imported_modules(big_code), 10)
    tracemalloc.start()
    extract(big)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{f'peak memory extracting {len(big) // 1024} KB':<52} {peak / 1e6:8.2f} MB")


if __name__ == "__main__":
    main()
