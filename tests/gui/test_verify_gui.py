"""Verifying digests from the GUI: live per-component states, mismatches in Problems, cancel within 200 ms."""
from __future__ import annotations

import pytest

from tests._corpus import CORPUS, corpus_available
from tests._work import HashedChunks
from tests.gui.synthetic_files import Spec, build_file, float_bytes
from tests.gui.window_helpers import open_in_window
from ztviewer.codec import Component, Region, Tensor, TensorFile
from ztviewer.codec.source import LocalFile
from ztviewer.gui.file_view import FileView
from ztviewer.gui.models.tensor_tree import Column, TreeRole
from ztviewer.workers.tasks import OpenedFile


def state(view, tensor, role=None):
    index = view.tree_model.index_of(tensor, role, Column.DIGEST)
    return view.tree_model.data(index, TreeRole.DIGEST_STATE)


@pytest.fixture
def make_view(qtbot):
    views = []

    def make(tf) -> FileView:
        view = FileView(OpenedFile(tf))
        qtbot.addWidget(view)
        view.resize(1200, 700)
        view.show()
        views.append(view)
        return view

    yield make
    for view in views:       # stops workers, detaches the hex view, then closes the file
        view.shutdown()


def test_verify_all_updates_states_and_reports_mismatches(qtbot, make_view, tmp_path):
    tf = build_file(tmp_path / "d.zt", [
        Spec("good", parts={"data": float_bytes(32)}),
        Spec("bad", parts={"data": float_bytes(32)}, digest="crc32c:0x12345678"),
        Spec("plain", parts={"data": float_bytes(4)}, digest=None),
        Spec("sparse", layout="sparse_csr", parts={"indptr": bytes(16), "values": float_bytes(3)}, digest="sha256"),
    ])
    view = make_view(tf)
    good, bad, plain, sparse = tf.tensors
    view.tree_model.index_of(sparse, "values")       # expanded rows must repaint live as well
    changes = []
    view.tree_model.dataChanged.connect(lambda *a: changes.append(a))
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=10_000) as blocker:
        task = view.verify()
        assert task is not None and view.verify_bar.isVisible()
    assert blocker.args == ["finished"]
    assert changes
    assert state(view, good) == "ok" and state(view, bad) == "mismatch" and state(view, plain) == "none"
    assert state(view, sparse, "values") == "ok" and state(view, sparse) == "ok"
    assert view.tree_model.data(view.tree_model.file_index().siblingAtColumn(Column.DIGEST),
                                TreeRole.DIGEST_STATE) == "mismatch"
    (problem,) = [p for p in view.problems_model.problems() if p.rule == "digest over the stored bytes"]
    component = bad.components["data"]
    assert (problem.tensor, problem.component, problem.offset) == ("bad", "data", component.offset)
    assert f"[{component.offset}, {component.end})" in problem.message
    assert not view.verify_bar.isVisible()
    # verifying again does not duplicate the mismatch
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=10_000):
        view.verify()
    assert len([p for p in view.problems_model.problems() if p.rule == "digest over the stored bytes"]) == 1


def test_verify_selection_checks_only_the_selected_rows(qtbot, make_view, tmp_path):
    tf = build_file(tmp_path / "s.zt", [Spec("a"), Spec("b"), Spec("c")])
    view = make_view(tf)
    a, b, c = tf.tensors
    view.select_item(b)
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=10_000):
        view.verify(selection_only=True)
    assert [state(view, t) for t in (a, b, c)] == ["unchecked", "ok", "unchecked"]


def test_nothing_to_verify_is_a_status_message(qtbot, make_view, tmp_path):
    tf = build_file(tmp_path / "n.zt", [Spec("a", digest=None)])
    view = make_view(tf)
    with qtbot.waitSignal(view.status_message, timeout=1000) as blocker:
        assert view.verify() is None
    assert "no recorded digests" in blocker.args[0]


@pytest.fixture
def huge(tmp_path):
    path = tmp_path / "huge.zt"
    size = 2 << 30
    with open(path, "wb") as f:      # sparse file: no disk space used
        f.truncate(size)
    parts = [Component("data", 64, size // 2 - 64, digest="sha256:" + "0" * 64),
             Component("data", size // 2, size // 2, digest="crc32c:0x00000000")]
    tensors = [Tensor(f"t{i}", "uint8", (c.length,), components={"data": c}, index=i) for i, c in enumerate(parts)]
    tf = TensorFile(str(path), "zt", "test", tensors=tensors, regions=[Region("magic", 0, 8)], source=LocalFile(path))
    yield tf


def test_cancel_button_stops_verification_at_the_next_chunk(qtbot, make_view, huge, monkeypatch):
    view = make_view(huge)
    chunks = HashedChunks(monkeypatch, hold=2)
    task = view.verify()     # the bar follows the task from its start: its first chunk's progress is shown
    qtbot.waitUntil(lambda: chunks.holding.is_set() and view.verify_bar.bar.value() > 0, timeout=30_000)  # hang guard
    assert view.verify_bar.isVisible() and view.checks.verifier.running
    label = view.verify_bar.label.text()
    assert "of 2.0 GiB" in label
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=30_000) as blocker:  # a hang guard, not a figure
        chunks.cancel_while_held(view.verify_bar.cancel_button.click)
    assert blocker.args == ["cancelled"]
    assert task.wait(30)
    # the cancel flag is polled before every chunk is hashed: the one being hashed ends, no other begins
    assert (chunks.before, chunks.after) == (2, 0)
    assert not view.verify_bar.isVisible()
    assert {state(view, t) for t in huge.tensors} <= {"unchecked", "ok", "mismatch"}
    assert state(view, huge.tensors[1]) == "unchecked"


def test_check_and_verify_run_one_at_a_time(qtbot, make_view, huge):
    """One owner (the view's TaskSlot) says whether a Check File or a verification runs: the other is refused with
    a message saying which runs, and the slot is free again when it ends."""
    view = make_view(huge)
    said = []
    view.status_message.connect(said.append)
    assert view.verify() is not None and view.checks.tasks.owner is view.checks.verifier
    assert view.check_file() is None and said[-1] == "Wait for the running verification to end (or cancel it)"
    assert view.verify() is None and said[-1] == "A verification is already running"
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=30_000):     # a hang guard, not a figure
        view.checks.verifier.cancel()
    assert not view.checks.tasks.busy
    assert view.check_file() is not None and view.checks.tasks.owner is view.checks.checker
    assert view.verify(selection_only=True) is None and said[-1] == "Wait for the running check to end (or cancel it)"
    assert view.check_file() is None and said[-1] == "A check of this file is already running"
    with qtbot.waitSignal(view.checks.checker.ended, timeout=60_000):
        view.checks.checker.cancel()
    assert not view.checks.tasks.busy and view.checks.tasks.owner is None


def test_progress_shows_throughput_and_eta(qtbot, make_view, huge):
    view = make_view(huge)
    view.verify_bar.start(2, 1000)
    view.verify_bar._start -= 2.0
    view.verify_bar.update_progress(250, 1000)
    text = view.verify_bar.label.text()
    assert "250 B of 1000 B" in text and "/s" in text and "ETA 0:06" in text
    assert view.verify_bar.bar.value() == 250


@pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
def test_window_verifies_a_corpus_file_with_a_wrong_sha256(qtbot, window):
    view = open_in_window(qtbot, window, CORPUS / "hostile" / "zt1x_sha256_mismatch.zt")
    assert window.actions_.verify_all.isEnabled()
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=20_000):
        window.actions_.verify_all.trigger()
    states = {state(view, t) for t in view.tensor_file.tensors}
    assert "mismatch" in states
    mismatches = [p for p in window.problems_panel.model().problems() if p.rule == "digest over the stored bytes"]
    assert mismatches and all(p.tensor and p.component and p.offset is not None for p in mismatches)
    assert "error" in window.problems_label.text()
    assert window.actions_.verify_all.isEnabled() and not window.actions_.cancel_verify.isEnabled()


def test_verifying_a_group_row_under_a_filter_checks_the_tensors_it_shows(qtbot, make_view, tmp_path):
    """A group row totals the tensors shown under it ("1 of 3 tensors"): verifying it verifies those."""
    tf = build_file(tmp_path / "g.zt", [Spec("m.a"), Spec("m.b"), Spec("m.ab")])
    view = make_view(tf)
    a, b, ab = tf.tensors
    view.set_grouped(True)
    view.filter_edit.setText("b")
    view._apply_filter()
    group = view.tree.model().index(0, 0, view.tree.model().index(0, 0))
    assert group.siblingAtColumn(Column.SHAPE).data() == "2 of 3 tensors"
    view.tree.setCurrentIndex(group)
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=10_000):
        view.verify(selection_only=True)
    assert [state(view, t) for t in (a, b, ab)] == ["unchecked", "ok", "ok"]
