"""Converting any readable file to zTensor v1.0, safetensors or BLZ1 (and back to zTensor v0.1 / objects).

Tensors keep their content: dense bytes are copied (or byte-swapped / decompressed / compressed as the
output needs), sparse tensors keep their components, and tensor trains their cores, so every tensor's
content hash is the same in both files. Compression streams component by component (bounded memory).
"""
from __future__ import annotations

import os
from typing import Literal

from .edit import EditableDocument, SetDigest, SetEncoding
from .errors import EditRefused, UnsupportedConversion
from .gc_pause import building_many
from .model import TensorFile
from .save import SaveResult, save
from .writers.blobs import KEEP
from .writers.output import CancelCheck, ProgressCallback
from .writers.targets import target
from .writers.zt_v2_rules import check_alignment

Compression = None | Literal["raw"] | tuple[str, int]


def convert(in_path: str | os.PathLike[str], out_path: str | os.PathLike[str], to: str = "zt", *,
            compress: Compression = None, digest: str | None = None, densify: bool = False,
            align: int | None = None, progress: ProgressCallback | None = None,
            cancelled: CancelCheck | None = None, skip_damaged: bool = False) -> SaveResult:
    """Write ``in_path`` (a file, or a sharded checkpoint / dataset as :func:`open_path` opens it) as ``to``
    (``zt`` = zTensor v1.0, ``zt-v2``, ``safetensors``, ``blz``, ``zt-v0.1``, ``zt-objects``) at ``out_path``,
    atomically.

    Parameters
    ----------
    compress:
        ``None`` keeps each component's encoding where the output can hold it (else raw; zTensor v2 output is
        raw, canonical form); ``"raw"``
        stores everything uncompressed; ``("zstd", level)`` compresses every component (tensor-train
        cores stay raw).
    digest:
        ``None`` keeps existing digests where the output can hold them (recomputed if the bytes change);
        ``"none"`` drops them; ``"crc32c"`` / ``"sha256"`` / ``"xxh3"`` (v2) records one for every component.
        zTensor v2 output gets an xxh3 digest on every part unless told otherwise (canonical form).
    densify:
        Turn sparse tensors and tensor trains into dense ones (needed for safetensors).
    align:
        zTensor v2 blob placement, a multiple of 4096; ``None`` is canonical form's 65536.
    skip_damaged:
        Leave damaged tensors out (listed in the result's ``skipped``) instead of refusing the conversion: a
        damaged tensor is never written as if it were sound (:func:`.save.save`).
    """
    if os.path.realpath(os.fspath(in_path)) == os.path.realpath(os.fspath(out_path)):
        raise EditRefused("the output would overwrite the input; use edit/save to rewrite a file in place",
                          rule="convert writes a new file")
    from .multifile import open_path

    tf = open_path(in_path)
    try:
        return convert_open(tf, out_path, to, compress=compress, digest=digest, densify=densify, align=align,
                            progress=progress, cancelled=cancelled, skip_damaged=skip_damaged)
    finally:
        tf.close()


def convert_open(tf: TensorFile, out_path: str | os.PathLike[str], to: str = "zt", *,
                 compress: Compression = None, digest: str | None = None, densify: bool = False,
                 align: int | None = None, progress: ProgressCallback | None = None,
                 cancelled: CancelCheck | None = None, skip_damaged: bool = False) -> SaveResult:
    """:func:`convert` for a file that is already open (it stays open)."""
    if not tf.readable:
        first = next(iter(tf.problems), None)
        raise UnsupportedConversion(f"{tf.path} cannot be read" + (f": {first.describe()}" if first else ""),
                                    rule="only readable files convert")
    with building_many():  # the document lives as long as the save (one object per tensor and component)
        doc = prepare(EditableDocument(tf, target(to)), compress=compress, digest=digest, densify=densify,
                      align=align)
    return save(doc, out_path, progress=progress, cancelled=cancelled, skip_damaged=skip_damaged)


def prepare(doc: EditableDocument, *, compress: Compression = None, digest: str | None = None,
            densify: bool = False, align: int | None = None) -> EditableDocument:
    """Apply conversion settings to a document (its target already set)."""
    if align is not None:
        if doc.target.key != "zt-v2":
            raise EditRefused(f"an alignment applies to zTensor v2 output only, not {doc.target.label}",
                              rule="alignment is a zTensor v2 writer option")
        check_alignment(align)
        doc.alignment = align
    if densify:
        for t in doc.tensors:
            t.densify = True
    if compress == "raw" or (compress is None and doc.target.key == "zt-v2"):
        SetEncoding("raw").apply(doc)  # zTensor v2: canonical form unless compression is asked for
    elif compress is not None:
        method, level = compress
        if method != "zstd":
            raise EditRefused(f"unknown compression {method!r}; use ('zstd', level) or 'raw'", rule="compression")
        SetEncoding("zstd", level).apply(doc)
    if digest is not None:
        SetDigest(None if digest == "none" else digest).apply(doc)
    return doc


__all__ = ["KEEP", "convert", "convert_open", "prepare"]
