"""The Worker pattern: exactly one terminal signal, errors become messages, cancel is a flag."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QThreadPool

from ztviewer.codec.errors import CodecError
from ztviewer.workers.base import Worker


class Job(Worker):
    def __init__(self, body):
        super().__init__(progress_interval=0.0)
        self.body = body

    def execute(self):
        return self.body(self)


@pytest.fixture
def pool():
    pool = QThreadPool()
    yield pool
    pool.waitForDone(5000)


def test_finished_carries_the_result(qtbot, pool):
    job = Job(lambda w: 42)
    with qtbot.waitSignal(job.signals.finished, timeout=5000) as blocker:
        job.start(pool)
    assert blocker.args == [42]
    assert job.wait(1) and job.is_done


def test_started_then_progress_then_finished(qtbot, pool):
    def body(w):
        for done in range(0, 101, 25):
            w.report_progress(done, 100)
        return "ok"

    job = Job(body)
    seen = []
    job.signals.progress.connect(lambda done, total: seen.append((done, total)))
    with qtbot.waitSignals([job.signals.started, job.signals.finished], order="strict", timeout=5000):
        job.start(pool)
    qtbot.waitUntil(lambda: bool(seen) and seen[-1] == (100, 100))
    assert seen == [(0, 100), (25, 100), (50, 100), (75, 100), (100, 100)]


def test_progress_is_throttled_but_the_last_report_always_arrives(qtbot, pool):
    def body(w):
        w._progress_interval = 60.0
        for done in range(1, 1001):
            w.report_progress(done, 1000)

    job = Job(body)
    seen = []
    job.signals.progress.connect(lambda done, total: seen.append(done))
    with qtbot.waitSignal(job.signals.finished, timeout=5000):
        job.start(pool)
    qtbot.waitUntil(lambda: bool(seen) and seen[-1] == 1000)
    assert len(seen) <= 2


@pytest.mark.parametrize("error, expected", [
    (CodecError("bad manifest", offset=8, rule="r"), "at byte 8"),
    (FileNotFoundError(2, "No such file or directory", "/nope.zt"), "/nope.zt: No such file or directory"),
    (RuntimeError("boom"), "RuntimeError: boom"),
])
def test_failures_become_one_line_messages(qtbot, pool, error, expected):
    def body(w):
        raise error

    job = Job(body)
    with qtbot.waitSignal(job.signals.failed, timeout=5000) as blocker:
        job.start(pool)
    message = blocker.args[0]
    assert expected in message
    assert "Traceback" not in message


def test_cancel_before_start_emits_cancelled_without_running(qtbot, pool):
    ran = []
    job = Job(lambda w: ran.append(1))
    job.cancel()
    with qtbot.waitSignal(job.signals.cancelled, timeout=5000):
        job.start(pool)
    assert ran == []


def test_check_cancelled_stops_a_running_job(qtbot, pool):
    import threading

    entered = threading.Event()

    def body(w):
        entered.set()
        while True:
            w.check_cancelled()

    job = Job(body)
    with qtbot.waitSignal(job.signals.cancelled, timeout=5000):
        job.start(pool)
        assert entered.wait(5)
        job.cancel()
    with qtbot.assertNotEmitted(job.signals.finished, wait=50):
        pass
