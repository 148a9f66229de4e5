"""Count work instead of timing it (``from tests._work import …``).

A shared machine makes any wall-clock bound flaky; the figures live in ``benchmarks/``. Tests count what the
code did instead: Python lines run inside ``ztviewer`` (deterministic for a given input, so linear growth is
checked by comparing the counts at n and 4n), or the chunks hashed after a cancel was requested.
"""
from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest


def lines_run(call: Callable[[], Any], package: str = "ztviewer") -> tuple[Any, Counter[str]]:
    """``call()``'s result and the Python lines it ran in ``package``'s modules (this thread), by function
    (``module.qualname``)."""
    counts: Counter[str] = Counter()

    def local(frame: FrameType, event: str, arg: object) -> Callable[..., Any]:
        if event == "line":
            counts[f"{frame.f_globals['__name__']}.{frame.f_code.co_qualname}"] += 1
        return local

    def enter(frame: FrameType, event: str, arg: object) -> Callable[..., Any] | None:
        name = frame.f_globals.get("__name__") or ""
        return local if name == package or name.startswith(package + ".") else None

    previous = sys.gettrace()
    sys.settrace(enter)
    try:
        result = call()
    finally:
        sys.settrace(previous)
    return result, counts


def total_lines(call: Callable[[], Any], package: str = "ztviewer") -> int:
    return sum(lines_run(call, package)[1].values())


def assert_linear(work_at: Callable[[int], int], n: int, slack: float = 1.25) -> None:
    """The work at 4n is at most ``slack`` × 4 × the work at n (a quadratic step would give 16×).

    ``work_at(n)`` runs once first, uncounted in the comparison, so that lazy imports and caches filled on
    first use do not pad the small side."""
    work_at(n)
    small, large = work_at(n), work_at(4 * n)
    assert large <= slack * 4 * small, f"work grew {large / small:.1f}x from n={n} to 4n (linear: 4x)"


class HashedChunks:
    """Which chunks the digest code hashed, split at the cancel, with the cancel landing at a chunk the test
    chooses: the hashing of chunk number ``hold`` (1-based) waits, in whichever thread hashes, until
    :meth:`cancel_while_held` has requested the cancel.

    Wait for :attr:`holding`, then call :meth:`cancel_while_held`: :attr:`before` counts the chunks whose hashing
    began before the cancel (``hold`` of them), :attr:`after` those that began after it.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, hold: int = 2) -> None:
        from ztviewer.codec import digest

        self.requested, self.holding, self._released = threading.Event(), threading.Event(), threading.Event()
        self.before = self.after = 0
        original = digest.Hasher.update

        def counting_update(hasher: Any, data: Any) -> None:
            if self.requested.is_set():
                self.after += 1
            else:
                self.before += 1
                if self.before == hold:
                    self.holding.set()
                    assert self._released.wait(60), "the held chunk was never released"  # a hang guard
            original(hasher, data)

        monkeypatch.setattr(digest.Hasher, "update", counting_update)

    def cancel_while_held(self, cancel: Callable[[], object]) -> None:
        """Request the cancel (``cancel()``) while the held chunk is being hashed, then let that chunk finish."""
        self.requested.set()
        cancel()
        self._released.set()
