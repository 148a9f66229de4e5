"""The Inspect view on zTensor v2 objects: every storage dtype and logical type shows its values (bool, the
five f8 kinds, packed f4_e2m1, complex), sparse CSR/COO show as spy plots, and layouts ztviewer does not
decode say so with their parts listed (never an error)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.gui.inspect_helpers import painted
from tests.gui.v2_files import F8_CODES, conformance, every_type, tied_and_seekable
from ztviewer.codec import open_file
from ztviewer.codec.dtypes import to_float32
from ztviewer.session.inspect_data import load_dense

#: expected element values, from numpy's own conversions of the codes written
F8_VALUES = {kind: to_float32(F8_CODES, dtype) for kind, dtype in (
    ("f8_e4m3fn", "float8_e4m3fn"), ("f8_e5m2", "float8_e5m2"), ("f8_e4m3fnuz", "float8_e4m3fnuz"),
    ("f8_e5m2fnuz", "float8_e5m2fnuz"), ("f8_e8m0", "float8_e8m0fnu"))}


@pytest.fixture(scope="module")
def every(tmp_path_factory):
    path = every_type(tmp_path_factory.mktemp("v2") / "every.zt")
    with open_file(path) as tf:
        assert not list(tf.all_problems())
        yield tf


def _show(qtbot, panel, tf, name):
    panel.set_file(tf)
    panel.show_item(tf.tensor(name))
    qtbot.waitUntil(lambda: painted(panel), timeout=10_000)


@pytest.mark.parametrize("name", ["dense_f64", "dense_f32", "dense_f16", "dense_bf16", "dense_i64", "dense_i32",
                                  "dense_i16", "dense_i8", "dense_u64", "dense_u32", "dense_u16", "dense_u8"])
def test_every_storage_dtype_shows_its_values(qtbot, panel, every, name):
    _show(qtbot, panel, every, name)
    assert panel.stack.currentWidget() is panel.heatmap
    data = panel.heatmap.data
    values = [data.value((i // 4, i % 4)) for i in range(12)]
    expected = list(range(12)) if name == "dense_bf16" else list(range(-3, 9))
    if name.startswith("dense_u"):
        expected = [v % (1 << int(name[7:])) for v in expected]      # -3 as u8 is 253
    assert values == expected, values


@pytest.mark.parametrize("kind", sorted(F8_VALUES))
def test_the_five_f8_kinds(qtbot, panel, every, kind):
    _show(qtbot, panel, every, kind)
    assert panel.stack.currentWidget() is panel.heatmap
    data = panel.heatmap.data
    values = np.array([data.value((i // 4, i % 4)) for i in range(8)], np.float32)
    np.testing.assert_array_equal(values, F8_VALUES[kind])


def test_bool_packed_f4_and_complex(qtbot, panel, every):
    _show(qtbot, panel, every, "bool")
    assert [panel.heatmap.data.value((0, i)) for i in range(3)] == [True, False, True]
    _show(qtbot, panel, every, "f4_e2m1")
    assert panel.stack.currentWidget() is panel.heatmap
    f4 = load_dense(every, every.tensor("f4_e2m1"))
    # codes 1, 2, 3, 4, 5 (low nibble first): 0.5, 1, 1.5, 2, 3 in e2m1
    assert [f4.value((i,)) for i in range(5)] == [0.5, 1.0, 1.5, 2.0, 3.0]
    _show(qtbot, panel, every, "complex64")
    assert [panel.heatmap.data.value((i,)) for i in range(3)] == [1 + 2j, -3j, 0.5]
    _show(qtbot, panel, every, "complex128")
    assert panel.heatmap.data.value((1, 0)) == 3j


@pytest.mark.parametrize("name", ["csr", "coo"])
def test_sparse_objects_show_as_spy_plots(qtbot, panel, every, name):
    _show(qtbot, panel, every, name)
    assert panel.stack.currentWidget() is panel.sparse
    tensor = every.tensor(name)
    assert panel.sparse.prepared is not None and "Cannot" not in panel.note.text()
    assert tensor.layout_spelling == f"zt.sparse_{name}/1"


def test_structural_layouts_say_why_and_list_their_parts(qtbot, panel, every):
    _show(qtbot, panel, every, "quant")
    assert panel.stack.currentWidget() is panel.note
    text = panel.note.text()
    assert "<b>quant</b> is shown structurally" in text and "zt.quant_group/1" in text
    assert "<b>data</b>" in text and "<b>scales</b>" in text and "Cannot" not in text
    with open_file(conformance("unknown-layout-structural.zt")) as tf:
        _show(qtbot, panel, tf, "q")
        text = panel.note.text()
        assert "shown structurally: layout 'x.custom/1' is not known to ztviewer" in text
        assert "<b>scales</b>" in text and "104 B" in text


def test_a_seekable_tensor_shows_its_values(qtbot, panel, tmp_path):
    with open_file(tied_and_seekable(tmp_path / "t.zt")) as tf:
        _show(qtbot, panel, tf, "big")
        data = panel.heatmap.data
        assert data.value((257, 5)) == float((257 * 4096 + 5) % 251)
