"""The tensor tree's filter: which tensors' names match the text typed above the tree (Qt-free).

Matches are computed once per pattern over all names (and again when a rename changes a shown name), so the
test for one row, asked for every row a view lays out, is a set lookup.
"""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence

_GLOB_CHARS = re.compile(r"[*?\[]")

NameMatcher = Callable[[str], bool]


def name_matcher(pattern: str) -> NameMatcher | None:
    """A case-insensitive predicate on names: glob when the pattern has glob characters, else substring; ``None``
    for a blank pattern (everything matches).

    A glob is anchored at the end of the name but not at its start, so ``*.weight`` matches suffixes and
    ``layers.[0-3].*`` matches ``model.layers.2.mlp.bias``. Anything else is literal: dots, backslashes and
    regular-expression characters match themselves.
    """
    text = pattern.strip().lower()
    if not text:
        return None
    if _GLOB_CHARS.search(text):
        regex = re.compile(fnmatch.translate(text.lstrip("*")))  # a leading * is implied (and slow to search)
        return lambda name: regex.search(name.lower()) is not None
    return lambda name: text in name.lower()


def filters_with(pattern: str) -> bool:
    """Whether ``pattern`` hides anything (an empty or blank one shows every tensor)."""
    return name_matcher(pattern) is not None


class NameFilter:
    """The pattern and the positions of the tensors whose shown names match it (``None``: no filter)."""

    __slots__ = ("matches", "pattern")

    def __init__(self) -> None:
        self.pattern = ""
        self.matches: set[int] | None = None

    @property
    def active(self) -> bool:
        return self.matches is not None

    def match(self, pattern: str, names: Callable[[], Sequence[str]]) -> None:
        """Match ``pattern`` against the names (by position) ``names()`` gives (not asked for a blank pattern)."""
        self.pattern = pattern
        matcher = name_matcher(pattern)
        self.matches = None if matcher is None else {i for i, name in enumerate(names()) if matcher(name)}
