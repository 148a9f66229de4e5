"""A compressed part's decoded bytes, read like a file by the hex view and the data inspector (Qt-free).

A ``zt.zstd-seekable/1`` part is read through its seek table: a window decodes only the frames that cover
it (the last few decoded frames are kept, so scrolling within a frame decodes nothing). Another compressed
part is decoded once, whole, when it is small enough (:data:`WHOLE_LIMIT`); larger ones are refused, never
decoded from the start on every repaint.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from ztviewer.codec.errors import CodecError
from ztviewer.codec.model import SEEKABLE_ENCODING as SEEKABLE
from ztviewer.codec.model import Component, Tensor, TensorFile

if TYPE_CHECKING:
    from ztviewer.codec.zstd_seekable import SeekableStream

WHOLE_LIMIT = 64 << 20     # a part without random access is shown decoded up to this size
KEPT_FRAMES = 3            # decoded seekable frames kept (each at most 16 MiB)


def why_not_decodable(tensor: Tensor, component: Component) -> str | None:
    """Why the part's decoded bytes cannot be shown (``None``: they can)."""
    if not component.is_compressed:
        return "the part is stored raw: its stored bytes are its bytes"
    refusal = component.extra.get("refuse") if component.extra else None
    if refusal is not None:
        reason: str = refusal[0]
        return reason
    if component.encoding == SEEKABLE:
        return None
    if component.encoding != "zstd":
        return f"ztviewer cannot decode the encoding {component.encoding!r}"
    # here: a file of raw parts (the usual start) decodes nothing
    from ztviewer.codec.decode_rules import expected_length

    expected = expected_length(tensor, component)
    if expected is None or expected > WHOLE_LIMIT:
        return (f"a zstd part without a seek table is shown decoded up to {WHOLE_LIMIT >> 20} MiB"
                + (f"; this one decodes to {expected:,} bytes" if expected is not None else ""))
    return None


class DecodedPart:
    """The decoded bytes of one compressed part: ``size``, ``window(offset, length)`` like a Source.

    ``frames_decoded`` counts the seekable frames decompressed so far; ``error`` holds the first decoding
    failure (a window that cannot be decoded reads as empty: a view must never raise while painting).
    """

    decoded = True

    def __init__(self, tf: TensorFile, tensor: Tensor, component: Component) -> None:
        reason = why_not_decodable(tensor, component)
        if reason is not None:
            raise ValueError(reason)
        self.tensor_file, self.tensor, self.component = tf, tensor, component
        self.path = tf.path
        self.label = f"{tensor.name} · {component.role}"
        self.error: str | None = None
        self.frames_decoded = 0
        self._frames: OrderedDict[int, bytes] = OrderedDict()
        self._whole: bytes | None = None
        self._stream: SeekableStream | None = None
        from ztviewer.codec import decode
        from ztviewer.codec.decode_rules import expected_length

        if component.encoding == SEEKABLE:
            self._stream = decode.seekable_stream(tf, tensor, component)   # validates the seek table (CodecError)
            self.size = self._stream.decoded_length
        else:
            self.size = expected_length(tensor, component) or 0

    @property
    def frame_count(self) -> int:
        return len(self._stream.frames) if self._stream is not None else 1

    def frames_for(self, offset: int, length: int) -> range:
        """The frames a window covers (one pseudo-frame for a part without a seek table)."""
        if self._stream is None:
            return range(1 if length > 0 and offset < self.size else 0)
        return self._stream.frames_for(offset, length)

    def window(self, offset: int, length: int) -> bytes:
        offset = max(0, min(offset, self.size))
        length = max(0, min(length, self.size - offset))
        if not length:
            return b""
        try:
            if self._stream is None:
                return self._whole_bytes()[offset:offset + length]
            pieces = []
            for index in self._stream.frames_for(offset, length):
                frame = self._stream.frames[index]
                data = self._frame(index)
                lo = max(offset, frame.decoded_offset) - frame.decoded_offset
                hi = min(offset + length, frame.decoded_offset + frame.decoded_length) - frame.decoded_offset
                pieces.append(data[lo:hi])
            return b"".join(pieces)
        except CodecError as exc:
            self.error = self.error or str(exc)
            return b""

    def head(self, n: int) -> bytes:
        return self.window(0, n)

    def _frame(self, index: int) -> bytes:
        data = self._frames.get(index)
        if data is None:
            if self._stream is None:
                raise LookupError("frames exist only in a seekable part")
            data = self._stream.decode_frame(index)
            self.frames_decoded += 1
            self._frames[index] = data
            while len(self._frames) > KEPT_FRAMES:
                self._frames.popitem(last=False)
        else:
            self._frames.move_to_end(index)
        return data

    def _whole_bytes(self) -> bytes:
        if self._whole is None:
            from ztviewer.codec import decode

            self._whole = bytes(decode.component_bytes(self.tensor_file, self.tensor, self.component,
                                                       limit=WHOLE_LIMIT))
        return self._whole
