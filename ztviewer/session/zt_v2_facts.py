"""What the window says about a zTensor v2 file beyond the common model: its generations, footer, content
ids, shared blobs and the seek tables inside zstd-seekable parts (Qt-free; everything from the codec)."""
from __future__ import annotations

from dataclasses import dataclass

from ztviewer.codec import Component, Tensor, TensorFile
from ztviewer.codec.formats.magic import ZT_V2_FORMAT as FORMAT
from ztviewer.codec.model import SEEKABLE_ENCODING as SEEKABLE
from ztviewer.codec.tensor_queries import untouched_table

from .formatting import plural


def is_v2(tf: TensorFile) -> bool:
    return tf.format == FORMAT


@dataclass(frozen=True, slots=True)
class GenerationRow:
    """One generation of a v2 file, numbered from 1 (the first ever written) to the current one; when the search
    for earlier generations stopped at its budget (older ones may exist), back from the current one: 0 for it,
    -1 for the one before."""

    number: int
    size: int                  # the file's size in that generation (its footer ends there)
    footer_offset: int
    manifest_offset: int
    manifest_length: int
    objects: int | None
    current: bool
    generation: object | None  # the codec's Generation (None for the current one)

    def summary(self) -> str:
        objects = "? objects" if self.objects is None else plural(self.objects, "object")
        return (f"{objects}, file {self.size:,} bytes, manifest "
                f"{self.manifest_length:,} bytes at 0x{self.manifest_offset:X}")


def generation_rows(tf: TensorFile) -> list[GenerationRow]:
    """Every generation of the file, newest (the current one) first; empty for other formats, data shards
    and a generation opened on its own (it has no later ones, and its earlier ones are listed by the file)."""
    footer = tf.extra.get("footer") if is_v2(tf) else None
    if not isinstance(footer, dict) or tf.extra.get("data_shard"):
        return []
    earlier = list(tf.extra.get("_generations") or [])
    stopped = bool(tf.extra.get("_generations_stopped"))
    number = tf.generation_number if tf.generation_number is not None else 0 if stopped else len(earlier) + 1
    rows = [GenerationRow(number, tf.size, footer["offset"], footer["manifest_offset"], footer["manifest_length"],
                          len(tf.tensors), True, None)]
    rows += [GenerationRow(number - 1 - k, g.end, g.footer_offset, g.manifest_offset, g.manifest_length, g.objects,
                           False, g) for k, g in enumerate(earlier)]
    return rows


def seek_table_length(tf: TensorFile, tensor: Tensor, component: Component) -> int | None:
    """Bytes the seek table takes at the end of a local ``zt.zstd-seekable/1`` part (from its last 9 bytes);
    ``None`` for other parts, or when the part does not end in a seek table (the reader says why)."""
    if component.encoding != SEEKABLE or tf.source is None or component.shard is not None:
        return None
    if component.length < 17 or component.end > tf.source.size:
        return None
    from ztviewer.codec.zstd_seekable import seek_table_length as seek_table_length_of  # here: v2 parts only

    return seek_table_length_of(tf.source.window(component.end - 9, 9), component.length)


def seekable_parts(tf: TensorFile) -> list[tuple[Tensor, Component]]:
    """The local ``zt.zstd-seekable/1`` parts of a v2 file, without building plain raw tensors' components (nor
    the tensors of a table of plain raw entries)."""
    if not is_v2(tf) or untouched_table(tf.tensors) is not None:
        return []
    return [(t, c) for t in tf.tensors if SEEKABLE in t.component_encodings()
            for c in t.components.values() if c.encoding == SEEKABLE]


def file_kind_text(tf: TensorFile) -> str:
    """What kind of file this is, for the tree's file row and the status bar: ``zTensor v2, 3 generations``."""
    if not is_v2(tf):
        return " ".join(p for p in (tf.format, tf.variant) if p) or "unknown format"
    if tf.extra.get("data_shard"):
        return "zTensor v2 data shard"
    rows = generation_rows(tf)
    if tf.generation_of and rows:
        return f"zTensor v2, generation {rows[0].number} (read-only)"
    return "zTensor v2" + (f", {len(rows)} generations" if len(rows) > 1 else "")


def shared_note(component: Component) -> str | None:
    """``shared with a/data, b/data`` for a part whose blob other parts reference too, else ``None``."""
    owners = component.shared_with
    return f"blob shared with {', '.join(owners)}" if owners else None


def has_shared_part(tensor: Tensor) -> bool:
    """Whether a part of the tensor shares its blob with other parts (:func:`tensor_shared_note` without text)."""
    components = tensor._components    # a plain tensor the reader found shared has its component built already
    return components is not None and any(c.shared_with for c in components.values())


def tensor_shared_note(tensor: Tensor) -> str | None:
    """The shared-blob notes of a tensor's parts (``None`` when none is shared); deferred components of plain
    tensors are not built (a plain tensor the reader found shared has its component built already)."""
    if tensor._components is None:
        return None
    notes = [f"{role}: {note}" for role, c in tensor.components.items() if (note := shared_note(c))]
    return "\n".join(notes) or None


def open_generation_row(path: str, row: GenerationRow) -> TensorFile:
    """``path`` as it was in generation ``row`` (read-only: an earlier generation cannot be saved over the file),
    through the codec's :func:`~ztviewer.codec.formats.zt_v2.open_generation`."""
    from ztviewer.codec.formats.zt_v2 import open_generation

    tf = open_generation(path, row.size)
    tf.generation_number = row.number
    return tf


def is_generation_view(tf: TensorFile) -> bool:
    """Whether ``tf`` shows an earlier generation of its file (not the file as it is now)."""
    return bool(tf.generation_of)
