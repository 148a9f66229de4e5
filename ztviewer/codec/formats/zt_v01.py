"""zTensor v0.1 (``ZTEN0001``, ztensor 0.1.x): the manifest is a CBOR array of flat tensor maps.

Real-writer deviations handled here (specs/real-world-writers.md §1): indefinite-length maps, the crate's
``sparsecoo`` / ``sparsecsr`` layouts packed into one blob, ``data_endianness: "big"``, zero-size tensors
sharing the next blob's offset, duplicate names, and custom keys flattened into the tensor map.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from ..dtypes import DTYPES, ZT_LONG_NAMES
from ..errors import SchemaError
from ..model import Component, Problem, Tensor, error, warning
from .zt_fields import (
    ENCODINGS,
    STRUCTURAL_NOTE,
    U64_MAX,
    cbor_type,
    check_sizes,
    digest_problem,
    parse_shape,
    u64_problem,
)

KNOWN_KEYS = frozenset({"name", "offset", "size", "dtype", "layout", "shape", "encoding", "data_endianness",
                        "checksum"})
#: writer spelling → canonical layout; "sparse" is seed 002's spelling, which no writer produces.
LAYOUTS = {"dense": "dense", "sparsecoo": "sparse_coo", "sparsecsr": "sparse_csr", "sparse": "sparse"}
_DTYPES = frozenset(ZT_LONG_NAMES)
_BYTE_ORDERS = frozenset({"little", "big"})


def read_tensors(root: Any, manifest_offset: int) -> list[Tensor]:
    """Every manifest entry as a Tensor, in file order; per-entry problems stay on that tensor."""
    if type(root) is not list:
        raise SchemaError(f"the v0.1 manifest must be a CBOR array of tensor maps, got a {cbor_type(root)}",
                          offset=manifest_offset, rule="v0.1: the manifest is a CBOR array")
    tensors = [_entry(index, entry) for index, entry in enumerate(root)]
    _flag_duplicates(tensors)
    return tensors


def _entry(index: int, entry: Any) -> Tensor:
    problems: list[Problem] = []
    if type(entry) is not dict:
        label = f"#{index}"
        problems.append(error(f"manifest entry #{index} is a {cbor_type(entry)}, not a map", tensor=label,
                              rule="v0.1: each manifest entry is a map"))
        return Tensor(label, "unknown", (), "unknown", {}, {}, None, problems, index, {})
    name = entry.get("name")
    if type(name) is not str:
        what = "has no 'name'" if name is None else f"has a {cbor_type(name)} 'name' {name!r:.40}"
        name = f"#{index}"
        problems.append(error(f"manifest entry #{index} {what}", tensor=name,
                              rule="v0.1: name is a text string"))

    def bad(message: str, rule: str, offset: int | None = None) -> None:
        problems.append(error(message, tensor=name, rule=rule, offset=offset))

    dtype = entry.get("dtype")
    if type(dtype) is not str or dtype not in _DTYPES:
        bad("missing required key 'dtype'" if dtype is None else f"unknown dtype {dtype!r:.40}",
            "v0.1 dtypes: float64 … bool")
        dtype = dtype if type(dtype) is str else "unknown"
    shape = parse_shape(entry.get("shape"))
    shape_ok = True
    if isinstance(shape, str):
        bad(shape, "v0.1: shape is an array of unsigned integers")
        shape = ()
        shape_ok = False
    spelling = entry.get("layout", "dense")
    layout = LAYOUTS.get(spelling) if type(spelling) is str else None
    if layout is None:
        bad(f"unknown layout {spelling!r:.40} (known: dense, sparsecoo, sparsecsr)", "v0.1 layouts")
        layout = spelling if type(spelling) is str else "unknown"
    elif layout == "sparse":
        problems.append(warning(f"layout 'sparse' {STRUCTURAL_NOTE} (no writer defines its index arrays)",
                                tensor=name, rule="v0.1 seed layout 'sparse'"))
    encoding = entry.get("encoding")
    if type(encoding) is not str or encoding not in ENCODINGS:
        bad("missing required key 'encoding'" if encoding is None
            else f"unknown encoding {encoding!r:.40} (known: raw, zstd)", "v0.1 encodings: raw, zstd")
        encoding = encoding if type(encoding) is str else "unknown"
    byte_order = entry.get("data_endianness", "little")
    if type(byte_order) is not str or byte_order not in _BYTE_ORDERS:
        bad(f"unknown data_endianness {byte_order!r:.40} (known: little, big)", "v0.1 data_endianness")
        byte_order = "little"
    digest = entry.get("checksum")
    if digest is not None:
        why = digest_problem(digest)
        if why:
            bad(why, "checksum is crc32c:0x… or sha256:…")
            digest = digest if type(digest) is str else repr(digest)

    components: dict[str, Component] = {}
    offset: Any = entry.get("offset")   # CBOR values: checked by _u64_ok before use
    size: Any = entry.get("size")
    offset_ok = _u64_ok(offset, "offset", entry, bad)
    if _u64_ok(size, "size", entry, bad) and offset_ok:
        stored_dtype = dtype if layout == "dense" else None
        components["data"] = Component("data", offset, size, encoding, digest, stored_dtype, byte_order)

    attributes = {} if KNOWN_KEYS.issuperset(entry) else {k: v for k, v in entry.items() if k not in KNOWN_KEYS}
    tensor = Tensor(name, dtype, shape, layout, components, attributes, spelling if type(spelling) is str
                    else None, problems, index, {})
    if layout in ("sparse_coo", "sparse_csr"):
        tensor.extra["packed"] = "crate"
        if shape_ok:
            _check_packed_sparse(tensor)
    elif shape_ok:
        check_sizes(tensor)
    return tensor


def _u64_ok(value: Any, key: str, entry: dict[Any, Any], bad: Any) -> bool:
    if type(value) is int and 0 <= value <= U64_MAX:
        return True
    bad(u64_problem(key, value, key in entry), f"v0.1: {key} is a u64")
    return False


def _check_packed_sparse(tensor: Tensor) -> None:
    """The crate's one-blob sparse layouts must hold a whole number of non-zeros.

    COO: nnz × (ndim u64 indices, then the value). CSR: indptr (rows+1) u64 | nnz u64 indices | nnz values.
    """
    data = tensor.components.get("data")
    info = DTYPES.get(tensor.dtype)
    if data is None or info is None or data.encoding != "raw":
        return
    shape, size = tensor.shape, data.length
    if tensor.layout == "sparse_coo":
        head, unit = 0, 8 * len(shape) + info.itemsize
        how = f"nnz × ({len(shape)} u64 indices + one {info.itemsize}-byte value)"
    else:
        if len(shape) != 2:
            tensor.problems.append(error(f"sparsecsr needs a 2-D shape, got {list(shape)}", tensor=tensor.name,
                                         rule="CSR is 2-D"))
            return
        head, unit = (shape[0] + 1) * 8, 8 + info.itemsize
        how = f"(rows + 1) × 8 + nnz × (8 + {info.itemsize})"
    nnz, rest = divmod(size - head, unit)
    if size < head or rest:
        tensor.problems.append(error(
            f"packed {tensor.layout_spelling} blob of {size} bytes is not {how} for any whole nnz",
            tensor=tensor.name, component="data", offset=data.offset, rule="v0.1 crate sparse packing"))
    else:
        tensor.extra["nnz"] = nnz


def _flag_duplicates(tensors: list[Tensor]) -> None:
    counts = Counter(t.name for t in tensors)
    if len(counts) == len(tensors):
        return
    for t in tensors:
        if counts[t.name] > 1:
            first = next(o.index for o in tensors if o.name == t.name)
            t.problems.append(warning(
                f"the name {t.name!r} appears {counts[t.name]} times in the manifest (first at entry #{first}); "
                "all entries are kept. ztensor 0.1.4 reads the first, 1.1+ the last",
                tensor=t.name, rule="tensor names should be unique"))
