"""Where a zTensor v2 append in progress keeps its journal (a hidden file beside the target).

Kept apart from the writer so that opening a file only needs ``os.path.exists`` to know whether an
interrupted append must be looked at; the writers are imported only then.
"""
from __future__ import annotations

import os

JOURNAL_MARKER = ".ztviewer-append"


def journal_path(path: str | os.PathLike[str]) -> str:
    directory, name = os.path.split(os.path.realpath(os.fspath(path)))
    return os.path.join(directory, f".{name}{JOURNAL_MARKER}")


def journal_exists(path: str | os.PathLike[str]) -> bool:
    return os.path.exists(journal_path(path))
