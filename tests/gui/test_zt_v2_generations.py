"""View ▸ Generations…: the generations of a zTensor v2 file listed, and an earlier one opened read-only."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from PySide6.QtWidgets import QLabel

from tests.gui.v2_files import tied_and_seekable, with_generations, ztensor
from tests.gui.window_helpers import open_in_window
from ztviewer.codec import open_file
from ztviewer.codec.errors import HeaderError, SourceChanged
from ztviewer.codec.formats.zt_v2 import find_generations, open_generation


def test_the_dialog_lists_every_generation_and_opens_an_earlier_one_read_only(qtbot, window, tmp_path):
    path = with_generations(tmp_path / "gen.zt")
    view = open_in_window(qtbot, window, path)
    assert window.actions_.generations.isEnabled()
    dialog = window.opener.show_generations()
    table = dialog.table
    assert table.topLevelItemCount() == 3
    assert [table.topLevelItem(i).text(0) for i in range(3)] == ["3", "2", "1"]
    assert [table.topLevelItem(i).text(1) for i in range(3)] == ["current", "superseded", "superseded"]
    assert [table.topLevelItem(i).text(2) for i in range(3)] == ["2", "2", "1"]
    table.setCurrentItem(table.topLevelItem(0))
    assert not dialog.open_button.isEnabled()          # the current generation is the open file itself
    table.setCurrentItem(table.topLevelItem(2))
    assert dialog.open_button.isEnabled()
    dialog.open_button.click()
    qtbot.waitUntil(lambda: window.generation_view(str(path), 1) is not None, timeout=10_000)
    old = window.generation_view(str(path), 1)
    assert window.current_view() is old and window.view_for(str(path)) is view
    tf = old.tensor_file
    assert [t.name for t in tf.tensors] == ["a"] and tf.attributes == {}
    first = find_generations(view.tensor_file)[-1]
    assert tf.size == first.end and old.layout_map.size == first.end
    assert window.tabs.tabText(window.tabs.indexOf(old)) == "gen.zt @ generation 1"
    assert window.format_label.text() == "zTensor v2, generation 1 (read-only)"
    assert old.tree_model.index(0, 3).data() == "zTensor v2, generation 1 (read-only)"
    assert not window.editing.save_action.isEnabled()        # Save As only: saving over would drop later ones
    assert window.editing.session_of(old).writable is False
    # the data of the old generation reads from the file's first bytes
    a = tf.tensor("a").components["data"]
    assert bytes(tf.source.view(a.offset, a.length)) == bytes(view.tensor_file.source.view(a.offset, a.length))
    # asking again brings the same tab to the front
    window.tabs.setCurrentWidget(view)
    assert window.opener.open_generation(str(path), dialog.rows[2]) is None and window.current_view() is old
    window.close_tab(window.tabs.indexOf(old))
    assert view.tensor_file.source.read(0, 8) == b"\x89ZT2\r\n\x1a\n"    # the file's own tab is unaffected


def test_generation_two_lists_the_one_before_it(qtbot, window, tmp_path):
    path = with_generations(tmp_path / "gen.zt")
    view = open_in_window(qtbot, window, path)
    dialog = window.opener.show_generations()
    dialog.table.setCurrentItem(dialog.table.topLevelItem(1))
    dialog._open()
    qtbot.waitUntil(lambda: window.generation_view(str(path), 2) is not None, timeout=10_000)
    old = window.generation_view(str(path), 2)
    assert [t.name for t in old.tensor_file.tensors] == ["a", "b"]
    again = window.opener.show_generations()
    assert [again.table.topLevelItem(i).text(0) for i in range(again.table.topLevelItemCount())] == ["2", "1"]
    assert again.table.topLevelItem(0).text(1) == "shown"
    kinds = [s.kind for s in old.layout_map.segments]
    assert kinds.count("old-manifest") == 1 and kinds.count("manifest") == 1
    window.reload_current()
    qtbot.waitUntil(lambda: window.generation_view(str(path), 2) is not old
                    and window.generation_view(str(path), 2) is not None, timeout=10_000)
    assert window.tabs.tabText(window.tabs.currentIndex()) == "gen.zt @ generation 2"
    assert window.view_for(str(path)) is view


def test_a_file_with_one_generation_lists_it_alone(qtbot, window, tmp_path):
    path = tied_and_seekable(tmp_path / "one.zt")
    open_in_window(qtbot, window, path)
    dialog = window.opener.show_generations()
    assert dialog.table.topLevelItemCount() == 1 and not dialog.open_button.isEnabled()


def test_other_formats_have_no_generations(qtbot, window, sample_file):
    open_in_window(qtbot, window, sample_file.path)
    assert not window.actions_.generations.isEnabled() and window.opener.show_generations() is None


def test_open_generation_refuses_an_offset_that_ends_no_generation(tmp_path):
    path = with_generations(tmp_path / "gen.zt")
    with open_file(path) as tf:
        ends = [g.end for g in find_generations(tf)]
    for end in ends:
        with open_generation(str(path), end) as old:
            assert old.size == end and old.generation_of == str(path)
    with pytest.raises(HeaderError, match="no sound footer"):
        open_generation(str(path), ends[0] - 1)


def _second_generation_tab(qtbot, window, path):
    """The file's tab closed, its generation 2 open alone (the only tab watched)."""
    window.editing.ask_unsaved = lambda view: "discard"
    view = open_in_window(qtbot, window, path)
    dialog = window.opener.show_generations()
    dialog.table.setCurrentItem(dialog.table.topLevelItem(1))
    dialog._open()
    qtbot.waitUntil(lambda: window.generation_view(str(path), 2) is not None, timeout=10_000)
    window.close_tab(window.tabs.indexOf(view))
    window.disk_watch.timer.stop()       # polled by hand below
    return window.generation_view(str(path), 2)


@pytest.mark.skipif(os.name == "nt", reason="Windows replaces no open file")
def test_reload_after_a_change_on_disk_reads_the_same_earlier_generation(qtbot, window, tmp_path):
    """An append leaves an earlier generation's tab alone; a file saved over it by rename is reported by the disk
    watcher's polling, and its Reload reads that generation again (as File ▸ Reload does, through the same
    reader), not the file as it is now."""
    path = with_generations(tmp_path / "gen.zt")
    old = _second_generation_tab(qtbot, window, path)
    second_end = old.tensor_file.size

    with ztensor().Writer(str(path), canonical=False, append=True) as w:    # another program appends a fourth
        w.add("c", np.arange(3, dtype=np.float64).tobytes(), [3], "f64")
    window.disk_watch.poll()
    assert window.disk_watch.box is None            # the generation's bytes are all still there
    copy = tmp_path / "saved.zt"                    # another program saves the file by rename
    shutil.copyfile(path, copy)
    os.replace(copy, path)
    window.disk_watch.poll()
    box = window.disk_watch.box
    assert box is not None and box.text() == "gen.zt changed on disk: it was replaced by another file."
    assert box.informativeText() == ("What is shown is the file as it was when opened; it can still be read. "
                                     "Reload reads it again.")
    next(b for b in box.buttons() if b.text() == "Reload").click()
    qtbot.waitUntil(lambda: window.current_view() is not None and window.current_view() is not old, timeout=10_000)

    new = window.current_view()
    assert window.generation_view(str(path), 2) is new and window.view_for(str(path)) is None
    tf = new.tensor_file
    assert [t.name for t in tf.tensors] == ["a", "b"] and tf.attributes == {} and tf.size == second_end
    assert window.tabs.tabText(window.tabs.indexOf(new)) == "gen.zt @ generation 2"
    assert window.format_label.text() == "zTensor v2, generation 2 (read-only)"
    with open_file(path) as now:                        # the file itself did move on
        assert len(find_generations(now)) == 3 and "c" in [t.name for t in now.tensors]   # 3 before the 4th
    window.disk_watch.poll()
    assert window.disk_watch.box is None


def test_a_truncation_below_an_earlier_generation_is_reported_and_reload_says_why(qtbot, window, tmp_path):
    """Cut inside generation 2: polling flags its tab as it would the file's own, its data is refused (never
    SIGBUS), and Reload says cleanly that the generation is gone, leaving the tab as it was."""
    path = with_generations(tmp_path / "gen.zt")
    old = _second_generation_tab(qtbot, window, path)
    second_end = old.tensor_file.size
    first_end = find_generations(old.tensor_file)[0].end
    size = path.stat().st_size
    with open(path, "r+b") as other:
        other.truncate(second_end - 1)
    window.disk_watch.poll()
    box = window.disk_watch.box
    assert box is not None
    assert box.text() == f"gen.zt changed on disk: its size changed from {size:,} to {second_end - 1:,} bytes."
    assert box.informativeText().startswith("What is shown no longer matches the file, and reading it stops")
    b = old.tensor_file.tensor("b").components["data"]
    with pytest.raises(SourceChanged):
        old.tensor_file.source.view(b.offset, b.length)
    next(b for b in box.buttons() if b.text() == "Reload").click()
    qtbot.waitUntil(lambda: window.last_error != "", timeout=10_000)
    assert window.last_error.startswith(f"Could not open {path}: ")
    assert f"no sound footer of an earlier generation ends at byte {second_end:,}" in window.last_error
    assert window.current_view() is old and window.tabs.count() == 1    # the tab stays, as it was
    with open_generation(str(path), first_end) as first:     # what is sound: generation 1, still whole
        assert [t.name for t in first.tensors] == ["a"] and not list(first.all_problems())


def test_a_list_the_search_budget_stopped_says_so_and_counts_back(qtbot, window, tmp_path):
    """Issue 31: 5,000 generations listed as 63, numbered 63…1 as if 1 were the first ever written."""
    from tests.hostile_v2_files import generations_file

    path = tmp_path / "many.zt"
    generations_file(path, 2000)
    open_in_window(qtbot, window, path)
    dialog = window.opener.show_generations()
    table = dialog.table
    assert "Not every generation was found: the search stopped after reading 4 MiB" in dialog.findChild(
        QLabel).text()
    count = table.topLevelItemCount()
    assert 1 < count < 2000
    assert [table.topLevelItem(i).text(0) for i in (0, 1, count - 1)] == ["0", "-1", str(1 - count)]
    dialog.table.setCurrentItem(table.topLevelItem(1))
    dialog._open()
    qtbot.waitUntil(lambda: window.generation_view(str(path), -1) is not None, timeout=10_000)
    assert window.generation_view(str(path), -1).tensor_file.attributes == {"g": "1999"}
