"""The input of a rewrite is checked as it is read: a damaged tensor is never written as if it were sound.

Every component a save or convert copies or decodes from an open file is checked on the bytes read for the write
itself where they pass through memory anyway (decoded, re-encoded, small copies), else by one read just before
the kernel copy (:func:`copy_checked`): its recorded digest is recomputed and compared, bool elements must be 0
or 1, and a ``zt.zstd-seekable/1`` part is decoded (its frames and seek table validated) before its stored bytes
are copied. A failure raises :class:`.DamagedTensor` naming the tensor,
component, byte offset and rule: the save refuses, or leaves the tensor out when asked to skip damaged tensors
(:func:`..save.save`). A component with nothing to check (no digest, not bool, not seekable) is copied in the
kernel, unread.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..decode import iter_decoded
from ..decode_rules import BOOL_RULE, CancelCheck, check_bools, is_bool
from ..digest import Digest, Hasher, mismatch, parse_digest, verify_component
from ..errors import CodecError, DamagedTensor, DecodeLimitExceeded, OutOfBounds, SourceChanged, UnsupportedLayout
from ..model import SEEKABLE_ENCODING, Component, Tensor, TensorFile
from ..readahead import feed, read_ahead
from .output import SMALL, Output

#: errors that say nothing about the tensor's own bytes (the file changed, a limit, a layout shown structurally)
NOT_DAMAGE = (DamagedTensor, SourceChanged, OutOfBounds, DecodeLimitExceeded, UnsupportedLayout)

Buffer = bytes | memoryview


def recorded_digest(component: Component) -> Digest | None:
    """The component's digest, parsed; ``None`` when it has none or a malformed one (a malformed digest is a
    problem of the file already, refused or replaced by the plan)."""
    if component.digest is None:
        return None
    try:
        return parse_digest(component.digest)
    except CodecError:
        return None


def shown_only(component: Component) -> bool:
    """A component the reader marked structural-only (unknown logical type or encoding): copied, never decoded."""
    return bool(component.extra) and "refuse" in component.extra


class ReadCheck:
    """What is checked of one component while it is read: ``begin`` a pass over its stored or decoded bytes,
    ``take`` each chunk in order, ``finish`` (which compares the digest)."""

    def __init__(self, tensor: Tensor, component: Component) -> None:
        self.tensor, self.component = tensor, component
        self.expected = recorded_digest(component)
        raw = component.encoding == "raw"
        over_decoded = bool(component.extra) and component.extra.get("digest_over") == "decoded"
        self.bools = is_bool(component)
        self.digest_over_stored = self.expected is not None and (raw or not over_decoded)
        self.digest_over_decoded = self.expected is not None and (raw or over_decoded)
        structural = shown_only(component)
        #: the stored bytes cannot be checked as they are: the part is decoded first (then copied unchanged)
        self.decodes_to_copy = not raw and not structural and (
            self.bools or component.encoding == SEEKABLE_ENCODING or self.digest_over_decoded)
        self._hasher: Hasher | None = None
        self._bools_here = False
        self._at = 0

    @property
    def needed(self) -> bool:
        return self.expected is not None or self.bools or self.decodes_to_copy

    def begin(self, decoded: bool, tf: TensorFile) -> None:
        """Start a pass over the decoded bytes (``decoded``) or the stored ones; a digest over the stored bytes of
        a compressed component is verified apart before its decoded bytes are read."""
        hashes = self.digest_over_decoded if decoded else self.digest_over_stored
        if decoded and self.digest_over_stored and not hashes:
            verify_component(tf.source_for(self.tensor, self.component), self.tensor, self.component)
        self._hasher = Hasher(self.expected.algorithm) if hashes and self.expected is not None else None
        self._bools_here = self.bools and (decoded or self.component.encoding == "raw")
        self._at = 0

    def take(self, chunk: Buffer) -> None:
        if self._hasher is not None:
            self._hasher.update(chunk)
        if self._bools_here:
            check_bools(self.tensor, self.component, chunk, self._at, BOOL_RULE)
        self._at += len(chunk)

    def finish(self) -> None:
        if self._hasher is not None and self.expected is not None:
            actual = self._hasher.result()
            if actual != self.expected:
                raise mismatch(self.tensor, self.component, self.expected, actual)


def damaged(exc: CodecError, tensor: Tensor, component: Component | None) -> DamagedTensor:
    """``exc`` (found while reading a tensor for a rewrite) as the refusal to write that tensor."""
    exc.located(tensor=tensor.name, component=None if component is None else component.role)
    return DamagedTensor(f"cannot be written: {exc.message}; the input is damaged there (delete or skip the tensor "
                         "to save the rest, or repair the file)", offset=exc.offset, rule=exc.rule,
                         tensor=exc.tensor, component=exc.component)


@contextmanager
def reading_input(tensor: Tensor, component: Component | None) -> Iterator[None]:
    """Turn what reading the tensor finds wrong with its bytes into :class:`.DamagedTensor`."""
    try:
        yield
    except NOT_DAMAGE:
        raise
    except CodecError as exc:
        raise damaged(exc, tensor, component) from None


def checked_decoded(tf: TensorFile, tensor: Tensor, component: Component, *, align: int = 1,
                    cancelled: CancelCheck | None = None, buffers: int = 1) -> Iterator[memoryview]:
    """:func:`..decode.iter_decoded`, each chunk checked (:class:`ReadCheck`); damage raises
    :class:`.DamagedTensor` (the digest once the last chunk has been taken)."""
    check = ReadCheck(tensor, component)
    with reading_input(tensor, component):
        if check.needed:
            check.begin(True, tf)
        for part in iter_decoded(tf, tensor, component, align=align, cancelled=cancelled, buffers=buffers):
            check.take(part)
            yield part
        check.finish()


def verify_input(tf: TensorFile, tensor: Tensor, cancelled: CancelCheck | None = None, *,
                 everything: bool = False) -> None:
    """Read the components of ``tensor`` that have something to check (``everything``: all of them, each decoded)
    once, checked: for tensors a rewrite rebuilds in memory (densified, unpacked) rather than streams, and to find
    every damaged tensor of a file."""
    for component in tensor.components.values():
        if not shown_only(component) and (everything or ReadCheck(tensor, component).needed):
            for _ in checked_decoded(tf, tensor, component, cancelled=cancelled):
                pass


def copy_checked(tf: TensorFile, tensor: Tensor, component: Component, out: Output,
                 also: Callable[[Buffer], None] | None = None) -> None:
    """Copy a component's stored bytes to ``out`` unchanged, checked. With nothing to check they are copied in the
    kernel, unread. A small component, or one whose bytes ``also`` must see (a new digest), is read once and each
    chunk checked and written. A large one is checked by one read (:func:`..readahead.feed`), then copied in the
    kernel from the page cache: on ext4 that costs less than copying it through memory. Measured (1 GiB zTensor
    v1.0 with crc32c digests → v1.0, warm, 2 loaded cores): unchecked kernel copy 2.2–2.3 s, check then kernel copy
    2.4–2.9 s, checked copy through memory 7.4–9.1 s (``os.write`` from the map dominates). A part whose stored
    bytes cannot be checked as they are is decoded first."""
    check = ReadCheck(tensor, component)
    source, offset, length = tf.source_for(tensor, component), component.offset, component.length
    if check.decodes_to_copy:
        for _ in checked_decoded(tf, tensor, component, cancelled=out.cancelled):
            pass
    elif check.needed:
        with reading_input(tensor, component):
            check.begin(False, tf)
            if also is None and length >= SMALL:
                feed(source, offset, length, check.take, cancelled=out.cancelled)
                check.finish()
            else:
                for part in read_ahead(source, offset, length, cancelled=out.cancelled):
                    check.take(part)
                    if also is not None:
                        also(part)
                    out.write(part)
                check.finish()
                return
    if also is None:
        out.copy_range(source, offset, length)
        return
    for part in read_ahead(source, offset, length, cancelled=out.cancelled):
        also(part)
        out.write(part)
