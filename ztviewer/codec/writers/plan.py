"""Turning an :class:`EditableDocument` into a write plan for its target format.

The plan lists every output tensor with, per component, where the bytes come from (the open file, or
memory for densified / unpacked data), the wanted encoding and digest, and a sort key that keeps the
blobs in their original file order (so a file re-saved without edits comes out byte for byte the same).
Everything the target cannot hold is refused here, before a single byte is written; so are tensors the reader
found errors in (:func:`known_damage`). What only reading finds (digests, bool bytes) is checked as the bytes are
written (:mod:`.read_check`).
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import ztviewer.codec.writers.targets as rules

from ..decode_rules import CancelCheck
from ..dtypes import DTYPES, ZT_LOGICAL_TYPES
from ..errors import CodecError, DamagedTensor, EditRefused, UnsupportedConversion
from ..model import SEEKABLE_ENCODING, Component, Problem, Tensor, TensorFile
from ..text import value_text
from .blobs import KEEP, BlobData, FileBlob, MemoryBlob, WidenedBlob
from .document import DocComponent, DocTensor, EditableDocument
from .read_check import verify_input
from .unknown_keys import SHOWN_PLACES, DroppedKeys, cannot_hold, keeps_unknown_keys, part_keys, root_keys, tensor_keys

SPARSE = ("sparse_csr", "sparse_coo")
KNOWN_LAYOUTS = SPARSE + ("dense", "tensor_train")
NEW_PARTS = "the tensor's parts are written anew"
#: Where a component goes in the output: (offset in the source, …, role) compared item by item.
SortKey = tuple[int | str, ...]
#: component encodings a zTensor v2 file keeps when it is saved as v2 again
V2_ENCODINGS = frozenset({"zstd-seekable", SEEKABLE_ENCODING})
ROLE_ORDER = {"data": 0, "values": 0, "indices": 1, "indptr": 2, "coords": 1}


@dataclass
class PlannedComponent:
    """One output component. ``dtype`` is the logical element dtype (``uint64`` for sparse indices)."""

    role: str
    dtype: str | None
    data: BlobData
    encoding: str = "raw"
    level: int | None = None
    digest: str | None = KEEP
    reencode: bool = False
    sort_key: SortKey = ()
    unknown_keys: dict[str, Any] = field(default_factory=dict)


@dataclass
class PlannedTensor:
    """One output tensor; ``spelling`` is the layout string to write (``format`` / v0.1 ``layout``)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    layout: str
    spelling: str
    components: dict[str, PlannedComponent]
    attributes: dict[str, Any] = field(default_factory=dict)
    unknown_keys: dict[str, Any] = field(default_factory=dict)
    ranks: list[int] | None = None


@dataclass
class FilePlan:
    """Everything a writer needs: target, file attributes, tensors in manifest order."""

    target: rules.Target
    attributes: dict[str, Any]
    tensors: list[PlannedTensor]
    version: str | None = None
    unknown_root: dict[str, Any] = field(default_factory=dict)
    alignment: int | None = None
    generator: Any = None
    warnings: list[str] = field(default_factory=list)

    def blobs(self) -> list[tuple[PlannedTensor, PlannedComponent]]:
        """Components in write order: the source file's byte order, then manifest order."""
        pairs = [(t, c) for t in self.tensors for c in t.components.values()]
        return sorted(pairs, key=lambda pair: pair[1].sort_key)

    def work(self) -> int:
        """Bytes to read from the sources (the progress total; a sum, so in manifest order, not sorted)."""
        total = 0
        for t in self.tensors:
            for c in t.components.values():
                stored = c.data.stored()
                total += stored.length if stored is not None else (c.data.decoded_length() or 0)
        return total


def with_unknown_keys(entry: dict[Any, Any], unknown: dict[Any, Any]) -> dict[Any, Any]:
    """A manifest entry with the unknown keys its source entry had; a key the writer set itself wins."""
    for key, value in unknown.items():
        entry.setdefault(key, value)
    return entry


def _refuse(message: str, tensor: str | None = None) -> UnsupportedConversion:
    return UnsupportedConversion(message, rule="the output format must hold every tensor", tensor=tensor)


def build_plan(doc: EditableDocument, skip: Collection[int] = ()) -> FilePlan:
    """Check the whole document against its target and describe what to write (leaving out the tensors at the
    indices in ``skip``: damaged ones a save was told to skip)."""
    t = doc.target
    try:
        for key, value in doc.attributes.items():
            rules.check_file_attribute(t, key, value)
    except EditRefused as exc:
        raise _refuse(exc.message) from None
    seen: set[str] = set()
    planned = []
    dropped = DroppedKeys()
    unknown_root, generator = root_keys(doc.original), None
    if keeps_unknown_keys(doc.original, t):
        generator = doc.original.extra.get("generator") if t.key == "zt-v1.0" else None
    else:
        dropped.add(cannot_hold(doc.original, t), "the root", unknown_root)
        unknown_root = {}
    for index, dt in enumerate(doc.tensors):
        if index in skip:
            continue
        if dt.name in seen and t.key != "zt-v0.1":
            raise _refuse(f"the name {dt.name!r} is used by more than one tensor and {t.label} needs unique names; "
                          "rename or delete one of them", dt.name)
        seen.add(dt.name)
        planned.append(_plan_tensor(doc, index, dt))
        _carry_unknown_keys(doc, dt, planned[-1], dropped)
    if t.key == "blz" and len(planned) != 1:
        raise _refuse(f"a .blz file holds exactly one tensor train, this document has {len(planned)} tensors; "
                      "delete the others or convert to zTensor v1.0")
    version = None
    warnings = dropped.warnings()
    if t.key == "zt-objects":
        same = doc.original.format == "zt" and doc.original.variant == "v1.x-objects"
        version = str(doc.original.extra.get("version", "1.2.0")) if same else "1.2.0"
        warnings += _objects_file_attributes(doc.attributes, version)
    return FilePlan(t, dict(doc.attributes), planned, version, unknown_root, doc.alignment, generator, warnings)


def _objects_file_attributes(attributes: dict[str, Any], version: str) -> list[str]:
    """ztensor 1.0.2 reads the root ``attributes`` of an objects-layout file as a string → string map and rejects
    the whole file otherwise (1.2 reads any value): refused in a file of the version 1.0.2 writes ("1.1.0"),
    a warning in a "1.2.0" file."""
    typed = {key: value for key, value in attributes.items() if type(value) is not str}
    if not typed:
        return []
    if version.startswith(("1.0", "1.1")):
        key, value = next(iter(typed.items()))
        raise _refuse(f"the {type(value).__name__} value of file attribute {key!r} cannot go in an objects-layout "
                      f"file of version {version}: ztensor 1.0.2, which writes that version, reads file attributes "
                      f"as a string → string map and rejects the whole file otherwise; store it as a string, e.g. "
                      f"{value_text(value, 40)!r}")
    names = ", ".join(value_text(key, 60) for key in list(typed)[:SHOWN_PLACES])
    more = f" and {len(typed) - SHOWN_PLACES:,} more" if len(typed) > SHOWN_PLACES else ""
    return [f"file attributes {names}{more} are not strings: ztensor 1.2 reads the file, but ztensor 1.0.2 reads "
            "file attributes as a string → string map and rejects the whole file"]


def _carry_unknown_keys(doc: EditableDocument, dt: DocTensor, planned: PlannedTensor, dropped: DroppedKeys) -> None:
    """Give the planned tensor and its parts the unknown keys of their entries when the target keeps them
    (:mod:`.unknown_keys`); note the ones it cannot write."""
    tf, o = doc.original, dt.original
    keep = keeps_unknown_keys(tf, doc.target)
    reason = NEW_PARTS if keep else cannot_hold(tf, doc.target)
    keys = tensor_keys(o)
    if keep and "attributes" in keys and (planned.attributes or planned.ranks is not None):
        dropped.add("the tensor's attributes are written in their place", _tensor_place(dt),
                    {"attributes": keys.pop("attributes")})
    if keep:
        planned.unknown_keys = keys
    else:
        dropped.add(reason, _tensor_place(dt), keys)
    for role, c in o.components.items():
        found = part_keys(tf, c)
        if not found:
            continue
        component = planned.components.get(role)
        if keep and component is not None and isinstance(component.data, FileBlob) and component.data.component is c:
            component.unknown_keys = found
        else:
            dropped.add(reason, f"{_tensor_place(dt)}, part {value_text(role, 80)}", found)


def _tensor_place(dt: DocTensor) -> str:
    return f"tensor {value_text(dt.name, 80)}"


def known_damage(dt: DocTensor) -> DamagedTensor | None:
    """The refusal of a tensor the reader found errors in (a malformed digest an edit replaced no longer counts)."""
    o = dt.original
    errors = [p for p in o.problems if p.is_error and not _replaced_digest(p, dt)] if o.has_errors else None
    if not errors:
        return None
    first = errors[0]
    where = f" ({first.where()})" if first.component is not None or first.offset is not None else ""
    return DamagedTensor(f"cannot be written: {first.message}{where}; delete the tensor (or repair the file) and save "
                         "again", rule=first.rule or "the output format must hold every tensor", tensor=dt.name)


def find_damaged(doc: EditableDocument, cancelled: CancelCheck | None = None) -> dict[int, DamagedTensor]:
    """Every damaged tensor of the document, by index: the reader's errors, then one checked read of every
    component of the others (what a save skipping damaged tensors leaves out)."""
    found = {}
    for index, dt in enumerate(doc.tensors):
        damage = known_damage(dt)
        if damage is None:
            try:
                verify_input(doc.original, dt.original, cancelled, everything=True)
            except DamagedTensor as exc:
                damage = exc
        if damage is not None:
            found[index] = damage
    return found


def _plan_tensor(doc: EditableDocument, index: int, dt: DocTensor) -> PlannedTensor:
    tf, o, t = doc.original, dt.original, doc.target
    damage = known_damage(dt)
    if damage is not None:
        raise damage
    layout = o.layout
    route = "densify" if dt.densify and layout in SPARSE + ("tensor_train",) else _route(
        t.key, layout, bool(o.extra_value("packed")), tf.format == "zt-v2")
    if route is None:
        raise _layout_refusal(t, dt, layout)
    ranks = _ranks(o, dt) if layout == "tensor_train" else None
    attributes = {k: v for k, v in dt.attributes.items() if not (layout == "tensor_train" and k == "ranks")} \
        if dt.attributes else {}
    if attributes:
        try:
            for name, value in attributes.items():
                rules.check_tensor_attribute(t, dt.name, name, value, layout)
        except EditRefused as exc:
            raise _refuse(exc.message, dt.name) from None
    dtype = logical(o)
    if route in ("densify", "unpack"):
        verify_input(tf, o)  # rebuilt in memory from what it decodes to: checked first
    if route == "copy":
        comps = _file_components(tf, t, dt, index, layout, dtype)
    elif route == "densify":
        comps = {"data": _component(t, dt, "data", dtype, _dense_blob(tf, o), _blob_key(o, index), _first(dt))}
        layout, ranks = "dense", None
    else:
        comps = _unpack_crate(tf, t, dt, _blob_key(o, index))
    _check_layout(t, dt, layout, comps, tf.format == "zt-v2")
    if t.key == "zt-v2" and layout in SPARSE and tf.variant != "v2":
        _check_v2_sparse(tf, dt)
    known = layout in KNOWN_LAYOUTS
    spelling = layout if (known and t.key != "zt-v0.1") or layout != o.layout else (o.layout_spelling or layout)
    return PlannedTensor(dt.name, dtype, tuple(o.shape), layout, spelling, comps, attributes, {}, ranks)


def _blob_key(o: Tensor, index: int) -> SortKey:
    """Where the one blob made for a tensor (densified, unpacked) goes: where its first component was."""
    return (min((c.offset for c in o.components.values()), default=0), 1, index, 0)


def _replaced_digest(problem: Problem, dt: DocTensor) -> bool:
    """A malformed digest stops mattering once an edit replaces or removes it."""
    if not problem.rule.startswith(("digest is", "checksum is")):
        return False
    dc = dt.components.get(problem.component or "data")
    return dc is not None and dc.digest != KEEP


def _route(target_key: str, layout: str, packed: bool, from_v2: bool = False) -> str | None:
    """How a layout reaches a target: ``copy`` its components, ``unpack`` the v0.1 crate's packed sparse
    blob, or ``None`` (refused). zTensor v2 layout profiles (``zt.quant_group/1``, vendor ids …) go from v2 to
    v2 structurally and nowhere else."""
    zt1 = target_key in ("zt-v1.0", "zt-objects")
    if target_key == "zt-v2":
        if layout in ("dense", *SPARSE):
            return "unpack" if packed else "copy"
        return "copy" if from_v2 else None
    if "/" in layout:
        return None
    if layout == "dense":
        return "copy"
    if layout in SPARSE:
        if packed:
            return "copy" if target_key == "zt-v0.1" else "unpack" if zt1 else None
        return "copy" if zt1 else None
    if layout == "tensor_train":
        return "copy" if zt1 or target_key == "blz" else None
    return "copy" if zt1 else None  # extension layouts (quantized_group, …) go through structurally


def logical(o: Tensor) -> str:
    """The dtype the elements mean: float8 read as its uint8 storage keeps its ``logical_type``."""
    meaning = o.extra_value("logical_type")
    return meaning if isinstance(meaning, str) and meaning in DTYPES else o.dtype


def _first(dt: DocTensor) -> DocComponent | None:
    return next(iter(dt.components.values()), None)


def _layout_refusal(t: rules.Target, dt: DocTensor, layout: str) -> UnsupportedConversion:
    what = {"sparse_csr": "sparse (CSR)", "sparse_coo": "sparse (COO)", "tensor_train": "tensor-train"}.get(
        layout, f"{layout!r}-layout")
    if t.key == "zt-v0.1" and layout in SPARSE:
        why = ("v0.1 holds sparse data only in the ztensor 0.1.4 crate's packed one-blob layout, which ztensor's "
               "Python API cannot write or read back")
    elif t.key == "blz":
        why = "a .blz file holds one float64 / complex128 tensor train and ztviewer does not decompose tensors"
    elif t.key == "zt-v2":
        why = ("its registry has no tensor-train layout profile" if layout == "tensor_train"
               else "ztviewer writes the dense, zt.sparse_csr/1 and zt.sparse_coo/1 layouts only")
    elif "/" in layout:
        why = "it is a zTensor v2 layout profile, which no other format defines"
    else:
        why = f"{t.label} stores dense tensors only"
    if layout in SPARSE + ("tensor_train",):
        fix = "densify it (densify=True) or convert to zTensor v1.0"
    elif "/" in layout:
        fix = "delete it, or keep the file in zTensor v2 (convert --to zt-v2)"
    else:
        fix = "delete it or convert to zTensor v1.0"
    return _refuse(f"{t.label} cannot hold the {what} tensor {dt.name!r}: {why}; {fix}", dt.name)


def _check_v2_sparse(tf: TensorFile, dt: DocTensor) -> None:
    from ..sparse import load_sparse
    from .zt_v2_rules import sparse_data_problem

    problem = sparse_data_problem(load_sparse(tf, dt.original))
    if problem is not None:
        raise _refuse(f"tensor {dt.name!r} cannot be a zTensor v2 sparse object: {problem}; densify it "
                      "(densify=True) or convert to zTensor v1.0", dt.name)


def _check_layout(t: rules.Target, dt: DocTensor, layout: str, comps: dict[str, PlannedComponent],
                  from_v2: bool = False) -> None:
    o = dt.original
    if t.key == "zt-v2" and from_v2:
        return  # v2 parts keep their own dtype / type fields
    if layout != "dense" and t.key in ("safetensors",):
        raise _layout_refusal(t, dt, layout)
    if t.key == "blz" and (layout != "tensor_train" or o.dtype not in t.dtypes):
        raise _layout_refusal(t, dt, layout)
    for c in comps.values():
        dtype = c.dtype if c.role not in ("indices", "indptr", "coords") else None
        if dtype is not None and dtype not in t.dtypes:
            hint = {"zt-v1.0": " (ztensor 1.0.1 rejects the whole file on an unknown dtype)"}.get(t.key, "")
            alt = ", ".join(k for k, other in rules.TARGETS.items() if dtype in other.dtypes and k != t.key)
            raise _refuse(f"{t.label} has no {dtype} dtype{hint}, needed by tensor {dt.name!r}; "
                          + (f"formats that hold it: {alt}" if alt else "no writable format holds it"), dt.name)


def _settings(t: rules.Target, dt: DocTensor, dc: DocComponent | None) -> tuple[str, int | None, str | None, bool]:
    """(encoding, level, digest, reencode) for the target; inherited settings it cannot hold fall back."""
    if dc is None:
        return "raw", None, None, False
    encoding, digest = dc.encoding, dc.digest
    inherited_encoding = encoding == dc.original.encoding and not dc.reencode
    if t.key == "zt-v2" and inherited_encoding:
        # canonical form is raw; a v1 zstd stream is not seekable. A v2 part keeps its encoding.
        encoding = "zstd" if encoding in V2_ENCODINGS else "raw"
    if encoding not in t.encodings:
        if not inherited_encoding:
            rules.check_encoding(t, dt.name, encoding, dc.level)
        encoding = "raw"
    if digest not in (KEEP, None) and digest not in t.digests:
        rules.check_digest(t, dt.name, digest)
    if t.key == "zt-v2":  # the writer settles KEEP: xxh3 unless the part keeps a v2 sha256 digest
        return encoding, dc.level if encoding == "zstd" else None, digest, dc.reencode
    if not t.digests:
        digest = None
    elif digest == KEEP and dc.original.digest is not None and _algorithm(dc.original.digest) not in t.digests:
        digest = min(t.digests)  # e.g. sha256 into v0.1, whose reader verifies crc32c only
    return encoding, dc.level if encoding == "zstd" else None, digest, dc.reencode


def _component(t: rules.Target, dt: DocTensor, role: str, dtype: str | None, data: BlobData, key: SortKey,
               dc: DocComponent | None) -> PlannedComponent:
    encoding, level, digest, reencode = _settings(t, dt, dc)
    if digest == KEEP and data.stored() is None and t.key != "zt-v2":
        digest = None if dc is None else _algorithm(dc.original.digest)
    return PlannedComponent(role, dtype, data, encoding, level, digest, reencode, key)


def _algorithm(digest: str | None) -> str | None:
    algorithm = (digest or "").partition(":")[0]
    return algorithm if algorithm in ("crc32c", "sha256") else None


def _component_dtype(o: Tensor, c: Component, layout: str, elements: str) -> str | None:
    """The component's logical dtype; ``elements`` is the tensor's (:func:`logical`)."""
    if layout in SPARSE:
        return "uint64" if c.role in ("indices", "indptr", "coords") else elements
    if layout in ("dense", "tensor_train"):
        return elements
    type_name = (c.extra or {}).get("type")
    if type_name is not None:
        return ZT_LOGICAL_TYPES[type_name][0] if type_name in ZT_LOGICAL_TYPES else None
    return c.dtype or (c.extra or {}).get("dtype") or o.dtype


def _file_components(tf: TensorFile, t: rules.Target, dt: DocTensor, index: int, layout: str,
                     elements: str) -> dict[str, PlannedComponent]:
    o = dt.original
    out = {}
    for role, c in o.components.items():
        key = (c.offset, int(c.length > 0), index, ROLE_ORDER.get(role, 3), _core_index(role), role)
        data: BlobData = FileBlob(tf, o, c)
        dtype = _component_dtype(o, c, layout, elements)
        if dtype == "uint64" and c.dtype not in (None, "uint64") and t.key != "zt-v2":
            data = WidenedBlob(data, c.dtype, dtype)  # v2 u32 sparse indices into a format with u64 only
        out[role] = _component(t, dt, role, dtype, data, key, dt.components.get(role))
    return out


def _core_index(role: str) -> int:
    return int(role[5:]) if role.startswith("core_") and role[5:].isdigit() else -1


def _unpack_crate(tf: TensorFile, t: rules.Target, dt: DocTensor, key: SortKey) -> dict[str, PlannedComponent]:
    """The v0.1 crate's packed sparse blob as separate values / index components."""
    from ..sparse import SparseCSR, load_sparse

    o = dt.original
    sparse = load_sparse(tf, o)
    values = _le(sparse.values)
    if isinstance(sparse, SparseCSR):
        parts = {"values": values, "indices": _le(sparse.indices), "indptr": _le(sparse.indptr)}
    else:
        parts = {"values": values, "coords": _le(np.ascontiguousarray(sparse.coords))}
    dc = _first(dt)
    return {role: _component(t, dt, role, logical(o) if role == "values" else "uint64",
                             MemoryBlob(arr, arr.dtype.itemsize), key[:3] + (ROLE_ORDER[role],), dc)
            for role, arr in parts.items()}


def _le(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))


def _dense_blob(tf: TensorFile, o: Tensor) -> MemoryBlob:
    from ..dense import to_dense

    info = DTYPES[o.dtype]
    array = to_dense(tf, o, raw_bits=True, mapped=True)  # raw data: read once, while the blob is written
    if info.kind == "bool":
        bits = (np.asarray(array) != 0).astype(np.uint8)
    else:
        bits = np.ascontiguousarray(array).astype(info.storage_dtype, copy=False)
    return MemoryBlob(bits, info.itemsize)


def _ranks(o: Tensor, dt: DocTensor) -> list[int]:
    ranks = o.extra.get("ranks") or dt.attributes.get("ranks")
    if not isinstance(ranks, (list, tuple)) or len(ranks) != len(o.shape) + 1 or \
            not all(type(r) is int and r > 0 for r in ranks):
        raise CodecError(f"tensor train {dt.name!r} has no valid ranks (got {ranks!r:.60}); expected "
                         f"{len(o.shape) + 1} positive integers", rule="tensor_train ranks", tensor=dt.name)
    return [int(r) for r in ranks]
