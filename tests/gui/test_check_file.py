"""Problems found after opening reach the Problems panel, the tree and the status bar: Check File (structure,
every tensor decoded, every digest) and a view that decodes a damaged tensor."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests._corpus import CORPUS, corpus_available
from tests.gui.window_helpers import open_in_window
from ztviewer.codec import Severity
from ztviewer.codec.registry import open_file as open_file_readonly
from ztviewer.gui.check_controller import check_summary
from ztviewer.gui.models.tensor_tree import Column
from ztviewer.workers.tasks import CheckFileTask

# the CSR tensor's column index 99 lies outside its 6 columns: the reader cannot see it, decoding does
DAMAGED = CORPUS / "hostile" / "zt10_csr_column_out_of_range.zt"
needs_corpus = pytest.mark.skipif(not corpus_available(), reason="shared corpus not available")


def name_cell(view, tensor_name: str, role):
    tensor = next(t for t in view.tensor_file.tensors if t.name == tensor_name)
    return view.tree_model.data(view.tree_model.index_of(tensor, column=Column.NAME), role)


def index_problems(view):
    return [p for p in view.problems_model.problems() if p.tensor == "csr_f32_5x6" and p.component == "indices"]


@needs_corpus
def test_check_file_lists_decode_problems_in_panel_tree_and_status_bar(qtbot, window):
    view = open_in_window(qtbot, window, DAMAGED)
    assert window.problems_panel.summary.text() == "No problems found"
    assert name_cell(view, "csr_f32_5x6", Qt.ItemDataRole.DecorationRole) is None
    assert window.problems_label.text() == "no problems"
    assert window.actions_.check_file.isEnabled()
    with qtbot.waitSignal(view.checks.checker.ended, timeout=20_000) as ended:
        assert window.check_file() is not None
        assert view.verify_bar.isVisible() and "Checking the file" in view.verify_bar.label.text()
        assert not window.actions_.check_file.isEnabled() and window.actions_.cancel_verify.isEnabled()
    assert ended.args == ["finished"]
    [problem] = index_problems(view)
    assert problem.severity is Severity.ERROR and problem.offset == 128
    assert "column index 99" in problem.message
    assert window.problems_panel.summary.text().startswith("1 error, 0 warnings · Checked 9 tensors")
    assert window.problems_label.text() == "1 error, 0 warnings"
    assert name_cell(view, "csr_f32_5x6", Qt.ItemDataRole.DecorationRole) is not None
    assert "column index 99" in name_cell(view, "csr_f32_5x6", Qt.ItemDataRole.ToolTipRole)
    assert name_cell(view, "csr_f32_5x6", Qt.ItemDataRole.ForegroundRole) is not None
    assert "8 decoded" in window.statusBar().currentMessage() and "1 error" in window.statusBar().currentMessage()
    assert not view.verify_bar.isVisible() and window.actions_.check_file.isEnabled()
    with qtbot.waitSignal(view.checks.checker.ended, timeout=20_000):   # a second check lists the problem once
        window.check_file()
    assert len(index_problems(view)) == 1 and view.problems_model.rowCount() == 1


@pytest.fixture
def keep():
    """Holds models until after qtmodeltester has disconnected from them (fixtures end in reverse order)."""
    held: list = []
    yield held
    for item in held:
        if hasattr(item, "close"):
            item.close()


@needs_corpus
@pytest.mark.parametrize("grouped", [False, True])
def test_models_pass_qtmodeltester_while_found_problems_arrive(keep, qtmodeltester, grouped):
    from ztviewer.codec.check import check_file
    from ztviewer.codec.multifile import open_path
    from ztviewer.gui.models.problems_model import ProblemsModel
    from ztviewer.gui.models.tensor_tree import TensorTreeModel

    tf = open_path(str(DAMAGED))
    tree = TensorTreeModel(tf, grouped=grouped)
    problems = ProblemsModel(tf.all_problems())
    keep += [tf, tree, problems]
    qtmodeltester.check(tree, force_py=True)
    found = check_file(tf).problems
    tree.add_found_problems(found)
    tree.add_found_problems(found)
    assert len(tree.problems_of(tf.tensors[5])) == 1
    keep.append(qtmodeltester)
    qtmodeltester.check(problems, force_py=True)
    problems.add_problems(found)
    assert problems.rowCount() == 1


@needs_corpus
def test_a_view_that_fails_to_decode_reports_its_problem(qtbot, window):
    view = open_in_window(qtbot, window, DAMAGED)
    tensor = next(t for t in view.tensor_file.tensors if t.name == "csr_f32_5x6")
    view.inspect_tabs.setCurrentIndex(1)
    view.select_item(tensor)
    qtbot.waitUntil(lambda: bool(index_problems(view)), timeout=10_000)
    assert window.problems_label.text() == "1 error, 0 warnings"
    assert name_cell(view, "csr_f32_5x6", Qt.ItemDataRole.DecorationRole) is not None
    assert "column index 99" in window.statusBar().currentMessage()


def test_check_file_task_stops_when_cancelled_between_tensors(qtbot, tmp_path):
    from tests.gui.synthetic_files import Spec, build_file, float_bytes

    tf = build_file(tmp_path / "many.zt", [Spec(f"t{i}", parts={"data": float_bytes(16)}) for i in range(50)])
    task = CheckFileTask(tf)
    seen: list[tuple] = []
    ends: list[str] = []

    def on_progress(done, total):
        seen.append((done, total))
        if done >= 3:
            task.cancel()

    task.signals.progress.connect(on_progress, Qt.ConnectionType.DirectConnection)
    task.signals.cancelled.connect(lambda: ends.append("cancelled"), Qt.ConnectionType.DirectConnection)
    task.signals.finished.connect(lambda r: ends.append("finished"), Qt.ConnectionType.DirectConnection)
    task._progress_interval = 0.0
    task.run()      # on this thread: the signals are delivered directly
    assert ends == ["cancelled"]
    assert seen[-1] == (3, 50)
    tf.close()


def test_check_summary_says_singular_and_plural():
    from ztviewer.codec.check import CheckReport
    from ztviewer.codec.model import error
    from ztviewer.workers.tasks import CheckOutcome

    one = CheckOutcome(CheckReport([error("x")], tensors_decoded=1, digests_verified=1), 1, 0.5)
    assert check_summary(one) == "Checked 1 tensor in 0.50 s: 1 decoded, 1 digest verified: 1 error"
    none = CheckOutcome(CheckReport([], tensors_decoded=2, digests_verified=0), 2, 0.25)
    assert check_summary(none) == "Checked 2 tensors in 0.25 s: 2 decoded, 0 digests verified: no problems"


def test_opening_several_files_shows_the_one_opened_last(qtbot, window, tmp_path, monkeypatch):
    """However the parses finish, the tab in front is the last file asked for."""
    import threading

    from tests.gui.synthetic_files import Spec, build_file, float_bytes
    from ztviewer.workers import tasks

    small_done = threading.Event()
    read = tasks.read_tensor_file

    def ordered_read(path):      # the first file asked for finishes parsing last
        if path.endswith("big.zt"):
            small_done.wait(10)
        result = read(path)
        if path.endswith("small.zt"):
            small_done.set()
        return result

    monkeypatch.setattr(tasks, "read_tensor_file", ordered_read)

    big = build_file(tmp_path / "big.zt", [Spec(f"t{i}", parts={"data": float_bytes(8)}) for i in range(3000)])
    small = build_file(tmp_path / "small.zt", [Spec("a", parts={"data": float_bytes(8)})])
    big.close()
    small.close()
    window.opener.open_paths([str(tmp_path / "big.zt"), str(tmp_path / "small.zt")])
    qtbot.waitUntil(lambda: window.view_for(str(tmp_path / "big.zt")) is not None
                    and window.view_for(str(tmp_path / "small.zt")) is not None, timeout=20_000)
    assert window.current_view() is window.view_for(str(tmp_path / "small.zt"))
    window.opener.open_paths([str(tmp_path / "big.zt")])
    assert window.current_view() is window.view_for(str(tmp_path / "big.zt"))


def test_shortcut_labels_are_readable(window):
    labels = [a.shortcut().toString() for a in window.findChildren(type(window.actions_.open))]
    assert not any("Backtab" in label for label in labels)
    assert window.actions_.previous_tab.shortcut().toString() == "Ctrl+PgUp"


@needs_corpus
def test_check_file_fills_the_digest_column_and_its_summary_stays(qtbot, window, tmp_path):
    """Check File verifies every digest: the Digest column then says ok / mismatch (it said "unchecked"), and the
    summary of the last check or verification stays in the Problems panel after the status bar forgets it."""
    import shutil

    from tests.gui.test_verify_gui import state

    path = tmp_path / "checksums.zt"
    shutil.copy(CORPUS / "zt_v1.x" / "ztensor-1.2.3" / "checksums.zt", path)
    with open_file_readonly(path) as tf:
        crc = tf.tensor("crc32c_raw_int64").components["data"]
    data = bytearray(path.read_bytes())
    data[crc.offset] ^= 0xFF                                     # one tensor's bytes no longer match its digest
    path.write_bytes(bytes(data))
    view = open_in_window(qtbot, window, path)
    digested = [t for t in view.tensor_file.tensors if any(c.digest for c in t.components.values())]
    assert len(digested) > 1 and {state(view, t) for t in digested} == {"unchecked"}
    with qtbot.waitSignal(view.checks.checker.ended, timeout=20_000):
        window.check_file()
    states = {t.name: state(view, t) for t in digested}
    assert states.pop("crc32c_raw_int64") == "mismatch" and set(states.values()) == {"ok"}
    summary = window.problems_panel.summary.text()
    assert summary.startswith("1 error, 0 warnings · Checked") and f"{len(digested) - 1} digests verified" in summary
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=20_000):
        window.verify()
    assert "Verified" in window.problems_panel.summary.text() and "1 mismatched" in window.problems_panel.summary.text()
    window.statusBar().clearMessage()
    assert "1 mismatched" in window.problems_panel.summary.text()
