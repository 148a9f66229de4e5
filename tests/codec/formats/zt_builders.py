"""Build zTensor files byte by byte for tests (struct.pack + cbor2.dumps), and open them in memory."""
from __future__ import annotations

import json
import struct
from typing import Any

import cbor2

from tests._corpus import CORPUS
from ztviewer.codec import registry
from ztviewer.codec.formats import zt, zt_v2  # noqa: F401  (registers the handlers)
from ztviewer.codec.model import Problem, TensorFile
from ztviewer.codec.source import InMemorySource

V01, V1 = b"ZTEN0001", b"ZTEN1000"


def zt_corpus_entries() -> list[dict]:
    """MANIFEST.json entries of the zTensor 0.1 / 1.x corpus files (empty when the corpus is absent)."""
    manifest = CORPUS / "MANIFEST.json"
    if not manifest.is_file():
        return []
    return [e for e in json.loads(manifest.read_text())["files"]
            if e["format"].startswith("ztensor-v") and e["format"] != "ztensor-v2"]


def zt_hostile_entries() -> list[dict]:
    """HOSTILE.json entries of the zTensor files (``zt*.zt``, ``empty.zt``, ``seven_bytes.zt``)."""
    path = CORPUS / "hostile" / "HOSTILE.json"
    if not path.is_file():
        return []
    return [e for e in json.loads(path.read_text())
            if e["file"].startswith("zt") or e["file"] in ("empty.zt", "seven_bytes.zt")]


def zt_bytes(magic: bytes, manifest: Any, blobs: dict[int, bytes] | None = None, *, objects: bool = False,
             manifest_at: int | None = None, fill: int = 0) -> bytes:
    """magic, blobs at absolute offsets, the manifest (a CBOR-encodable value or raw bytes), the footer."""
    buf = bytearray(magic)
    for offset, data in sorted((blobs or {}).items()):
        if len(buf) < offset:
            buf += bytes([fill]) * (offset - len(buf))
        buf[offset:offset + len(data)] = data
    if manifest_at is not None:
        buf += bytes(manifest_at - len(buf))
    body = manifest if isinstance(manifest, (bytes, bytearray)) else cbor2.dumps(manifest)
    buf += body + struct.pack("<Q", len(body))
    if objects:
        buf += V1
    return bytes(buf)


def open_bytes(data: bytes, name: str = "test.zt") -> TensorFile:
    return registry.read_source(InMemorySource(data, path=name))


def errors(tf: TensorFile) -> list[Problem]:
    return [p for p in tf.all_problems() if p.is_error]


def warnings(tf: TensorFile) -> list[Problem]:
    return [p for p in tf.all_problems() if not p.is_error]


def has_error(tf: TensorFile, *words: str) -> bool:
    """Some error mentions every word (in its message, tensor, component or offset)."""
    return any(all(w in p.describe() for w in words) for p in errors(tf))


def has_warning(tf: TensorFile, *words: str) -> bool:
    return any(all(w in p.describe() for w in words) for p in warnings(tf))


def dense_v10(dtype: str, shape: list, offset: int, length: int, **component: Any) -> dict:
    return {"dtype": dtype, "shape": shape, "format": "dense",
            "components": {"data": {"offset": offset, "length": length, **component}}}


def v01_entry(name: str, dtype: str, shape: list, offset: int, size: int, **more: Any) -> dict:
    return {"name": name, "offset": offset, "size": size, "dtype": dtype, "layout": "dense", "shape": shape,
            "encoding": "raw", **more}
