"""safetensors-spark datasets: ``dataset_manifest.json``, its shards and ``_tensor_index.parquet``.

The manifest lists every shard with ``samples_count`` and ``bytes`` (the shard file's size), the totals of
both, and optionally a ``schema`` of ``{tensor: {dtype, shape}}``. The set holds every shard's tensors as
stored (names repeat across shards; ``Tensor.shard`` tells them apart). Checks: manifest fields and totals,
each shard's existence, byte size, sample count, tensors against the schema, its file name against
``part-{taskId:05d}-{shardIndex:04d}-{uuid}.safetensors``, shard files the manifest does not list, and
the Parquet tensor index when present.
"""
from __future__ import annotations

import os
import re
from collections.abc import MutableSequence
from dataclasses import dataclass
from typing import Any

from ..errors import CodecError, SchemaError
from ..gc_pause import building_many
from ..model import Tensor
from .shard_source import SourcePool
from .shards import (
    CancelCheck,
    ProblemLog,
    Progress,
    Shard,
    TensorSet,
    load_shards,
    read_json,
    report_outside,
    report_unusable,
    sample_names,
    unreadable_set,
)
from .spark_schema import SchemaChecker, parse_schema
from .tensor_index import INDEX_NAME, check_tensor_index

FORMAT = "safetensors-spark"
REQUIRED = ("format_version", "safetensors_version", "total_samples", "total_bytes", "shards")
RULE_MANIFEST = "dataset_manifest.json follows the manifest JSON schema"
RULE_TOTALS = "totals are the sums over the shards"
RULE_BYTES = "a shard's bytes is its file size"
RULE_NAME = "shards are named part-{taskId:05d}-{shardIndex:04d}-{uuid}.safetensors"
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
NAME_RE = re.compile(rf"part-\d{{5,}}-\d{{4,}}-{_UUID}\.safetensors")
OLD_NAME_RE = re.compile(rf"part-\d{{5,}}-{_UUID}\.safetensors")


@dataclass(slots=True)
class ManifestShard:
    """One ``shards`` entry: its path and the counts the manifest claims (``None`` when invalid)."""

    path: str
    samples_count: int | None
    bytes: int | None


def is_spark_manifest(doc: Any) -> bool:
    """Whether a parsed JSON document looks like a safetensors-spark dataset manifest."""
    return isinstance(doc, dict) and "shards" in doc and ("total_samples" in doc or "format_version" in doc)


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def parse_manifest(doc: Any, issues: ProblemLog) -> tuple[dict[str, Any], list[ManifestShard]]:
    """The manifest's top-level fields and its shard entries; raises :class:`SchemaError` when unusable."""
    if not isinstance(doc, dict):
        raise SchemaError(f"the manifest must be a JSON object, got {type(doc).__name__}", rule=RULE_MANIFEST)
    if not isinstance(doc.get("shards"), list):
        raise SchemaError("'shards' must be a list of shard entries", rule=RULE_MANIFEST)
    for key in REQUIRED:
        if key not in doc:
            issues.error(f"the manifest lacks required field {key!r}", RULE_MANIFEST)
    for key in ("format_version", "safetensors_version"):
        if key in doc and doc[key] != "1.0":
            issues.warning(f"{key} is {doc[key]!r}; ztviewer knows '1.0'", RULE_MANIFEST)
    for key in ("total_samples", "total_bytes"):
        if key in doc and _count(doc[key]) is None:
            issues.error(f"{key} is {doc[key]!r}, not a non-negative integer", RULE_MANIFEST)
    if not doc["shards"]:
        issues.error("the manifest lists no shards (at least one is required)", RULE_MANIFEST)
    shards: list[ManifestShard] = []
    seen: set[str] = set()
    for position, entry in enumerate(doc["shards"]):
        shard = _parse_entry(position, entry, issues)
        if shard is None:
            continue
        if shard.path in seen:
            issues.error(f"shards[{position}] lists {shard.path!r} again; the repeat is ignored", RULE_MANIFEST)
            continue
        seen.add(shard.path)
        shards.append(shard)
    attributes = {k: v for k, v in doc.items() if k != "shards"}
    return attributes, shards


def _parse_entry(position: int, entry: Any, issues: ProblemLog) -> ManifestShard | None:
    if type(entry) is dict:
        path, samples, nbytes = entry.get("shard_path"), entry.get("samples_count"), entry.get("bytes")
        if (type(path) is str and path.endswith(".safetensors") and type(samples) is int and samples >= 0
                and type(nbytes) is int and nbytes >= 0):
            return ManifestShard(path, samples, nbytes)
    where = f"shards[{position}]"
    if not isinstance(entry, dict):
        issues.error(f"{where} must be an object with shard_path, samples_count and bytes", RULE_MANIFEST)
        return None
    path = entry.get("shard_path")
    if path is None and isinstance(entry.get("file"), str):
        path = entry["file"]
        issues.warning(f"{where} names its file with 'file' (an early connector spelling), not 'shard_path'",
                    RULE_MANIFEST)
    if not isinstance(path, str) or not path:
        issues.error(f"{where} has no shard_path string", RULE_MANIFEST)
        return None
    if not path.endswith(".safetensors"):
        issues.error(f"{where}: shard_path {path!r} does not end in .safetensors", RULE_MANIFEST)
    counts = []
    for key in ("samples_count", "bytes"):
        value = _count(entry.get(key))
        if value is None:
            issues.error(f"{where} ({path!r}): {key} is {entry.get(key)!r}, not a non-negative integer", RULE_MANIFEST)
        counts.append(value)
    return ManifestShard(path, counts[0], counts[1])


def read_spark_dataset(
    manifest_path: str | os.PathLike[str], progress: Progress | None = None, cancelled: CancelCheck | None = None,
    doc: Any = None,
) -> TensorSet:
    """Open a safetensors-spark output folder from its manifest: one set across all shards, headers only.

    ``doc`` is the manifest already parsed, if the caller has it."""
    path = os.path.abspath(manifest_path)
    folder = os.path.dirname(path)
    issues = ProblemLog()
    pool = SourcePool()
    extra: dict[str, Any] = {"folder": folder}
    with building_many():
        try:
            if doc is None:
                doc = read_json(path)
            attributes, entries = parse_manifest(doc, issues)
        except CodecError as exc:
            return unreadable_set(path, FORMAT, exc)
        schema = parse_schema(doc.get("schema"), issues)
        shards, table = load_shards(folder, [e.path for e in entries], pool, progress, cancelled)
        tensors: MutableSequence[Tensor] = []
        checker = SchemaChecker(schema)
        for entry, shard in zip(entries, shards):
            _check_shard(entry, shard, checker, issues)
            if table is None:
                tensors.extend(shard.tensors)
        if table is not None:  # every shard opened was read on the batch path: it lists their tensors in order
            tensors = table
        _check_totals(doc, entries, issues)
        _check_orphans(folder, {_normal(e.path) for e in entries}, issues)
        index_path = os.path.join(folder, INDEX_NAME)
        if os.path.isfile(index_path):
            extra["tensor_index"] = check_tensor_index(index_path, shards, issues)
        extra.update(shard_count=len(shards), shards=[s.describe() for s in shards])
    variant = f"manifest v{doc['format_version']}" if isinstance(doc.get("format_version"), str) else "manifest"
    return TensorSet(path=path, format=FORMAT, variant=variant, attributes=attributes, tensors=tensors,
                     problems=issues.problems, source=None, shards=shards, pool=pool, extra=extra)


def _name_alone(path: str) -> bool:
    """Whether ``path`` is a file name with nothing a path function would change or split off."""
    return "/" not in path and "\\" not in path and ":" not in path


def _normal(path: str) -> str:
    """``os.path.normpath(path)``, without the call for a plain file name (which it leaves as it is)."""
    return path if _name_alone(path) else os.path.normpath(path)


def _check_shard(entry: ManifestShard, shard: Shard, checker: SchemaChecker, issues: ProblemLog) -> None:
    """Check one shard against its manifest entry; ``shard.info`` gets the entry's counts and the samples found."""
    shard.info = info = {"samples_count": entry.samples_count, "bytes": entry.bytes}
    name = entry.path if _name_alone(entry.path) else os.path.basename(entry.path)
    if not NAME_RE.fullmatch(name):
        older = " (the older part-{taskId}-{uuid} naming, without a shard index)" if OLD_NAME_RE.fullmatch(name) else ""
        issues.warning(f"the file name does not follow the pattern part-{{taskId:05d}}-{{shardIndex:04d}}-{{uuid}}"
                    f".safetensors{older}", RULE_NAME, shard=shard)
    report_outside(shard, issues)
    if not shard.usable:
        report_unusable(shard, issues, f"its {entry.samples_count} sample(s) cannot be read")
        return
    issues.adopt_shard_problems(shard)
    size = shard.size
    if entry.bytes is not None and size != entry.bytes:
        issues.error(f"the manifest says {entry.bytes:,} bytes but the file has {size:,} bytes", RULE_BYTES,
                  shard=shard)
    samples = checker.check(shard, issues)
    if entry.samples_count is not None and samples is not None and samples != entry.samples_count:
        issues.error(f"the manifest says samples_count {entry.samples_count:,} but the shard holds {samples:,} "
                  "sample(s)", "samples_count is the number of samples the shard holds", shard=shard)
    info["samples_found"] = samples


def _check_totals(doc: dict[str, Any], entries: list[ManifestShard], issues: ProblemLog) -> None:
    for total_key, key in (("total_samples", "samples_count"), ("total_bytes", "bytes")):
        declared = _count(doc.get(total_key))
        values = [getattr(e, key) for e in entries]
        if declared is None or None in values:
            continue
        if declared != sum(values):
            issues.error(f"{total_key} is {declared:,} but the shards' {key} add up to {sum(values):,}", RULE_TOTALS)


def _check_orphans(folder: str, listed: set[str], issues: ProblemLog) -> None:
    try:
        names = os.listdir(folder)
    except OSError:
        return
    orphans = sorted(n for n in names if n.endswith(".safetensors") and n not in listed
                     and os.path.isfile(os.path.join(folder, n)))
    if orphans:
        issues.warning(f"{len(orphans)} .safetensors file(s) in the folder are not in the manifest: "
                    f"{sample_names(orphans)}", "every shard file is listed in the manifest")
