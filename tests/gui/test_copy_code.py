"""Edit ▸ Copy as Code puts on the clipboard Python that loads the current tensor, and that code runs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from PySide6.QtGui import QGuiApplication

from tests.gui.window_helpers import open_in_window
from ztviewer.session.code_snippet import CODEC, SAFETENSORS

ROOT = Path(__file__).resolve().parents[2]


def run_for_array(code: str) -> np.ndarray:
    script = code + "\nimport sys, numpy\nnumpy.save(sys.stdout.buffer, numpy.asarray(array), allow_pickle=False)\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    import io

    return np.load(io.BytesIO(proc.stdout))


def test_copy_as_code_copies_runnable_code_for_the_current_tensor(qtbot, window, tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "m.safetensors"
    weight = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    save_file({"a.bias": np.ones(4, np.int16), "a.weight": weight}, str(path))
    view = open_in_window(qtbot, window, path)
    actions = window.actions_
    QGuiApplication.clipboard().clear()
    actions.copy_code.trigger()
    assert "select a tensor" in window.statusBar().currentMessage()
    weight_tensor = view.tensor_file.tensor("a.weight")
    assert view.select_item(weight_tensor)
    assert actions.copy_code.isEnabled() and actions.copy_code.shortcut().toString() == "Ctrl+Alt+C"
    actions.copy_code.trigger()
    copied = QGuiApplication.clipboard().text()
    assert "safe_open" in copied and "'a.weight'" in copied
    assert np.array_equal(run_for_array(copied), weight)
    assert SAFETENSORS in window.statusBar().currentMessage()
    menu = actions.copy_code_menu
    menu.aboutToShow.emit()
    titles = [a.text() for a in menu.actions()]
    assert titles == ["Load with safetensors (safe_open)", "Load with ztviewer.codec"]
    menu.actions()[1].trigger()
    assert "ztviewer.codec" in QGuiApplication.clipboard().text()
    assert np.array_equal(run_for_array(QGuiApplication.clipboard().text()), weight)
    assert CODEC in window.statusBar().currentMessage()
