"""Problems dock navigation and the properties panel's facts."""
from __future__ import annotations

import pytest

from tests._corpus import CORPUS, corpus_available
from tests.gui.synthetic_files import Spec, build_file, float_bytes
from tests.gui.window_helpers import open_in_window
from ztviewer.codec import Problem, Severity
from ztviewer.gui.file_view import FileView
from ztviewer.gui.models.problems_model import PROBLEM_ROLE
from ztviewer.gui.views.problems_panel import ProblemsPanel
from ztviewer.workers.tasks import OpenedFile


@pytest.fixture
def damaged(qtbot, tmp_path):
    problem = Problem(Severity.ERROR, "indices out of range", rule="csr indices < ncols", tensor="csr",
                      component="indices", offset=None)
    specs = [Spec("dense", parts={"data": float_bytes(16)}),
             Spec("csr", layout="sparse_csr", parts={"indptr": bytes(16), "indices": bytes(range(40)),
                                                     "values": float_bytes(4)}, problems=[problem])]
    tf = build_file(tmp_path / "damaged.zt", specs, file_problems=[
        Problem(Severity.WARNING, "trailing bytes", rule="nothing after the footer", offset=3)])
    indices = tf.tensor("csr").components["indices"]
    located = Problem(Severity.ERROR, "bad index value", tensor="csr", component="indices", offset=indices.offset + 9)
    tf.tensor("csr").problems.append(located)
    view = FileView(OpenedFile(tf))
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    panel = ProblemsPanel()
    qtbot.addWidget(panel)
    panel.set_model(view.problems_model)
    panel.problem_activated.connect(view.select_problem)
    yield tf, view, panel
    view.shutdown()


def row_of(panel, message):
    return next(r for r in range(panel.proxy.rowCount()) if panel.proxy.index(r, 3).data() == message)


def test_problems_dock_lists_file_and_tensor_problems(damaged):
    tf, _view, panel = damaged
    assert panel.proxy.rowCount() == 3
    assert panel.summary.text() == "2 errors, 1 warning"
    row = row_of(panel, "bad index value")
    assert panel.proxy.index(row, 1).data() == "csr · indices"
    assert panel.proxy.index(row, 2).data() == f"0x{tf.tensor('csr').components['indices'].offset + 9:X}"


def test_clicking_a_problem_selects_its_component_and_scrolls_to_its_offset(qtbot, damaged):
    tf, view, panel = damaged
    component = tf.tensor("csr").components["indices"]
    row = row_of(panel, "bad index value")
    rect = panel.table.visualRect(panel.proxy.index(row, 3))
    from PySide6.QtCore import Qt

    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.current_item() is component
    assert view.hex_view.cursor_offset() == component.offset + 9
    assert view.hex_view.byte_rect(component.offset + 9) is not None
    assert view.hex_view.selection() == (component.offset, component.length)


def test_a_problem_without_offset_selects_and_shows_the_component(damaged):
    tf, view, panel = damaged
    panel.activate_row(row_of(panel, "indices out of range"))
    component = tf.tensor("csr").components["indices"]
    assert view.current_item() is component
    assert view.hex_view.cursor_offset() == component.offset


def test_a_file_problem_goes_to_its_byte(damaged):
    tf, view, panel = damaged
    panel.activate_row(row_of(panel, "trailing bytes"))
    assert view.current_item() is tf and view.hex_view.cursor_offset() == 3


@pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
def test_hostile_overlap_problem_navigates_in_the_window(qtbot, window):
    view = open_in_window(qtbot, window, CORPUS / "hostile" / "zt01_overlapping_blobs.zt")
    panel = window.problems_panel
    rows = [r for r in range(panel.proxy.rowCount()) if "overlaps" in panel.proxy.index(r, 3).data()]
    assert rows
    panel.activate_row(rows[0])
    problem = panel.proxy.index(rows[0], 0).data(PROBLEM_ROLE)
    assert view.current_item() is view.tensor_file.tensor(problem.tensor).components[problem.component]
    assert view.hex_view.cursor_offset() == problem.offset
    segment = view.layout_map.segment_at(problem.offset)
    assert segment.kind in ("overlap", "blob")


def test_properties_of_a_tensor_and_its_component(qtbot, file_view, sample_file):
    from ztviewer.gui.views.properties_panel import PropertiesPanel

    panel = PropertiesPanel()
    qtbot.addWidget(panel)
    embed = sample_file.tensor("model.embed.weight")       # float32 3×5, 60 bytes at 0x100, then 4 bytes padding
    file_view.select_item(embed)
    panel.show_props(file_view.properties())
    assert panel.value_of("Manifest", "dtype") == "float32"
    assert panel.value_of("Manifest", "shape").startswith("3 × 5")
    assert panel.value_of("Derived", "element count") == "15"
    assert panel.value_of("Derived", "dense bytes") == "60 bytes"
    assert panel.value_of("Derived", "stored bytes") == "60 bytes"
    assert panel.value_of("Derived", "compression ratio") == "1.000×"
    assert panel.value_of("Derived", "byte range") == "[0x100, 0x13C)"
    assert panel.value_of("Derived", "alignment") == "data: 256"
    assert panel.value_of("Derived", "padding after") == "4 bytes"
    assert panel.value_of("Manifest", "components", "data", "digest").startswith("sha256:")
    file_view.select_item(embed, "data")
    panel.show_props(file_view.properties())
    assert panel.value_of("Component", "offset") == "256 (0x100)"
    assert panel.value_of("Derived", "digest state") == "unchecked"


def test_properties_of_the_file(qtbot, file_view, sample_file):
    from ztviewer.gui.views.properties_panel import PropertiesPanel

    panel = PropertiesPanel()
    qtbot.addWidget(panel)
    file_view.select_item(None)
    panel.show_props(file_view.properties())
    assert panel.value_of("File", "tensors") == "6"
    assert panel.value_of("File", "size").startswith(f"{sample_file.size:,} bytes")
    assert panel.value_of("Attributes", "producer") == "tests"
    assert panel.value_of("Derived", "overlaps") == "0 ranges, 0 bytes"


def test_nested_attribute_values_become_subtrees():
    from ztviewer.session.properties import value_props

    prop = value_props("Attributes", {"a": {"b": [1, 2]}, "blob": b"\x00\x01", "many": list(range(5))})
    a = prop.children[0]
    assert (a.key, a.value, a.children[0].key, a.children[0].value) == ("a", "{1 entry}", "b", "[1, 2]")
    assert prop.children[1].value.startswith("<2 bytes> 00 01")
