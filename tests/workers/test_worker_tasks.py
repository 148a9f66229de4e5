"""OpenFileTask and VerifyDigestsTask against real and hand-built files."""
from __future__ import annotations

import crc32c
import pytest
from PySide6.QtCore import QThreadPool

from tests._corpus import CORPUS, corpus_available
from tests._work import HashedChunks
from tests.gui.synthetic_files import Spec, build_file
from ztviewer.codec import Component, Tensor, TensorFile
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.source import LocalFile
from ztviewer.workers.tasks import OpenFileTask, VerifyDigestsTask, read_tensor_file


@pytest.fixture
def pool():
    pool = QThreadPool()
    yield pool
    pool.waitForDone(10_000)


@pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
def test_open_file_task_parses_and_runs_the_analysis_on_the_worker(qtbot, pool):
    path = CORPUS / "zt_v1.0" / "ztensor-1.0.1" / "shapes.zt"
    task = OpenFileTask(path, analyse=lambda tf: len(tf.tensors))
    with qtbot.waitSignal(task.signals.finished, timeout=10_000) as blocker:
        task.start(pool)
    opened = blocker.args[0]
    try:
        assert opened.tensor_file.readable
        assert opened.analysis == len(opened.tensor_file.tensors) > 0
    finally:
        opened.tensor_file.close()


def test_open_file_task_reports_a_missing_path_as_a_message(qtbot, pool, tmp_path):
    task = OpenFileTask(tmp_path / "missing.zt")
    with qtbot.waitSignal(task.signals.failed, timeout=10_000) as blocker:
        task.start(pool)
    assert "missing.zt" in blocker.args[0] and "No such file" in blocker.args[0]


def test_a_reader_crash_still_yields_the_bytes_with_a_problem(monkeypatch, tmp_path):
    path = tmp_path / "x.safetensors"
    path.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")

    def broken(_path):
        raise KeyError("dtype")

    monkeypatch.setattr("ztviewer.workers.tasks.open_path", broken)
    tf = read_tensor_file(str(path))
    try:
        assert not tf.readable and tf.source is not None and tf.source.size == 16
        assert tf.format == "safetensors"
        assert "the reader failed: KeyError" in tf.problems[0].message
    finally:
        tf.close()


def test_verify_reports_ok_mismatch_and_invalid_per_component(qtbot, pool, tmp_path):
    good, bad = b"A" * 100, b"B" * 50
    tf = build_file(tmp_path / "v.zt", [
        Spec("good", parts={"data": good}, digest="crc32c"),
        Spec("sha", parts={"data": good}, digest="sha256"),
        Spec("bad", parts={"data": bad}, digest=f"crc32c:0x{crc32c.crc32c(b'not the stored bytes'):08X}"),
        Spec("malformed", parts={"data": bad}, digest="crc32c:xyz"),
    ])
    targets = [(t, c) for t in tf.tensors for c in t.components.values()]
    task = VerifyDigestsTask(tf, targets)
    checks, progress = [], []
    task.signals.partial.connect(checks.extend)
    task.signals.progress.connect(lambda done, total: progress.append((done, total)))
    with qtbot.waitSignal(task.signals.finished, timeout=10_000) as blocker:
        task.start(pool)
    qtbot.waitUntil(lambda: len(checks) == 4)
    states = {c.tensor.name: c.state for c in checks}
    assert states == {"good": DigestState.OK, "sha": DigestState.OK, "bad": DigestState.MISMATCH,
                      "malformed": DigestState.INVALID}
    mismatch = next(c.problem for c in checks if c.tensor.name == "bad")
    component = tf.tensors[2].components["data"]
    assert (mismatch.tensor, mismatch.component, mismatch.offset) == ("bad", "data", component.offset)
    assert f"[{component.offset}, {component.end})" in mismatch.message
    summary = blocker.args[0]
    assert (summary.checked, summary.ok, summary.mismatched, summary.invalid) == (4, 2, 1, 1)
    assert progress[-1] == (300, 300)
    tf.close()


def test_cancelling_verification_stops_at_the_next_chunk(qtbot, pool, tmp_path, monkeypatch):
    path = tmp_path / "big.bin"
    size = 2 << 30
    with open(path, "wb") as f:     # sparse: costs no disk space
        f.truncate(size)
    component = Component("data", 0, size, digest="sha256:" + "0" * 64)
    tensor = Tensor("huge", "uint8", (size,), components={"data": component})
    tf = TensorFile(str(path), "zt", tensors=[tensor], source=LocalFile(path))
    chunks = HashedChunks(monkeypatch, hold=2)
    task = VerifyDigestsTask(tf, [(tensor, tensor.components["data"])])
    started = []
    task.signals.progress.connect(lambda done, total: started.append(done))
    task.start(pool)
    qtbot.waitUntil(lambda: chunks.holding.is_set() and bool(started), timeout=30_000)  # a hang guard
    assert not task.is_done
    with qtbot.waitSignal(task.signals.cancelled, timeout=30_000):  # a hang guard, not a figure
        chunks.cancel_while_held(task.cancel)
    assert task.wait(30)
    # the cancel flag is polled before every chunk is hashed: the one being hashed ends, no other begins
    assert (chunks.before, chunks.after) == (2, 0)
    tf.close()
