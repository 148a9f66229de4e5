"""Writing numpy arrays (not an existing file): an in-memory TensorFile any writer can save.

>>> save_arrays("model.zt", {"w": np.ones((2, 3), np.float32)}, attributes={"license": "MIT"})

Values are numpy arrays (dtype taken from the array; ``(bits, "bfloat16")`` / ``(bits, "float8_e4m3fn")``
pairs for types numpy lacks) or :class:`SparseArray` / :class:`TensorTrainArray` for the other layouts.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dtypes import DTYPES
from .errors import EditRefused
from .model import Component, Tensor, TensorFile
from .source import InMemorySource


@dataclass
class SparseArray:
    """A sparse tensor: ``sparse_csr`` (values, indices, indptr) or ``sparse_coo`` (values, coords (ndim, nnz))."""

    layout: str
    shape: tuple[int, ...]
    values: np.ndarray
    indices: np.ndarray | None = None
    indptr: np.ndarray | None = None
    coords: np.ndarray | None = None
    dtype: str | None = None


@dataclass
class TensorTrainArray:
    """Tensor-train cores, core k of shape (r[k], shape[k], r[k+1])."""

    cores: list[np.ndarray]
    attributes: dict[str, Any] = field(default_factory=dict)


ArrayLike = np.ndarray | tuple[np.ndarray, str] | SparseArray | TensorTrainArray  # (bits, dtype) for bfloat16 …


def canonical_dtype(array: np.ndarray) -> str:
    """The canonical dtype name of a numpy array."""
    name = "bool" if array.dtype.kind == "b" else array.dtype.newbyteorder("=").name
    if name not in DTYPES:
        raise EditRefused(f"numpy dtype {array.dtype} has no tensor-file equivalent", rule="supported dtypes")
    return name


class _Builder:
    def __init__(self) -> None:
        self.buffer = bytearray()

    def add(self, role: str, array: np.ndarray, dtype: str, shape: tuple[int, ...] | None = None) -> Component:
        info = DTYPES[dtype]
        bits = np.ascontiguousarray(array)
        bits = (bits != 0).astype(np.uint8) if info.kind == "bool" else bits.astype(info.storage_dtype, copy=False)
        self.buffer += bytes(-len(self.buffer) % 64)
        offset = len(self.buffer)
        self.buffer += bits.tobytes()
        return Component(role, offset, len(self.buffer) - offset, dtype=dtype, shape=shape)


def _tensor(builder: _Builder, index: int, name: str, value: ArrayLike) -> Tensor:
    if isinstance(value, tuple):
        bits, dtype = value
        array = np.asarray(bits)
        return Tensor(name, dtype, array.shape, "dense", {"data": builder.add("data", array, dtype)}, index=index)
    if isinstance(value, SparseArray):
        dtype = value.dtype or canonical_dtype(np.asarray(value.values))
        roles = {"sparse_csr": ("indices", "indptr"), "sparse_coo": ("coords",)}.get(value.layout)
        if roles is None:
            raise EditRefused(f"unknown sparse layout {value.layout!r}", rule="sparse_csr or sparse_coo")
        comps = {"values": builder.add("values", np.asarray(value.values), dtype)}
        for role in roles:
            comps[role] = builder.add(role, np.asarray(getattr(value, role)).reshape(-1), "uint64")
        tensor = Tensor(name, dtype, tuple(value.shape), value.layout, comps, index=index)
        tensor.extra["nnz"] = int(np.asarray(value.values).size)
        return tensor
    if isinstance(value, TensorTrainArray):
        cores = [np.asarray(c) for c in value.cores]
        dtype = canonical_dtype(cores[0])
        comps = {f"core_{k}": builder.add(f"core_{k}", c, dtype, shape=c.shape) for k, c in enumerate(cores)}
        ranks = tuple([c.shape[0] for c in cores] + [cores[-1].shape[2]])
        tensor = Tensor(name, dtype, tuple(c.shape[1] for c in cores), "tensor_train", comps,
                        dict(value.attributes), index=index)
        tensor.extra["ranks"] = ranks
        return tensor
    array = np.asarray(value)
    dtype = canonical_dtype(array)
    return Tensor(name, dtype, array.shape, "dense", {"data": builder.add("data", array, dtype)}, index=index)


def tensor_file_from_arrays(arrays: Mapping[str, ArrayLike], attributes: Mapping[str, Any] | None = None,
                            tensor_attributes: Mapping[str, Mapping[str, Any]] | None = None) -> TensorFile:
    """An in-memory zTensor v1.0 TensorFile holding ``arrays`` (the model a reader would produce)."""
    builder = _Builder()
    tensors = [_tensor(builder, i, name, value) for i, (name, value) in enumerate(arrays.items())]
    for t in tensors:
        t.attributes.update((tensor_attributes or {}).get(t.name, {}))
    source = InMemorySource(bytes(builder.buffer), "<arrays>")
    return TensorFile("<arrays>", "zt", "v1.0", dict(attributes or {}), tensors, source=source)


def save_arrays(path: str | os.PathLike[str], arrays: Mapping[str, ArrayLike], to: str = "zt", *,
                attributes: Mapping[str, Any] | None = None,
                tensor_attributes: Mapping[str, Mapping[str, Any]] | None = None,
                compress: Any = None, digest: str | None = None, **kw: Any) -> Any:
    """Write ``arrays`` to ``path`` in format ``to`` (atomically); returns the :class:`SaveResult`."""
    from .convert import prepare
    from .save import save
    from .writers.document import EditableDocument

    tf = tensor_file_from_arrays(arrays, attributes, tensor_attributes)
    doc = prepare(EditableDocument(tf, to), compress=compress, digest=digest)
    return save(doc, path, **kw)
