"""The values grid: cells of the shown 2-D plane (or of a sparse tensor's entry list) read a block at a time,
their text as the user reads each dtype, and a rectangle of them copied as TSV or as a NumPy literal.

No Qt here: the Qt table model asks for blocks of the cells on screen, so a plane of millions of rows costs only
what is visible. Stored bits are presented per block (bfloat16 / float8 → float32, bool, byte order) through
:func:`ztviewer.codec.decode.present`; nothing is ever read whole.
"""
from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from ztviewer.codec import decode
from ztviewer.codec.dtypes import DTYPES
from ztviewer.codec.mapped_pages import require_unchanged
from ztviewer.codec.sparse import SparseCOO, SparseCSR

#: most cells a copy puts on the clipboard (TSV / NumPy literal); beyond it the copy is refused with a message.
COPY_CELL_LIMIT = 1_000_000
LITERAL_CELL_LIMIT = 100_000
#: significant digits that tell every value of a narrow float apart
_DIGITS = {"float16": 5, "bfloat16": 4, "float8_e4m3fn": 3, "float8_e5m2": 3, "float8_e4m3fnuz": 3,
           "float8_e5m2fnuz": 3, "float8_e8m0fnu": 3, "float4_e2m1fn": 2}


class CopyTooLarge(ValueError):
    """The selection has more cells than a copy may hold (the message says how many and the limit)."""


class CellSource(Protocol):
    rows: int
    cols: int
    dtype_name: str

    def block(self, r0: int, r1: int, c0: int, c1: int) -> list[list[object]]: ...

    def texts(self, r0: int, r1: int, c0: int, c1: int) -> list[list[str]]: ...

    def row_label(self, row: int) -> str: ...

    def col_label(self, col: int) -> str: ...


def float_text(value: float, dtype_name: str) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    digits = _DIGITS.get(dtype_name)
    if digits is not None:
        return f"{value:.{digits}g}"
    if dtype_name == "float32":
        return str(np.float32(value))       # shortest text that reads back as the same float32
    return repr(float(value))


def value_text(value: object, dtype_name: str) -> str:
    """One cell as the user reads it: shortest round-trip text per float width, complex as ``a+bj``."""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (complex, np.complexfloating)):
        part = "float32" if dtype_name == "complex64" else "float64"
        imag = float_text(float(value.imag), part)
        sign = "" if imag.startswith("-") else "+"
        return f"{float_text(float(value.real), part)}{sign}{imag}j"
    if isinstance(value, (float, np.floating)):
        return float_text(float(value), dtype_name)
    return str(value)


def _literal(value: object, dtype_name: str) -> str:
    if isinstance(value, (complex, np.complexfloating)):
        return f"complex({_literal(value.real, 'float64')}, {_literal(value.imag, 'float64')})"
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if math.isnan(f):
            return "np.nan"
        if math.isinf(f):
            return "np.inf" if f > 0 else "-np.inf"
        return repr(f) if dtype_name in ("float64",) else repr(float(np.float32(f)))
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    return str(int(value)) if isinstance(value, (int, np.integer)) else repr(value)


def numpy_dtype_of(dtype_name: str) -> str:
    """The numpy dtype a copied literal is built with (narrow floats widen to float32)."""
    info = DTYPES.get(dtype_name)
    if info is None:
        return "float64"
    if info.needs_conversion:
        return "float32"
    return dtype_name


def _check_size(rows: int, cols: int, limit: int, what: str) -> None:
    cells = rows * cols
    if cells > limit:
        raise CopyTooLarge(f"{rows:,} × {cols:,} = {cells:,} cells is more than {what} copies "
                           f"({limit:,} cells); select fewer, or export the slice")


def tsv(source: CellSource, r0: int, r1: int, c0: int, c1: int, headers: bool = False) -> str:
    """Rows ``[r0, r1)`` × columns ``[c0, c1)`` as tab-separated text (one line per row)."""
    _check_size(r1 - r0, c1 - c0, COPY_CELL_LIMIT, "a TSV copy")
    lines = []
    if headers:
        lines.append("\t".join([""] + [source.col_label(c) for c in range(c0, c1)]))
    step = max(1, 65536 // max(1, c1 - c0))
    for start in range(r0, r1, step):
        stop = min(r1, start + step)
        for offset, row in enumerate(source.texts(start, stop, c0, c1)):
            cells = "\t".join(row)
            lines.append(f"{source.row_label(start + offset)}\t{cells}" if headers else cells)
    return "\n".join(lines) + "\n"


def numpy_literal(source: CellSource, r0: int, r1: int, c0: int, c1: int) -> str:
    """``np.array([[…], …], dtype=np.…)`` that rebuilds the selected cells exactly (narrow floats as float32)."""
    _check_size(r1 - r0, c1 - c0, LITERAL_CELL_LIMIT, "a NumPy literal")
    dtype = numpy_dtype_of(source.dtype_name)
    rows = source.block(r0, r1, c0, c1)
    body = ",\n ".join("[" + ", ".join(_literal(v, dtype) for v in row) + "]" for row in rows)
    note = f"  # {source.dtype_name} values widened to float32" if dtype != source.dtype_name \
        and source.dtype_name in DTYPES else ""
    return f"np.array([{body}], dtype=np.{dtype}){note}\n"


class PlaneCells:
    """Cells of a 2-D plane (a numpy view of stored bits, or a reconstructed TT plane).

    ``row_axis`` / ``col_axis`` name the tensor axes shown (headers say ``axis k``); ``fixed`` the other axes'
    indices (for the full index of a cell)."""

    def __init__(self, plane: Any, dtype_name: str, axes: tuple[int, int] = (0, 1),
                 fixed: dict[int, int] | None = None, ndim: int = 2) -> None:
        self.plane = plane
        self.dtype_name = dtype_name
        self.rows, self.cols = (int(n) for n in plane.shape)
        self.axes = axes
        self.fixed = dict(fixed or {})
        self.ndim = ndim

    def block(self, r0: int, r1: int, c0: int, c1: int) -> list[list[object]]:
        bits = np.asarray(self.plane[r0:r1, c0:c1])
        if self.dtype_name in DTYPES:
            bits = decode.present(bits, self.dtype_name)
        rows: list[list[object]] = bits.tolist()
        return rows

    def texts(self, r0: int, r1: int, c0: int, c1: int) -> list[list[str]]:
        name = self.dtype_name
        return [[value_text(v, name) for v in row] for row in self.block(r0, r1, c0, c1)]

    def row_label(self, row: int) -> str:
        return str(row)

    def col_label(self, col: int) -> str:
        return str(col)

    def title(self) -> str:
        """What the grid shows: size, element type, and of an N-D tensor the axes shown and the fixed indices."""
        where = f"axes {self.axes[0]} × {self.axes[1]}" if self.ndim > 2 else ""
        if self.fixed:
            where += ", " + ", ".join(f"axis {a} = {i}" for a, i in sorted(self.fixed.items()))
        return "  ·  ".join(p for p in (f"{self.rows:,} × {self.cols:,}", self.dtype_name, where) if p)

    def index_of(self, row: int, col: int) -> tuple[int, ...]:
        """The full tensor index of cell ``(row, col)`` (a 0-D / 1-D tensor is one row)."""
        if self.ndim < 2:
            return (col,) if self.ndim == 1 else ()
        index = [0] * self.ndim
        index[self.axes[0]], index[self.axes[1]] = row, col
        for axis, value in self.fixed.items():
            index[axis] = value
        return tuple(index)


def _arrays_of(sparse: SparseCSR | SparseCOO) -> list[np.ndarray]:
    if isinstance(sparse, SparseCSR):
        return [sparse.indptr, sparse.indices, sparse.values]
    return [sparse.coords, sparse.values]


class SparseEntries:
    """A sparse tensor's stored entries, one row each: its index on every axis, then its value."""

    def __init__(self, sparse: SparseCSR | SparseCOO) -> None:
        self.sparse = sparse
        self.dtype_name = sparse.dtype
        self.ndim = len(sparse.shape)
        self.rows = sparse.nnz
        self.cols = self.ndim + 1

    def _coordinates(self, r0: int, r1: int) -> np.ndarray:
        sparse = self.sparse
        if isinstance(sparse, SparseCSR):
            entries = np.arange(r0, r1, dtype=np.int64)
            row = np.searchsorted(sparse.indptr, entries, side="right").astype(np.int64) - 1
            return np.stack([row, np.asarray(sparse.indices[r0:r1], dtype=np.int64)])
        return np.asarray(sparse.coords[:, r0:r1], dtype=np.int64)

    def block(self, r0: int, r1: int, c0: int, c1: int) -> list[list[object]]:
        for part in _arrays_of(self.sparse):   # large structures stay views of the map: check the file first
            require_unchanged(part)
        coords = self._coordinates(r0, r1).T.tolist()
        values = decode.present(np.asarray(self.sparse.values[r0:r1]), self.dtype_name).tolist() \
            if c1 > self.ndim else [None] * (r1 - r0)
        return [(coord + [value])[c0:c1] for coord, value in zip(coords, values)]

    def texts(self, r0: int, r1: int, c0: int, c1: int) -> list[list[str]]:
        return [[str(v) if c0 + j < self.ndim else value_text(v, self.dtype_name) for j, v in enumerate(row)]
                for row in self.block(r0, r1, c0, c1)]

    def row_label(self, row: int) -> str:
        return str(row)

    def col_label(self, col: int) -> str:
        return f"axis {col}" if col < self.ndim else "value"
