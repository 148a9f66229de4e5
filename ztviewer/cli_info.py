"""``info``: a file's tensors, components, attributes and problems, as text or JSON, streamed tensor by tensor.

Nothing here holds the whole description of a file: a million-tensor file is written as it is walked, and
the tensors a lazy table builds for it are not kept (:func:`~ztviewer.codec.tensor_queries.transient_slice`), so
the output costs about what listing the model costs. Every name, key and value a file holds goes through
:func:`~ztviewer.codec.text.printable` / :func:`~ztviewer.codec.text.value_text` before it reaches a
terminal, and through :func:`~ztviewer.codec.text.json_safe` into JSON (valid, UTF-8 encodable, no raw
control characters), whatever the file holds.
"""
from __future__ import annotations

import gc
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from .codec.decode_rules import per_file_budget
from .codec.huge_int import HugeInt
from .codec.model import Problem, Tensor, TensorFile
from .codec.registry import spec_of
from .codec.tensor_queries import transient_slice
from .codec.text import json_safe, printable, value_text

_BATCH = 2000  # tensors per write


def jsonable(value: Any) -> Any:
    """A decoded value as plain JSON data, map keys as text. What JSON has no value for becomes a one-key object
    naming its kind, so it cannot be taken for a string the file holds: bytes ``{"bytes_hex": "00ff"}``, huge
    integers ``{"integer_hex": …}`` / ``{"integer_decimal": …}``, NaN and infinities ``{"float": "nan"}`` (``"inf"``,
    ``"-inf"``)."""
    if isinstance(value, dict):
        return {_key_text(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return {"bytes_hex": bytes(value).hex()}
    if isinstance(value, HugeInt):
        return value.as_json()
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": float_name(value)}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return value_text(value)


def float_name(value: float) -> str:
    """``nan``, ``inf`` or ``-inf`` for a float JSON cannot hold."""
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def _key_text(key: Any) -> str:
    return key if isinstance(key, str) else value_text(key)


def problem_json(problem: Problem) -> dict[str, Any]:
    return {"severity": problem.severity.value, "message": problem.message, "rule": problem.rule,
            "tensor": problem.tensor, "component": problem.component, "offset": problem.offset}


def tensor_entry(tf: TensorFile, t: Tensor, with_hash: bool) -> dict[str, Any]:
    """One tensor of the ``info --json`` document (containers a tensor never had are not created)."""
    attributes, problems = t._attributes, t._problems
    entry: dict[str, Any] = {
        "name": t.name, "dtype": t.dtype, "shape": list(t.shape), "layout": t.layout,
        "layout_spelling": t.layout_spelling, "index": t.index,
        "attributes": jsonable(attributes) if attributes else {},
        "components": [
            {"role": c.role, "offset": c.offset, "length": c.length, "encoding": c.encoding,
             "digest": c.digest, "dtype": c.dtype, "byte_order": c.byte_order,
             "uncompressed_length": c.uncompressed_length}
            for c in t.components.values()
        ],
        "problems": [problem_json(p) for p in problems] if problems else [],
    }
    if t.shard is not None:
        entry["shard"] = t.shard
    if (spec := spec_of(tf)) is not None and spec.tensor_content_digest is not None:
        entry["content_digest"] = spec.digest_of_tensor(t)
    if with_hash:
        _add_hash(tf, t, entry)
    return entry


def _add_hash(tf: TensorFile, t: Tensor, entry: dict[str, Any]) -> None:
    from .codec.content_hash import content_sha256
    from .codec.errors import CodecError

    entry["sha256"] = None
    if t.has_errors:
        return
    try:
        entry["sha256"] = content_sha256(tf, t)
    except CodecError as exc:
        entry["hash_error"] = str(exc)
    except MemoryError:
        entry["hash_error"] = f"tensor {t.name!r}: not enough memory to hash it"


def file_head(tf: TensorFile) -> dict[str, Any]:
    head = {"path": tf.path, "format": tf.format, "variant": tf.variant, "readable": tf.readable, "size": tf.size,
            "attributes": jsonable(tf.attributes), "extra": jsonable(_public(tf.extra))}
    if (spec := spec_of(tf)) is not None and spec.has_content_digest:
        head["content_digest"] = spec.digest_of_file(tf)
    return head


def _public(extra: dict[str, Any]) -> dict[str, Any]:
    """The format fields worth showing: not private ones, nor the content ids the v2 reader caches there (shown
    as the file's ``content id``)."""
    return {k: v for k, v in extra.items() if not (isinstance(k, str) and k.startswith(("_", "content_digest:")))}


def describe(tf: TensorFile, with_hash: bool = False) -> dict[str, Any]:
    """The whole ``info --json`` document as one dict (small files, tests; the CLI streams it)."""
    doc = file_head(tf)
    digest = doc.pop("content_digest", _ABSENT)
    doc["tensors"] = [tensor_entry(tf, t, with_hash) for t in tf.tensors]
    doc["problems"] = [problem_json(p) for p in tf.problems]
    if digest is not _ABSENT:
        doc["content_digest"] = digest
    return doc


_ABSENT = object()


_ENCODE = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def _dumps(value: Any) -> str:
    return json_safe(_ENCODE(value))


def write_json(tf: TensorFile, out: IO[str], with_hash: bool) -> None:
    """The ``info --json`` document, one tensor per line, written as the tensors are walked (hashes decode
    within one per-file budget, :func:`~ztviewer.codec.decode_rules.per_file_budget`)."""
    with per_file_budget(), _collector_paused():
        _write_json(tf, out, with_hash)


def _write_json(tf: TensorFile, out: IO[str], with_hash: bool) -> None:
    head = file_head(tf)
    out.write("{\n" + "".join(f"{_dumps(k)}: {_dumps(v)},\n" for k, v in head.items()) + '"tensors": [')
    for first, batch in _batches(tf, with_hash):
        out.write(json_safe(("\n" if first else ",\n") + ",\n".join(map(_ENCODE, batch))))
    out.write(f'\n],\n"problems": {_dumps([problem_json(p) for p in tf.problems])}\n}}\n')


def _batches(tf: TensorFile, with_hash: bool) -> Iterator[tuple[bool, list[dict[str, Any]]]]:
    tensors = tf.tensors
    for start in range(0, len(tensors), _BATCH):
        yield start == 0, [tensor_entry(tf, t, with_hash) for t in transient_slice(tensors, start, start + _BATCH)]


def format_size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(n)


def write_text(tf: TensorFile, out: IO[str], with_hash: bool) -> None:
    """The human-readable ``info``: every line printable (no terminal escapes, no surrogates)."""
    with per_file_budget(), _collector_paused():
        _write_text(tf, out, with_hash)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Short-lived dicts by the million: reference counting frees them; the cyclic collector would only
    rescan the open file's model over and over."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _write_text(tf: TensorFile, out: IO[str], with_hash: bool) -> None:
    lines = [f"{tf.path}: {tf.kind}, {format_size(tf.size)}"]
    if (spec := spec_of(tf)) is not None and spec.has_content_digest:
        lines.append(f"  content id: {spec.digest_of_file(tf) or 'undefined (a part has no digest)'}")
    for key, value in _public(tf.extra).items():
        if key == "shards" and isinstance(value, list):
            lines.append(f"  shards: {len(value)}")
            for s in value:
                fields = ", ".join(f"{k} {_field(v)}" for k, v in s.items() if k not in ("name", "path"))
                lines.append(f"    {printable(str(s.get('name')))}: {fields}")
            continue
        lines.append(f"  {printable(str(key))}: {_field(value)}")
    if tf.attributes:
        lines.append("attributes:")
        lines += [f"  {_key(key)}: {_shown(value)}" for key, value in tf.attributes.items()]
    lines.append(f"tensors: {len(tf.tensors)}")
    out.write("\n".join(map(printable, lines)) + "\n")
    problems = list(tf.problems)
    for start in range(0, len(tf.tensors), _BATCH):
        lines = []
        for t in transient_slice(tf.tensors, start, start + _BATCH):
            lines += _tensor_lines(tf, t, with_hash)
            if t._problems:
                problems += t._problems
        out.write("\n".join(lines) + "\n")
    if problems:
        out.write("\n".join(printable(str(p)) for p in problems) + "\n")


def _tensor_lines(tf: TensorFile, t: Tensor, with_hash: bool) -> list[str]:
    shape = "×".join(map(value_text, t.shape)) or "scalar"
    layout = "" if t.layout == "dense" else f" {t.layout}"
    line = f"  {printable(t.name)}  {printable(t.dtype)} [{shape}]{printable(layout)}"
    if with_hash:
        entry: dict[str, Any] = {}
        _add_hash(tf, t, entry)
        line += f"  sha256={entry['sha256']}"
    if t.shard is not None:
        line += f"  (shard {printable(t.shard)})"
    lines = [line]
    if (spec := spec_of(tf)) is not None and (digest := spec.digest_of_tensor(t)):
        lines.append(f"    content id: {printable(str(digest))}")
    for c in t.components.values():
        extras = [c.encoding] + ([c.digest] if c.digest else [])
        lines.append(printable(f"    {c.role}: @{c.offset} +{c.length} ({', '.join(extras)})"))
    lines += [f"    attr {_key(key)} = {_shown(value)}" for key, value in t.attributes.items()]
    return lines


def _key(key: Any) -> str:
    return printable(key) if isinstance(key, str) else value_text(key)


def _shown(value: Any) -> str:
    """An attribute or format field as JSON text, printable."""
    return printable(json.dumps(jsonable(value), ensure_ascii=False))


def _field(value: Any) -> str:
    return printable(value) if isinstance(value, str) else value_text(value)
