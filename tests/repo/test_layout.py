"""The plan of the house stays readable: rooms of about a dozen modules, nothing loose.

A folder of thirty modules hides which belong together; the package's top level
is the entry to the layers, so it holds only ``__init__`` and ``__main__``
(ARCHITECTURE.md says what each folder holds).
"""

from __future__ import annotations

from project import PACKAGE

MOST = 13  # "about a dozen" modules per folder, __init__ not counted


def _folders() -> list:
    return sorted({p.parent for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts})


def test_no_loose_module_at_the_package_top() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py"]


def test_no_folder_holds_more_than_about_a_dozen_modules() -> None:
    crowded = {str(f.relative_to(PACKAGE)): n for f in _folders()
               if (n := len([p for p in f.glob("*.py") if p.name != "__init__.py"])) > MOST}
    assert not crowded, crowded


def test_every_folder_of_modules_is_a_package_with_a_docstring() -> None:
    for folder in _folders():
        init = folder / "__init__.py"
        assert init.is_file(), folder
        assert init.read_text().lstrip().startswith('"""'), f"{init} says what the folder holds"
