"""A follow-up applied to the project tree of the attempt before it (tree_changes).

Each test is a conversation's shape: the files of turn 1 as they ran, then the
answer of turn 2 as LLMs write follow-ups (only the changed file, SEARCH/REPLACE
blocks, diffs), and the tree a careful person has after applying it.
"""

from __future__ import annotations

from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.answers.tree_changes import plan_update

PACKAGE = {
    "main.py": "from shop.cart import Cart\n\n\ndef main():\n    cart = Cart()\n"
               "    cart.add('apple', 3)\n    print(cart.total())\n\n\nmain()\n",
    "shop/__init__.py": "",
    "shop/cart.py": "PRICES = {'apple': 2}\n\n\nclass Cart:\n    def __init__(self):\n"
                    "        self.items = []\n\n    def add(self, name, count):\n"
                    "        self.items.append((name, count))\n\n    def total(self):\n"
                    "        return sum(PRICES[n] for n, c in self.items)\n",
}


def test_a_follow_up_that_sends_one_file_keeps_the_others() -> None:
    answer = ("The total ignores the count. Only `shop/cart.py` changes:\n\n"
              "**shop/cart.py**\n```python\nPRICES = {'apple': 2}\n\n\nclass Cart:\n"
              "    def __init__(self):\n        self.items = []\n\n"
              "    def add(self, name, count):\n        self.items.append((name, count))\n\n"
              "    def total(self):\n        return sum(PRICES[n] * c for n, c in self.items)\n"
              "```\n\nRun `python main.py` again; it prints 6.\n")
    update = plan_update(PACKAGE, answer)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [("shop/cart.py", "whole")]
    tree = update.apply(PACKAGE)
    assert set(tree) == set(PACKAGE)
    assert tree["main.py"] == PACKAGE["main.py"] and tree["shop/__init__.py"] == ""
    assert "PRICES[n] * c" in tree["shop/cart.py"]


C_PROJECT = {
    "main.c": '#include <stdio.h>\n#include "stack.h"\n\nint main(void) {\n'
              "    Stack s = {0};\n    push(&s, 4);\n    push(&s, 5);\n"
              '    printf("%d\\n", pop(&s));\n    return 0;\n}\n',
    "stack.h": "#pragma once\ntypedef struct { int items[8]; int top; } Stack;\n"
               "void push(Stack *s, int v);\nint pop(Stack *s);\n",
    "stack.c": '#include "stack.h"\n\nvoid push(Stack *s, int v) {\n'
               "    s->items[s->top++] = v;\n}\n\nint pop(Stack *s) {\n"
               "    return s->items[s->top];\n}\n",
}


def test_a_c_function_replaced_in_the_file_the_prose_names() -> None:
    answer = ("`pop` reads one past the top. Replace `pop()` in `stack.c` with:\n\n"
              "```c\nint pop(Stack *s) {\n    return s->items[--s->top];\n}\n```\n")
    update = plan_update(C_PROJECT, answer)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [("stack.c", "function")]
    tree = update.apply(C_PROJECT)
    assert tree["stack.c"] == ('#include "stack.h"\n\nvoid push(Stack *s, int v) {\n'
                               "    s->items[s->top++] = v;\n}\n\nint pop(Stack *s) {\n"
                               "    return s->items[--s->top];\n}\n")
    assert tree["main.c"] == C_PROJECT["main.c"] and tree["stack.h"] == C_PROJECT["stack.h"]


def test_an_unnamed_c_function_goes_to_the_only_file_that_defines_it() -> None:
    answer = "Fix:\n\n```c\nint pop(Stack *s)\n{\n    return s->items[--s->top];\n}\n```\n"
    ex = extract(answer)
    tree = plan_update(C_PROJECT, answer, ex).apply(C_PROJECT)
    block = ex.blocks[0]  # no file of its own for whoever saves the unnamed blocks
    assert (block.filename, block.how) == ("stack.c", "function")
    assert "int pop(Stack *s)\n{\n    return s->items[--s->top];\n}" in tree["stack.c"]
    assert tree["stack.c"].startswith('#include "stack.h"\n\nvoid push(')


NODE = {
    "package.json": '{\n  "name": "greet",\n  "dependencies": {}\n}\n',
    "index.js": "const { greet } = require('./lib/greet');\nconsole.log(greet('Ada'));\n",
    "lib/greet.js": "class Greeter {\n  constructor(word) {\n    this.word = word;\n  }\n\n"
                    "  greet(name) {\n    return this.word + name;\n  }\n}\n\n"
                    "function greet(name) {\n  return new Greeter('Hello').greet(name);\n}\n\n"
                    "module.exports = { greet };\n",
}


def test_a_javascript_method_replaced_inside_its_class() -> None:
    answer = ("The greeting lacks a space. Update the `greet` method in `lib/greet.js`:\n\n"
              "```javascript\ngreet(name) {\n  return `${this.word}, ${name}!`;\n}\n```\n")
    update = plan_update(NODE, answer)
    assert update.problems and "2 times" in update.problems[0].message, (
        "two definitions are named greet (the method and the function): never a guess")
    answer = answer.replace("greet(name) {\n  return `", "  greet(name) {\n    return `")
    answer = answer.replace("the `greet` method", "the `Greeter` class").replace(
        "```javascript\n  greet", "```javascript\nclass Greeter {\n  constructor(word) {\n"
        "    this.word = word;\n  }\n\n  greet").replace("!`;\n}\n```", "!`;\n  }\n}\n```")
    update = plan_update(NODE, answer)
    assert update.problems == ()
    tree = update.apply(NODE)
    assert tree["lib/greet.js"].startswith("class Greeter {\n  constructor(word) {\n")
    assert "    return `${this.word}, ${name}!`;\n  }\n}\n\nfunction greet(name) {" in (
        tree["lib/greet.js"])
    assert tree["lib/greet.js"].endswith("module.exports = { greet };\n")
    assert [(c.path, c.how) for c in update.changes] == [("lib/greet.js", "function")]


def test_a_node_project_follow_up_adds_a_file_and_keeps_package_json() -> None:
    answer = ("Let's move the word to a config file.\n\n### `lib/config.js`\n\n```javascript\n"
              "module.exports = { word: 'Hi' };\n```\n\n### `index.js`\n\n```javascript\n"
              "const { greet } = require('./lib/greet');\nconst { word } = require('./lib/config');"
              "\nconsole.log(word, greet('Ada'));\n```\n")
    update = plan_update(NODE, answer)
    assert [(c.path, c.how) for c in update.changes] == [
        ("lib/config.js", "whole"), ("index.js", "whole")]
    tree = update.apply(NODE)
    assert tree["package.json"] == NODE["package.json"]
    assert tree["lib/greet.js"] == NODE["lib/greet.js"]
    assert set(tree) == {*NODE, "lib/config.js"}


def test_a_python_function_replaced_when_the_block_holds_only_it() -> None:
    answer = ("**shop/cart.py**\n\n```python\n    def total(self):\n"
              "        return sum(PRICES[n] * c for n, c in self.items)\n```\n")
    update = plan_update(PACKAGE, answer)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [("shop/cart.py", "function")]
    cart = update.apply(PACKAGE)["shop/cart.py"]
    assert cart == PACKAGE["shop/cart.py"].replace("PRICES[n] for", "PRICES[n] * c for")


def test_an_unnamed_python_function_goes_where_it_is_defined_once() -> None:
    answer = ("Replace `main()` with this version:\n\n```python\ndef main():\n"
              "    cart = Cart()\n    cart.add('apple', 3)\n    print('total:', cart.total())\n"
              "```\n")
    update = plan_update(PACKAGE, answer)
    assert [(c.path, c.how) for c in update.changes] == [("main.py", "function")]
    main = update.apply(PACKAGE)["main.py"]
    assert main.startswith("from shop.cart import Cart\n\n\ndef main():\n")
    assert "print('total:', cart.total())\n\n\nmain()\n" in main


def test_a_full_resend_replaces_every_file_it_holds() -> None:
    blocks = "".join(f"**{p}**\n```python\n{t or '# package'}\n```\n\n"
                     for p, t in PACKAGE.items())
    update = plan_update(PACKAGE, "Here is the complete program again:\n\n" + blocks)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [(p, "whole") for p in PACKAGE]
    assert update.apply(PACKAGE)["shop/__init__.py"] == "# package\n"


def test_a_new_chat_starts_from_an_empty_tree() -> None:
    answer = "**hello.py**\n```python\nprint('hi')\n```\n"
    update = plan_update({}, answer)
    assert update.apply({}) == {"hello.py": "print('hi')\n"}
    fragment = "```python\nimport sys\n# ... rest of the code unchanged\nprint(sys.argv)\n```\n"
    ex = extract(fragment)
    assert ex.blocks[0].how == "elided"
    assert plan_update({}, fragment, ex).changes == ()
    assert ex.blocks[0].how == "whole", "nothing to merge it with: the program as written"


def test_rename_and_delete_in_words_and_in_shell_blocks() -> None:
    tree = {**PACKAGE, "old_main.py": "print('old')\n", "config/__init__.py": "A = 1\n",
            "notes.txt": "x\n"}
    answer = ("A few clean-ups:\n\n- Delete `old_main.py`; it is no longer used.\n"
              "- Rename `shop/cart.py` to `basket.py` and update the import:\n\n"
              "**main.py**\n```python\nfrom shop.basket import Cart\nCart()\n```\n\n"
              "- Don't delete `notes.txt`, it documents the prices.\n"
              "- The `config` package is no longer needed:\n\n```bash\ngit rm -r config\n```\n")
    update = plan_update(tree, answer)
    assert update.problems == ()
    got = [(c.path, c.how, c.renamed_from) for c in update.changes]
    assert got == [("main.py", "whole", ""), ("old_main.py", "removed", ""),
                   ("shop/basket.py", "renamed", "shop/cart.py"),
                   ("config/__init__.py", "removed", "")]
    after = update.apply(tree)
    assert set(after) == {"main.py", "shop/__init__.py", "shop/basket.py", "notes.txt"}
    assert after["shop/basket.py"] == PACKAGE["shop/cart.py"]


def test_words_about_files_the_tree_does_not_hold_remove_nothing() -> None:
    answer = ("Remove the unused import and delete `cache.db` if you created it.\n\n"
              "**main.py**\n```python\nprint(1)\n```\n")
    update = plan_update(PACKAGE, answer)
    assert [c.how for c in update.changes] == ["whole"]
    assert set(update.apply(PACKAGE)) == set(PACKAGE)


def test_an_ambiguous_function_is_a_problem_not_a_guess() -> None:
    tree = {"shapes.py": "class Square:\n    def area(self):\n        return 1\n\n\n"
                         "class Circle:\n    def area(self):\n        return 3\n"}
    answer = ("Fix `area()` in shapes.py:\n\n```python\ndef area(self):\n"
              "    return self.side ** 2\n```\n")
    update = plan_update(tree, answer)
    assert [(p.path, p.message) for p in update.problems] == [
        ("shapes.py", "`area` is defined 2 times in shapes.py, so it is not clear which to "
                      "replace")]


def test_a_class_around_the_one_method_that_changes_keeps_the_other_methods() -> None:
    answer = ("In `shop/cart.py`:\n\n```python\nclass Cart:\n    # ... other methods ...\n\n"
              "    def total(self):\n        return sum(PRICES[n] * c for n, c in self.items)\n"
              "\n    def count(self):\n        return len(self.items)\n```\n")
    update = plan_update(PACKAGE, answer)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [("shop/cart.py", "function")]
    cart = update.apply(PACKAGE)["shop/cart.py"]
    assert cart == PACKAGE["shop/cart.py"].replace("PRICES[n] for", "PRICES[n] * c for") + (
        "\n    def count(self):\n        return len(self.items)\n")


def test_taking_a_name_out_of_code_is_no_deletion_of_the_file() -> None:
    tree = {"main.py": "import config\nprint(config.A)\n", "config.py": "A = 1\n",
            "old.py": "x = 1\n"}
    answer = ("Remove `config.py` from the imports, `old.py` was removed from the list of "
              "modules too, and remove `old.py` from the project.\n\n**main.py**\n```python\n"
              "print(1)\n```\n")
    update = plan_update(tree, answer)
    assert [(c.path, c.how) for c in update.changes] == [("main.py", "whole"),
                                                        ("old.py", "removed")]


def test_a_whole_c_file_with_one_function_replaces_the_file() -> None:
    answer = ("**stack.c**\n```c\n#include \"stack.h\"\n#include <assert.h>\n\n"
              "void push(Stack *s, int v) {\n    assert(s->top < 8);\n"
              "    s->items[s->top++] = v;\n}\n```\n")
    update = plan_update(C_PROJECT, answer)
    assert [(c.path, c.how) for c in update.changes] == [("stack.c", "whole")]
    assert "int pop" not in update.apply(C_PROJECT)["stack.c"]


def test_a_braced_class_around_the_one_method_that_changes_keeps_the_rest() -> None:
    answer = ("In `lib/greet.js`, the class becomes:\n\n```javascript\nclass Greeter {\n"
              "  greet(name) {\n    return `${this.word}, ${name}!`;\n  }\n\n"
              "  shout(name) {\n    return this.greet(name).toUpperCase();\n  }\n}\n```\n")
    update = plan_update(NODE, answer)
    assert update.problems == ()
    assert [(c.path, c.how) for c in update.changes] == [("lib/greet.js", "function")]
    assert update.apply(NODE)["lib/greet.js"] == NODE["lib/greet.js"].replace(
        "    return this.word + name;\n  }\n}",
        "    return `${this.word}, ${name}!`;\n  }\n\n  shout(name) {\n"
        "    return this.greet(name).toUpperCase();\n  }\n}")


def test_a_function_block_in_a_new_chat_is_the_program_as_written() -> None:
    answer = ("Here is the fixed function:\n\n```python\ndef area(r):\n"
              "    return 3.14 * r * r\n```\n")
    ex = extract(answer)
    assert (ex.blocks[0].how, ex.blocks[0].runnable) == ("function", True)
    assert plan_update({}, answer, ex).changes == ()
    assert ex.blocks[0].how == "whole", "no file to splice it into: saved as the program"


def test_a_moved_file_is_not_deleted_by_its_old_name_and_a_readme_hides_no_sentence() -> None:
    tree = {"llm.ts": "export const ask = 1;\n", "get_context.ts": "export const ctx = 1;\n",
            "context.txt": "old output\n", "README.md": "# old\n"}
    answer = ("1. Move `llm.ts` to `src/llm.ts`.\n\n**src/llm.ts**\n```typescript\n"
              "export const ask = 2;\n```\n\n**README.md**\n```markdown\n# Tool\n\n"
              "```bash\nbun install\n```\n\nMore text.\n```\n\n**Final steps:**\n\n"
              "* Delete the original `llm.ts` from the root.\n"
              "* Delete `context.txt` (it is no longer generated).\n")
    update = plan_update(tree, answer)
    assert update.apply(tree) == {"src/llm.ts": "export const ask = 2;\n",
                                  "get_context.ts": "export const ctx = 1;\n",
                                  "README.md": "# Tool\n\n```bash\nbun install\n```\n\n"
                                               "More text.\n"}


def test_an_unnamed_partial_block_in_a_language_the_tree_lacks_is_a_new_program() -> None:
    answer = "A helper script:\n\n```python\nimport sys\n# ... rest unchanged\nprint(1)\n```\n"
    ex = extract(answer)
    update = plan_update(C_PROJECT, answer, ex)
    assert (update.changes, update.problems) == ((), ())
    assert ex.blocks[0].how == "whole", "saved by whoever names unnamed programs"
    fix = "Fix:\n\n```c\nint peek(Stack *s)\n{\n    return s->items[s->top - 1];\n}\n```\n"
    assert [p.message for p in plan_update(C_PROJECT, "Replace the function " + fix).problems
            ] == ["the block at line 3 replaces a function that no file of the project defines"]
