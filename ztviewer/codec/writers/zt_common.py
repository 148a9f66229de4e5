"""What the three zTensor layouts share: magic at 0, each blob zero-padded to a 64-byte boundary (the
padding is written *before* a blob, so a zero-tensor file has none and a trailing empty blob points at the
manifest), then the CBOR manifest and the footer.

Phases: EMPTY → (:meth:`ZtWriter.begin`) BLOBS → (:meth:`ZtWriter.add_component` …) →
(:meth:`ZtWriter.finish`) CLOSED.
"""
from __future__ import annotations

from typing import Any

from .blobs import Written, write_component
from .cbor import dumps
from .output import Output
from .phases import Phase, PhasedWriter
from .plan import FilePlan, PlannedComponent, PlannedTensor

ALIGNMENT = 64


class ZtWriter(PhasedWriter):
    """Base of the zTensor writers; subclasses build the manifest and the footer. Blobs go out in
    :meth:`FilePlan.blobs` order."""

    magic = b"ZTEN1000"
    keep_byte_order = False

    def __init__(self, out: Output, plan: FilePlan) -> None:
        super().__init__(out, plan)
        self.written: dict[tuple[int, str], Written] = {}

    def write(self) -> None:
        self.begin()
        for tensor, component in self.plan.blobs():
            self.add_component(tensor, component)
        self.finish()

    def begin(self) -> None:
        self._expect("write the magic", Phase.EMPTY)
        self.out.expect(self.plan.work())
        self.out.write(self.magic, work=0)
        self._advance(Phase.BLOBS)

    def add_component(self, tensor: PlannedTensor, component: PlannedComponent) -> Written:
        if self.phase is not Phase.BLOBS:  # the refusal names the component: spelled out only then
            self._expect(f"add component {tensor.name}.{component.role}", Phase.BLOBS)
        self.prepare(component)
        self.out.pad_to(ALIGNMENT)
        written = write_component(self.out, component.data, encoding=component.encoding, level=component.level,
                                  digest=component.digest, reencode=component.reencode,
                                  keep_byte_order=self.keep_byte_order)
        self.written[(id(tensor), component.role)] = written
        return written

    def prepare(self, component: PlannedComponent) -> None:
        """Hook run before a component is written."""

    def finish(self) -> None:
        self._expect("write the manifest", Phase.BLOBS)
        self._expect_all_written(lambda t, role: (id(t), role) in self.written, "component")
        self._advance(Phase.MANIFEST)
        manifest = dumps(self.manifest())
        self.out.write(manifest)
        self.out.write(self.footer(len(manifest)), work=0)
        self._advance(Phase.CLOSED)

    def result(self, tensor: PlannedTensor, role: str) -> Written:
        return self.written[(id(tensor), role)]

    def manifest(self) -> Any:
        raise NotImplementedError

    def footer(self, manifest_size: int) -> bytes:
        return manifest_size.to_bytes(8, "little")


def manifest_attributes(t: PlannedTensor) -> dict[str, Any]:
    """A tensor's attributes as the zTensor manifest stores them: a tensor train's ranks ride along."""
    attributes = dict(t.attributes)
    if t.ranks is not None:
        attributes["ranks"] = list(t.ranks)
    return attributes


def sorted_map(mapping: dict[str, Any]) -> dict[str, Any]:
    """Keys in bytewise order (Rust ``BTreeMap<String, _>``; code-point order equals UTF-8 byte order)."""
    return {k: mapping[k] for k in sorted(mapping)}
