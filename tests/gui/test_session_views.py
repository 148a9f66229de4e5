"""The views render a FileSession: changes made on the session (as a notebook or a test would) show in the
window, and the user's actions in the window change the session."""
from __future__ import annotations

import numpy as np

from tests.gui.test_edit_attributes import discard_on_teardown, make_file  # noqa: F401
from tests.gui.window_helpers import open_in_window
from ztviewer.codec.edit import RenameTensor
from ztviewer.session.view_registry import FITS, UNSUPPORTED


def test_a_selection_made_on_the_session_moves_the_tree_and_the_hex_view(qtbot, window, tmp_path):
    view = open_in_window(qtbot, window, make_file(tmp_path))
    selected = []
    view.selection_changed.connect(selected.append)
    selection = view.session.select_tensor("b", "data")
    component = view.tensor_file.tensor("b").components["data"]
    assert view.current_item() is component and view.hex_view.selection() == (component.offset, component.length)
    assert selected == [component]
    view.select_item(view.tensor_file.tensor("a"))                       # and the tree's choice reaches the session
    assert view.session.selection.tensor.name == "a" and view.session.selection is not selection
    manifest = next(p for p in view.properties() if p.key == "Manifest")
    assert [c.value for c in manifest.children if c.key == "name"] == ["a"]


def test_the_undo_stack_and_the_session_history_move_together(qtbot, window, tmp_path):
    view = open_in_window(qtbot, window, make_file(tmp_path))
    edits, stack = view.session.edits, view.edit_session.stack
    edits.push(RenameTensor("a", "alpha"))                              # edited on the session
    assert stack.count() == 1 and stack.index() == 1 and window.isWindowModified()
    edits.undo()
    assert stack.index() == 0 and edits.index == 0 and not window.isWindowModified()
    window.editing.redo_action.trigger()                                # redone from the menu
    assert edits.index == 1 and next(iter(edits.doc.tensors)).name == "alpha"
    window.editing.undo_action.trigger()
    assert edits.index == 0 and stack.index() == 0 and "a" in [t.name for t in edits.doc.tensors]


def test_the_heatmap_shows_the_plane_the_session_chooses(qtbot, panel, open_arrays):
    from ztviewer.session.file_session import FileSession

    array = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    session = FileSession(open_arrays({"t": array}))
    panel.set_session(session)
    panel.show_item(session.tensor("t"))
    qtbot.waitUntil(lambda: panel.heatmap.base is not None)
    assert session.dims.shape == (2, 3, 4) and session.dims.axes == (1, 2)
    session.dims.set_index(0, 1)                                         # the session moves the slice
    assert panel.heatmap.axes.spins[0].value() == 1
    qtbot.waitUntil(lambda: np.array_equal(np.asarray(panel.heatmap.image.base.image), array[1]))
    panel.heatmap.axes.set_axes(0, 2)                                    # the widgets move the session's plane
    assert session.dims.axes == (0, 2) and session.dims.fixed() == {1: 0}


def test_a_registered_view_is_chosen_where_it_fits_best(qtbot, panel, open_arrays):
    tf = open_arrays({"t": np.ones((2, 2), np.float32)})
    shown = []
    panel.views.register("mine", lambda t: FITS + 1 if t.name == "t" else UNSUPPORTED,
                         lambda tensor_file, tensor, choices: shown.append((tensor.name, choices)))
    panel.set_file(tf)
    panel.show_item(tf.tensor("t"))
    assert shown == [("t", ["float32"])]
