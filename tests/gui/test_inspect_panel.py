"""The Inspect area over the whole corpus: every tensor gets the right view (or a clear message), export
works, the cache and the map-releasing reader behave, and the area is wired into the file view."""
from __future__ import annotations

import mmap

import numpy as np
import pytest
from PySide6.QtGui import QImage

from tests._corpus import corpus_manifest
from tests.gui.inspect_helpers import heatmap_painted, painted
from ztviewer.analysis.mapped import ReleasingPlane, file_mapped, release, releasing
from ztviewer.codec import open_file
from ztviewer.gui.views.inspect.export import SliceSource, save_png, save_svg, write_csv, write_npy
from ztviewer.session.decode_cache import DecodedCache, owned_bytes
from ztviewer.session.view_registry import view_kind

EXPECTED_VIEW = {"dense": "heatmap", "quantized": "heatmap", "sparse": "sparse", "tt": "tt", "structural": "note"}


def corpus_files():
    return [entry["path"] for entry in corpus_manifest() if entry.get("tensors")]


@pytest.mark.parametrize("relative", corpus_files() or ["<no corpus>"])
def test_every_corpus_tensor_gets_a_view(qtbot, panel, corpus_dir, relative):
    with open_file(corpus_dir / relative) as tf:
        if not tf.readable:
            pytest.skip(f"{relative} is not readable by the codec yet")
        panel.set_file(tf)
        for tensor in tf.tensors[:40]:
            panel.show_item(tensor)
            qtbot.waitUntil(lambda: painted(panel), timeout=10_000)
            current = panel.stack.currentWidget()
            errors = [p for p in tensor.problems if p.is_error]
            if current is panel.note and (errors or view_kind(tensor) == "structural"):
                continue
            assert current is getattr(panel, EXPECTED_VIEW[view_kind(tensor)]), (tensor.name, panel.note.text())
            if current is panel.heatmap:
                view = panel.heatmap
                assert view.stack.currentWidget() in (view.image, view.line, view.note)
                if 0 not in tensor.shape and len(tensor.shape):
                    assert view.stack.currentWidget() is not view.note, view.note.text()


def test_selection_of_non_tensors_clears(qtbot, panel, open_arrays):
    tf = open_arrays({"a": np.ones((2, 2), np.float32)})
    panel.set_file(tf)
    panel.show_item(tf.tensor("a"))
    qtbot.waitUntil(lambda: painted(panel))
    panel.show_item(tf)
    assert panel.stack.currentWidget() is panel.note and panel.tensor is None
    component = tf.tensor("a").components["data"]
    panel.show_item(component, tf.tensor("a"))
    assert panel.tensor is tf.tensor("a")


def test_export_view_and_slice(qtbot, panel, open_arrays, tmp_path):
    a = (np.arange(6 * 7, dtype=np.float32).reshape(6, 7) - 20) / 3
    b = np.arange(2 * 3 * 4, dtype=np.int16).reshape(2, 3, 4)
    tf = open_arrays({"a": a, "b": b, "bf": (np.array([[0x3F80, 0x4000]], np.uint16), "bfloat16")})
    panel.set_file(tf)
    panel.show_item(tf.tensor("b"))
    qtbot.waitUntil(lambda: painted(panel))
    view = panel.heatmap
    view.axes.set_index(0, 1)
    qtbot.waitUntil(lambda: heatmap_painted(view))
    export = view.export
    export.export_png(str(tmp_path / "v.png"))
    assert not QImage(str(tmp_path / "v.png")).isNull()
    export.export_svg(str(tmp_path / "v.svg"))
    assert (tmp_path / "v.svg").read_text().lstrip().startswith("<?xml")
    export.export_slice_npy(str(tmp_path / "s.npy"))
    qtbot.waitUntil(lambda: not export.slot.busy)
    np.testing.assert_array_equal(np.load(tmp_path / "s.npy"), b[1])
    export.export_slice_csv(str(tmp_path / "s.csv"))
    qtbot.waitUntil(lambda: not export.slot.busy)
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "s.csv", delimiter=","), b[1])
    export.export_tensor(str(tmp_path / "t.npy"))
    qtbot.waitUntil(lambda: not export.slot.busy)
    np.testing.assert_array_equal(np.load(tmp_path / "t.npy"), b)
    panel.show_item(tf.tensor("bf"))
    qtbot.waitUntil(lambda: painted(panel))
    write_npy(panel.heatmap.slice_source(), str(tmp_path / "bf.npy"))
    np.testing.assert_array_equal(np.load(tmp_path / "bf.npy"), [[1.0, 2.0]])


def test_slice_writers_stream_in_strips(tmp_path, monkeypatch):
    from ztviewer.gui.views.inspect import export

    monkeypatch.setattr(export, "STRIP_BYTES", 64)
    plane = np.arange(50 * 9, dtype=">f8").reshape(50, 9)  # big-endian storage comes out native
    write_npy(SliceSource(plane, "float64"), str(tmp_path / "p.npy"))
    got = np.load(tmp_path / "p.npy")
    assert got.dtype == np.float64 and got.dtype.isnative
    np.testing.assert_array_equal(got, plane)
    write_csv(SliceSource(plane, "float64"), str(tmp_path / "p.csv"))
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "p.csv", delimiter=","), plane)


def test_save_png_and_svg_of_any_widget(qtbot, tmp_path):
    from ztviewer.gui.views.inspect.chain_diagram import ChainDiagram

    chain = ChainDiagram()
    qtbot.addWidget(chain)
    chain.resize(400, 110)
    chain.set_chain((1, 2, 3, 1), (4, 5, 6))
    assert save_png(chain, str(tmp_path / "c.png"))
    save_svg(chain, str(tmp_path / "c.svg"))
    assert "<svg" in (tmp_path / "c.svg").read_text()


def test_cache_keeps_decoded_bytes_within_its_budget():
    cache = DecodedCache(budget=1000)
    assert cache.put(("f", 0, "dense"), np.zeros(400, np.uint8))
    assert cache.put(("f", 1, "dense"), np.zeros(400, np.uint8))
    assert cache.get(("f", 0, "dense")) is not None  # most recently used now
    assert cache.put(("f", 2, "dense"), np.zeros(400, np.uint8))
    assert ("f", 1, "dense") not in cache and ("f", 0, "dense") in cache and cache.nbytes == 800
    assert not cache.put(("f", 3, "dense"), np.zeros(2000, np.uint8))
    cache.drop(lambda key: key[0] == "f")
    assert len(cache) == 0 and cache.nbytes == 0


def test_mapped_data_costs_nothing_and_is_released_safely(tmp_path):
    path = tmp_path / "m.bin"
    np.arange(1 << 20, dtype=np.float32).tofile(path)
    with open(path, "rb") as fh:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    array = np.frombuffer(mapped, np.float32).reshape(1024, 1024)
    assert file_mapped(array) and owned_bytes(array) == 0
    plane = releasing(array)
    assert isinstance(plane, ReleasingPlane)
    first = np.array(plane[0:512, :])
    second = np.array(plane[512:1024, :])
    plane.release()
    expected = np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024)
    np.testing.assert_array_equal(np.concatenate([first, second]), expected)
    np.testing.assert_array_equal(array[0, :4], [0, 1, 2, 3])  # re-read after release: same bytes
    owned = np.arange(1 << 20, dtype=np.float32)
    release(owned)  # anonymous memory is never given up
    assert owned[12345] == 12345 and releasing(owned.reshape(1024, 1024)) is not None
    del array, first, second, plane
    mapped.close()


def test_file_view_has_an_inspect_tab(qtbot, file_view):
    from ztviewer.gui.views.inspect import InspectPanel

    page, tabs = file_view.inspect, file_view.inspect_tabs
    tensor = file_view.tensor_file.tensors[0]
    file_view.select_item(tensor)
    assert file_view.findChild(InspectPanel) is None  # built lazily: nothing exists until Inspect is shown
    tabs.setCurrentWidget(page)
    panel = file_view.findChild(InspectPanel)
    assert panel is page.panel
    assert panel.tensor is tensor
    other = file_view.tensor_file.tensors[1]
    file_view.select_item(other)
    assert panel.tensor is other
    file_view.select_item(None)
    assert panel.tensor is None
