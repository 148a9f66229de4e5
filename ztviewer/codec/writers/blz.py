"""BLZ1 tensor-train files (specs/blz-v1.md, real-world-writers.md §5).

A 15-byte header (``BLZ1``, version 1, dtype tag 0 = f64 / 1 = complex128, ndim, 8 reserved zero bytes),
the shape as ndim u64, all ndim+1 ranks as u64 (first and last 1), then the cores ``core_0`` …
``core_{ndim-1}`` (each r[i] × shape[i] × r[i+1] elements, row-major, little-endian) back to back.

Phases: EMPTY → (:meth:`BlzWriter.write_header`) HEADER → (:meth:`write_cores`) BLOBS →
(:meth:`finish`) CLOSED.
"""
from __future__ import annotations

import struct

from ..dtypes import DTYPES
from ..errors import UnsupportedConversion
from .blobs import write_component
from .output import Output
from .phases import Phase, PhasedWriter
from .plan import FilePlan, PlannedTensor

DTYPE_TAGS = {"float64": 0, "complex128": 1}


def blz_header(dtype: str, shape: tuple[int, ...], ranks: list[int]) -> bytes:
    return (b"BLZ1" + bytes([1, DTYPE_TAGS[dtype], len(shape)]) + bytes(8)
            + struct.pack(f"<{len(shape)}Q", *shape) + struct.pack(f"<{len(ranks)}Q", *ranks))


def check_tensor_train(t: PlannedTensor) -> list[str]:
    """The core roles in order, after checking the train is one BLZ1 can store."""
    def refuse(why: str) -> UnsupportedConversion:
        return UnsupportedConversion(f"tensor train {t.name!r} cannot be written as BLZ1: {why}",
                                     rule="BLZ1 layout", tensor=t.name)

    ndim, ranks = len(t.shape), t.ranks or []
    if not 2 <= ndim <= 255:
        raise refuse(f"it has {ndim} dimensions, BLZ1 stores 2 to 255")
    if len(ranks) != ndim + 1 or ranks[0] != 1 or ranks[-1] != 1:
        raise refuse(f"its ranks {ranks} must be {ndim + 1} values starting and ending with 1")
    roles = [f"core_{i}" for i in range(ndim)]
    if sorted(t.components) != sorted(roles):
        raise refuse(f"its components are {sorted(t.components)}, expected {roles}")
    size = DTYPES[t.dtype].itemsize
    for i, role in enumerate(roles):
        data = t.components[role].data
        stored = data.stored()
        length = data.decoded_length() if stored is None or stored.encoding != "raw" else stored.length
        want = ranks[i] * t.shape[i] * ranks[i + 1] * size
        if length is not None and length != want:
            raise refuse(f"{role} holds {length} bytes, r[{i}] × shape[{i}] × r[{i + 1}] needs {want}")
    return roles


class BlzWriter(PhasedWriter):
    """Writes the single tensor-train tensor of a :class:`~.plan.FilePlan` as BLZ1."""

    format_name = "BLZ1"

    def __init__(self, out: Output, plan: FilePlan) -> None:
        super().__init__(out, plan)
        (self.tensor,) = plan.tensors
        self.roles: list[str] = []

    def write(self) -> None:
        self.write_header()
        self.write_cores()
        self.finish()

    def write_header(self) -> None:
        self._expect("write the header", Phase.EMPTY)
        t = self.tensor
        self.roles = check_tensor_train(t)
        header = blz_header(t.dtype, t.shape, list(t.ranks or []))
        self.out.expect(self.plan.work() + len(header))
        self.out.write(header)
        self._advance(Phase.HEADER)

    def write_cores(self) -> None:
        self._expect("write the cores", Phase.HEADER)
        self._advance(Phase.BLOBS)
        for role in self.roles:
            c = self.tensor.components[role]
            write_component(self.out, c.data, encoding="raw", digest=None, reencode=c.reencode)

    def finish(self) -> None:
        self._expect("finish", Phase.BLOBS)
        self._advance(Phase.CLOSED)
