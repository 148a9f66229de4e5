"""JobSlot on its own: one live job per purpose, the latest request wins, a superseded job's results never reach
their callbacks, and nothing is left running after shutdown. Jobs wait on events the test sets, so the order of
events is fixed by the test, never by timing."""
from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QThreadPool

from ztviewer.workers.job_slot import JobSlot

HANG_GUARD_MS = 30_000          # a hang guard, not a figure


@pytest.fixture
def pool():
    pool = QThreadPool()
    pool.setMaxThreadCount(4)
    yield pool
    pool.waitForDone(HANG_GUARD_MS)


def gated(result, gate: threading.Event, started: threading.Event | None = None):
    def job(task):
        if started is not None:
            started.set()
        assert gate.wait(HANG_GUARD_MS / 1000)
        task.check_cancelled()
        return result
    return job


def test_the_latest_request_wins_and_the_superseded_result_is_dropped(qtbot, pool):
    slot = JobSlot(pool)
    got, busy = [], []
    slot.busy_changed.connect(busy.append)
    first_gate, first_started, second_gate = threading.Event(), threading.Event(), threading.Event()
    first = slot.start(gated("first", first_gate, first_started), got.append)
    assert first_started.wait(HANG_GUARD_MS / 1000)
    second = slot.start(gated("second", second_gate), got.append)
    assert slot.current is second and first.is_cancelled() and slot.cancelled_count == 1
    first_gate.set()
    assert first.wait(HANG_GUARD_MS / 1000)
    qtbot.wait(10)                  # let any queued signal of the first job arrive: none may reach the callback
    assert got == [] and slot.busy
    with qtbot.waitSignal(second.signals.finished, timeout=HANG_GUARD_MS):
        second_gate.set()
    qtbot.waitUntil(lambda: got == ["second"], timeout=HANG_GUARD_MS)
    assert not slot.busy and slot.current is None and slot.started_count == 2
    assert busy == [True, False, True, False]       # start, cancel of the first, start of the second, its end


def test_a_failure_reaches_the_failed_callback_and_partials_only_from_the_current_job(qtbot, pool):
    slot = JobSlot(pool)
    failed, partials = [], []

    def job(task):
        task.emit_partial("coarse")
        raise ValueError("bad data")

    with qtbot.waitSignal(slot.busy_changed, timeout=HANG_GUARD_MS, check_params_cb=lambda b: b is False):
        slot.start(job, lambda _: pytest.fail("must not finish"), partial=partials.append, failed=failed.append)
    assert partials == ["coarse"] and len(failed) == 1 and "bad data" in failed[0]


def test_cancel_and_shutdown_leave_nothing_running(qtbot, pool):
    slot = JobSlot(pool)
    gate, started = threading.Event(), threading.Event()
    task = slot.start(gated("x", gate, started), lambda _: pytest.fail("cancelled job finished"))
    assert started.wait(HANG_GUARD_MS / 1000) and slot.running() == 1
    gate.set()
    slot.shutdown(wait_ms=HANG_GUARD_MS)
    assert task.is_done and task.is_cancelled() and slot.running() == 0 and not slot.busy


def test_a_job_ending_after_its_view_was_deleted_reaches_nothing(qtbot, pool):
    """A tab closed while its job winds down: the job's queued end must not call into the deleted slot (it raised
    'Signal source has been deleted' inside the next test's event loop)."""
    from PySide6.QtCore import QObject
    from shiboken6 import Shiboken

    owner = QObject()
    slot = JobSlot(pool, owner)
    gate, started = threading.Event(), threading.Event()
    task = slot.start(gated("late", gate, started), lambda _: pytest.fail("reached a deleted view"))
    assert started.wait(HANG_GUARD_MS / 1000)
    Shiboken.delete(owner)                     # deletes the slot with it, the job still running
    gate.set()
    assert task.wait(HANG_GUARD_MS / 1000)
    qtbot.wait(50)                             # the job's queued signals are delivered (pytest-qt fails on a raise)
