"""Helpers shared by the benchmark modules: alternating best-of-N timing, result rows, goals.

A result row is a plain dict (JSON-serialisable once the private ``_``-prefixed keys are dropped):

``name``         what is measured
``ours_s``       our best time in seconds (or the value in ``unit`` when the row is not a time)
``reference_s``  the reference's best time, measured in the same run
``ratio``        the figure compared with the goal (see :func:`result`)
``goal``         ``"<= 1.0"``, ``">= 0.8"`` or ``"report"`` (no goal, shown for information)
``passed``       ``True`` / ``False``, ``None`` for report-only rows
``note``         free text (sizes, repeats, caveats)

Optional: ``unit`` (default ``"s"``) and ``_profile``, a zero-argument callable that runs our side once;
the runner profiles it with cProfile when the row misses its goal.
"""
from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable
from typing import Any

REQUIRED_KEYS = ("name", "ours_s", "reference_s", "ratio", "goal", "passed", "note")


def timed(fn: Callable[[], Any], number: int = 1) -> float:
    """Seconds per call of ``fn`` averaged over ``number`` back-to-back calls."""
    gc.collect()
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def best_of(
    ours: Callable[[], Any], reference: Callable[[], Any], repeats: int = 5, number: int = 1,
    warmup: bool = True,
) -> tuple[float, float]:
    """Best seconds per call of ``ours`` and of ``reference``, alternating which one goes first.

    Taking the minimum of several repeats filters out the noise of a shared machine; alternating the order
    keeps cache warm-up and frequency changes from favouring one side.
    """
    if warmup:
        ours()
        reference()
    best_ours = best_ref = math.inf
    for i in range(repeats):
        if i % 2 == 0:
            best_ours = min(best_ours, timed(ours, number))
            best_ref = min(best_ref, timed(reference, number))
        else:
            best_ref = min(best_ref, timed(reference, number))
            best_ours = min(best_ours, timed(ours, number))
    return best_ours, best_ref


def meets(ratio: float, goal: str) -> bool | None:
    """Whether ``ratio`` satisfies ``goal`` (``"<= x"`` / ``">= x"``); ``None`` for report-only goals."""
    op, _, value = goal.strip().partition(" ")
    if op == "<=":
        return ratio <= float(value)
    if op == ">=":
        return ratio >= float(value)
    return None


def result(
    name: str, ours_s: float, reference_s: float, goal: str, *, kind: str = "time", note: str = "",
    unit: str = "s", passed: bool | None = None, profile: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """One result row.

    ``kind="time"``: ratio = ours / reference (lower is better, goals like ``"<= 1.0"``).
    ``kind="throughput"``: ratio = reference / ours, i.e. our throughput relative to the reference's
    (higher is better, goals like ``">= 0.9"``). ``passed`` overrides the goal check when given.
    """
    if kind == "time":
        ratio = ours_s / reference_s if reference_s > 0 else math.inf
    elif kind == "throughput":
        ratio = reference_s / ours_s if ours_s > 0 else math.inf
    else:
        raise ValueError(f"unknown ratio kind {kind!r}")
    row: dict[str, Any] = {
        "name": name, "ours_s": ours_s, "reference_s": reference_s, "ratio": ratio, "goal": goal,
        "passed": meets(ratio, goal) if passed is None else passed, "note": note, "unit": unit,
        "kind": kind,
    }
    if profile is not None:
        row["_profile"] = profile
    return row

