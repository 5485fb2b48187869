"""What we know about each language: names, extensions and how to build and run it.

One table shared by extraction (a fence's info string or a filename hint gives
the language), the local target and the SSH target (the same argv, joined with
shlex for the remote shell), so a language is added in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class Language:
    name: str
    extensions: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    # argv templates: "{python}" the interpreter, "{entry}" the file to run,
    # "{sources}" every file of this language (expanded to several arguments),
    # "{exe}" the compiled program.
    compile: tuple[str, ...] | None = None
    run: tuple[str, ...] = ()
    tool: str = ""  # the program that must exist on the target (compiler or interpreter)

    @property
    def extension(self) -> str:
        return self.extensions[0]


LANGUAGES: tuple[Language, ...] = (
    Language("python", (".py",), ("py", "python3", "py3", "python2"),
             run=("{python}", "-u", "{entry}"), tool="python3"),
    Language("bash", (".sh", ".bash"), ("sh", "shell", "zsh", "shellscript", "bash-script"),
             run=("bash", "{entry}"), tool="bash"),
    Language("c", (".c",), ("h",),
             compile=("gcc", "-O1", "-Wall", "-o", "{exe}", "{sources}", "-lm"),
             run=("./{exe}",), tool="gcc"),
    # an Arduino sketch (.ino) is C++: its name is kept (an AVR mcu target builds it)
    Language("cpp", (".cpp", ".cc", ".cxx", ".c++", ".ino"), ("c++", "cxx", "hpp", "arduino",
                                                              "ino"),
             compile=("g++", "-O1", "-Wall", "-std=c++17", "-o", "{exe}", "{sources}"),
             run=("./{exe}",), tool="g++"),
    Language("javascript", (".js", ".mjs", ".cjs"), ("js", "node", "nodejs"),
             run=("node", "{entry}"), tool="node"),
)

# Fence languages that are never programs: transcripts, sample output, data.
NOT_PROGRAM_LANGUAGES = frozenset({
    "text", "txt", "plaintext", "plain", "console", "shell-session", "sh-session",
    "terminal", "output", "log", "stdout", "stderr", "none", "pycon", "ansi",
})

_BY_ALIAS = {alias: lang for lang in LANGUAGES for alias in (lang.name, *lang.aliases)}
_BY_EXT = {ext: lang for lang in LANGUAGES for ext in lang.extensions}


def language_named(name: str) -> Language | None:
    """The language an info string or a Pygments alias names, if we can run it."""
    return _BY_ALIAS.get(name.strip().lower())


def language_for_filename(filename: str) -> Language | None:
    """The language a file's extension says, if we can run it."""
    return _BY_EXT.get(PurePosixPath(filename).suffix.lower())


def extension_for(language: str) -> str:
    """The extension to save a block of this language under (``.txt`` if unknown)."""
    lang = language_named(language)
    return lang.extension if lang else ".txt"


def build_argv(template: tuple[str, ...], *, entry: str, sources: list[str],
               exe: str = "prog", python: str = "python3") -> list[str]:
    """Fill an argv template; ``{sources}`` expands to one argument per source file."""
    argv: list[str] = []
    for part in template:
        if part == "{sources}":
            argv.extend(sources)
        else:
            argv.append(part.format(entry=entry, exe=exe, python=python))
    return argv


_HEADER_EXTENSIONS = (".h", ".hpp", ".hh", ".hxx")


def include_dirs(names: list[str] | set[str]) -> list[str]:
    """``-I`` for every folder of the answer that holds a header (``include/``), as a
    person builds a C project with its headers apart: ``gcc -Iinclude src/*.c``."""
    dirs = {str(PurePosixPath(n).parent) for n in names
            if PurePosixPath(n).suffix.lower() in _HEADER_EXTENSIONS}
    return [f"-I{d}" for d in sorted(dirs - {"."})]


def compile_argv(lang: Language, *, entry: str, sources: list[str], exe: str,
                 compiler: str = "", flags: list[str] | None = None,
                 includes: list[str] | None = None) -> list[str]:
    """The build command: the language's own, or with a recipe's compiler and flags.

    The flags replace the default ones (so ``-Wall -Werror`` means exactly that);
    the output name, the sources and the link libraries (``-lm``) stay, since the
    run step needs them. No compiler and no flags: the language's own command.
    ``includes`` (see :func:`include_dirs`) come just before the sources.
    """
    template = lang.compile or ()
    if flags:
        at = template.index("{sources}")
        template = (template[0], *flags, "-o", "{exe}", *template[at:])
    if compiler and template:
        template = (compiler, *template[1:])
    if includes and "{sources}" in template:
        at = template.index("{sources}")
        template = (*template[:at], *includes, *template[at:])
    return build_argv(template, entry=entry, sources=sources, exe=exe)
