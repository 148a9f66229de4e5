"""The tensor entries of a safetensors header: validation, byte-buffer coverage and model building.

Two paths produce the same tensors. :func:`~.safetensors_columns.plain_header` (a header decoded into dicts,
by orjson when installed) and :func:`fast_tensors` (decoded into tuples of pairs) do the fewest checks that
prove the entries sound and give up (``None``) at the first one they cannot prove; :func:`checked_tensors`
then walks every entry and says exactly what is wrong where. Files of the reference writer never leave the fast path,
so a 10,000-tensor header costs the JSON decoding plus building the model objects.

Offsets in the header are relative to the byte buffer; every :class:`Component` and :class:`Problem` here
carries the absolute file offset (``base + begin`` with ``base = 8 + header length``).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from ..dtypes import DTYPES, SAFETENSORS_TO_CANONICAL
from ..huge_int import HugeInt
from ..model import Component, Problem, Tensor, dense_tensor, error, warning
from ..plain_columns import MAX_RANK, U64_MAX

ENTRY_KEYS = ("dtype", "shape", "data_offsets")
RULE_DTYPE = "dtype must be one of the safetensors dtypes"
RULE_SHAPE = "shape is a list of non-negative integers"
RULE_OFFSETS = "data_offsets is [BEGIN, END] with BEGIN <= END inside the byte buffer"
RULE_SIZE = "END - BEGIN == product(shape) * dtype size"
RULE_INVALID_OFFSET = "invalid offset: tensors are contiguous, with no holes and no overlap"
RULE_COVERED = "file not fully covered: the tensors exactly fill the byte buffer"

_KNOWN = ", ".join(sorted(SAFETENSORS_TO_CANONICAL))
DTYPE_INFO = {st: (canon, DTYPES[canon].itemsize) for st, canon in SAFETENSORS_TO_CANONICAL.items()}
_first = itemgetter(0)

#: Locates a tensor's entry in the header: name → absolute byte offset of its key, or None.
Locate = Callable[[str], "int | None"]


@dataclass(slots=True)
class Entry:
    """One checked header entry, before the buffer-wide coverage check."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int | None = None
    end: int | None = None
    problems: list[Problem] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------- fast path

def fast_tensors(entries: Sequence[tuple[str, Any]], base: int, buffer_len: int) -> list[Tensor] | None:
    """Tensors for a header whose entries are all well formed, in buffer order, and exactly cover the buffer.

    ``entries`` are ``(name, value)`` pairs, JSON objects decoded as tuples of pairs. Returns ``None`` at the
    first entry that is unusual in any way (the checked path then says what); nothing is reported here.
    """
    dense = dense_tensor
    lookup = DTYPE_INFO.get
    tensors: list[Tensor] = []
    append = tensors.append
    covered = 0
    try:
        for index, (name, ((k1, raw_dtype), (k2, shape), (k3, (begin, end)))) in enumerate(entries):
            info = lookup(raw_dtype)
            if (info is None or k1 != "dtype" or k2 != "shape" or k3 != "data_offsets" or type(shape) is not list
                    or len(shape) > MAX_RANK or type(begin) is not int or type(end) is not int
                    or begin != covered):
                return None
            dtype, nbytes = info
            bits = 0
            for dim in shape:
                if type(dim) is not int:
                    return None
                bits |= dim
                nbytes *= dim
            length = end - begin
            if nbytes != length or bits >> 64:  # a negative dimension, or one past u64 in an empty tensor
                return None
            covered = end
            append(dense(name, dtype, tuple(shape), index, base + begin, length))
    except (TypeError, ValueError):  # an entry of another shape than name: {dtype, shape, [begin, end]}
        return None
    return tensors if covered == buffer_len else None


# ----------------------------------------------------------------------------------------- checked path

def checked_tensors(entries: Sequence[tuple[str, Any]], base: int, buffer_len: int, file_problems: list[Problem],
                    locate: Locate) -> list[Tensor]:
    """Every entry as a tensor, each problem attached to its tensor (or to the file for coverage)."""
    checked = [check_entry(name, value, base, buffer_len, locate) for name, value in entries]
    check_coverage(checked, base, buffer_len, file_problems)
    return [_tensor(entry, index, base) for index, entry in enumerate(checked)]


def _tensor(entry: Entry, index: int, base: int) -> Tensor:
    components = {}
    if entry.begin is not None and entry.end is not None:
        components["data"] = Component("data", base + entry.begin, entry.end - entry.begin, dtype=entry.dtype)
    return Tensor(entry.name, entry.dtype, entry.shape, components=components, problems=entry.problems,
                  index=index, extra=entry.extra)


def check_entry(name: str, value: Any, base: int, buffer_len: int, locate: Locate) -> Entry:
    """Check one ``name: {dtype, shape, data_offsets}`` entry on its own (coverage comes later)."""
    entry = Entry(name, "unknown", ())
    if type(value) is not tuple:
        _report(entry, error, f"the entry must be a JSON object with {', '.join(ENTRY_KEYS)}, got "
                f"{json_type(value)}", "each tensor entry is an object", locate(name))
        return entry
    info = dict(value)
    if len(info) != len(value):
        repeated = sorted(k for k, n in Counter(map(_first, value)).items() if n > 1)
        _report(entry, error, f"the entry repeats key(s) {', '.join(map(repr, repeated))}; the last value "
                "is used", "no duplicate keys", locate(name))
    unknown = sorted(info.keys() - set(ENTRY_KEYS))
    for key in unknown:
        _report(entry, warning, f"unknown key {key!r} in the entry is ignored (as the reference reader does)",
                "entry keys are dtype, shape, data_offsets", locate(name))
    if unknown:
        entry.extra["unknown_keys"] = {key: info[key] for key in unknown}  # a save names what it drops
    itemsize = _check_dtype(entry, info, locate)
    shape_ok = _check_shape(entry, info, locate)
    _check_offsets(entry, info, base, buffer_len, locate)
    if itemsize is not None and shape_ok and "data_offsets" in info:
        _check_size(entry, itemsize, base, locate)
    return entry


def _report(entry: Entry, severity: Callable[..., Problem], message: str, rule: str, offset: int | None) -> None:
    entry.problems.append(severity(message, rule=rule, tensor=entry.name, offset=offset))


def _check_dtype(entry: Entry, info: dict[str, Any], locate: Locate) -> int | None:
    if "dtype" not in info:
        _report(entry, error, "missing required key 'dtype'", RULE_DTYPE, locate(entry.name))
        return None
    raw = info["dtype"]
    if type(raw) is not str:
        _report(entry, error, f"'dtype' must be a string, got {json_type(raw)}", RULE_DTYPE, locate(entry.name))
        return None
    canonical = SAFETENSORS_TO_CANONICAL.get(raw)
    if canonical is not None:
        entry.dtype = canonical
        return DTYPE_INFO[raw][1]
    entry.dtype = raw
    hint = (f"; did you mean {raw.upper()!r}? dtype names are upper-case"
            if raw.upper() in SAFETENSORS_TO_CANONICAL else "")
    _report(entry, error, f"unknown dtype {raw!r}{hint} (known: {_KNOWN})", RULE_DTYPE, locate(entry.name))
    return None


def _check_shape(entry: Entry, info: dict[str, Any], locate: Locate) -> bool:
    if "shape" not in info:
        _report(entry, error, "missing required key 'shape'", RULE_SHAPE, locate(entry.name))
        return False
    raw = info["shape"]
    if type(raw) is not list:
        _report(entry, error, f"'shape' must be a list of integers, got {json_type(raw)}", RULE_SHAPE,
                locate(entry.name))
        return False
    bad = [f"dimension {axis} is {dim!r:.30}" for axis, dim in enumerate(raw)
           if type(dim) is not int or not 0 <= dim <= U64_MAX]
    if not bad:
        entry.shape = tuple(raw)
        return True
    entry.extra["declared_shape"] = raw
    _report(entry, error, f"invalid shape {_short(raw)}: {'; '.join(bad[:4])}"
            f"{' …' if len(bad) > 4 else ''}; dimensions must be non-negative integers", RULE_SHAPE,
            locate(entry.name))
    return False


def _check_offsets(entry: Entry, info: dict[str, Any], base: int, buffer_len: int, locate: Locate) -> None:
    if "data_offsets" not in info:
        _report(entry, error, "missing required key 'data_offsets'", RULE_OFFSETS, locate(entry.name))
        return
    raw = info["data_offsets"]
    if type(raw) is not list or len(raw) != 2 or not all(type(x) is int for x in raw):
        _report(entry, error, f"'data_offsets' must be a list of two integers [BEGIN, END], got {_short(raw)}",
                RULE_OFFSETS, locate(entry.name))
        return
    begin, end = raw
    if begin < 0 or end < 0:
        _report(entry, error, f"data_offsets {raw} has a negative offset", RULE_OFFSETS, locate(entry.name))
        return
    if begin > end:
        _report(entry, error, f"data_offsets [{begin}, {end}] are reversed (END < BEGIN): the data would run "
                f"from byte {base + begin} back to byte {base + end}", RULE_INVALID_OFFSET, base + begin)
        return
    entry.begin, entry.end = begin, end
    if end > buffer_len:
        size = base + buffer_len
        _report(entry, error, f"data [{base + begin}, {base + end}) ends {base + end - size} bytes past the end "
                f"of the file ({size} bytes)", RULE_OFFSETS, base + begin)


def _check_size(entry: Entry, itemsize: int, base: int, locate: Locate) -> None:
    nbytes = 0 if 0 in entry.shape else itemsize
    for dim in entry.shape:
        nbytes *= dim
        if nbytes > U64_MAX:
            _report(entry, error, f"shape {list(entry.shape)} × {itemsize}-byte elements overflows 64 bits "
                    "(the reference reader rejects it)", "shape product must not overflow", locate(entry.name))
            return
    if entry.begin is None or entry.end is None:
        return
    span = entry.end - entry.begin
    if nbytes != span:
        _report(entry, error, f"shape {list(entry.shape)} of {entry.dtype} needs {nbytes} bytes but "
                f"data_offsets [{entry.begin}, {entry.end}] span {span} bytes", RULE_SIZE, base + entry.begin)


def check_coverage(checked: list[Entry], base: int, buffer_len: int, file_problems: list[Problem]) -> None:
    """Sorted by BEGIN, the entries must tile the buffer from 0 to its end (the reference's validate)."""
    spans = sorted((e.begin, e.end, i) for i, e in enumerate(checked) if e.begin is not None and e.end is not None)
    covered, holder = 0, None
    for begin, end, index in spans:
        entry = checked[index]
        if begin > covered:
            after = "the start of the buffer" if holder is None else f"the end of tensor {holder!r}"
            _report(entry, error, f"hole: bytes [{base + covered}, {base + begin}) between {after} and this "
                    "tensor belong to no tensor", RULE_INVALID_OFFSET, base + covered)
        elif begin < covered:
            _report(entry, error, f"data [{base + begin}, {base + end}) overlaps tensor {holder!r}, which ends "
                    f"at byte {base + covered}", RULE_INVALID_OFFSET, base + begin)
        if end > covered or holder is None:
            covered, holder = max(covered, end), entry.name
    size = base + buffer_len
    if covered < buffer_len:
        file_problems.append(error(f"{buffer_len - covered} trailing bytes [{base + covered}, {size}) belong to "
                                   "no tensor", rule=RULE_COVERED, offset=base + covered))
    elif covered > buffer_len:
        file_problems.append(error(f"the tensors need the byte buffer to end at byte {base + covered}, but the "
                                   f"file ends at byte {size} ({covered - buffer_len} bytes missing)",
                                   rule=RULE_COVERED, offset=size))


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type (objects are decoded as tuples of pairs)."""
    if value is None:
        return "null"
    return {tuple: "object", list: "array", str: "string", bool: "boolean", int: "integer", HugeInt: "integer",
            float: "number"}.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
