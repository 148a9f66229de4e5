"""What Save As will write: the document prepared for a target, checked without writing anything.

:func:`plan_save` runs the same checks the save runs (:func:`~ztviewer.codec.writers.build_plan`) on a copy
of the document, so the dialog can show a refusal as the user changes options. Densified tensors are not
decoded for the check (that is the save's work): their dtype is checked against the target instead.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ztviewer.codec.convert import Compression, prepare
from ztviewer.codec.errors import CodecError
from ztviewer.codec.registry import default_targets, target_extensions
from ztviewer.codec.writers import build_plan
from ztviewer.codec.writers.document import EditableDocument
from ztviewer.codec.writers.plan import SPARSE, logical
from ztviewer.codec.writers.targets import TARGETS

from .formatting import plural

#: the extension of each target's files, and the targets in the order offered (from the format registry)
EXTENSIONS = target_extensions()
FORMAT_CHOICES = [(key, TARGETS[key].label) for key in EXTENSIONS]
#: the target an output name's extension chooses when the chosen one does not fit it (``.zt``: zTensor v2)
EXTENSION_DEFAULTS = default_targets()


@dataclass
class SaveOptions:
    target: str
    compress: Compression = None       # None keeps each component's encoding, "raw", or ("zstd", level)
    digest: str | None = None          # None keeps digests, "none", "crc32c", "sha256", "xxh3" (v2)
    densify: bool = False


@dataclass
class Verdict:
    """The prepared document (None when refused), the refusal, and notes on what changes."""

    doc: EditableDocument | None
    refusal: str = ""
    notes: tuple[str, ...] = ()


def plan_save(doc: EditableDocument, options: SaveOptions) -> Verdict:
    try:
        prepared = prepare(doc.with_target(options.target), compress=options.compress, digest=options.digest,
                           densify=options.densify)
        probe = prepared
        if options.densify and options.target != "blz":
            probe = prepared.with_target(options.target)
            for dt in [t for t in probe.tensors if t.layout in SPARSE + ("tensor_train",)]:
                if logical(dt.original) not in probe.target.dtypes:
                    return Verdict(None, f"{probe.target.label} has no {logical(dt.original)} dtype, needed by "
                                         f"tensor {dt.name!r}; delete the tensor or choose zTensor v1.0")
                probe.tensors.remove(dt)
        warnings = build_plan(probe).warnings
    except CodecError as exc:
        return Verdict(None, exc.message)
    return Verdict(prepared, "", tuple(_notes(doc, prepared, options)) + tuple(f"{text[0].upper()}{text[1:]}."
                                                                              for text in warnings))


def _notes(doc: EditableDocument, prepared: EditableDocument, options: SaveOptions) -> list[str]:
    t = prepared.target
    notes = []
    had_digests = any(c.original.digest for dt in doc.tensors for c in dt.components.values())
    if had_digests and not t.digests and options.digest in (None, "none"):
        notes.append(f"{t.label} stores no digests: the recorded digests are dropped.")
    if options.densify:
        count = sum(1 for dt in doc.tensors if dt.layout in SPARSE + ("tensor_train",))
        if count:
            notes.append(f"{plural(count, 'sparse / tensor-train tensor')} will be stored dense.")
    if t.key != doc.target.key:
        notes.append(f"Converts {doc.target.label} to {t.label}.")
    return notes


def with_extension(path: str, target: str) -> str:
    """``path`` with the target's extension when it has one of the known ones (or none)."""
    root, ext = os.path.splitext(path)
    if ext.lower() in set(EXTENSIONS.values()) or not ext:
        return root + EXTENSIONS[target]
    return path
