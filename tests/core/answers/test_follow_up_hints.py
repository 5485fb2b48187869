"""Names and content that follow-ups and chat-page copies give, read as a person reads
them: marker lines, a path on a block's first line, a name with a remark, a run
command, an edit whose README holds fences, the language word a copy glues on."""

from __future__ import annotations

from verifybot_tui.core.answers.extract import extract


def _named(md: str) -> list[tuple[str | None, str]]:
    return [(b.filename, b.code.split("\n", 1)[0]) for b in extract(md).blocks]


def test_a_marker_line_names_the_block_and_the_heading_above_still_counts() -> None:
    md = ("**3. New File: `src/config.ts`**\n\n--- ./src/config.ts ---\n```typescript\n"
          "export const MODEL = 'x';\n```\n\n**4. Update `package.json`**\n\n"
          "--- package.json (with a bin entry) ---\n```json\n"
          "{\"bin\": {\"dafc\": \"dist/cli.js\"}}\n```\n\n"
          "=== src/cli.ts ===\n```typescript\nimport { MODEL } from './config';\n```\n")
    assert _named(md) == [("src/config.ts", "export const MODEL = 'x';"),
                          ("package.json", '{"bin": {"dafc": "dist/cli.js"}}'),
                          ("src/cli.ts", "import { MODEL } from './config';")]


def test_a_path_on_the_first_line_beats_a_name_in_the_prose_above() -> None:
    md = ("The bubble was not exported; in **App.jsx** import it. The component:\n\n"
          "```jsx\nsrc/components/EmojiBubble.jsx\nexport default function EmojiBubble() {\n"
          "  return <span>🙂</span>;\n}\n```\n")
    block = extract(md).blocks[0]
    assert block.filename == "src/components/EmojiBubble.jsx"
    assert block.code.startswith("export default function EmojiBubble() {")


def test_a_listing_of_paths_is_not_a_named_file() -> None:
    assert extract("```\nsrc/main.py\nsrc/util.py\n```\n").blocks[0].filename is None


def test_names_with_a_remark_in_a_list_are_matched_in_order() -> None:
    md = ("The project has three files:\n\n1. config.py (settings)\n2. util.py - helpers\n"
          "3. main.py (entrypoint)\n\n```python\nDEBUG = True\n```\n\n"
          "```python\ndef double(x):\n    return 2 * x\n```\n\n"
          "```python\nfrom util import double\nprint(double(2))\n```\n")
    assert [n for n, _ in _named(md)] == ["config.py", "util.py", "main.py"]


def test_a_run_command_names_no_second_block_and_evicts_nothing() -> None:
    md = ("lsfl/main.py\n```python\n<<<<<<< SEARCH\n=======\nprint('lsfl')\n"
          ">>>>>>> REPLACE\n```\n\nA scratch test you may keep:\n\n"
          "```python\nimport os\nprint(os.getcwd())\n```\n\nRun it:\n\n"
          "```bash\npython lsfl/main.py\n```\n")
    ex = extract(md)
    assert [(b.filename, b.how) for b in ex.blocks] == [
        ("lsfl/main.py", "search-replace"), (None, "whole"), (None, "not-a-file")]
    assert not any("two blocks are named" in n for n in ex.notes)


def test_a_readme_edit_holding_fences_is_one_file() -> None:
    md = ("README.md\n```markdown\n<<<<<<< SEARCH\n=======\n# Tool\n\n## Install\n\n"
          "```bash\npip install -r requirements.txt\n```\n\n## Use\n\n```bash\n"
          "python tool.py\n\n## License\n\nMIT\n>>>>>>> REPLACE\n```\n\n"
          "```bash\npip install rich\n```\n")
    ex = extract(md)
    readme, commands = ex.blocks
    assert readme.filename == "README.md" and readme.content is not None
    assert readme.content.startswith("# Tool\n") and readme.content.endswith("MIT\n")
    assert (commands.filename, commands.code) == (None, "pip install rich\n")


def test_the_language_word_a_copy_glues_to_the_first_line_is_dropped() -> None:
    md = ("Create `app/utils.py`:\n\n```\npython import torch\nprint(torch.__version__)\n```\n\n"
          "### Run\n\n```\nbash cd app\npython app.py\n```\n\n"
          "```\nhtml <!DOCTYPE html>\n<html></html>\n```\n")
    ex = extract(md)
    utils, run, page = ex.blocks
    assert (utils.filename, utils.language, utils.code) == (
        "app/utils.py", "python", "import torch\nprint(torch.__version__)\n")
    assert (run.how, run.code) == ("not-a-file", "cd app\npython app.py\n")
    assert page.language == "html" and page.code.startswith("<!DOCTYPE html>")
    assert sum("glues to the code" in n for n in ex.notes) == 3


def test_a_tagged_block_or_prose_like_first_line_keeps_its_words() -> None:
    tagged = extract("```python\npython = 3\nprint(python)\n```\n").blocks[0]
    assert tagged.code == "python = 3\nprint(python)\n"
    prose = extract("```\ngo to the menu and pick File\n```\n").blocks[0]
    assert prose.code == "go to the menu and pick File\n"


def test_a_bare_name_comment_keeps_the_folder_the_heading_gives() -> None:
    md = ("### include/irq.h\n\n```c\n/* irq.h */\n#pragma once\nvoid irq_init(void);\n```\n\n"
          "### src/main.c\n\n```c\n// main.c\n#include \"irq.h\"\nint main(void) { return 0; }\n"
          "```\n")
    assert [n for n, _ in _named(md)] == ["include/irq.h", "src/main.c"]


def test_a_name_right_under_an_unclosed_fence_is_read_once() -> None:
    """Fences that the repair of an unclosed block once mended forever (each mend made
    the next): a name right under the opening fence, a listing under a bare fence."""
    md = ("```python\n**main.c**\n```c\nint main(void) { return 0; }\n```\n")
    assert [b.line for b in extract(md).blocks] == [1]
    md = ("**Folder Structure**\n```\nproject/\nsrc/\n__init__.py\nuser_repository.py\n"
          "```python\nservices/\n```\n\n**src/main.py**\n```python\nprint(1)\n```\n")
    ex = extract(md)
    assert [b.filename for b in ex.blocks][-1] == "src/main.py"
