"""What the inspect views show, as plain numpy objects: a tensor's stored bits as an N-D array, its sparse
structure, or its TT cores. No Qt here; the loaders run on workers.

Raw little- or big-endian dense data stays a zero-copy view of the file's map (presentation happens per
displayed pixel, see :mod:`ztviewer.analysis.slicing`); what the views keep of it is copied out a plane block at
a time after checking the file (:class:`~ztviewer.analysis.mapped.ReleasingPlane`), so a file another program
truncates is an error on screen, never a fatal fault. Sparse structures and TT cores are read into memory. zstd
data is decoded once, with progress, into one buffer kept in the :class:`~.cache.DecodedCache`; a tensor larger
than the cache budget is refused with a clear message rather than decoded into unbounded memory.
"""
from __future__ import annotations

import cmath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ztviewer.analysis.mapped import ReleasingPlane, file_mapped
from ztviewer.analysis.slicing import plane
from ztviewer.codec import decode, tt
from ztviewer.codec.decode_rules import expected_length
from ztviewer.codec.dtypes import DTYPES, PACKED_NIBBLES, unpack_nibbles
from ztviewer.codec.errors import (
    Cancelled,
    CodecError,
    DecodeError,
    DecodeLimitExceeded,
)
from ztviewer.codec.mapped_pages import require_unchanged
from ztviewer.codec.model import Tensor, TensorFile
from ztviewer.codec.tt import TTPlane

from .decode_cache import DecodedCache, data_key, owned_bytes
from .view_registry import view_kind as view_kind  # decided by the view registry; re-exported for the loaders' callers

if TYPE_CHECKING:
    from ztviewer.codec.sparse import SparseCOO, SparseCSR

if TYPE_CHECKING:
    pass

Progress = Callable[[int, int], None]
CancelCheck = Callable[[], bool]


def presentations(tensor: Tensor) -> list[str]:
    """dtype names the stored bits can be shown as: the tensor's dtype, and the other reading of the same bytes
    the file records (a float8 logical type over uint8 storage offers both, the logical type first)."""
    names = [tensor.dtype]
    data = tensor.components.get("data")
    logical, storage = tensor.extra.get("logical_type"), data.dtype if data is not None else None
    for other in (logical, storage):
        if (other in DTYPES and other not in names and tensor.dtype in DTYPES
                and DTYPES[other].itemsize == DTYPES[tensor.dtype].itemsize and DTYPES[other].kind != "complex"):
            names.insert(0 if other == logical else len(names), other)
    return names


def presented_as(tensor: Tensor, dtype_name: str) -> Tensor:
    """A copy of ``tensor`` whose bits are read as ``dtype_name`` (one of :func:`presentations`)."""
    return tensor if dtype_name == tensor.dtype else tensor.replaced(dtype=dtype_name)


@dataclass(slots=True)
class DenseData:
    """A dense tensor's stored bits shaped like the tensor, and how to present them.

    ``array`` holds raw bfloat16 / float8 bits as uints (``dtype_name`` says how to read them) and keeps the
    file's byte order; bool is uint8. ``decoded`` is True when the bits came out of a zstd stream.
    """

    array: np.ndarray
    dtype_name: str
    decoded: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    @property
    def kind(self) -> str:
        return DTYPES[self.dtype_name].kind

    def plane(self, axes: tuple[int, int], fixed: Mapping[int, int]) -> np.ndarray | ReleasingPlane:
        """The displayed 2-D plane (0-D and 1-D tensors are one row): a view of decoded data, or for data in the
        file's map a :class:`~ztviewer.analysis.mapped.ReleasingPlane` handing out checked copies."""
        view = plane(self.array) if self.array.ndim < 2 else plane(self.array, axes, fixed)
        return ReleasingPlane(view) if file_mapped(view) else view

    def value(self, index: tuple[int, ...]) -> object:
        """One element as the user reads it (bool, int, float, complex); the file is checked first when the
        data is its map (:class:`~ztviewer.codec.errors.SourceChanged` once another program changed it)."""
        require_unchanged(self.array)
        bits = self.array[index] if index else self.array[()]
        return scalar(np.asarray(bits), self.dtype_name)


@dataclass(slots=True)
class TTData:
    """Tensor-train cores (in memory of their own, never views of the map) presented through 2-D
    :class:`TTPlane` slices."""

    cores: list[np.ndarray]
    dtype_name: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(c.shape[1]) for c in self.cores)

    @property
    def kind(self) -> str:
        return "complex" if np.iscomplexobj(self.cores[0]) else "float"

    def plane(self, axes: tuple[int, int], fixed: Mapping[int, int]) -> TTPlane | _RowPlane:
        if len(self.cores) == 1:
            return _RowPlane(TTPlane([np.ones((1, 1, 1), self.cores[0].dtype), *self.cores], (0, 1), {}))
        return TTPlane(self.cores, axes, fixed)

    def value(self, index: tuple[int, ...]) -> object:
        vector = np.ones((1, 1), dtype=np.result_type(*self.cores))
        for core, i in zip(self.cores, index):
            vector = vector @ core[:, int(i), :]
        return vector[0, 0].item()


class _RowPlane:
    """A 1-D tensor train shown as one row (the dummy leading axis of extent 1)."""

    def __init__(self, inner: TTPlane) -> None:
        self.inner, self.shape, self.dtype, self.ndim = inner, inner.shape, inner.dtype, 2

    def __getitem__(self, key: Any) -> np.ndarray:
        return self.inner[key]


def scalar(bits: np.ndarray, dtype_name: str) -> object:
    """Stored bits of one element → a Python value."""
    info = DTYPES.get(dtype_name)
    if info is not None and info.kind == "bool":
        return bool(bits.view(np.uint8) if bits.dtype.kind == "u" else bits)
    shown = decode.present(np.asarray(bits).reshape(1), dtype_name) if dtype_name in DTYPES else bits
    return np.asarray(shown).reshape(-1)[0].item()


def format_value(value: object) -> str:
    if isinstance(value, complex):
        return f"{value.real:.6g}{value.imag:+.6g}j  (|z| {abs(value):.6g}, ∠ {cmath.phase(value):.4g})"
    if isinstance(value, float):
        return f"{value:.7g}"
    return str(value)


def expected_nbytes(tensor: Tensor) -> int | None:
    component = tensor.components.get("data")
    return None if component is None else expected_length(tensor, component)


def load_dense(tf: TensorFile, tensor: Tensor, dtype_name: str | None = None, *, cache: DecodedCache | None = None,
               cancelled: CancelCheck | None = None, progress: Progress | None = None) -> DenseData:
    """The stored bits of a dense tensor, shaped; zstd data decoded once and kept in ``cache``."""
    dtype_name = dtype_name or tensor.dtype
    shown = presented_as(tensor, dtype_name)
    component = tensor.components["data"]
    if component.encoding == "raw":
        bits = decode.component_array(tf, shown, "data", dtype=dtype_name, mapped=True)  # shown a plane at a time
        return DenseData(_shaped(bits, tensor), dtype_name)
    key = data_key(tf, tensor, "dense")
    cached = cache.get(key) if cache is not None else None
    if cached is None:
        cached = decode_component(tf, shown, "data", cache=cache, cancelled=cancelled, progress=progress)
        if cache is not None:
            cache.put(key, cached)
    np_dtype = decode.storage_dtype(shown, component, dtype_name)
    return DenseData(_shaped(np.frombuffer(cached, dtype=np_dtype), tensor), dtype_name, decoded=True)


def _shaped(bits: np.ndarray, tensor: Tensor) -> np.ndarray:
    if tensor.dtype in PACKED_NIBBLES and bits.size == (tensor.numel + 1) // 2:   # float4: two codes a byte
        bits = unpack_nibbles(bits, tensor.numel)
    if bits.size != tensor.numel:
        raise DecodeError(f"{bits.size} elements stored, shape {list(tensor.shape)} needs {tensor.numel}",
                          rule="length = product(shape) × dtype size", tensor=tensor.name, component="data")
    return bits.reshape(tensor.shape)


def decode_component(tf: TensorFile, tensor: Tensor, role: str, *, cache: DecodedCache | None = None,
                     cancelled: CancelCheck | None = None, progress: Progress | None = None) -> np.ndarray:
    """All decoded bytes of a compressed component as a uint8 array, with progress over the output bytes."""
    component = tensor.components[role]
    expected = expected_length(tensor, component)
    budget = cache.budget if cache is not None else None
    if expected is not None and budget is not None and expected > budget:
        raise DecodeLimitExceeded(
            f"decoding needs {expected:,} bytes, more than the inspect cache budget of {budget:,} bytes "
            "(set ZTVIEWER_INSPECT_CACHE to raise it)", rule="inspect memory budget", tensor=tensor.name,
            component=role)
    limit = budget if expected is None and budget is not None else None
    out = np.empty(expected, np.uint8) if expected is not None else None
    parts: list[bytes] = []
    pos = 0
    for part in decode.iter_decoded(tf, tensor, component, limit=limit, cancelled=cancelled):
        if out is not None:
            out[pos:pos + len(part)] = np.frombuffer(part, np.uint8)
        else:
            parts.append(bytes(part))
        pos += len(part)
        if progress is not None:
            progress(pos, expected or pos)
    return out if out is not None else np.frombuffer(b"".join(parts), np.uint8)


#: stored bytes of a sparse structure read into memory of its own; a larger one stays a view of the file's map,
#: which the views check before every read (:func:`~ztviewer.codec.mapped_pages.require_unchanged`).
OWNED_SPARSE = 256 << 20


def load_sparse(tf: TensorFile, tensor: Tensor, *, cache: DecodedCache | None = None,
                cancelled: CancelCheck | None = None) -> SparseCSR | SparseCOO:
    """The validated sparse structure (:class:`~ztviewer.codec.sparse.SparseCSR` / ``SparseCOO``), cached: in
    memory of its own up to :data:`OWNED_SPARSE` stored bytes, else views of the map (pages given back as read)."""
    from ztviewer.codec.sparse import load_sparse as codec_load_sparse

    key = data_key(tf, tensor, "sparse")
    cached = cache.get(key) if cache is not None else None
    if cached is None:
        stored = sum(c.length for c in tensor.components.values() if c.encoding == "raw")
        cached = codec_load_sparse(tf, tensor, cancelled=cancelled, mapped=stored > OWNED_SPARSE)
        if cache is not None:
            cache.put(key, cached, owned_bytes(cached))
    return cached


def load_tt(tf: TensorFile, tensor: Tensor) -> TTData:
    return TTData(tt.tt_cores(tf, tensor), tensor.dtype)


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, Cancelled):
        return "cancelled"
    if isinstance(exc, CodecError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"

