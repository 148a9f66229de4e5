"""Opening a file pays only for what the first window shows (issue 4: start-up to a visible tree)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from benchmarks.bench_app import START_UP_SCRIPT, child_env
from tests.gui.window_helpers import open_in_window
from ztviewer.codec.arrays import save_arrays

DEFERRED = ("pyqtgraph", "ztviewer.gui.views.inspect", "ztviewer.codec.writers", "ztviewer.codec.edit",
            "ztviewer.gui.editing.attributes_editor", "ztviewer.gui.dialogs.save_as")

def test_the_first_window_imports_no_plots_writers_or_editors(tmp_path):
    path = tmp_path / "small.zt"
    save_arrays(path, {"a": np.zeros(4, np.float32)})
    done = subprocess.run([sys.executable, "-c", START_UP_SCRIPT, str(path), "1", str(tmp_path), "--modules"],
                          capture_output=True, text=True, env=child_env(tmp_path), timeout=120, check=True)
    assert done.stdout.startswith("READY")
    loaded = done.stdout.split("MODULES", 1)[1].split()
    assert [m for m in loaded if m.startswith(DEFERRED)] == []


def test_opening_builds_the_components_of_the_rows_on_screen_only(qtbot, window, tmp_path):
    from benchmarks.files import many_zt

    path, count, _, _ = many_zt(tmp_path, quick=True)        # plain entries: the reader defers components
    view = open_in_window(qtbot, window, path)
    view.tree.viewport().repaint()
    built = sum(t._components is not None for t in view.tensor_file.tensors)
    assert built < count // 4, built


def test_opening_a_large_file_builds_the_tensors_of_the_first_rows_only(qtbot, window, tmp_path):
    """A 10,000-tensor file listed as a table: opening it, painting the tree, the file map and the file row's
    properties build only the tensors of the rows measured to size the columns (the first ``SAMPLE_ROWS``),
    which include the rows on screen."""
    from benchmarks.files import many_zt
    from ztviewer.gui.tree_columns import SAMPLE_ROWS

    path, count, _, _ = many_zt(tmp_path, quick=False)
    view = open_in_window(qtbot, window, path)
    view.tree.viewport().repaint()
    view.file_map.repaint()
    assert window.properties_panel.value_of("File", "tensors") == f"{count:,}"
    table = view.tensor_file.tensors
    on_screen = view.tree.viewport().height() // view.tree.sizeHintForRow(0) + 1
    first = max(SAMPLE_ROWS, on_screen)
    assert 0 < table._built <= first
    assert all(tensor is None for tensor in table._made[first:])


_PAINT_TALL_WIDGET = r"""
import os, sys
from ztviewer.gui.app import create_application
from PySide6.QtGui import QColor, QImage, QPainter
app = create_application()
image = QImage(400, 900, QImage.Format.Format_ARGB32_Premultiplied)
image.fill(0)
painter = QPainter(image)
painter.fillRect(0, 0, 400, 900, QColor(10, 20, 30, 128))    # a blend of 900 rows: Qt's GUI pool would take it
painter.end()
tasks = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else -1
print(os.environ.get("QT_NO_GUI_THREADPOOL"), tasks)
"""


def test_fills_stay_on_the_painting_thread_unless_asked(tmp_path):
    """Qt's parallel fills hand each tall fill to other threads and wait: the app keeps them serial."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("QT_NO_GUI_THREADPOOL", None)
    serial = subprocess.run([sys.executable, "-c", _PAINT_TALL_WIDGET], capture_output=True, text=True,
                            env=env, timeout=120, check=True).stdout.split()
    pooled = subprocess.run([sys.executable, "-c", _PAINT_TALL_WIDGET], capture_output=True, text=True,
                            env=dict(env, ZTVIEWER_QT_GUI_THREADPOOL="1"), timeout=120, check=True).stdout.split()
    assert serial[0] == "1" and pooled[0] == "None"
    if int(serial[1]) >= 0:         # where threads can be counted (/proc): the pooled run started more
        assert int(serial[1]) < int(pooled[1]), (serial, pooled)


_GC_AT_START = r"""
import gc, sys
import ztviewer.gui.app as gui_app
from PySide6.QtWidgets import QApplication
resume = gui_app.resume_garbage_collection


def watched():
    before = gc.isenabled()
    resume()
    print("GC", before, gc.isenabled(), gc.get_freeze_count() > 0, flush=True)
    QApplication.instance().quit()


gui_app.resume_garbage_collection = watched
from ztviewer.cli import main
sys.exit(main([]))
"""


def test_start_up_collects_no_garbage_until_the_event_loop_runs(tmp_path):
    """The launcher turns the cyclic garbage collector off for start-up; once the event loop runs, what start-up
    made is frozen and collection is on again."""
    done = subprocess.run([sys.executable, "-c", _GC_AT_START], capture_output=True, text=True,
                          env=child_env(tmp_path), timeout=120, check=True)
    assert "GC False True True" in done.stdout, done.stdout + done.stderr
