"""What every command-line module shares: exit statuses, the errors that end a command, opening an input,
printing for people."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from .codec.model import TensorFile

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
#: what ``ztviewer --help`` and README say of them
EXIT_STATUSES = (
    "exit status, every command: 0 sound (check, info), same content (diff), written (export, convert, edit); "
    "1 problems found: errors in a file, differences (diff), an export, conversion or edit refused; "
    "2 usage error or unreadable input: bad arguments, an unknown command, a path that does not exist or "
    "cannot be read or written (permission denied, disk full), a folder that holds no tensor set; "
    "3 an internal error (a bug: please report it)."
)


class UsageError(Exception):
    """Bad arguments or an input that cannot be opened: exit status 2."""


class ProblemsFound(Exception):
    """The input has problems that stop the command: exit status 1."""


def open_input(path: str) -> TensorFile:
    """A file, or a multi-file set (its folder, index / manifest JSON, or one shard), headers read.

    A path that does not exist is a :class:`UsageError`; one that cannot be read raises :class:`OSError`, a folder
    or JSON that holds no tensor set :class:`~ztviewer.codec.errors.UnknownFormat` (both exit status 2 as well)."""
    from .codec.multifile import open_path

    require_existing(path)
    return open_path(path)


def require_existing(path: str) -> None:
    if not os.path.exists(path):
        raise UsageError(f"no such file: {path}")


def say(text: str, file: TextIO | None = None) -> None:
    """Print one line for a person: control characters and lone surrogates escaped, whatever a file holds."""
    from .codec.text import printable

    print(printable(text), file=file)


def say_journal_warnings(tensor_file: Any) -> None:
    """On stderr, what opening found about an append journal beside the file, for commands that list no problems
    (what they read may be the generation before an interrupted append)."""
    from .codec.interrupted_append import RULE

    for problem in tensor_file.problems:
        if problem.rule == RULE:
            say(str(problem), sys.stderr)
