"""The facts the properties panel lists for a selected file, group, tensor or component (no widgets), with the
rows particular to zTensor v2: content ids, the footer, generations, shared blobs, zstd-seekable frames."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ztviewer.codec import Component, Problem, Tensor, TensorFile
from ztviewer.codec.errors import CodecError
from ztviewer.codec.model import MORE_OWNERS, shared_owners
from ztviewer.codec.model import SEEKABLE_ENCODING as SEEKABLE
from ztviewer.codec.tensor_table import TensorTable
from ztviewer.codec.text import printable

from .file_layout import FileLayout
from .formatting import (
    alignment_of,
    byte_range,
    count_text,
    exact_bytes,
    plural,
    shape_text,
    short_value,
)
from .tree_groups import GroupTotals
from .tree_nodes import TensorGroup
from .zt_v2_facts import generation_rows, is_v2, seek_table_length

MAX_ITEMS = 200
#: how a zTensor v2 part's own fields are labelled beside the common ones ("" = shown elsewhere)
_PART_FIELD_LABELS = {"dtype": "dtype as written", "type": "logical type", "elements": "packed elements",
                      "digest_over": "", "refuse": "refused"}


@dataclass
class Prop:
    key: str
    value: str = ""
    children: list[Prop] = field(default_factory=list)


def value_props(key: str, value: Any) -> Prop:
    """A manifest or attribute value as a property, nested for mappings and sequences."""
    if isinstance(value, dict):
        children = [value_props(str(k), v) for k, v in list(value.items())[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            children.append(Prop("…", f"{len(value) - MAX_ITEMS:,} more"))
        return Prop(key, "{" + plural(len(value), "entry", "entries") + "}", children)
    if isinstance(value, (list, tuple)) and value and any(isinstance(v, (dict, list, tuple)) for v in value):
        children = [value_props(f"[{i}]", v) for i, v in enumerate(value[:MAX_ITEMS])]
        if len(value) > MAX_ITEMS:
            children.append(Prop("…", f"{len(value) - MAX_ITEMS:,} more"))
        return Prop(key, "[" + plural(len(value), "item") + "]", children)
    return Prop(key, short_value(value))


def _ratio(numerator: int | None, denominator: int) -> str:
    if numerator is None or denominator <= 0:
        return "—"
    try:
        return f"{numerator / denominator:.3f}×"
    except OverflowError:  # a dense size of thousands of digits
        return "> 10³⁰⁸×"


def _problems(problems: Iterable[Problem]) -> list[Prop]:
    items = [Prop(p.severity.value, p.describe()) for p in problems]
    return [Prop("Problems", f"{len(items)}", items)] if items else []


def _byte_totals(tensors: Sequence[Tensor]) -> tuple[int, int]:
    """Stored bytes and dense bytes (of the tensors whose dtype is known) of ``tensors``; a table answers from
    its columns for the tensors it has not built."""
    if isinstance(tensors, TensorTable):
        return tensors.stored_nbytes(range(len(tensors))), tensors.dense_nbytes(range(len(tensors)))
    return sum(t.stored_nbytes for t in tensors), sum(t.dense_nbytes or 0 for t in tensors)


def file_props(tf: TensorFile, layout: FileLayout | None) -> list[Prop]:
    stored, known_dense = _byte_totals(tf.tensors)
    general = [Prop("path", tf.path), Prop("format", tf.format), Prop("variant", tf.variant or "—"),
               Prop("size", exact_bytes(tf.size)), Prop("readable", "yes" if tf.readable else "no"),
               Prop("tensors", f"{len(tf.tensors):,}")]
    regions = [Prop(r.label or r.kind, f"{r.kind} {byte_range(r.offset, r.length)} {r.length:,} bytes")
               for r in tf.regions]
    derived = [Prop("stored tensor bytes", exact_bytes(stored)),
               Prop("dense tensor bytes", exact_bytes(known_dense)),
               Prop("compression ratio", _ratio(known_dense, stored))]
    if layout is not None:
        for kind, label in (("padding", "zero padding"), ("gap", "gaps"), ("overlap", "overlaps")):
            count, nbytes = layout.totals(kind)
            derived.append(Prop(label, f"{count:,} ranges, {nbytes:,} bytes"))
    props = [Prop("File", "", general)] + file_v2_props(tf)
    if regions:
        props.append(Prop("Regions", f"{len(regions)}", regions))
    props.append(value_props("Attributes", tf.attributes))
    fields = {k: v for k, v in tf.extra.items() if not k.startswith(("_", "content_digest:"))
              and not (is_v2(tf) and k in SHOWN_EXTRA)}
    if fields:
        props.append(value_props("Format fields", fields))
    props.append(Prop("Derived", "", derived))
    return props + _problems(tf.problems)


def group_props(group: TensorGroup, totals: GroupTotals) -> list[Prop]:
    """What the group's tree row totals, exactly: under a filter its matches (``3 of 12 tensors``), and then
    also the stored bytes of the whole group."""
    rows = [Prop("prefix", group.prefix), Prop("tensors", totals.count_text(group)),
            Prop("stored bytes", exact_bytes(totals.stored_nbytes(group)))]
    if totals.filter.matches is not None:
        rows.append(Prop("stored bytes, whole group", exact_bytes(totals.stored_nbytes(group, shown=False))))
    return [Prop("Group", "", rows)]


def component_fields(component: Component) -> list[Prop]:
    fields = [Prop("role", component.role), Prop("offset", f"{component.offset:,} (0x{component.offset:X})"),
              Prop("length", exact_bytes(component.length)), Prop("encoding", component.encoding),
              Prop("digest", component.digest or "—"), Prop("dtype", component.dtype or "—"),
              Prop("byte order", component.byte_order)]
    if component.shard is not None:
        fields.append(Prop("shard", component.shard))
    if component.shape is not None:
        fields.append(Prop("core shape", f"{shape_text(component.shape)}  {list(component.shape)}"))
    if component.uncompressed_length is not None:
        fields.append(Prop("uncompressed length", exact_bytes(component.uncompressed_length)))
    for key, value in component.extra.items():
        label = _PART_FIELD_LABELS.get(key, str(key))
        if label:
            fields.append(value_props(label, value))
    return fields


def component_derived(component: Component, layout: FileLayout | None, file_size: int) -> list[Prop]:
    derived = [Prop("byte range", f"{byte_range(component.offset, component.length)}"),
               Prop("alignment", f"{alignment_of(component.offset):,} bytes")]
    if component.end > file_size:
        derived.append(Prop("past end of file", f"{component.end - file_size:,} bytes"))
    if layout is not None:
        derived.append(Prop("padding after", f"{layout.padding_after(component.end):,} bytes"))
    if component.uncompressed_length is not None:
        derived.append(Prop("compression ratio", _ratio(component.uncompressed_length, component.length)))
    return derived


def tensor_props(tensor: Tensor, layout: FileLayout | None, file_size: int, tf: TensorFile | None = None) -> list[Prop]:
    manifest = [Prop("name", printable(tensor.name)), Prop("index", str(tensor.index)), Prop("dtype", tensor.dtype),
                Prop("shape", f"{shape_text(tensor.shape)}  {list(tensor.shape)}"), Prop("layout", tensor.layout)]
    if tensor.layout_spelling and tensor.layout_spelling != tensor.layout:
        manifest.append(Prop("layout as written", tensor.layout_spelling))
    if tensor.shard is not None:
        manifest.append(Prop("shard", tensor.shard))
    manifest += tensor_v2_props(tf, tensor)
    manifest.append(Prop("components", f"{len(tensor.components)}",
                         [Prop(role, f"{c.encoding} {byte_range(c.offset, c.length)}", component_fields(c))
                          for role, c in tensor.components.items()]))
    dense = tensor.dense_nbytes
    derived = [Prop("element count", count_text(tensor.numel) if all(d >= 0 for d in tensor.shape) else "—"),
               Prop("dense bytes", exact_bytes(dense) if dense is not None else "unknown dtype"),
               Prop("stored bytes", exact_bytes(tensor.stored_nbytes)),
               Prop("compression ratio", _ratio(dense, tensor.stored_nbytes))]
    if tensor.components:
        start = min(c.offset for c in tensor.components.values())
        end = max(c.end for c in tensor.components.values())
        derived += [Prop("byte range", byte_range(start, end - start)),
                    Prop("alignment", ", ".join(f"{r}: {alignment_of(c.offset):,}"
                                                for r, c in tensor.components.items()))]
        if layout is not None:
            derived.append(Prop("padding after", f"{layout.padding_after(end):,} bytes"))
    props = [Prop("Manifest", "", manifest), value_props("Attributes", tensor.attributes)]
    if tensor.extra:
        props.append(value_props("Format fields", tensor.extra))
    return props + [Prop("Derived", "", derived)] + _problems(tensor.problems)


def component_props(tensor: Tensor, component: Component, layout: FileLayout | None, file_size: int,
                    digest_state: str, tf: TensorFile | None = None) -> list[Prop]:
    return [Prop("Component", f"{tensor.name} · {component.role}",
                 component_fields(component) + component_v2_props(tf, tensor, component)),
            Prop("Derived", "", [*component_derived(component, layout, file_size),
                                 Prop("digest state", digest_state)])] \
        + _problems([p for p in tensor.problems if p.component == component.role])


# -- zTensor v2 ---------------------------------------------------------------------------------------------
#: ``TensorFile.extra`` keys these rows present, so the generic "Format fields" list leaves them out
SHOWN_EXTRA = frozenset({"footer", "generations", "version"})
NO_CONTENT_ID = "— (a part records no digest, or the file has errors)"


def file_v2_props(tf: TensorFile) -> list[Prop]:
    if not is_v2(tf):
        return []
    from ztviewer.codec.formats.zt_v2 import content_digest  # read already: the file is v2

    rows: list[Prop] = []
    if not tf.extra.get("data_shard"):
        rows.append(Prop("content id", content_digest(tf) or NO_CONTENT_ID))
    footer = tf.extra.get("footer")
    if isinstance(footer, dict):
        rows.append(Prop("footer", f"{byte_range(footer['offset'], 40)} 40 bytes", [
            Prop("manifest offset", f"{footer['manifest_offset']:,} (0x{footer['manifest_offset']:X})"),
            Prop("manifest length", exact_bytes(footer["manifest_length"])),
            Prop("manifest hash", f"xxh3:{footer['manifest_hash']}"),
            Prop("version", str(tf.extra.get("version", "—")))]))
    generations = generation_rows(tf)
    if generations:
        earlier = len(generations) - 1
        if tf.generation_of:
            summary = f"generation {generations[0].number}, shown read-only ({earlier} before it)"
        else:
            summary = f"{len(generations)} (this one and {earlier} earlier)" if earlier else "1"
        if tf.extra.get("_generations_stopped"):
            summary = (f"{summary}; not all found (the search stopped at its budget), so numbered back from this one"
                       if earlier else "this one; the search for earlier ones stopped at its budget")
        shown = "shown" if tf.generation_of else "current"
        rows.append(Prop("generations", summary, [Prop(f"generation {g.number}", g.summary()
                                                       + (f" — {shown}" if g.current else ""))
                                                  for g in generations]))
    return [Prop("zTensor v2", "", rows)]


def tensor_v2_props(tf: TensorFile | None, tensor: Tensor) -> list[Prop]:
    if tf is None or not is_v2(tf):
        return []
    from ztviewer.codec.formats.zt_v2 import object_content_digest  # read already: the file is v2

    rows = [Prop("content id", object_content_digest(tensor) or NO_CONTENT_ID)]
    shared = [f"{role}: shared with {', '.join(c.shared_with)}" for role, c in tensor.components.items()
              if c.shared_with]
    if shared:
        rows.append(Prop("shared blobs", f"{len(shared)}", [Prop(line.split(":", 1)[0], line.split(": ", 1)[1])
                                                            for line in shared]))
    return rows


def component_v2_props(tf: TensorFile | None, tensor: Tensor, component: Component) -> list[Prop]:
    if tf is None or not is_v2(tf):
        return []
    rows: list[Prop] = []
    named, others = shared_owners(component)
    if others:
        more = [Prop("more", MORE_OWNERS.format(others - len(named)))] if others > len(named) else []
        rows.append(Prop("shared blob", f"{others + 1:,} owners",
                         [Prop("owner", f"{tensor.name}/{component.role} (this part)")]
                         + [Prop("owner", label) for label in named] + more))
    if component.extra.get("digest_over") == "decoded":
        rows.append(Prop("digest covers", "the decoded bytes (v2 §3.4)" if component.digest else "— (no digest)"))
    if component.encoding == SEEKABLE:
        rows += _seekable_rows(tf, tensor, component)
    return rows


def _seekable_rows(tf: TensorFile, tensor: Tensor, component: Component) -> list[Prop]:
    from ztviewer.codec.decode import seekable_stream

    table = seek_table_length(tf, tensor, component)
    rows = [Prop("decoded length", exact_bytes(component.uncompressed_length or 0))]
    if table is not None:
        rows.append(Prop("seek table", f"{byte_range(component.end - table, table)} {table:,} bytes"))
    try:
        stream = seekable_stream(tf, tensor, component)
    except (CodecError, ValueError) as exc:
        return rows + [Prop("frames", f"unreadable: {exc}")]
    frames = stream.frames
    if frames:
        rows.append(Prop("frames", f"{len(frames):,} × {exact_bytes(stream.frame_size)} decoded"
                         + (f" (last {frames[-1].decoded_length:,})" if len(frames) > 1 else "")))
    return rows
