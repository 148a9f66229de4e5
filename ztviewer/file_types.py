"""The file types ztviewer opens and registers with the desktop, derived from the built-in format specs
(:data:`ztviewer.codec.formats.builtin.BUILTIN_FORMATS`) plus the tensor sets known by a file name.

Linux reads them through ``resources/linux/ztviewer-mime.xml`` and the ``.desktop`` entry, macOS through
``packaging/macos/document_types.py`` (the bundle's Info.plist), Windows through ``packaging/windows/ztviewer.iss``;
``scripts/file_associations.py`` writes the Linux and Windows files from this list and ``tests/test_packaging.py``
fails when they differ from what it would write. Windows and macOS associate by the last extension only, so the
sets named by a compound suffix or a file name (sharded checkpoint indexes, dataset manifests) are registered on
Linux alone, where MIME globs can name them. Formats added by plug-ins open in the window and the command line
but are not registered with the desktop (the installed files are fixed when ztviewer is installed).
"""
from __future__ import annotations

from collections.abc import Sequence

from .codec.format_spec import FileType, FormatSpec
from .codec.formats.builtin import BUILTIN_FORMATS


def format_types(specs: Sequence[FormatSpec] = BUILTIN_FORMATS) -> tuple[FileType, ...]:
    """One file type per desktop type of ``specs``."""
    types: dict[str, FileType] = {}
    for spec in specs:
        found = spec.desktop_type
        if found.key in types:  # formats sharing an extension (zTensor 1.x and v2) share one type
            known = types[found.key]
            types[found.key] = FileType(known.key, known.mime, known.description,
                                        tuple(dict.fromkeys(known.globs + found.globs)), known.extension,
                                        known.owner, known.magic + found.magic,
                                        max(known.magic_priority, found.magic_priority))
        else:
            types[found.key] = found
    return tuple(types.values())


#: tensor sets named by a file of their own (not a format: :mod:`ztviewer.codec.multifile` opens them)
SET_TYPES: tuple[FileType, ...] = (
    FileType("safetensors-index", "application/x-safetensors-index", "sharded safetensors checkpoint index",
             ("*.safetensors.index.json",), parent="application/json", glob_weight=60),
    FileType("safetensors-dataset", "application/x-safetensors-dataset", "safetensors dataset manifest",
             ("dataset_manifest.json",), parent="application/json", glob_weight=60),
)

FILE_TYPES: tuple[FileType, ...] = format_types() + SET_TYPES
MIME_TYPES: tuple[str, ...] = tuple(t.mime for t in FILE_TYPES)
EXTENSIONS: tuple[str, ...] = tuple(t.extension for t in FILE_TYPES if t.extension)


def open_filters() -> tuple[str, ...]:
    """The open dialog's filters: every tensor file first, then one per format (plug-ins included), then all."""
    from .codec.registry import formats

    by_type: dict[str, tuple[str, list[str]]] = {}
    for spec in formats():
        found = spec.desktop_type
        globs = by_type.setdefault(found.key, (found.description, []))[1]
        globs += [g for g in found.globs if g not in globs]
    every = [g for _, globs in by_type.values() for g in globs] + [g for t in SET_TYPES for g in t.globs]
    return (f"Tensor files ({' '.join(every)})",
            *(f"{label} ({' '.join(globs)})" for label, globs in by_type.values()),
            *(f"{t.description[0].upper()}{t.description[1:]} ({' '.join(t.globs)})" for t in SET_TYPES),
            "All files (*)")
