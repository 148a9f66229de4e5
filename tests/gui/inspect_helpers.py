"""Helpers shared by the inspect-view tests (their fixtures live in conftest.py)."""
from __future__ import annotations

import numpy as np

SIZE = (960, 640)


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
    if view.image_jobs.base_slot.busy or view.lines.slot.busy:
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
