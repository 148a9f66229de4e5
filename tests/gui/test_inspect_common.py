"""Fixtures and helpers shared by the inspect-view tests (imported by the other ``test_inspect_*`` modules)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QThreadPool

from ztviewer.codec import open_file
from ztviewer.codec.writers.arrays import save_arrays
from ztviewer.session.decode_cache import DecodedCache

SIZE = (960, 640)


@pytest.fixture
def pool():
    pool = QThreadPool()
    pool.setMaxThreadCount(2)
    yield pool
    pool.waitForDone(10_000)


@pytest.fixture
def cache():
    return DecodedCache(budget=64 << 20)


@pytest.fixture
def open_arrays(tmp_path):
    """``open_arrays(arrays, name="t.zt", **save_kw)`` writes the arrays and returns the opened file."""
    opened = []

    def make(arrays, name: str = "t.zt", **kw):
        path = tmp_path / name
        to = "safetensors" if name.endswith(".safetensors") else "blz" if name.endswith(".blz") else "zt"
        save_arrays(path, arrays, to=to, **kw)
        tf = open_file(path)
        opened.append(tf)
        return tf

    yield make
    for tf in opened:
        tf.close()


@pytest.fixture
def panel(qtbot, pool, cache):
    from ztviewer.gui.views.inspect import InspectPanel

    widget = InspectPanel(pool, cache)
    qtbot.addWidget(widget)
    widget.resize(*SIZE)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.shutdown()


@pytest.fixture
def heatmap(qtbot, pool):
    from ztviewer.gui.views.inspect.heatmap import HeatmapView

    view = HeatmapView(pool)
    qtbot.addWidget(view)
    view.resize(*SIZE)
    view.show()
    qtbot.waitExposed(view)
    yield view
    view.shutdown()


def show_and_wait(qtbot, panel, tf, name: str, timeout: int = 10_000):
    """Select a tensor in the panel and wait until its view has painted something."""
    tensor = tf.tensor(name)
    panel.set_file(tf)
    panel.show_item(tensor)
    qtbot.waitUntil(lambda: painted(panel), timeout=timeout)
    return tensor


def painted(panel) -> bool:
    current = panel.stack.currentWidget()
    if current is panel.heatmap:
        return heatmap_painted(panel.heatmap)
    if current is panel.sparse:
        return panel.sparse.prepared is not None and not panel.sparse.slot.busy
    if current is panel.tt:
        return panel.tt.core is not None and not panel.tt.slot.busy
    return current is panel.note


def heatmap_painted(view) -> bool:
    if view.base_slot.busy or view.lines.slot.busy:
        return False
    shown = view.stack.currentWidget()
    if shown is view.image:
        return view.base is not None and view.base.method != "strided"
    if shown is view.line:
        return view.lines.current is not None
    return True


def wait_idle(qtbot, *slots, timeout: int = 10_000) -> None:
    qtbot.waitUntil(lambda: not any(slot.busy for slot in slots), timeout=timeout)


def checkerboard(n: int = 8, block: int = 1) -> np.ndarray:
    idx = np.arange(n) // block
    return ((idx[:, None] + idx[None, :]) % 2).astype(np.float32)
