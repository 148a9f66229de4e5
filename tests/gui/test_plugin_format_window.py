"""Issue 25: a format a third-party package registers (``ztviewer.formats`` entry point) opens in the window."""
from __future__ import annotations

import importlib
import sys

import numpy as np

from tests.gui.window_helpers import open_in_window
from tests.plugins.toy_package import install_toy_package, toy_file
from ztviewer.codec import registry
from ztviewer.session.inspect_data import load_dense


def test_the_window_opens_a_plugin_format(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(install_toy_package(tmp_path / "site")))
    importlib.invalidate_caches()
    registry.reload_plugins()
    try:
        values = np.array([4.0, -1.0, 0.5], dtype=np.float32)
        view = open_in_window(qtbot, window, toy_file(tmp_path / "w.toy", values))
        tf = view.tensor_file
        assert tf.format == "toy" and tf.readable
        assert [t.name for t in tf.tensors] == ["values"]
        assert load_dense(tf, tf.tensors[0]).array.tobytes() == values.tobytes()
    finally:
        sys.modules.pop("toyformat", None)
        registry.reload_plugins()
