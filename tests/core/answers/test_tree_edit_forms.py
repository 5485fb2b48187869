"""Edits in the forms LLMs send them, applied to turn 1's tree (tree_changes):
SEARCH/REPLACE blocks (aider's format, in and out of fences), unified diffs,
elisions; and the edits that cannot be applied unambiguously, told, never guessed.
"""

from __future__ import annotations

import pytest

from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.answers.tree_changes import plan_update

APP = {
    "app.py": "import json\n\nfrom store import load\n\n\ndef summary(rows):\n"
              "    total = 0\n    for row in rows:\n        total += row['n']\n"
              "    return total\n\n\ndef main():\n    rows = load('data.json')\n"
              "    print(summary(rows))\n\n\nif __name__ == '__main__':\n    main()\n",
    "store.py": "import json\n\n\ndef load(path):\n    with open(path) as f:\n"
                "        return json.load(f)\n",
}


def test_several_search_replace_blocks_one_needing_whitespace_tolerance() -> None:
    answer = (
        "Two fixes, as SEARCH/REPLACE blocks.\n\n"
        "app.py\n```python\n<<<<<<< SEARCH\n        total += row['n']\n=======\n"
        "        total += row.get('n', 0)\n>>>>>>> REPLACE\n```\n\n"
        # the model dropped the indentation of the method body it searches for
        "store.py\n```python\n<<<<<<< SEARCH\nwith open(path) as f:\n    return json.load(f)\n"
        "=======\nwith open(path, encoding='utf-8') as f:\n    return json.load(f)\n"
        ">>>>>>> REPLACE\n```\n\n"
        # a second edit of app.py composes with the first
        "app.py\n```python\n<<<<<<< SEARCH\n    print(summary(rows))   \n=======\n"
        "    print('total:', summary(rows))\n>>>>>>> REPLACE\n```\n")
    update = plan_update(APP, answer)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [
        ("store.py", "search-replace"), ("app.py", "search-replace")]
    tree = update.apply(APP)
    assert tree["app.py"] == APP["app.py"].replace(
        "row['n']", "row.get('n', 0)").replace("print(summary(rows))",
                                               "print('total:', summary(rows))")
    assert tree["store.py"] == APP["store.py"].replace(
        "open(path)", "open(path, encoding='utf-8')")


def test_search_replace_with_the_path_inside_the_fence_and_a_new_file() -> None:
    answer = ("```python\nstore.py\n<<<<<<< SEARCH\nimport json\n=======\nimport json\n"
              "import os\n>>>>>>> REPLACE\n```\n\n"
              "```python\ncheck.py\n<<<<<<< SEARCH\n=======\nfrom store import load\n"
              "print(len(load('data.json')))\n>>>>>>> REPLACE\n```\n")
    update = plan_update(APP, answer)
    assert update.problems == ()
    tree = update.apply(APP)
    assert tree["store.py"].startswith("import json\nimport os\n\n\ndef load(path):")
    assert tree["check.py"] == "from store import load\nprint(len(load('data.json')))\n"
    assert tree["app.py"] == APP["app.py"]


def test_search_replace_blocks_outside_any_fence() -> None:
    answer = ("store.py\n<<<<<<< SEARCH\n        return json.load(f)\n=======\n"
              "        return json.load(f) or []\n>>>>>>> REPLACE\n")
    update = plan_update(APP, answer)
    assert update.problems == ()
    assert update.apply(APP)["store.py"].endswith("        return json.load(f) or []\n")


def test_the_block_of_a_new_file_edit_is_saved_without_its_markers() -> None:
    answer = ("lsfl/main.py\n```python\n<<<<<<< SEARCH\n=======\n#!/usr/bin/env python3\n"
              "print('lsfl')\n>>>>>>> REPLACE\n```\n\nrequirements.txt\n```python\n"
              "<<<<<<< SEARCH\n=======\nPyQt6>=6.4.0\n>>>>>>> REPLACE\n```\n")
    ex = extract(answer)
    assert [(b.filename, b.how, b.content, b.runnable) for b in ex.blocks] == [
        ("lsfl/main.py", "search-replace", "#!/usr/bin/env python3\nprint('lsfl')\n", True),
        ("requirements.txt", "search-replace", "PyQt6>=6.4.0\n", False)]
    assert plan_update({}, answer, ex).apply({}) == {
        "lsfl/main.py": "#!/usr/bin/env python3\nprint('lsfl')\n",
        "requirements.txt": "PyQt6>=6.4.0\n"}


DIFF = """The loop adds the row itself. Here is the patch:

```diff
--- a/app.py
+++ b/app.py
@@ -6,5 +6,5 @@
 def summary(rows):
     total = 0
     for row in rows:
-        total += row['n']
+        total += int(row['n'])
     return total
```
"""


def test_a_unified_diff_with_headers_and_line_numbers() -> None:
    update = plan_update(APP, DIFF)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [("app.py", "diff")]
    assert update.apply(APP)["app.py"] == APP["app.py"].replace(
        "total += row['n']", "total += int(row['n'])")


def test_a_diff_without_numbers_and_with_trailing_spaces_lost() -> None:
    answer = ("**store.py**\n```diff\n@@ ... @@\n def load(path):\n"
              "-    with open(path) as f:\n+    with open(path, 'rb') as f:\n"
              "         return json.load(f)\n```\n")
    tree = dict(APP, **{"store.py": APP["store.py"].replace("def load(path):",
                                                            "def load(path):  ")})
    ex = extract(answer)
    assert [(b.filename, b.how) for b in ex.blocks] == [("store.py", "diff")]
    update = plan_update(tree, answer, ex)
    assert update.problems == ()
    assert "with open(path, 'rb') as f:" in update.apply(tree)["store.py"]


def test_a_diff_that_creates_one_file_and_deletes_another() -> None:
    answer = ("```diff\n--- /dev/null\n+++ b/rows.py\n@@ -0,0 +1,2 @@\n+def count(rows):\n"
              "+    return len(rows)\n--- a/store.py\n+++ /dev/null\n@@ -1,6 +0,0 @@\n"
              "-import json\n```\n")
    update = plan_update(APP, answer)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [("rows.py", "diff"),
                                                        ("store.py", "removed")]
    assert update.apply(APP) == {"app.py": APP["app.py"],
                                 "rows.py": "def count(rows):\n    return len(rows)\n"}


def test_a_block_with_elisions_is_merged_by_its_anchors() -> None:
    answer = ("Update `app.py`:\n\n```python\n# ... existing imports ...\n\n"
              "def summary(rows):\n    total = 0\n    for row in rows:\n"
              "        total += row.get('n', 0)\n    return total\n\n\n"
              "# ... rest of the file unchanged ...\n```\n")
    update = plan_update(APP, answer)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [("app.py", "elided")]
    assert update.apply(APP)["app.py"] == APP["app.py"].replace("row['n']", "row.get('n', 0)")


def test_a_javascript_block_with_existing_code_elisions() -> None:
    tree = {"server.js": "const express = require('express');\nconst app = express();\n\n"
                         "app.get('/', (req, res) => {\n  res.send('hi');\n});\n\n"
                         "app.listen(3000);\n"}
    answer = ("```javascript\n// server.js\n// ... existing code ...\n"
              "app.get('/', (req, res) => {\n  res.send('hello');\n});\n"
              "// ... existing code ...\n```\n")
    update = plan_update(tree, answer)
    assert update.problems == ()
    assert update.apply(tree)["server.js"] == tree["server.js"].replace("'hi'", "'hello'")


@pytest.mark.parametrize("answer, path, message", [
    ("app.py\n```python\n<<<<<<< SEARCH\n    return totals\n=======\n    return -1\n"
     ">>>>>>> REPLACE\n```\n", "app.py", "its SEARCH part is not in app.py"),
    ("app.py\n```python\n<<<<<<< SEARCH\nimport json\n=======\nimport sys\n"
     ">>>>>>> REPLACE\n```\n", "app.py",
     "its SEARCH part is in app.py 1 times"),  # placeholder, replaced below
    ("app.py\n```python\n<<<<<<< SEARCH\n=======\nprint(1)\n>>>>>>> REPLACE\n```\n",
     "app.py", "its SEARCH part is empty, which creates a new file, but app.py already exists"),
    ("gone.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n",
     "gone.py", "gone.py is not in the project"),
    ("```diff\n--- a/store.py\n+++ b/store.py\n@@ -1,3 +1,3 @@\n-import yaml\n+import json\n```\n",
     "store.py", "hunk 1 of the diff does not match: its context and removed lines are not in "
                 "store.py"),
    ("**app.py**\n```python\n# ... existing code ...\n    total = 1\n"
     "# ... existing code ...\n```\n",
     "app.py", "the line `total = 1` next to its `...` is not in app.py"),
])
def test_an_edit_that_does_not_apply_is_a_problem_and_changes_nothing(
        answer: str, path: str, message: str) -> None:
    tree = dict(APP)
    if "import sys" in answer:  # "import json" twice: which one is meant?
        tree["app.py"] = "import json\n" + APP["app.py"]
        message = "its SEARCH part is in app.py 2 times, so it is not clear which to change"
    update = plan_update(tree, answer)
    assert [(p.path, p.message) for p in update.problems] == [(path, message)]
    assert path not in {c.path for c in update.changes}


def test_an_edit_that_names_no_file_in_a_project_of_several() -> None:
    answer = "```python\n<<<<<<< SEARCH\nimport json\n=======\nimport os\n>>>>>>> REPLACE\n```\n"
    update = plan_update(APP, answer)
    assert [p.message for p in update.problems] == [
        "the edit does not say which file it changes"]
    one = {"store.py": APP["store.py"]}
    assert plan_update(one, answer).apply(one)["store.py"].startswith("import os\n")


def test_a_whole_file_then_an_edit_of_it_in_one_answer_compose() -> None:
    answer = ("**store.py**\n```python\nimport os\n\n\ndef load(path):\n    return []\n```\n\n"
              "And one more change to it:\n\nstore.py\n```python\n<<<<<<< SEARCH\n"
              "    return []\n=======\n    return [path]\n>>>>>>> REPLACE\n```\n")
    ex = extract(answer)
    assert [(b.filename, b.how) for b in ex.blocks] == [("store.py", "whole"),
                                                         ("store.py", "search-replace")]
    update = plan_update(APP, answer, ex)
    assert update.apply(APP)["store.py"] == "import os\n\n\ndef load(path):\n    return [path]\n"
    assert [(c.path, c.how) for c in update.changes] == [("store.py", "whole")]


def test_one_fence_holding_edits_of_two_files() -> None:
    answer = ("```python\napp.py\n<<<<<<< SEARCH\nimport json\n=======\nimport json\n"
              "import sys\n>>>>>>> REPLACE\n\nstore.py\n<<<<<<< SEARCH\ndef load(path):\n"
              "=======\ndef load(path='data.json'):\n>>>>>>> REPLACE\n```\n")
    ex = extract(answer)
    assert [(b.how, b.content, b.runnable) for b in ex.blocks] == [
        ("search-replace", None, False)]
    update = plan_update(APP, answer, ex)
    assert [(c.path, c.how) for c in update.changes] == [("app.py", "search-replace"),
                                                        ("store.py", "search-replace")]
    tree = update.apply(APP)
    assert tree["app.py"].startswith("import json\nimport sys\n\nfrom store import load\n")
    assert "def load(path='data.json'):" in tree["store.py"]


def test_an_unnamed_elided_block_merges_into_the_one_file_it_fits() -> None:
    answer = ("```python\n# ... existing code ...\ndef main():\n    rows = load('rows.json')\n"
              "    print(summary(rows))\n# ... existing code ...\n```\n")
    update = plan_update(APP, answer)
    assert [(c.path, c.how) for c in update.changes] == [("app.py", "elided")]
    assert update.apply(APP)["app.py"] == APP["app.py"].replace("'data.json'", "'rows.json'")
    both = {"a.py": "import os\nx = 1\nprint(x)\n", "b.py": "import os\nx = 1\nprint(x)\n"}
    twice = plan_update(both, "```python\nimport os\nimport sys\nx = 1\n"
                              "# ... rest unchanged\n```\n")
    assert [p.message for p in twice.problems] == [
        "the block at line 1 fits 2 files (a.py, b.py), so it is not clear which it changes"]


def test_a_unified_diff_outside_any_fence() -> None:
    answer = ("Apply this patch:\n\n--- a/store.py\n+++ b/store.py\n@@ -4,3 +4,3 @@\n"
              " def load(path):\n-    with open(path) as f:\n+    with open(path, 'rb') as f:\n"
              "         return json.load(f)\n\nThen run it again.\n")
    update = plan_update(APP, answer)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [("store.py", "diff")]
    assert "open(path, 'rb')" in update.apply(APP)["store.py"]


def test_an_elision_inside_a_template_string_is_the_file_s_text() -> None:
    """gemini's src/cli.ts holds a prompt template with `// ...` in it: a whole file."""
    code = ("const PROMPT = `\nExample output file:\n// Full content of the file here\n// ...\n"
            "`;\n\nconsole.log(PROMPT);\n")
    answer = f"**src/cli.ts**\n```typescript\n{code}```\n"
    ex = extract(answer)
    assert (ex.blocks[0].how, ex.blocks[0].content) == ("whole", code)
    tree = {"src/cli.ts": "console.log('old');\n"}
    assert plan_update(tree, answer, ex).apply(tree) == {"src/cli.ts": code}


def test_an_unnamed_edit_goes_to_the_one_file_it_applies_to_even_loosely() -> None:
    answer = ("```python\n<<<<<<< SEARCH\nwith open(path) as f:\n    return json.load(f)\n"
              "=======\nwith open(path) as f:\n    return json.load(f) or {}\n"
              ">>>>>>> REPLACE\n```\n")  # store.py indents it; the edit does not
    update = plan_update(APP, answer)
    assert update.problems == ()
    assert update.apply(APP)["store.py"].endswith("        return json.load(f) or {}\n")
