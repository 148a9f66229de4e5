"""Deterministic CBOR (RFC 8949 §4.2.1) as zTensor v2 requires of its manifest (spec §3.1).

Two ways in, one verdict:

* :func:`loads_fast` decodes with cbor2 (C) and proves the input canonical by re-encoding the result with
  cbor2 in insertion order and comparing the bytes. cbor2 refuses every tag and any nesting past the limit
  where it meets them, before anything is re-encoded: value sharing (tags 28/29) and string references
  (256/25) would make a 1 KB input decode to a value whose re-encoding as a tree is exponentially (sharing)
  or quadratically (string references) larger.
  Equal bytes mean shortest heads, definite lengths, no duplicate keys (a dropped duplicate shortens the
  output), no trailing bytes and every float 8 bytes wide. What the comparison cannot see (map key order,
  floats that would fit a narrower width, NaN payloads, integers beyond 64 bits) is checked by
  :func:`plain_value_issue` on free-form values and by the schema on the known structure. Anything
  doubtful goes to the strict decoder.
* :func:`decode_strict` walks the bytes itself, iteratively (no recursion), never allocating for a length
  before checking it fits in the remaining bytes, and raises the first violation with its byte offset.
"""
from __future__ import annotations

import math
import struct
from collections.abc import Iterator, Mapping
from operator import lt
from typing import Any, NoReturn

import cbor2

import ztviewer.codec.formats.zt_v2.rules as rules

from ...errors import ManifestDecodeError

MAX_DEPTH = 32
_U64_LIMIT = 1 << 64
_NAN_F16 = b"\xf9\x7e\x00"
_HALF = struct.Struct(">e")
_SINGLE = struct.Struct(">f")
_DOUBLE = struct.Struct(">d")
_PLAIN_SCALARS = (str, bytes, bool, type(None))


class CborError(ManifestDecodeError):
    """The manifest is not deterministic CBOR; ``rule`` says which requirement it breaks."""


class _TagMet(Exception):
    """cbor2 met a tag: the strict decoder says where."""


def _refuse_tag(decoder: object) -> NoReturn:
    raise _TagMet


class _EveryTag(Mapping[int, Any]):
    """cbor2's ``semantic_decoders`` for every tag, its built-in ones (value sharing, string references,
    bignums, dates, ...) included: each refuses the tag before cbor2 builds anything from it."""

    def __getitem__(self, tag: int) -> Any:
        return _refuse_tag

    def __contains__(self, tag: object) -> bool:
        return True

    def __iter__(self) -> Iterator[int]:
        return iter(())

    def __len__(self) -> int:
        return 0


_EVERY_TAG = _EveryTag()


def loads_fast(data: bytes) -> Any | None:
    """The decoded manifest when cbor2 decodes it and its re-encoding is byte-identical, else ``None``
    (then the caller must use :func:`decode_strict`). A tag or nesting past :data:`MAX_DEPTH` stops cbor2
    where it is met, so what gets re-encoded is a tree no larger than the input. Key order and float width
    are not proven here."""
    try:
        value = cbor2.loads(data, semantic_decoders=_EVERY_TAG, max_depth=MAX_DEPTH)
        if type(value) is not dict or cbor2.dumps(value) != data:
            return None
    except Exception:
        return None
    return value


def key_order_ok(keys: list[Any]) -> bool:
    """Whether text keys are in deterministic order: by UTF-8 length, then bytewise (equal to code point
    order), which is the bytewise order of their encodings. Non-text keys answer ``False`` (doubtful)."""
    previous: tuple[int, str] | None = None
    for key in keys:
        if type(key) is not str:
            return False
        current = (len(key) if key.isascii() else len(key.encode()), key)
        if previous is not None and not previous < current:
            return False
        previous = current
    return True


def keys_in_order(keys: list[str]) -> bool:
    """:func:`key_order_ok` for a list of text keys, in C-level passes: strictly increasing by (UTF-8
    length, text) with no Python code per key."""
    if len(keys) < 2:
        return True
    ascii_only = all(map(str.isascii, keys))
    lengths = list(map(len, keys if ascii_only else map(str.encode, keys)))
    pairs = list(zip(lengths, keys))
    return all(map(lt, pairs[:-1], pairs[1:]))


def _float_is_shortest_f64(value: float) -> bool:
    """A float cbor2 wrote in 8 bytes: canonical only if it does not fit in 4 (or 2) bytes exactly."""
    if math.isnan(value):
        return False
    try:
        return bool(_SINGLE.unpack(_SINGLE.pack(value))[0] != value)
    except OverflowError:
        return True


def plain_value_issue(value: Any, depth: int) -> bool:
    """Whether a free-form value (attributes, unknown keys) decoded by :func:`loads_fast` is doubtful:
    a type only a tag produces, an integer beyond 64 bits, a float not in its shortest width, a non-text
    or unsorted map key, or nesting deeper than the limit. Iterative; ``depth`` is the value's own depth."""
    stack: list[tuple[Any, int]] = [(value, depth)]
    while stack:
        item, level = stack.pop()
        if level > MAX_DEPTH:
            return True
        kind = type(item)
        if kind in _PLAIN_SCALARS:
            continue
        if kind is int:
            if not -_U64_LIMIT <= item < _U64_LIMIT:
                return True
        elif kind is float:
            if not _float_is_shortest_f64(item):
                return True
        elif kind is list:
            stack.extend((v, level + 1) for v in item)
        elif kind is dict:
            if not key_order_ok(list(item)):
                return True
            stack.extend((v, level + 1) for v in item.values())
        else:
            return True
    return False


# ---- the strict decoder ---------------------------------------------------------------------------------

class _Container:
    __slots__ = ("is_map", "items", "key", "key_start", "previous_key", "remaining", "start")

    def __init__(self, is_map: bool, remaining: int, start: int) -> None:
        self.is_map = is_map
        self.remaining = remaining * 2 if is_map else remaining
        self.items: Any = {} if is_map else []
        self.key: Any = None
        self.key_start = 0
        self.previous_key: bytes | None = None
        self.start = start


def _hashable(value: Any) -> Any:
    if type(value) is list:
        return tuple(_hashable(v) for v in value)
    if type(value) is dict:
        return tuple((k, _hashable(v)) for k, v in value.items())
    return value


def decode_strict(data: bytes, base: int = 0) -> Any:
    """Decode deterministic CBOR, raising :class:`CborError` at the first violation. ``base`` is the
    manifest's offset in the file, so errors carry absolute byte offsets."""
    decoder = _Strict(data, base)
    return decoder.run()


class _Strict:
    def __init__(self, data: bytes, base: int) -> None:
        self.data = data
        self.base = base
        self.pos = 0

    def fail(self, message: str, rule: str, at: int | None = None) -> CborError:
        where = self.pos if at is None else at
        return CborError(f"manifest CBOR at byte {where} of the manifest: {message}", offset=self.base + where,
                         rule=rule)

    def take(self, n: int, at: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise self.fail(f"needs {n:,} more bytes, only {len(self.data) - self.pos:,} remain", rules.CBOR_SYNTAX,
                            at)
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def argument(self, info: int, at: int) -> int:
        if info < 24:
            return info
        if info > 27:
            raise self.fail("indefinite length or reserved additional information "
                            f"{info} (deterministic CBOR has definite lengths only)", rules.CBOR_SYNTAX, at)
        width = 1 << (info - 24)
        value = int.from_bytes(self.take(width, at), "big")
        if value < (24 if width == 1 else 1 << (4 * width)):
            raise self.fail(f"non-shortest head: {value} written in {width + 1} bytes", rules.CBOR_DETERMINISM, at)
        return value

    def simple(self, info: int, at: int) -> Any:
        if info == 20:
            return False
        if info == 21:
            return True
        if info == 22:
            return None
        if info == 25:
            raw = self.take(2, at)
            value = _HALF.unpack(raw)[0]
            if math.isnan(value) and raw != _NAN_F16[1:]:
                raise self.fail("non-canonical NaN (the only NaN is f9 7e 00)", rules.CBOR_DETERMINISM, at)
            return value
        if info == 26:
            value = _SINGLE.unpack(self.take(4, at))[0]
            if math.isnan(value):
                raise self.fail("non-canonical NaN (the only NaN is f9 7e 00)", rules.CBOR_DETERMINISM, at)
            if _fits_half(value):
                raise self.fail(f"float {value!r} written in 4 bytes fits in 2", rules.CBOR_DETERMINISM, at)
            return value
        if info == 27:
            value = _DOUBLE.unpack(self.take(8, at))[0]
            if math.isnan(value):
                raise self.fail("non-canonical NaN (the only NaN is f9 7e 00)", rules.CBOR_DETERMINISM, at)
            if not _float_is_shortest_f64(value):
                raise self.fail(f"float {value!r} written in 8 bytes fits in 4 or 2", rules.CBOR_DETERMINISM, at)
            return value
        if info == 31:
            raise self.fail("unexpected 'break' (indefinite lengths are not allowed)", rules.CBOR_SYNTAX, at)
        raise self.fail(f"simple value {info} is not allowed (only false, true, null and floats)",
                        rules.CBOR_SYNTAX, at)

    def run(self) -> Any:
        data = self.data
        stack: list[_Container] = []
        result: Any = None
        done = False
        while not done:
            at = self.pos
            if len(stack) > MAX_DEPTH:
                raise self.fail(f"nesting deeper than {MAX_DEPTH} levels", rules.CBOR_DEPTH, at)
            if at >= len(data):
                raise self.fail("the manifest ends in the middle of a value", rules.CBOR_SYNTAX, at)
            head = data[at]
            self.pos += 1
            major, info = head >> 5, head & 0x1F
            value: Any
            if major == 7:
                value = self.simple(info, at)
            elif major == 6:
                raise self.fail(f"tag (head 0x{head:02x}): tags are not allowed in a manifest", rules.CBOR_SYNTAX, at)
            else:
                arg = self.argument(info, at)
                if major == 0:
                    value = arg
                elif major == 1:
                    value = -1 - arg
                elif major in (2, 3):
                    raw = self.take(arg, at)
                    if major == 2:
                        value = raw
                    else:
                        try:
                            value = raw.decode("utf-8")
                        except UnicodeDecodeError:
                            raise self.fail("text string is not valid UTF-8", rules.CBOR_SYNTAX, at) from None
                else:
                    is_map = major == 5
                    if arg * (2 if is_map else 1) > len(data) - self.pos:
                        raise self.fail(f"declares {arg:,} entries, more than the remaining bytes can hold",
                                        rules.CBOR_SYNTAX, at)
                    container = _Container(is_map, arg, at)
                    if arg:
                        stack.append(container)
                        continue
                    value = container.items
            # one complete value: hand it to the enclosing containers, closing the ones it completes
            while True:
                if not stack:
                    result, done = value, True
                    break
                top = stack[-1]
                top.remaining -= 1
                if top.is_map:
                    if top.remaining % 2:  # that was a key
                        encoded = data[at:self.pos]
                        if top.previous_key is not None:
                            if encoded == top.previous_key:
                                raise self.fail("duplicate map key", rules.CBOR_DUPLICATE_KEY, at)
                            if encoded < top.previous_key:
                                raise self.fail("map keys are not in bytewise order", rules.CBOR_DETERMINISM, at)
                        top.previous_key = encoded
                        top.key = _hashable(value)
                        break
                    top.items[top.key] = value
                else:
                    top.items.append(value)
                if top.remaining:
                    break
                stack.pop()
                value, at = top.items, top.start
        if self.pos != len(data):
            raise self.fail(f"{len(data) - self.pos:,} trailing bytes after the manifest map", rules.CBOR_SYNTAX)
        return result


def _fits_half(value: float) -> bool:
    try:
        return bool(_HALF.unpack(_HALF.pack(value))[0] == value)
    except OverflowError:
        return False


def encode_deterministic(value: Any) -> bytes:
    """Deterministic CBOR of a plain value (maps sorted by their encoded keys, shortest floats)."""
    kind = type(value)
    if kind is dict:
        entries = sorted((encode_deterministic(k), encode_deterministic(v)) for k, v in value.items())
        return _head(5, len(entries)) + b"".join(k + v for k, v in entries)
    if kind is list or kind is tuple:
        return _head(4, len(value)) + b"".join(encode_deterministic(v) for v in value)
    return cbor2.dumps(value, canonical=True)


def _head(major: int, count: int) -> bytes:
    unsigned = cbor2.dumps(count)  # the major-type-0 head of the same argument
    return bytes([major << 5 | unsigned[0]]) + unsigned[1:]
