"""Writers for every format ztviewer saves: zTensor v2, v1.0, v0.1 and the v1.x objects layout, safetensors and
BLZ1. Each takes a :class:`~.plan.FilePlan` (built from an :class:`~.document.EditableDocument`) and an
:class:`~.output.Output`, and goes through explicit phases (:mod:`.phases`).

Most callers want :func:`ztviewer.codec.save.save` or :func:`ztviewer.codec.convert.convert`, which add
the temporary-file-and-rename safety around these.
"""
from __future__ import annotations

from .blz import BlzWriter
from .output import Output
from .phases import Phase, PhasedWriter
from .plan import FilePlan, build_plan
from .safetensors import SafetensorsWriter
from .targets import TARGETS, Target, target, target_of
from .zt_objects import ZtObjectsWriter
from .zt_v01 import ZtV01Writer
from .zt_v2 import ZtV2Writer
from .zt_v10 import ZtV10Writer

WRITERS: dict[str, type[PhasedWriter]] = {
    "zt-v2": ZtV2Writer,
    "zt-v1.0": ZtV10Writer,
    "zt-v0.1": ZtV01Writer,
    "zt-objects": ZtObjectsWriter,
    "safetensors": SafetensorsWriter,
    "blz": BlzWriter,
}


def writer_for(plan: FilePlan, out: Output) -> PhasedWriter:
    """A fresh writer (phase EMPTY) for the plan's target."""
    return WRITERS[plan.target.key](out, plan)


def write_plan(plan: FilePlan, out: Output) -> None:
    """Write the whole plan through every phase."""
    writer = writer_for(plan, out)
    writer.write()


__all__ = [
    "TARGETS",
    "WRITERS",
    "FilePlan",
    "Output",
    "Phase",
    "Target",
    "build_plan",
    "target",
    "target_of",
    "write_plan",
    "writer_for",
]
