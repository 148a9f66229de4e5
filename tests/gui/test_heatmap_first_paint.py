"""The heatmap's first paint of a large plane: computed at once on the GUI thread when the rows it needs are in the
page cache (no worker round trip), on a worker otherwise; either way the same preview, then the refined image."""
from __future__ import annotations

import os

import numpy as np
import pytest

from tests.gui.inspect_helpers import heatmap_painted
from ztviewer.analysis import positional
from ztviewer.codec import portable
from ztviewer.codec.mapped_pages import map_of

SHAPE = (1500, 2600)


@pytest.fixture
def big(open_arrays):
    values = np.random.default_rng(11).standard_normal(SHAPE).astype(np.float32)
    values[700, 1234] = 60.0
    tf = open_arrays({"big": values, "small": np.ones((3, 3), np.float32)})
    return tf, values


def _needs_mincore(tf) -> None:
    if portable.resident_pages(memoryview(tf.source.view(0, tf.size)), 0, 4096) is None:
        pytest.skip("no mincore on this system: previews of file maps are always read on a worker")


def _strides(view) -> tuple[int, int]:
    image = view.base.image
    return int(image.row_edges[1] - image.row_edges[0]), int(image.col_edges[1] - image.col_edges[0])


def test_a_cached_plane_is_previewed_before_the_selection_returns(qtbot, panel, big):
    tf, values = big
    _needs_mincore(tf)
    panel.set_file(tf)
    panel.show_item(tf.tensor("small"))
    view = panel.heatmap
    painted: list[str] = []
    view.rendered.connect(lambda: painted.append(view.base.method))
    panel.show_item(tf.tensor("big"))
    assert painted == ["strided"] and view.info.text().startswith("preview:")   # no event loop turn needed
    s0, s1 = _strides(view)
    np.testing.assert_array_equal(view.base.image.data, values[::s0, ::s1])
    assert map_of(view.base.image.data) is None
    levels, sample = view.image.levels(), view.base.sample
    assert view.image_jobs.base_slot.busy                                        # the refinement is on its way
    qtbot.waitUntil(lambda: heatmap_painted(view), timeout=20_000)
    assert painted == ["strided", "peak"] and view.base.image.data.max() == 60.0
    assert view.base.sample is sample and view.image.levels() == levels          # no jump in the colours


def test_an_uncached_plane_is_read_on_a_worker(qtbot, panel, big, monkeypatch):
    tf, values = big
    monkeypatch.setattr(positional, "_cached", lambda *a: False)   # as if cold
    panel.set_file(tf)
    panel.show_item(tf.tensor("big"))
    view = panel.heatmap
    assert view.base is None and view.info.text() == "reading…"
    previews: list[np.ndarray] = []
    view.rendered.connect(lambda: previews.append(view.base.image.data) if view.base.method == "strided" else None)
    qtbot.waitUntil(lambda: heatmap_painted(view), timeout=20_000)
    assert len(previews) == 1 and view.base.method == "peak"
    s0, s1 = -(-SHAPE[0] // previews[0].shape[0]), -(-SHAPE[1] // previews[0].shape[1])
    np.testing.assert_array_equal(previews[0], values[::s0, ::s1])


def test_a_file_changed_on_disk_is_left_to_the_worker_which_says_so(qtbot, heatmap, big):
    """Loaded (its map made) before another program rewrote it: the GUI thread reads nothing from it (the check
    comes first) and the worker reports the change."""
    from ztviewer.session.inspect_data import load_dense

    tf, _ = big
    data = load_dense(tf, tf.tensor("big"))
    stat = os.stat(tf.path)
    os.utime(tf.path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))     # rewritten in place
    messages: list[str] = []
    heatmap.message.connect(messages.append)
    heatmap.set_data(data, "big")
    assert heatmap.base is None and heatmap.image_jobs.base_slot.busy
    qtbot.waitUntil(lambda: not heatmap.image_jobs.base_slot.busy, timeout=20_000)
    assert heatmap.base is None and "changed on disk" in heatmap.note.text()
    assert messages and "changed on disk" in messages[-1]


def test_an_unexpected_failure_of_the_quick_path_falls_back_to_the_worker(qtbot, panel, big, monkeypatch):
    """Whatever the GUI-thread preview raises, the selection still paints: the worker computes the plane (and would
    report its own failure), nothing propagates out of the GUI thread's slot."""
    from ztviewer.gui.views.inspect import image_jobs

    def broken(*args, **kwargs):
        raise ValueError("unexpected")

    monkeypatch.setattr(image_jobs, "quick_preview", broken)
    tf, values = big
    panel.set_file(tf)
    panel.show_item(tf.tensor("big"))
    view = panel.heatmap
    assert view.base is None and view.info.text() == "reading…"
    qtbot.waitUntil(lambda: heatmap_painted(view), timeout=20_000)
    assert view.base.method == "peak" and view.base.image.data.max() == values.max() == 60.0
