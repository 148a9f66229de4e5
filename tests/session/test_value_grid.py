"""Values grid cells: dtype-aware text, exact copies (TSV, NumPy literal), copy caps, sparse entry lists."""
from __future__ import annotations

import numpy as np
import pytest

from ztviewer.analysis.slicing import plane
from ztviewer.codec.dtypes import to_float32
from ztviewer.codec.sparse import SparseCOO, SparseCSR
from ztviewer.session.value_grid import (
    LITERAL_CELL_LIMIT,
    CopyTooLarge,
    PlaneCells,
    SparseEntries,
    numpy_literal,
    tsv,
    value_text,
)


def test_float_text_is_the_shortest_that_reads_back():
    assert value_text(np.float32(0.1), "float32") == "0.1"
    assert float(np.float32(value_text(np.float32(1 / 3), "float32"))) == float(np.float32(1 / 3))
    assert value_text(0.1, "float64") == "0.1"
    assert value_text(float("nan"), "float32") == "nan" and value_text(float("-inf"), "float64") == "-inf"
    assert value_text(True, "bool") == "True" and value_text(-7, "int8") == "-7"
    assert value_text(complex(1.5, -2), "complex64") == "1.5-2.0j"
    assert value_text(complex(0, 0.25), "complex128") == "0.0+0.25j"


def test_bfloat16_and_float8_bits_are_presented_per_block():
    bits = np.array([[0x3F80, 0xC000], [0x7FC0, 0x3DCD]], dtype=np.uint16)   # 1, -2, nan, ~0.1
    cells = PlaneCells(bits, "bfloat16")
    assert cells.texts(0, 2, 0, 2) == [["1", "-2"], ["nan", "0.1001"]]
    f8 = np.array([[0x38, 0xB8, 0x7E]], dtype=np.uint8)  # e4m3fn: 1, -1, 448
    assert PlaneCells(f8, "float8_e4m3fn").texts(0, 1, 0, 3) == [["1", "-1", "448"]]
    assert PlaneCells(np.array([[1, 0]], np.uint8), "bool").texts(0, 1, 0, 2) == [["True", "False"]]


def test_big_endian_storage_is_read_in_its_order():
    data = np.arange(6, dtype=">i4").reshape(2, 3)
    assert PlaneCells(data, "int32").texts(1, 2, 0, 3) == [["3", "4", "5"]]


def test_a_plane_of_a_3d_tensor_names_the_full_index():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    cells = PlaneCells(plane(a, (2, 0), {1: 2}), "float64", (2, 0), {1: 2}, 3)
    assert (cells.rows, cells.cols) == (4, 2)
    assert cells.index_of(3, 1) == (1, 2, 3)
    assert cells.texts(3, 4, 1, 2) == [[repr(float(a[1, 2, 3]))]] == [["23.0"]]


def test_tsv_and_numpy_literal_rebuild_the_selection_exactly():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 6)).astype(np.float32)
    a[0, 0] = np.nan
    a[1, 1] = -np.inf
    cells = PlaneCells(a, "float32")
    text = tsv(cells, 1, 4, 2, 5)
    rows = [line.split("\t") for line in text.splitlines()]
    np.testing.assert_array_equal(np.array(rows, dtype=np.float32), a[1:4, 2:5])
    headed = tsv(cells, 1, 3, 2, 4, headers=True).splitlines()
    assert headed[0] == "\t2\t3" and headed[1].startswith("1\t")
    literal = numpy_literal(cells, 0, 5, 0, 6)
    rebuilt = eval(literal, {"np": np})
    assert rebuilt.dtype == np.float32
    np.testing.assert_array_equal(rebuilt, a)


def test_bfloat16_literal_is_float32_and_says_so():
    bits = np.array([[0x3F80, 0x4049]], dtype=np.uint16)
    literal = numpy_literal(PlaneCells(bits, "bfloat16"), 0, 1, 0, 2)
    assert "widened to float32" in literal
    np.testing.assert_array_equal(eval(literal, {"np": np}), to_float32(bits, "bfloat16"))


def test_complex_and_bool_literals():
    c = np.array([[1 + 2j, np.nan - 1j]], dtype=np.complex64)
    np.testing.assert_array_equal(eval(numpy_literal(PlaneCells(c, "complex64"), 0, 1, 0, 2), {"np": np}), c)
    b = np.array([[1, 0, 1]], dtype=np.uint8)
    rebuilt = eval(numpy_literal(PlaneCells(b, "bool"), 0, 1, 0, 3), {"np": np})
    assert rebuilt.dtype == np.bool_ and rebuilt.tolist() == [[True, False, True]]


def test_copies_past_the_cap_are_refused_with_the_numbers():
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (100_000, 100_000), (0, 0))
    cells = PlaneCells(huge, "float32")
    with pytest.raises(CopyTooLarge, match="10,000,000,000 cells"):
        tsv(cells, 0, 100_000, 0, 100_000)
    with pytest.raises(CopyTooLarge, match=f"{LITERAL_CELL_LIMIT:,}"):
        numpy_literal(cells, 0, 1000, 0, 1000)
    assert tsv(cells, 99_998, 100_000, 0, 2) == "0.0\t0.0\n0.0\t0.0\n"


def test_csr_entries_list_rows_columns_and_values():
    csr = SparseCSR((3, 4), np.array([0, 2, 2, 3], np.uint64), np.array([1, 3, 0], np.uint64),
                    np.array([1.5, -2, 7], np.float32), "float32")
    entries = SparseEntries(csr)
    assert (entries.rows, entries.cols) == (3, 3)
    assert [entries.col_label(c) for c in range(3)] == ["axis 0", "axis 1", "value"]
    assert entries.texts(0, 3, 0, 3) == [["0", "1", "1.5"], ["0", "3", "-2.0"], ["2", "0", "7.0"]]
    assert entries.texts(1, 3, 1, 2) == [["3"], ["0"]]


def test_coo_entries_with_bfloat16_values():
    coo = SparseCOO((2, 2, 2), np.array([[0, 1], [1, 0], [1, 1]], np.int64),
                    np.array([0x3F80, 0xC000], np.uint16), "bfloat16")
    assert SparseEntries(coo).texts(0, 2, 0, 4) == [["0", "1", "1", "1"], ["1", "0", "1", "-2"]]


def test_title_names_size_type_and_of_an_nd_plane_the_axes_and_fixed_indices():
    assert PlaneCells(np.zeros((3, 1200), np.float32), "float32").title() == "3 × 1,200  ·  float32"
    nd = PlaneCells(np.zeros((4, 5), np.int8), "int8", (2, 0), {1: 7, 3: 2}, 4)
    assert nd.title() == "4 × 5  ·  int8  ·  axes 2 × 0, axis 1 = 7, axis 3 = 2"
