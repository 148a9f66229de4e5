"""Small tensor files built by hand for GUI tests: real bytes on disk, a hand-made codec model over them.

The readers are written elsewhere; these files let the GUI be tested against exact, known byte ranges.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

import crc32c

from ztviewer.codec import Component, Problem, Region, Severity, Tensor, TensorFile
from ztviewer.codec.source import LocalFile

MAGIC = b"ZTVTEST\0"
ALIGN = 64


@dataclass
class Spec:
    name: str
    dtype: str = "float32"
    shape: tuple[int, ...] = (4,)
    parts: dict[str, bytes] = field(default_factory=dict)
    digest: str | None = "crc32c"     # None, "crc32c", "sha256" or a literal digest string
    encoding: str = "raw"
    layout: str = "dense"
    problems: list[Problem] = field(default_factory=list)


def _digest(kind: str | None, data: bytes) -> str | None:
    if kind is None:
        return None
    if kind == "crc32c":
        return f"crc32c:0x{crc32c.crc32c(data):08X}"
    if kind == "sha256":
        return "sha256:" + hashlib.sha256(data).hexdigest()
    return kind


def build_file(path: str | os.PathLike[str], specs: list[Spec],
               file_problems: list[Problem] | None = None) -> TensorFile:
    """Write magic, 64-aligned blobs with zero padding, a fake manifest and a footer; return the model."""
    out = bytearray(MAGIC)
    tensors = []
    for index, spec in enumerate(specs):
        parts = spec.parts or {"data": bytes(range(16))}
        components = {}
        for role, data in parts.items():
            out += bytes(-len(out) % ALIGN)
            components[role] = Component(role, len(out), len(data), encoding=spec.encoding,
                                         digest=_digest(spec.digest, data), dtype=spec.dtype)
            out += data
        tensors.append(Tensor(spec.name, spec.dtype, tuple(spec.shape), spec.layout, components,
                              problems=list(spec.problems), index=index))
    manifest_at = len(out)
    out += b'{"manifest": "synthetic"}'
    footer_at = len(out)
    out += (manifest_at).to_bytes(8, "little")
    with open(path, "wb") as f:
        f.write(out)
    regions = [Region("magic", 0, len(MAGIC), "magic"),
               Region("manifest", manifest_at, footer_at - manifest_at, "manifest"),
               Region("footer", footer_at, 8, "footer")]
    return TensorFile(os.fspath(path), "zt", "test", attributes={"producer": "tests"}, tensors=tensors,
                      problems=list(file_problems or []), regions=regions, source=LocalFile(path))


def float_bytes(n: int, start: float = 0.0) -> bytes:
    import numpy as np

    return (np.arange(n, dtype="<f4") + start).tobytes()


def sample_specs(count: int = 6) -> list[Spec]:
    """A mix: dense tensors with crc32c and sha256, one without digest, one sparse with three components."""
    specs = [Spec(f"model.layers.{i}.attn.q_proj.weight", shape=(2, 4), parts={"data": float_bytes(8, i)})
             for i in range(count - 3)]
    specs.append(Spec("model.embed.weight", "float32", (3, 5), {"data": float_bytes(15)}, digest="sha256"))
    specs.append(Spec("bias", "int8", (5,), {"data": b"\x01\x02\x03\x04\x05"}, digest=None))
    specs.append(Spec("sparse.csr", "float32", (3, 3), {"indptr": bytes(32), "indices": bytes(range(24)),
                                                         "values": float_bytes(3)}, layout="sparse_csr"))
    return specs


def warning(message: str, **where) -> Problem:
    return Problem(Severity.WARNING, message, **where)


def sample_safetensors(folder, name: str = "weights.safetensors") -> str:
    """A real safetensors file, written by the codec's writer, that the registered reader opens."""
    import numpy as np

    from ztviewer.codec.arrays import save_arrays

    path = os.path.join(folder, name)
    save_arrays(path, {
        "model.embed.weight": np.arange(24, dtype=np.float32).reshape(4, 6),
        "model.layers.0.attn.q_proj.weight": np.ones((8, 8), dtype=np.float16),
        "model.layers.0.attn.q_proj.bias": np.arange(8, dtype=np.int64),
        "lm_head.weight": np.linspace(0, 1, 30, dtype=np.float32).reshape(5, 6),
    }, "safetensors", attributes={"producer": "ztviewer tests"})
    return path
