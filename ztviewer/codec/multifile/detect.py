"""One entry point for every way a user names a tensor file or set: :func:`open_path`.

- a folder: its ``*.safetensors.index.json`` (a sharded checkpoint), else its ``dataset_manifest.json``
  (a safetensors-spark dataset), else its only ``.safetensors`` file; anything else is an error;
- a ``.json`` file: a checkpoint index or a dataset manifest, told apart by content;
- a shard that a sibling ``*.index.json`` maps: the whole checkpoint, with ``extra["opened_from"]``;
- any other file: :func:`ztviewer.codec.registry.open_file`.

The set readers are imported when a set is found: opening a single file (the usual case) loads none of them.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import CodecError, UnknownFormat
from ..model import TensorFile
from ..portable import open_regular
from ..registry import open_file

if TYPE_CHECKING:
    from .shards import CancelCheck, Progress

INDEX_SUFFIX = ".safetensors.index.json"     # a sharded checkpoint's index: model.safetensors.index.json
MANIFEST_NAME = "dataset_manifest.json"      # a safetensors-spark dataset's manifest
PREFERRED_INDEX = "model" + INDEX_SUFFIX
MAX_SNIFFED_INDEX = 64 << 20


def open_path(
    path: str | os.PathLike[str], progress: Progress | None = None, cancelled: CancelCheck | None = None,
) -> TensorFile:
    """Open a tensor file, a sharded checkpoint or a dataset folder, reading headers only.

    Parameters
    ----------
    path:
        A file, an index / manifest JSON file, or a folder holding a set.
    progress:
        Called as ``progress(done, total)`` while shards are read (``total`` = number of shards).
    cancelled:
        Polled between shards; when it returns true, :class:`~ztviewer.codec.errors.Cancelled` is raised
        and every shard opened so far is closed.

    Raises
    ------
    OSError
        The path does not exist or cannot be listed / read.
    CodecError
        A folder holds no recognisable set, or a ``.json`` file is neither an index nor a manifest.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        return _open_folder(path, progress, cancelled)
    if path.lower().endswith(".json"):
        return _open_json(path, progress, cancelled)
    index = _index_mapping(path)
    if index is not None:
        from .hf_sharded import read_hf_index

        checkpoint = read_hf_index(index, progress, cancelled)
        checkpoint.extra["opened_from"] = os.path.abspath(path)
        checkpoint.extra["note"] = (f"{os.path.basename(path)} is one shard of the checkpoint indexed by "
                                    f"{os.path.basename(index)}; the whole set is open")
        return checkpoint
    tf = open_file(path)
    manifest = os.path.join(os.path.dirname(os.path.abspath(path)), MANIFEST_NAME)
    if tf.format == "safetensors" and os.path.isfile(manifest):
        tf.extra["dataset_manifest"] = manifest
    return tf


def find_set(folder: str, names: list[str] | None = None) -> str | None:
    """The index or manifest file that makes ``folder`` a set, or ``None`` (``names``: its listing)."""
    names = sorted(os.listdir(folder)) if names is None else names
    indexes = [n for n in names if n.endswith(INDEX_SUFFIX) and os.path.isfile(os.path.join(folder, n))]
    if indexes:
        return os.path.join(folder, PREFERRED_INDEX if PREFERRED_INDEX in indexes else indexes[0])
    if MANIFEST_NAME in names and os.path.isfile(os.path.join(folder, MANIFEST_NAME)):
        return os.path.join(folder, MANIFEST_NAME)
    return None


def _open_folder(folder: str, progress: Progress | None, cancelled: CancelCheck | None) -> TensorFile:
    names = sorted(os.listdir(folder))
    found = find_set(folder, names)
    if found is not None:
        tf = _open_json(found, progress, cancelled)
        others = [n for n in names if n.endswith(INDEX_SUFFIX) and n != os.path.basename(found)]
        if others:
            tf.extra["other_indexes"] = others
        return tf
    singles = [n for n in names if n.endswith(".safetensors")]
    if len(singles) == 1:
        return open_file(os.path.join(folder, singles[0]))
    from .shards import sample_names

    seen = (f"; it has {len(singles)} .safetensors files ({sample_names(singles)}) but nothing tying them "
            "together") if singles else ""
    raise UnknownFormat(f"{folder} is a folder without a tensor set: no *{INDEX_SUFFIX} (sharded checkpoint) "
                        f"and no {MANIFEST_NAME} (safetensors-spark dataset){seen}",
                        rule="a folder opens through its index or manifest")


def _open_json(path: str, progress: Progress | None, cancelled: CancelCheck | None) -> TensorFile:
    from .hf_sharded import is_hf_index, read_hf_index
    from .shards import read_json
    from .spark_dataset import is_spark_manifest, read_spark_dataset

    try:
        doc = read_json(path)
    except CodecError:
        doc = None  # the reader chosen by name reports the parse error in context
    by_content = "hf" if is_hf_index(doc) else "spark" if is_spark_manifest(doc) else None
    if by_content == "hf" or (by_content is None and path.endswith(".index.json")):
        return read_hf_index(path, progress, cancelled, doc)
    if by_content == "spark" or (by_content is None and os.path.basename(path) == MANIFEST_NAME):
        return read_spark_dataset(path, progress, cancelled, doc)
    if doc is None:
        return open_file(path)
    raise UnknownFormat(f"{path} is JSON but neither a sharded-checkpoint index (no 'weight_map') nor a "
                        "safetensors-spark manifest (no 'shards' with totals)",
                        rule="JSON sets are recognised by content")


def _index_mapping(path: str) -> str | None:
    """A sibling ``*.index.json`` whose weight_map names this file, if any (cheap when there is none)."""
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    try:
        candidates = sorted(n for n in os.listdir(folder) if n.endswith(".index.json"))
    except OSError:
        return None
    if not candidates:
        return None
    from .hf_sharded import is_hf_index
    from .shards import read_json

    needle = name.encode()
    for candidate in candidates:
        full = os.path.join(folder, candidate)
        try:
            if os.path.getsize(full) > MAX_SNIFFED_INDEX:
                continue
            with open_regular(full) as f:
                if needle not in f.read():
                    continue
            doc = read_json(full)
        except (OSError, CodecError):
            continue
        if is_hf_index(doc) and isinstance(doc["weight_map"], dict) and name in doc["weight_map"].values():
            return full
    return None
