"""Shared by the tests of the C extension: running the pure-Python paths, and a leak check."""
from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ztviewer.codec import accel


@contextmanager
def pure_python() -> Iterator[None]:
    """The pure-Python paths, whatever is built."""
    saved, accel.native = accel.native, None
    try:
        yield
    finally:
        accel.native = saved


def assert_no_leak(calls: list[Callable[[], Any]], watched: list[Any], rounds: int, warmup: int) -> None:
    """Many rounds of every call leave the watched objects' reference counts and the traced memory as they were.

    Every call runs ``warmup`` times first (caches, interned strings, free lists), then once more as many times
    under tracemalloc before the baseline is taken."""
    for call in calls * warmup:
        call()
    gc.collect()
    counts = [sys.getrefcount(o) for o in watched]
    tracemalloc.start()
    try:
        for call in calls * warmup:
            call()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(rounds // len(calls)):
            for call in calls:
                call()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert [sys.getrefcount(o) for o in watched] == counts
    assert grown < 16_000, f"{grown} bytes more after {rounds} calls"
