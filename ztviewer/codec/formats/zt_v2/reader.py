"""Reading a zTensor v2 file into the model (spec §8): footer, manifest, schema, layouts, blobs, shards."""
from __future__ import annotations

from typing import Any

import ztviewer.codec.formats.zt_v2.rules as rules

from ...errors import CodecError, HeaderError, SchemaError
from ...gc_pause import building_many
from ...model import Region, TensorFile
from ...source import LocalFile, Source
from ..magic import ZT_V2_FORMAT
from ..magic import ZT_V2_MAGIC as MAGIC
from .blobs import check_blobs
from .cbor_check import decode_strict, loads_fast
from .container import FOOTER_SIZE, Footer, footer_ending_at, parse_footer, read_footer, read_manifest_bytes
from .generations import SEARCH_BUDGET, Generation, PrefixSource, search_generations
from .plain_bytes import read_plain
from .schema import Manifest, attributes_map, read_objects, read_root

FORMAT = ZT_V2_FORMAT


def read(source: Source, footer: Footer | None = None) -> TensorFile:
    """The file as the footer at its end defines it, or as ``footer`` does (a sound earlier one)."""
    with building_many():
        tf = read_generation(source, footer or read_footer(source))
    from .shards import resolve_shards

    resolve_shards(tf)
    attach_generations(tf)
    return tf


SEARCH_STOPPED = f"the search stopped after reading {SEARCH_BUDGET >> 20} MiB (its budget)"
SOME_LISTED = (": earlier generations than those listed may exist, so the listed ones are numbered back from this one "
               "(-1 is the one before it) instead of from 1, the first ever written")
NONE_LISTED = ": earlier generations may exist (check searches further)"


def attach_generations(tf: TensorFile) -> None:
    """List the file's earlier generations in ``tf.extra`` and add their manifests, footers and the blobs only
    they reference as regions. They are numbered from 1, the first ever written (the file itself is the last),
    when the search found them all; when its budget stopped it, back from the file (-1 the one before it), and
    ``generations_search`` says so."""
    search = search_generations(tf)
    generations = search.generations
    tf.extra["_generations"] = generations
    tf.extra["_generations_stopped"] = search.stopped
    if search.stopped:
        tf.extra["generations_search"] = SEARCH_STOPPED + (SOME_LISTED if generations else NONE_LISTED)
    if not generations:
        return
    numbers = generation_numbers(len(generations), search.stopped)
    tf.extra["generations"] = [{"number": number, "footer_offset": g.footer_offset, "size": g.end,
                                "manifest_offset": g.manifest_offset, "manifest_length": g.manifest_length,
                                "objects": g.objects} for number, g in zip(numbers, generations)]
    current = _local_spans(tf)
    shown: set[tuple[int, int]] = set()
    for number, g in zip(numbers, generations):
        tf.regions.append(Region("old-manifest", g.manifest_offset, g.manifest_length,
                                 f"superseded manifest of generation {number}"))
        tf.regions.append(Region("old-footer", g.footer_offset, FOOTER_SIZE,
                                 f"superseded footer of generation {number}"))
        for span in g.blobs:
            if span not in shown and _apart(span, current):
                shown.add(span)
                tf.regions.append(Region("old-blob", span[0], span[1], f"blob only generation {number} references"))


def generation_numbers(count: int, stopped: bool) -> range:
    """The numbers of ``count`` earlier generations, newest first: ``count`` down to 1 when the list is complete,
    -1 down to ``-count`` when the search stopped (their distance back from the file)."""
    return range(-1, -count - 1, -1) if stopped else range(count, 0, -1)


def _local_spans(tf: TensorFile) -> list[tuple[int, int]]:
    from .blobs import local_spans

    return sorted((offset, offset + length) for offset, length in local_spans(tf.tensors))


def _apart(span: tuple[int, int], sorted_spans: list[tuple[int, int]]) -> bool:
    """Whether ``(offset, length)`` meets none of the sorted ``(start, end)`` spans."""
    from bisect import bisect_left

    start, end = span[0], span[0] + span[1]
    at = bisect_left(sorted_spans, (end, end))
    return at == 0 or sorted_spans[at - 1][1] <= start


def read_generation(source: Source, footer: Footer) -> TensorFile:
    """The file as its footer ``footer`` defines it (the one at EOF, or an earlier generation's)."""
    regions = [Region("magic", 0, len(MAGIC), "v2 magic"), Region("footer", footer.offset, FOOTER_SIZE, "footer")]
    extra: dict[str, Any] = {"_footer": footer, "version": footer.version, "footer": {
        "offset": footer.offset, "manifest_offset": footer.manifest_offset,
        "manifest_length": footer.manifest_length, "manifest_hash": f"{footer.manifest_hash:016x}"}}
    if footer.is_data_shard:
        extra["data_shard"] = True
        extra["structural"] = ("a data shard: blobs without a manifest; only the root file that references it "
                               "says what they mean")
        return TensorFile(path=source.path, format=FORMAT, variant="v2 data shard", regions=regions,
                          source=source, extra=extra)
    data = read_manifest_bytes(source, footer)
    regions.insert(1, Region("manifest", footer.manifest_offset, footer.manifest_length, "manifest (CBOR)"))
    manifest = parse_manifest(data, footer.manifest_offset)
    check_blobs(manifest.tensors, (footer.manifest_offset, footer.manifest_length), footer.end, manifest.shards)
    extra["_shards"] = manifest.shards
    if manifest.unknown:
        extra["unknown_keys"] = manifest.unknown
    return TensorFile(path=source.path, format=FORMAT, variant="v2", attributes=manifest.attributes,
                      tensors=manifest.tensors, regions=regions, source=source, extra=extra)


def parse_manifest(data: bytes, offset: int) -> Manifest:
    """Decode and validate the manifest. A map of plain objects is read straight from its bytes, canonical by
    construction (:mod:`.plain_bytes`); otherwise the fast path (cbor2 + re-encoding) is confirmed by the strict
    decoder whenever something it cannot prove turns up, or whenever the schema found an error (so a
    CBOR violation is reported as such rather than as the schema error it caused)."""
    plain = _plain_manifest(data, offset)
    if plain is not None:
        return plain
    root = loads_fast(data)
    fast = root is not None
    if root is None:
        root = decode_strict(data, offset)
    try:
        manifest = _schema(root, offset)
    except CodecError:
        if fast:
            decode_strict(data, offset)
        raise
    if fast and (manifest.doubtful or manifest.errors):
        strict = decode_strict(data, offset)
        if manifest.doubtful:
            manifest = _schema(strict, offset)
    return manifest


def _plain_manifest(data: bytes, offset: int) -> Manifest | None:
    """The manifest read straight from its bytes (:mod:`.plain_bytes`) when it is a map of plain objects."""
    plain = read_plain(data)
    if plain is None:
        return None
    table, attributes = plain
    if attributes is None:
        return Manifest(table, {}, {})
    try:
        return Manifest(table, attributes_map(attributes, "file", offset, 1)[0], {})
    except SchemaError:
        return None  # the schema reports it


def _schema(root: Any, offset: int) -> Manifest:
    manifest = read_root(root, offset)
    read_objects(manifest, root["objects"])
    return manifest


__all__ = ["FORMAT", "attach_generations", "generation_numbers", "parse_manifest", "read", "read_generation", "rules"]


def read_generation_at(tf: TensorFile, generation: Generation) -> TensorFile:
    """The file as it was in an earlier generation, read through a view that ends at that generation's
    footer. The returned file shares ``tf``'s open file; closing it leaves ``tf`` open."""

    if tf.source is None:
        raise ValueError(f"{tf.path} has no open source")
    view = PrefixSource(tf.source, generation.end)
    footer = parse_footer(view.read(generation.footer_offset, FOOTER_SIZE, "footer"), generation.end)
    old = read_generation(view, footer)
    old.generation_of = tf.path
    return old


def open_generation(path: str, end: int) -> TensorFile:
    """Open ``path`` as it was in the generation whose footer ends at byte ``end`` (an ``end`` listed by
    :func:`find_generations`, or the file's size for the current one), with the generations before it
    listed. The returned file owns its own open file: closing it closes that."""

    source = LocalFile(path)
    try:
        footer = read_footer(source) if end == source.size else footer_ending_at(source, end)
        if footer is None:
            raise HeaderError(f"no sound footer of an earlier generation ends at byte {end:,} of {path}", offset=end,
                              rule="append generations (v2 §2.5)")
        old = read_generation(PrefixSource(source, end, owns_parent=True), footer)
        attach_generations(old)
    except BaseException:
        source.close()
        raise
    if end != source.size:
        old.variant = "v2 earlier generation"
        old.generation_of = path
    return old
