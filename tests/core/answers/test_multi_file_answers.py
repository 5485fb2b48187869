"""Multi-file answers in the styles real answers use (issue 29), written here.

The real ones are in ../shared/reference/real-answers (test_real_answers.py); these
are ours, in the same shapes: every hint style a person reads, trees and commands
that are no files, broken fences read as a person reads them, and named files of
any language laid out beside the program.
"""

from __future__ import annotations

import pytest

from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.answers.programs import program_files


def _saved(text: str) -> dict[str, str]:
    ex = extract(text)
    files, _ = program_files(ex, "answer")
    return {f.name: f.content for f in files}


def test_bold_paths_with_dunders_keep_every_character() -> None:
    text = "".join(f"**{name}**\n```\n# {name}\nX = 1\n```\n\n" for name in (
        "app/__init__.py", "app/models/__init__.py", "app/models/my_model.py",
        "tests/__init__.py", "my app/run_me.py"))
    saved = _saved(text)
    assert sorted(saved) == ["app/__init__.py", "app/models/__init__.py",
                             "app/models/my_model.py", "my app/run_me.py", "tests/__init__.py"]
    assert all(content.startswith(f"# {name}\n") for name, content in saved.items())


def test_escaped_underscores_and_underscore_bold_are_read_as_rendered() -> None:
    saved = _saved("**pkg/\\_\\_init\\_\\_.py**\n\n```python\nX = 1\n```\n\n"
                   "__util_x.py__\n\n```python\nY = 2\n```\n")
    assert sorted(saved) == ["pkg/__init__.py", "util_x.py"]


@pytest.mark.parametrize("line", [
    "lib/stats.py", "lib/stats.py:", "`lib/stats.py`", "**lib/stats.py**", "**`lib/stats.py`**",
    "File: lib/stats.py", "### lib/stats.py", "#### `lib/stats.py`",
    "### 2. **Statistics (lib/stats.py)**", "Statistics module (lib/stats.py):",
    "Save this as lib/stats.py.", "Put the following in a file called lib/stats.py:",
    "Here is the updated lib/stats.py file:",
])
def test_every_hint_style_before_the_fence(line: str) -> None:
    saved = _saved(f"Here it is.\n\n{line}\n\n```python\ndef mean(v):\n    return sum(v)\n```\n")
    assert list(saved) == ["lib/stats.py"], line


@pytest.mark.parametrize("first", [
    "# File: lib/stats.py", "# lib/stats.py", "// Create a file called `lib/stats.js`.",
])
def test_a_name_in_the_first_line_comment(first: str) -> None:
    lang = "javascript" if first.startswith("//") else "python"
    name = "lib/stats.js" if lang == "javascript" else "lib/stats.py"
    saved = _saved(f"```{lang}\n{first}\ntouch {name}\n\nconst x = 1;\n```\n")
    assert list(saved) == [name]
    if first.startswith("//"):  # the instructions are not part of the file
        assert saved[name] == "const x = 1;\n"


def test_a_list_of_files_is_matched_in_its_order() -> None:
    text = ("The backend has three files:\n\n- `backend/server.js`\n- `backend/models.js`\n"
            "- `backend/routes.js`\n\n"
            "```js\nconst server = 1;\n```\n\n```js\nconst models = 2;\n```\n\n"
            "```js\nconst routes = 3;\n```\n")
    saved = _saved(text)
    assert saved == {"backend/server.js": "const server = 1;\n",
                     "backend/models.js": "const models = 2;\n",
                     "backend/routes.js": "const routes = 3;\n"}


def test_named_files_of_any_language_are_laid_out_with_a_note() -> None:
    text = ("**CMakeLists.txt**\n\n```cmake\ncmake_minimum_required(VERSION 3.10)\n```\n\n"
            "**package.json**\n\n```json\n{\"name\": \"x\"}\n```\n\n"
            "**.gitignore**\n\n```\nnode_modules/\n.env\n```\n\n"
            "**Makefile**\n\n```makefile\nall:\n\tgcc -o app src/main.c\n```\n\n"
            "**board/flash.ld**\n\n```\nMEMORY { FLASH : ORIGIN = 0 }\n```\n\n"
            "**data/points.csv**\n\n```csv\nx,y\n1,2\n```\n\n"
            "**proto/chat.proto**\n\n```proto\nsyntax = \"proto3\";\n```\n\n"
            "**src/main.c**\n\n```c\nint main(void) { return 0; }\n```\n")
    ex = extract(text)
    files, entry = program_files(ex, "answer")
    assert [f.name for f in files] == [
        "CMakeLists.txt", "package.json", ".gitignore", "Makefile", "board/flash.ld",
        "data/points.csv", "proto/chat.proto", "src/main.c"]
    assert entry == "src/main.c"
    laid_out = [n for n in ex.notes if "saved as a file to lay out, not run" in n]
    assert len(laid_out) == 7 and any(n.startswith("CMakeLists.txt ") for n in laid_out)


@pytest.mark.parametrize("tree", [
    "myproj/\n├── src/\n│   └── main.c\n└── Makefile",
    "/my-app\n|-- /pages\n|   |-- index.js\n|-- package.json   // metadata",
    "proj/\n  pkg/\n    __init__.py\n    core.py\n  main.py",
    "proj/\nsrc/\n__init__.py\napp.py\ntests/\ntest_app.py\nrequirements.txt",
])
def test_a_project_tree_is_no_file_and_no_program(tree: str) -> None:
    for tag in ("", "sh", "plaintext", "bash"):
        ex = extract(f"**Project layout**\n\n```{tag}\n{tree}\n```\n")
        assert not ex.blocks[0].runnable and program_files(ex, "a")[0] == [], (tag, tree)


def test_commands_between_files_are_neither_files_nor_programs() -> None:
    text = ("**main.py**\n\n```python\nprint('hi')\n```\n\nInstall and run:\n\n"
            "```bash\npip install rich\npython3 main.py\n```\n\n```sh\nyarn dev\n```\n")
    ex = extract(text)
    files, entry = program_files(ex, "a")
    assert [f.name for f in files] == ["main.py"] and entry == "main.py"
    assert ex.dependencies == ["rich"]


def test_a_setup_script_named_as_such_is_saved() -> None:
    saved = _saved("### Setup (`setup.sh`)\n\n```bash\n#!/bin/bash\nnpm install\n```\n")
    assert saved == {"setup.sh": "#!/bin/bash\nnpm install\n"}


def test_an_unnamed_go_program_is_saved_beside_its_sample_output() -> None:
    ex = extract("```go\npackage main\n\nfunc main() {}\n```\n\nOutput:\n\n```\nDone: 3\n```\n")
    files, entry = program_files(ex, "answer")
    assert [f.name for f in files] == ["answer.go"] and entry == ""


# --------------------------------------------------------------------------- broken fences

@pytest.mark.parametrize("tag", ["markdown", "md", ""])
def test_a_readme_with_nested_fences_is_read_whole(tag: str) -> None:
    readme = ("# Tally\n\nInstall:\n\n```bash\npip install tally\n```\n\nUse:\n\n"
              "```python\nimport tally\n```\n\nThat is all.")
    text = (f"**README.md**\n\n```{tag}\n{readme}\n```\n\n"
            "**main.py**\n\n```python\nprint(1)\n```\n")
    ex = extract(text)
    saved = {f.name: f.content for f in program_files(ex, "a")[0]}
    assert saved == {"README.md": readme + "\n", "main.py": "print(1)\n"}
    assert any("holds fenced blocks of its own" in n for n in ex.notes)


def test_an_unclosed_block_does_not_swallow_the_next_file() -> None:
    text = ("**a.py**\n\n```python\nimport b\nprint(b.X)\n\n**b.py**\n\n```python\nX = 1\n```\n")
    ex = extract(text)
    saved = {f.name: f.content for f in program_files(ex, "a")[0]}
    assert saved == {"a.py": "import b\nprint(b.X)\n", "b.py": "X = 1\n"}
    assert any("was not closed before the next file" in n for n in ex.notes)
    assert [b.line for b in ex.blocks] == [3, 9]  # the answer's own lines


def test_a_name_alone_inside_a_fence_with_the_code_after_it() -> None:
    text = ("```python\nsrc/app.py\n```\nimport os\n\n# Configure\nprint(os.sep)\n```\n\n"
            "```\nrequirements.txt\n```\nrequests\nrich\n\nThis concludes the whole program.\n")
    ex = extract(text)
    saved = {f.name: f.content for f in program_files(ex, "a")[0]}
    assert saved == {"src/app.py": "import os\n\n# Configure\nprint(os.sep)\n",
                     "requirements.txt": "requests\nrich\n"}
    assert sum("held only the name" in n for n in ex.notes) == 2


@pytest.mark.parametrize("after", [
    "Save this as factorial.cpp.", "Save the code as `factorial.cpp` and compile it:",
    "Save it in a file called factorial.cpp, then build it with g++.",
])
def test_save_this_as_after_the_block_names_it(after: str) -> None:
    text = (f"Here is the program:\n\n```cpp\n#include <iostream>\nint main() {{ return 0; }}\n"
            f"```\n\n{after}\n")
    assert list(_saved(text)) == ["factorial.cpp"]


def test_a_script_with_its_shebang_is_a_program_even_of_commands() -> None:
    ex = extract("```bash\n#!/bin/bash\nls -la /tmp\ncat /etc/hostname\n```\n")
    assert ex.blocks[0].runnable


def test_a_gitignore_is_no_tree() -> None:
    saved = _saved("**.gitignore**\n\n```\nnode_modules/\ndist/\n.env\nbuild/\n```\n")
    assert saved == {".gitignore": "node_modules/\ndist/\n.env\nbuild/\n"}


def test_files_named_without_their_folder_go_where_the_answer_s_tree_shows_them() -> None:
    text = ("Layout:\n\n```\nproj/\n├── pkg/\n│   ├── __init__.py\n│   └── core.py\n"
            "├── tests/\n│   └── __init__.py\n└── main.py\n```\n\n"
            "**core.py**\n\n```python\nX = 1\n```\n\n"
            "**__init__.py**\n\n```python\n```\n\n"
            "**main.py**\n\n```python\nfrom pkg.core import X\nprint(X)\n```\n")
    ex = extract(text)
    files, entry = program_files(ex, "a")
    # __init__.py is in two folders of the tree: which one is not said, so it stays
    assert [f.name for f in files] == ["pkg/core.py", "__init__.py", "main.py"]
    assert entry == "main.py"
    assert any("core.py (block at line 15) is placed at pkg/core.py" in n for n in ex.notes)
