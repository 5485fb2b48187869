"""The project tree an answer makes of the last run's files: which file runs, what each
file is marked, and the tree read back for a resumed session."""

from __future__ import annotations

from pathlib import Path

from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.base.ports import ProgramFile
from verifybot_tui.core.loop.project_tree import (
    ProjectTree,
    apply_answer,
    tree_from_history,
    unversioned,
)


def _apply(tree: ProjectTree, answer: str):
    return apply_answer(tree, answer, extract(answer), "task", 100)


def _ran(*files: tuple[str, str], entry: str) -> ProjectTree:
    tree = ProjectTree()
    tree.ran([ProgramFile(n, n, c, "python" if n.endswith(".py") else "c") for n, c in files],
             entry)
    return tree


def test_a_first_unnamed_answer_is_named_as_before() -> None:
    p = _apply(ProjectTree(), "```python\nprint(1)\n```\n")
    assert [f.name for f in p.files] == ["task.py"] and p.entry == "task.py"
    assert p.lines() == ["- task.py: whole (runs)"]


def test_a_module_alone_keeps_the_entry_that_ran() -> None:
    tree = _ran(("util.py", "X = 1\n"), ("main.py", "import util\nprint(util.X)\n"),
                entry="main.py")
    p = _apply(tree, "**util.py**\n\n```python\nX = 2\n```\n")
    assert p.entry == "main.py"
    assert p.how == {"util.py": "whole", "main.py": "carried"}


def test_a_new_unnamed_program_in_another_language_runs_instead() -> None:
    tree = _ran(("task.py", "print(1)\n"), entry="task.py")
    p = _apply(tree, "In C then:\n\n```c\n#include <stdio.h>\nint main(void) "
                     "{ puts(\"1\"); return 0; }\n```\n")
    assert p.entry == "task.c"
    assert p.how == {"task.py": "carried", "task.c": "whole"}
    assert p.lines() == ["- task.py: carried", "- task.c: whole (new) (runs)"]


def test_an_answer_without_code_changes_nothing_and_runs_nothing() -> None:
    tree = _ran(("main.py", "print(1)\n"), entry="main.py")
    p = _apply(tree, "I think the program is right as it is.")
    assert p.entry == "" and not p.changed


def test_the_tree_read_back_from_programs(tmp_path: Path) -> None:
    (tmp_path / "programs" / "pkg").mkdir(parents=True)
    (tmp_path / "programs" / "pkg" / "core_2.py").write_text("X = 2\n")
    (tmp_path / "programs" / "main_2.py").write_text("import pkg.core\n")
    attempts = [
        {"version": 1, "files": ["programs/old_1.py", "programs/main_1.py"],
         "entry": "main.py", "output_file": "outputs/t_1.txt"},
        {"version": 2, "files": ["programs/pkg/core_2.py", "programs/main_2.py"],
         "entry": "main.py", "output_file": "outputs/t_2.txt"},
        {"version": 3, "files": ["programs/main_3.py"], "entry": "main.py",
         "output_file": None},  # rejected: never ran
    ]
    tree = tree_from_history(tmp_path, attempts)
    assert tree.texts() == {"pkg/core.py": "X = 2\n", "main.py": "import pkg.core\n"}
    assert tree.entry == "main.py" and tree.files[0].saved_name == "pkg/core_2.py"
    assert tree.ever == {"old.py", "main.py", "pkg/core.py"}


def test_unversioned() -> None:
    assert unversioned("programs/pkg/sub/x_12.py", 12) == "pkg/sub/x.py"
    assert unversioned("programs/Makefile_3", 3) == "Makefile"
    assert unversioned("programs/a_1_2.py", 2) == "a_1.py"


async def test_a_follow_up_keeps_the_tree_and_a_new_chat_starts_an_empty_one(
        tmp_path: Path) -> None:
    """The app's follow-up (same chat) runs with the files of the last run; a new chat
    runs only what its answer brings."""
    from cli_runs import answers
    from loop_runs import make_loop

    from verifybot_tui.core.loop import events as ev

    util = "**util.py**\n\n```python\nWORD = 'one'\n```\n"
    main = "**main.py**\n\n```python\nfrom util import WORD\nprint(WORD)\n```\n"
    t = tmp_path / "t.md"
    t.write_text(answers(util + "\n" + main, util.replace("one", "two")))
    loop = make_loop(tmp_path / "ws", t, auto_accept=True, max_retries=0)

    async def ran(prompt: str, new_chat: bool) -> tuple[dict[str, str], str, int]:
        how, out, base = {}, "", -1
        async for event in loop.events(prompt, new_chat=new_chat):
            if isinstance(event, ev.PromptSent):
                base = len(loop.tree.files)  # the files the answer will change
            elif isinstance(event, ev.CodeReady):
                how = event.how
            elif isinstance(event, ev.Output):
                out += event.text
        return how, out, base

    both = {"util.py": "whole", "main.py": "whole"}
    assert await ran("print a word", True) == (both, "one\n", 0)
    assert await ran("another word", False) == (
        {"util.py": "whole", "main.py": "carried"}, "two\n", 2)
    # A new chat (the replay starts again at its first answer): nothing carried over.
    assert await ran("a new task", True) == (both, "one\n", 0)


def test_an_unnamed_function_given_to_a_file_of_the_tree_is_not_a_second_program() -> None:
    """The follow-up sends one unnamed function that only main.py defines: it is spliced
    into main.py, not saved again as task.py and run alone."""
    main = ("def describe(data):\n    return str(data)\n\n\n"
            "print(describe({'a': 1}))\n")
    tree = _ran(("main.py", main), ("util.py", "X = 1\n"), entry="main.py")
    p = _apply(tree, "The fix:\n\n```python\ndef describe(data):\n"
                     "    return ', '.join(sorted(data))\n```\n")
    assert [f.name for f in p.files] == ["main.py", "util.py"]
    assert p.how == {"main.py": "function", "util.py": "carried"} and p.entry == "main.py"
    assert "return ', '.join(sorted(data))" in p.files[0].content
    assert p.files[0].content.endswith("print(describe({'a': 1}))\n")


def test_the_request_for_a_whole_file_names_the_file_or_says_none_was_named() -> None:
    """An edit that did not apply is answered with one short request; one that named no
    file (it fit none of the tree's, or several) asks for the file it meant, named."""
    from verifybot_tui.core.answers.tree_changes import EditProblem
    from verifybot_tui.core.loop.prompts import whole_file_prompt

    named = whole_file_prompt([EditProblem("main.py", "its SEARCH part is not in main.py")])
    assert named == ("The edit to main.py did not match the file: its SEARCH part is not in "
                     "main.py. Please send the complete main.py.")
    unnamed = whole_file_prompt([EditProblem("", "it fits two files")])
    assert "The edit to  " not in unnamed and "complete ." not in unnamed
    assert unnamed == ("An edit that names no file did not apply: it fits two files. Please "
                       "send the complete file you meant to change, its name on the line "
                       "before the code block.")
    both = whole_file_prompt([EditProblem("a.c", "its function is not in a.c"),
                              EditProblem("", "it fits no file")])
    assert both.endswith("Please send the complete a.c and the file the unnamed edit was "
                         "for, named.")
