"""Shards, data shards and overlays (spec §7, App. B): resolving shard names against the root's folder.

A shard named ``n`` of root ``<stem>.zt`` is the sibling ``<stem>-<n>.zt`` (positional convention). The
resolved path must be a regular file directly inside the root's folder after resolving symlinks; a name
that resolves elsewhere, or to the root itself, is refused. Shards are never parsed as models: a shard is a
blob heap identified by size and digest (§7.2), so references between files cannot form a cycle.
"""
from __future__ import annotations

import os
import stat
from typing import Any

import ztviewer.codec.formats.zt_v2.rules as rules

from ...errors import CodecError
from ...model import Problem, TensorFile, error
from ...source import LocalFile, Source
from .container import read_footer
from .schema import ShardEntry


def shard_path(root_path: str, name: str) -> str:
    """Where the positional convention puts shard ``name`` of the root at ``root_path``."""
    folder, base = os.path.split(root_path)
    stem = base.removesuffix(".zt")
    return os.path.join(folder, f"{stem}-{name}.zt")


def resolve_shards(tf: TensorFile) -> None:
    """Open every shard the root's table names; a problem for each that is missing or not the one the
    root records (footer magic/version, size). Parts in a resolved shard read through its source."""
    shards: dict[str, ShardEntry] = tf.extra.get("_shards") or {}
    if not shards:
        return
    sources: dict[str, Source] = {}
    for name, entry in shards.items():
        try:
            sources[name] = open_shard(tf.path, entry)
        except CodecError as exc:
            tf.problems.append(exc.to_problem())
    tf.shard_sources = sources
    tf.extra["shards"] = [{"name": name, "size": entry.size, "digest": entry.digest,
                           "path": shard_path(tf.path, name), "resolved": name in sources}
                          for name, entry in shards.items()]
    for tensor in tf.tensors:
        used: set[str | None] = set()
        for component in tensor.components.values():
            shard = component.shard
            used.add(shard)
            if shard is not None:
                component.source = sources.get(shard)
        only = next(iter(used)) if len(used) == 1 else None
        if only is not None:
            if only in sources:
                tensor.source = sources[only]
            else:
                tensor.problems.append(error(f"its bytes are in shard {only!r}, which is not available",
                                             tensor=tensor.name, rule=rules.SHARD_MISSING))


def open_shard(root_path: str, entry: ShardEntry) -> Source:
    """The shard's source after the cheap rungs of the verification ladder (§7.3): inside the folder,
    a regular file, v2 footer magic and version, the exact size."""
    path = shard_path(root_path, entry.name)
    folder = os.path.dirname(os.path.realpath(root_path))
    real = os.path.realpath(path)
    where: dict[str, Any] = {"offset": None}
    if os.path.dirname(real) != folder:
        raise CodecError(f"shard {entry.name!r} resolves to {real}, outside the root's folder {folder}",
                         rule=rules.SHARD_OUTSIDE, **where)
    if real == os.path.realpath(root_path):
        raise CodecError(f"shard {entry.name!r} resolves to the root file itself", rule=rules.SHARD_IDENTITY,
                         **where)
    try:
        info = os.stat(real)
    except OSError:
        raise CodecError(f"shard {entry.name!r} not found: expected {os.path.basename(path)} beside the root",
                         rule=rules.SHARD_MISSING, **where) from None
    if not stat.S_ISREG(info.st_mode):
        raise CodecError(f"shard {entry.name!r} ({real}) is not a regular file", rule=rules.SHARD_OUTSIDE, **where)
    if info.st_size != entry.size:
        raise CodecError(f"shard {entry.name!r} ({os.path.basename(real)}) has {info.st_size:,} bytes; the root "
                         f"records {entry.size:,}", rule=rules.SHARD_IDENTITY, **where)
    source = LocalFile(real)
    try:
        read_footer(source)
    except CodecError as exc:
        source.close()
        raise CodecError(f"shard {entry.name!r} is not a sound zTensor v2 container: {exc.message}",
                         rule=rules.SHARD_IDENTITY) from None
    return source


def shard_problems(tf: TensorFile) -> list[Problem]:
    """The file-level shard problems recorded at open (for callers listing them apart)."""
    shard_rules = (rules.SHARD_MISSING, rules.SHARD_OUTSIDE, rules.SHARD_IDENTITY)
    return [p for p in tf.problems if p.rule in shard_rules]
