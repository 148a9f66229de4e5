"""What every command-line module shares: exit statuses, the usage error (exit status 2), printing for people."""
from __future__ import annotations

from typing import TextIO

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments or a missing path: exit status 2."""


def say(text: str, file: TextIO | None = None) -> None:
    """Print one line for a person: control characters and lone surrogates escaped, whatever a file holds."""
    from .codec.text import printable

    print(printable(text), file=file)
