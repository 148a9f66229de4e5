"""The file types ztviewer opens and registers with the desktop: one list for every platform.

Linux reads it through ``resources/linux/ztviewer-mime.xml`` and the ``.desktop`` entry, macOS through
``packaging/macos/document_types.py`` (the bundle's Info.plist), Windows through ``packaging/windows/ztviewer.iss``;
``tests/test_packaging.py`` holds each of them to this list. Windows and macOS associate by the last extension
only, so the sets named by a compound suffix or a file name (sharded checkpoint indexes, dataset manifests)
are registered on Linux alone, where MIME globs can name them.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileType:
    """One registered type: ``key`` names its Windows ProgID (``ztviewer.<key>``) and macOS UTI
    (``org.ztviewer.<key>``); ``extension`` is ``None`` for types known by a glob alone."""

    key: str
    mime: str
    description: str
    globs: tuple[str, ...]
    extension: str | None = None
    owner: bool = True  # macOS: ztviewer is the owner of the type (else one handler among several)


FILE_TYPES: tuple[FileType, ...] = (
    FileType("ztensor", "application/x-ztensor", "zTensor file", ("*.zt",), "zt"),
    FileType("safetensors", "application/x-safetensors", "safetensors file", ("*.safetensors",), "safetensors",
             owner=False),
    FileType("blz", "application/x-blz-tensor-train", "BLZ tensor-train file", ("*.blz",), "blz"),
    FileType("safetensors-index", "application/x-safetensors-index", "sharded safetensors checkpoint index",
             ("*.safetensors.index.json",)),
    FileType("safetensors-dataset", "application/x-safetensors-dataset", "safetensors dataset manifest",
             ("dataset_manifest.json",)),
)

MIME_TYPES: tuple[str, ...] = tuple(t.mime for t in FILE_TYPES)
EXTENSIONS: tuple[str, ...] = tuple(t.extension for t in FILE_TYPES if t.extension)
