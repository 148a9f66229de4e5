"""Sparse tensors: load CSR / COO components, validate the index structure, densify.

Index arrays are validated before any use (indptr starts at 0, never decreases, ends at nnz; every index
inside the shape), so a corrupt file can never make numpy write outside the dense array.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .decode import component_bytes, present, storage_dtype
from .decode_rules import decode_limit
from .dtypes import DTYPES
from .errors import DecodeLimitExceeded, SparseStructureError
from .mapped_pages import scan
from .model import Tensor, TensorFile

_U64 = np.dtype("<u8")


def _fail(tensor: Tensor, message: str, component: str | None = None, rule: str = "") -> SparseStructureError:
    offset = tensor.components[component].offset if component in tensor.components else None
    return SparseStructureError(message, tensor=tensor.name, component=component, offset=offset,
                                rule=rule or "sparse structure")


@dataclass(slots=True)
class SparseCSR:
    """Compressed sparse rows of a 2-D tensor; ``values`` holds the stored bits."""

    shape: tuple[int, int]
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    dtype: str

    @property
    def nnz(self) -> int:
        return int(self.values.size)

    def row_ids(self) -> np.ndarray:
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr).astype(np.int64))

    def coordinates(self) -> np.ndarray:
        """(2, nnz) int64 row/column indices."""
        return np.stack([self.row_ids(), self.indices.astype(np.int64)])

    def to_dense(self, raw_bits: bool = False) -> np.ndarray:
        return _densify(self.shape, self.coordinates(), self.values, self.dtype, raw_bits)


@dataclass(slots=True)
class SparseCOO:
    """Coordinate list; ``coords`` is (ndim, nnz), ``values`` the stored bits."""

    shape: tuple[int, ...]
    coords: np.ndarray
    values: np.ndarray
    dtype: str

    @property
    def nnz(self) -> int:
        return int(self.values.size)

    def coordinates(self) -> np.ndarray:
        return self.coords.astype(np.int64)

    def to_dense(self, raw_bits: bool = False) -> np.ndarray:
        return _densify(self.shape, self.coordinates(), self.values, self.dtype, raw_bits)


Sparse = SparseCSR | SparseCOO


def _check_dense_size(shape: tuple[int, ...], dtype: str) -> None:
    nbytes = math.prod(shape) * DTYPES[dtype].itemsize
    if any(d > np.iinfo(np.intp).max for d in shape):
        raise DecodeLimitExceeded(f"shape {list(shape)} has a dimension beyond numpy's index range",
                                  rule="dimensions within numpy's index range")
    if nbytes > decode_limit():
        raise DecodeLimitExceeded(f"the dense equivalent needs {nbytes:,} bytes, above the decode limit "
                                  f"of {decode_limit():,} (set ZTVIEWER_MAX_DECODED)",
                                  rule="decompression output cap")


def _densify(shape: tuple[int, ...], coords: tuple[np.ndarray, ...] | np.ndarray, values: np.ndarray, dtype: str,
             raw_bits: bool) -> np.ndarray:
    _check_dense_size(tuple(shape), dtype)
    shown = present(values, dtype, raw_bits)
    try:
        dense = np.zeros(shape, dtype=shown.dtype)
    except (ValueError, MemoryError) as exc:
        raise DecodeLimitExceeded(f"shape {list(shape)} cannot be held by a numpy array: {exc}",
                                  rule="dimensions within numpy's index range") from None
    if values.size and not dense.ndim:  # a 0-d tensor: every stored value is at (), the last one wins
        dense[()] = shown[-1]
    elif values.size:
        dense[tuple(coords)] = shown
    return dense


def iter_dense_chunks(sparse: Sparse, chunk_elements: int = 1 << 20, raw_bits: bool = True) -> Iterator[np.ndarray]:
    """The dense equivalent in row-major order, as flat chunks (bounded memory, for hashing)."""
    shape = sparse.shape
    _check_dense_size(shape, sparse.dtype)
    total = math.prod(shape)
    chunk_elements = max(1, min(chunk_elements, decode_limit() // DTYPES[sparse.dtype].itemsize))
    coords = sparse.coordinates()
    if not shape:  # 0-d: every stored value is the one element
        flat = np.zeros(sparse.nnz, np.int64)
    else:
        flat = np.ravel_multi_index(tuple(coords), shape) if sparse.nnz and total else np.zeros(0, np.int64)
    order = np.argsort(flat, kind="stable")
    flat = flat[order]
    shown = present(sparse.values, sparse.dtype, raw_bits)[order]
    for start in range(0, total, chunk_elements):
        stop = min(total, start + chunk_elements)
        out = np.zeros(stop - start, dtype=shown.dtype)
        lo, hi = np.searchsorted(flat, [start, stop])
        out[flat[lo:hi] - start] = shown[lo:hi]
        yield out


def _u64(tf: TensorFile, tensor: Tensor, role: str, **kw: Any) -> np.ndarray:
    """Index component as stored: u64, or u32 where the format allows it (zTensor v2)."""
    component = tensor.components[role]
    data = component_bytes(tf, tensor, component, **kw)
    name = "uint32" if component.dtype == "uint32" else "uint64"
    width = DTYPES[name].itemsize
    if len(data) % width:
        raise _fail(tensor, f"{role} has {len(data)} bytes, not a whole number of {name} indices", role)
    return np.frombuffer(data, dtype=storage_dtype(tensor, component, name))


def _values(tf: TensorFile, tensor: Tensor, role: str = "values", **kw: Any) -> np.ndarray:
    component = tensor.components[role]
    np_dtype = storage_dtype(tensor, component, tensor.dtype)
    data = component_bytes(tf, tensor, component, **kw)
    if len(data) % np_dtype.itemsize:
        raise _fail(tensor, f"values have {len(data)} bytes, not a whole number of {tensor.dtype} elements",
                    role)
    return np.frombuffer(data, dtype=np_dtype)


def validate_csr(tensor: Tensor, shape: tuple[int, ...], indptr: np.ndarray, indices: np.ndarray,
                 nnz: int, where: tuple[str, str] = ("indptr", "indices"),
                 sorted_rows: bool = False) -> tuple[int, int]:
    """Check a CSR structure against its shape; the shape as (rows, columns) when it is sound."""
    if len(shape) != 2:
        raise _fail(tensor, f"sparse_csr needs a 2-D shape, got {list(shape)}", rule="CSR is 2-D")
    rows, cols = shape
    if indptr.size != rows + 1:
        raise _fail(tensor, f"indptr has {indptr.size} entries, rows + 1 = {rows + 1} expected", where[0],
                    "len(indptr) = rows + 1")
    if indptr[0] != 0:
        raise _fail(tensor, f"indptr starts at {int(indptr[0])}, must start at 0", where[0], "indptr[0] = 0")
    if np.any(indptr[1:] < indptr[:-1]):
        row = int(np.argmax(indptr[1:] < indptr[:-1]))
        raise _fail(tensor, f"indptr decreases at row {row}", where[0], "indptr is non-decreasing")
    if int(indptr[-1]) != nnz or indices.size != nnz:
        raise _fail(tensor, f"indptr ends at {int(indptr[-1])}, {indices.size} indices and {nnz} values "
                    "must all agree", where[0], "indptr[-1] = nnz = len(indices) = len(values)")
    if nnz and int(indices.max()) >= cols:
        bad = int(np.argmax(indices >= cols))
        raise _fail(tensor, f"column index {int(indices[bad])} at position {bad} is outside {cols} columns",
                    where[1], "0 <= indices < columns")
    if sorted_rows and nnz > 1:
        steps = np.diff(indices.astype(np.int64))
        row_starts = np.zeros(nnz - 1, dtype=bool)  # step k crosses into a new row when k + 1 starts one
        starts = indptr[1:-1].astype(np.int64)
        starts = starts[(starts > 0) & (starts < nnz)]
        row_starts[starts - 1] = True
        bad_steps = (steps <= 0) & ~row_starts
        if bad_steps.any():
            at = int(np.argmax(bad_steps)) + 1
            raise _fail(tensor, f"column indices do not increase strictly within a row at position {at}",
                        where[1], "indices strictly increasing within each row")
    return rows, cols


def validate_unique_coords(tensor: Tensor, shape: tuple[int, ...], coords: np.ndarray, role: str = "coords"
                           ) -> None:
    """No two COO elements name the same cell (zTensor v2 ``zt.sparse_coo/1``)."""
    if coords.shape[1] < 2:
        return
    if not shape:  # a scalar has one cell
        duplicated = True
    elif math.prod(shape) < 1 << 62:
        flat = np.sort(np.ravel_multi_index(tuple(coords.astype(np.int64)), shape))
        duplicated = bool((np.diff(flat) == 0).any())
    else:
        duplicated = len(np.unique(coords.T, axis=0)) != coords.shape[1]
    if duplicated:
        raise _fail(tensor, "two elements have the same coordinates", role, "coordinates are unique")


def validate_coo(tensor: Tensor, shape: tuple[int, ...], coords: np.ndarray, role: str = "coords") -> None:
    for dim, extent in enumerate(shape):
        row = coords[dim]
        if row.size and max((int(part.max()) for part in scan(row)), default=0) >= extent:
            bad = int(np.argmax(row >= extent))
            raise _fail(tensor, f"coordinate {int(row[bad])} of dimension {dim} at position {bad} is "
                        f"outside the extent {extent}", role, "0 <= coords[d] < shape[d]")


V2_DATA_RULE = "layout-data (v2 §5.2, App. A): the decoded data satisfies its layout and logical type rules"


def load_sparse(tf: TensorFile, tensor: Tensor, **kw: Any) -> Sparse:
    """Read and validate a sparse tensor (v1.0 / objects components, v0.1's packed crate blob, or the zTensor
    v2 profiles, whose data rules also require sorted rows (CSR) and unique coordinates (COO))."""
    if not (tensor.layout_spelling or "").startswith("zt.sparse_"):
        return _load_sparse(tf, tensor, False, **kw)
    try:
        return _load_sparse(tf, tensor, True, **kw)
    except SparseStructureError as exc:
        exc.rule = f"{V2_DATA_RULE}: {exc.rule}"
        raise


def _load_sparse(tf: TensorFile, tensor: Tensor, v2: bool, **kw: Any) -> Sparse:
    shape = tuple(tensor.shape)
    if tensor.extra.get("packed") == "crate":
        return _load_crate(tf, tensor, shape, **kw)
    if tensor.layout == "sparse_csr":
        for role in ("values", "indices", "indptr"):
            if role not in tensor.components:
                raise _fail(tensor, f"sparse_csr tensor has no {role!r} component", None, "required components")
        values = _values(tf, tensor, **kw)
        indptr, indices = _u64(tf, tensor, "indptr", **kw), _u64(tf, tensor, "indices", **kw)
        rows_cols = validate_csr(tensor, shape, indptr, indices, values.size, sorted_rows=v2)
        return SparseCSR(rows_cols, indptr, indices, values, tensor.dtype)
    for role in ("values", "coords"):
        if role not in tensor.components:
            raise _fail(tensor, f"sparse_coo tensor has no {role!r} component", None, "required components")
    values = _values(tf, tensor, **kw)
    coords = _u64(tf, tensor, "coords", **kw)
    ndim = len(shape)
    if coords.size != ndim * values.size:
        raise _fail(tensor, f"coords hold {coords.size} indices, ndim × nnz = {ndim} × {values.size} expected",
                    "coords", "len(coords) = ndim × nnz")
    coords = coords.reshape(ndim, values.size)
    validate_coo(tensor, shape, coords)
    if v2:
        validate_unique_coords(tensor, shape, coords)
    return SparseCOO(shape, coords, values, tensor.dtype)


def _load_crate(tf: TensorFile, tensor: Tensor, shape: tuple[int, ...], **kw: Any) -> Sparse:
    component = tensor.components["data"]
    blob = component_bytes(tf, tensor, component, **kw)
    value_dtype = storage_dtype(tensor, component, tensor.dtype)
    index_dtype = _U64.newbyteorder(">") if component.byte_order == "big" else _U64
    width = value_dtype.itemsize
    if tensor.layout == "sparse_coo":
        ndim = len(shape)
        record = np.dtype([("idx", index_dtype, (ndim,)), ("val", value_dtype)])
        if len(blob) % record.itemsize:
            raise _fail(tensor, f"packed COO blob of {len(blob)} bytes is not a whole number of "
                        f"{record.itemsize}-byte (indices, value) records", "data", "crate COO packing")
        records = np.frombuffer(blob, dtype=record)
        coords = np.ascontiguousarray(records["idx"].T)
        validate_coo(tensor, shape, coords, "data")
        return SparseCOO(shape, coords, np.ascontiguousarray(records["val"]), tensor.dtype)
    if len(shape) != 2:
        raise _fail(tensor, f"sparse_csr needs a 2-D shape, got {list(shape)}", "data", "CSR is 2-D")
    head = (shape[0] + 1) * 8
    nnz, rest = divmod(len(blob) - head, 8 + width)
    if len(blob) < head or rest:
        raise _fail(tensor, f"packed CSR blob of {len(blob)} bytes does not split into indptr|indices|values",
                    "data", "crate CSR packing")
    indptr = np.frombuffer(blob, index_dtype, shape[0] + 1, 0)
    indices = np.frombuffer(blob, index_dtype, nnz, head)
    values = np.frombuffer(blob, value_dtype, nnz, head + 8 * nnz)
    rows_cols = validate_csr(tensor, shape, indptr, indices, nnz, ("data", "data"))
    return SparseCSR(rows_cols, indptr, indices, values, tensor.dtype)
