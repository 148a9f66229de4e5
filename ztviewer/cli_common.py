"""What every command-line module shares: exit statuses, the usage error (exit status 2), printing for people."""
from __future__ import annotations

import sys
from typing import Any, TextIO

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments or a missing path: exit status 2."""


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
