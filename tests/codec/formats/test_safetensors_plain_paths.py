"""The plain (fast) paths of the safetensors readers against the checked ones, on random and odd header texts.

Whatever a plain path accepts, the checked path reads with no problem and builds the same tensors; whatever it
declines, the checked path reads (and says what is wrong). JSON texts are written token by token, mostly as the
reference writer writes them, sometimes with whitespace anywhere, escapes, odd numbers, repeated keys and
misplaced spans.
"""
from __future__ import annotations

import itertools
import json
import os
import struct
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ztviewer.codec.formats import safetensors as st_reader
from ztviewer.codec.formats import safetensors_columns as st_columns
from ztviewer.codec.formats.safetensors_tensors import DTYPE_INFO
from ztviewer.codec.model import Tensor
from ztviewer.codec.multifile import fast_headers
from ztviewer.codec.source import InMemorySource, LocalFile

U64 = 1 << 64
ST_DTYPES = sorted(DTYPE_INFO)


@contextmanager
def _json_parser(use_json: bool) -> Iterator[None]:
    saved = st_reader._loads
    if use_json:
        st_reader._loads = st_reader._json_loads
    try:
        yield
    finally:
        st_reader._loads = saved


@contextmanager
def _written(data: bytes) -> Iterator[str]:
    """The bytes as a file of their own."""
    fd, path = tempfile.mkstemp(suffix=".safetensors")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        yield path
    finally:
        os.unlink(path)


def _rarely(draw: Any, noisy: bool, usual: Any, *odd: Any) -> Any:
    return usual if not noisy or draw(st.integers(0, 7)) else draw(st.sampled_from(odd))


def _fields(tensor: Any) -> str:
    """What a tensor reads as: a deferred component the same as the one the checked path builds."""
    assert type(tensor) is Tensor
    return repr(tensor._fields())


def _equal_tensors(fast: list, reference: list) -> None:
    assert len(fast) == len(reference)
    assert [_fields(t) for t in fast] == [_fields(t) for t in reference]
    assert list(fast) == list(reference)


def _check_header(text: bytes, buffer_len: int, use_json: bool = False) -> bool:
    """The plain path declines (``False``) or reads exactly what the checked path reads with no problem."""
    data = struct.pack("<Q", len(text)) + text + bytes(buffer_len)
    if not text:
        return False
    with _json_parser(use_json):
        source = InMemorySource(data, path="h.safetensors")
        plain = st_reader._read_plain(source, len(text))
        if plain is None:
            return False
        checked = st_reader._read_checked(source, len(text))
    assert not list(checked.all_problems()), checked.problems
    assert (plain.extra, plain.regions) == (checked.extra, checked.regions)
    assert type(plain.attributes) is dict and repr(plain.attributes) == repr(checked.attributes)
    _equal_tensors(plain.tensors, checked.tensors)
    return True


# JSON text is written here token by token by a _Writer, through ``pick`` (one of a sequence) and ``number`` (an
# int in a range): hypothesis's draws for the property tests, a seeded random.Random for the fuzz tests. A plain
# writer writes what the reference writer produces; an odd one adds whitespace anywhere and spells a token
# otherwise once in ``rare`` tokens (so that a header is often still plain, but no token is safe).

_NAMES = ("a", "t", "model.layers.0.self_attn.q_proj.weight", "", "x:y", 'a":b', "a :", "ä", "名前", "\U0001d518",
          "\x7f", "a b", "__metadata_", "__METADATA__", "a\\b", "dtype")
_TEXTS = ("", "v", "12:00", ":", '":', " :", "ä", "{}", "x\ty", "\\", "__metadata__")
_SPACE = (b"", b"", b"", b" ", b"\n", b"\t", b"\r", b"\r\n \t", b"   ")
_ODD_TEXT_DTYPES = ("f32", "F33", "", "F32 ", "bool", "F3", "U1", "BF1", "F8_E4M", "U16x")  # prefixes too


class _Writer:
    def __init__(self, pick: Callable[[Any], Any], number: Callable[[int, int], int], odd: bool) -> None:
        self.pick, self.number, self.odd = pick, number, odd
        self.rare = pick([3, 10, 30, 100]) if odd else 0

    def now(self) -> bool:
        """Whether to write something odd here."""
        return self.odd and not self.pick(range(self.rare))

    def ws(self) -> bytes:
        return self.pick(_SPACE) if self.odd else b""

    def string(self, text: str) -> bytes:
        plain = json.dumps(text, ensure_ascii=False).encode()
        if not self.now():
            return plain
        first = b'"\\u%04x' % ord(text[0]) + json.dumps(text[1:], ensure_ascii=False).encode()[1:] if text else plain
        return self.pick([json.dumps(text).encode(), first, plain[:-1] + b'\\/"', plain[:-1] + b'\xff"',
                          plain[:-1] + b'\xed\xa0\x80"', plain[:-1] + b'\xc0\xaf"', plain[:-1] + b'\xe2\x82"',
                          plain[:-1] + b'\x01"', plain[:-1] + b'\x1f"', plain[:-1] + b'\x7f"', plain[:-1] + b'\\"',
                          plain[:-1] + b'\\u0000"', plain[:-1] + b'\\ud800"', plain[1:]])

    def uint(self, value: int) -> bytes:
        plain = b"%d" % value
        if not self.now():
            return plain
        return self.pick([b"0" + plain, b"-" + plain, b"-0" if value == 0 else plain, plain + b".0", plain + b"e0",
                          plain + b"E+0", b"%d" % (value + U64), b"%d" % (U64 - 1), b"+" + plain, b"0x%x" % value,
                          b"1" + b"0" * 20, b"Infinity", b"NaN", b"null", b"true", b'"%d"' % value, b""])

    def object(self, members: list[tuple[bytes, bytes]]) -> bytes:
        if not members:
            return b"{" + self.ws() + b"}"
        return b"{" + b",".join(self.ws() + key + self.ws() + b":" + self.ws() + value + self.ws()
                                for key, value in members) + b"}"

    def array(self, items: list[bytes]) -> bytes:
        if not items:
            return b"[" + self.ws() + b"]"
        return b"[" + b",".join(self.ws() + item + self.ws() for item in items) + b"]"

    def entry(self, dtype: str, shape: list[int], begin: int, end: int) -> bytes:
        pick = self.pick
        members = [(self.string("dtype"), self.string(dtype)),
                   (self.string("shape"), self.array([self.uint(d) for d in shape])),
                   (self.string("data_offsets"), self.array([self.uint(begin), self.uint(end)]))]
        members = [members[i] for i in pick(list(itertools.permutations(range(3))))]
        if self.now():
            kind, at = pick(range(5)), pick(range(3))
            if kind == 0:
                members.insert(pick(range(4)), members[at])                          # a key twice, same value
            elif kind == 1:
                members.insert(pick(range(4)), (members[at][0], pick([b'"F32"', b"[1]", b"[0,4]", b"[]"])))
            elif kind == 2:
                del members[at]
            elif kind == 3:
                members.insert(pick(range(4)), (pick([b'"x"', b'""', b'"DTYPE"']), pick([b"1", b'"y"', b"null"])))
            else:
                members[at] = (members[at][0], pick([b"null", b"{}", b'"F32"', b"[[1]]", b"[0,1,2]", b"[0]", b"1"]))
        return self.object(members)

    def header(self) -> tuple[bytes, int]:
        """A header's JSON text and the length of the buffer its tensors cover (or nearly)."""
        pick, number, now = self.pick, self.number, self.now
        many = now()                                       # more dtypes than the direct reader remembers
        count = number(9, 17) if many else number(0, 4)
        first_dtype = number(0, len(ST_DTYPES) - 1)
        members, covered, names = [], 0, []
        for i in range(count):
            name = pick(names) if names and now() else f"{pick(_NAMES)}{i}"       # a name again, in buffer order
            names.append(name)
            raw_dtype = ST_DTYPES[(first_dtype + i) % len(ST_DTYPES)] if many else pick(ST_DTYPES)
            dtype = pick(_ODD_TEXT_DTYPES) if now() else raw_dtype
            shape = [number(0, 4) for _ in range(number(0, 3))]
            if now():
                shape = pick([[1] * 64, [1] * 65, [0, U64 - 1], [U64 - 1], [2 ** 32, 2 ** 32], [0, U64], [2 ** 63, 2]])
            nbytes = DTYPE_INFO[raw_dtype][1]
            for dim in shape:
                nbytes *= dim
            begin, end = covered, covered + (nbytes if nbytes <= 1 << 16 else 1)   # files stay small
            if now():
                begin, end = pick([(begin + 1, end + 1), (begin, end + 1), (begin, max(end - 1, 0)), (end, begin)])
            members.append((self.string(name), self.entry(dtype, shape, begin, end)))
            covered = max(covered, end)
        if members and now():                                                     # a tensor twice
            name, entry = pick(members)
            members.insert(number(0, len(members)), (name, pick([entry, members[0][1], b"{}"])))
        for _ in range(pick([0, 1, 1, 2]) if now() else pick([0, 1])):             # metadata, maybe twice
            pairs = [(self.string(f"{pick(_TEXTS)}{j}"), self.string(pick(_TEXTS))) for j in range(number(0, 3))]
            if pairs and now():
                pairs.append((pairs[0][0], pick([pairs[0][1], b'"w"'])))          # a key twice
            metadata = self.object(pairs)
            if now():
                metadata = pick([b"null", b"1", b"[]", b'"x"', b'{"k":1}', b'{"k":null}', b'{"k":{"a":"b"}}',
                                 b'{"k":["v"]}', b'{"k":"v",}'])
            members.insert(number(0, len(members)), (self.string("__metadata__"), metadata))
        text = self.object(members)
        if now():
            text = pick([b" " + text, text + b"\n", text + b" " * number(1, 70), text + b"x", text + b"}",
                         text + b",", text + b"\0", text + b" \t", text[:number(0, len(text))], b"", b"{}",
                         b"\t" + text, text[:-1] + b"\x0b}", b"\xef\xbb\xbf" + text, text + b"{}"])
        if now():
            covered = max(covered + pick([1, -1]), 0)
        return text, covered


def _drawn(draw: Any) -> tuple[Callable[[Any], Any], Callable[[int, int], int]]:
    return (lambda options: draw(st.sampled_from(options))), (lambda low, high: draw(st.integers(low, high)))


@st.composite
def _st_text(draw: Any) -> tuple[bytes, int]:
    return _Writer(*_drawn(draw), odd=draw(st.booleans())).header()


_ODD_DTYPES = ("f32", "F33", 5, None, True, ["F32"])
_ODD_DIMS = (-1, U64, 2 ** 70, True, False, 2.0, "2", None)
_ODD_SHAPES = ([1] * 64, [1] * 65, "[2]", {"a": 1}, None, [0, U64 - 1], [0, U64], [2 ** 63, 4], [U64 - 1])


@st.composite
def _st_pairs(draw: Any, json_only: bool = False, noisy: bool | None = None) -> tuple[list[tuple[Any, Any]], int]:
    """``(name, value)`` entries of a decoded header, contiguous from 0 when not noisy, and the bytes they
    cover; noisy ones hold odd values, keys and spans."""
    noisy = draw(st.booleans()) if noisy is None else noisy
    pairs, covered = [], 0
    for i in range(draw(st.integers(0, 4))):
        raw_dtype = draw(st.sampled_from(ST_DTYPES))
        dtype: Any = _rarely(draw, noisy, raw_dtype, *_ODD_DTYPES)
        shape: Any = draw(st.lists(st.integers(0, 4), max_size=3))
        if noisy and not draw(st.integers(0, 5)):
            shape = draw(st.sampled_from(_ODD_SHAPES))
        elif noisy and not draw(st.integers(0, 5)):
            shape.insert(draw(st.integers(0, len(shape))), draw(st.sampled_from(_ODD_DIMS)))
        size = DTYPE_INFO[raw_dtype][1]
        nbytes = size
        for dim in shape if isinstance(shape, list) else []:
            nbytes *= dim if type(dim) is int else 1
        nbytes = 0 if isinstance(shape, list) and 0 in shape else max(nbytes, 0)
        begin = _rarely(draw, noisy, covered, covered + 1, covered - 1, True, float(covered))
        end = (begin if type(begin) is int else covered) + _rarely(draw, noisy, nbytes, nbytes + 1, nbytes - 1)
        offsets: Any = _rarely(draw, noisy, [begin, end], [begin, end, end], [begin], None, "ab", [begin, float(end)])
        value: Any = {"dtype": dtype, "shape": shape, "data_offsets": offsets}
        keys = draw(st.permutations(list(value)))
        value = {key: value[key] for key in keys}
        if noisy and not draw(st.integers(0, 7)):
            value[draw(st.sampled_from(["x", "dtype"]))] = 1
        if noisy and not draw(st.integers(0, 7)):
            del value[draw(st.sampled_from(keys))]
        if noisy and not draw(st.integers(0, 9)):
            value = draw(st.sampled_from([[], "x", 5, None, [1, 2, 3]]))
        name: Any = f"t{i}" if json_only else _rarely(draw, noisy, f"t{i}", i, None)
        pairs.append((name, value))
        if type(end) is int:
            covered = max(covered, end)
    return pairs, covered




@settings(max_examples=400, deadline=None)
@given(_st_text(), st.booleans(), st.sampled_from([1, 7, 40, st_columns.PIECE_BYTES]))
def test_the_plain_path_reads_what_the_checked_path_reads(case, use_json, piece_bytes):
    """Also with the header decoded in pieces cut after almost every ``},`` (inside names and metadata too)."""
    saved = st_columns.PIECE_BYTES
    st_columns.PIECE_BYTES = piece_bytes
    try:
        _check_header(*case, use_json=use_json)
    finally:
        st_columns.PIECE_BYTES = saved


def test_a_header_read_in_pieces_is_the_header_read_whole(monkeypatch):
    """Pieces cut after each entry, after a ``},`` inside a name (that piece does not decode: the checked path
    reads the header) and with a key repeated in another piece (refused: the checked path reports it)."""
    entries = [f'"t{i}":{{"dtype":"U8","shape":[1],"data_offsets":[{i},{i + 1}]}}' for i in range(5)]
    whole = ("{" + ",".join(entries) + "}").encode()
    monkeypatch.setattr(st_columns, "PIECE_BYTES", 1)
    assert len(list(st_columns._pieces(whole))) == 5
    assert _check_header(whole, 5)
    odd_name = whole.replace(b'"t2"', b'"t},2"')
    assert len(list(st_columns._pieces(odd_name))) == 6 and not _check_header(odd_name, 5)
    repeated = whole.replace(b'"t3"', b'"t1"')
    assert not _check_header(repeated, 5)
    data = struct.pack("<Q", len(repeated)) + repeated + bytes(5)
    checked = st_reader.read(InMemorySource(data, path="h.safetensors"))
    assert any("appears again" in p.message for p in checked.all_problems())


_A = b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'


def test_the_plain_path_takes_reference_headers():
    assert _check_header(_A, 8) and _check_header(_A + b"   ", 8)
    assert _check_header(b'{"__metadata__":{"t":"12:00"},' + _A[1:], 8)
    assert not _check_header(_A, 9)                                  # a byte nobody owns: the checked path says so


# ------------------------------------------------------------------------------------- multi-file headers

_META = st.dictionaries(st.text(st.sampled_from('ab:" '), max_size=3), st.text(st.sampled_from('x:" '), max_size=3),
                        max_size=2)


@st.composite
def _shard(draw: Any) -> tuple[bytes, int]:
    """The head (first bytes) and size of one shard: mostly plain, sometimes odd at any level."""
    noisy = not draw(st.integers(0, 3))
    if draw(st.booleans()):
        text, covered = _Writer(*_drawn(draw), odd=noisy or draw(st.booleans())).header()
    else:
        pairs, covered = draw(_st_pairs(json_only=True, noisy=noisy and draw(st.booleans())))
        parts = [(json.dumps(name), json.dumps(value, separators=(",", _rarely(draw, noisy, ":", ": ", " :"))))
                 for name, value in pairs]
        if draw(st.booleans()):
            meta: Any = draw(_META)
            meta = _rarely(draw, noisy, meta, {"n": 1}, None, [], {"k": None})
            parts.insert(draw(st.integers(0, len(parts))), ('"__metadata__"', json.dumps(meta, separators=(",", ":"))))
        if noisy and parts and not draw(st.integers(0, 4)):
            parts.append(draw(st.sampled_from(parts)))                     # a duplicate key
        text = ("{" + ",".join(f"{k}:{v}" for k, v in parts) + "}").encode()
        text = _rarely(draw, noisy, text, text[:-1], b" " + text, text + b"\n", b"{", b"}", b"[]", b"{}", b"")
    text += b" " * draw(st.sampled_from([0, 0, 3]))
    n = _rarely(draw, noisy, len(text), 0, len(text) + 1, len(text) - 1, U64 - 1, 2 ** 63)
    head = struct.pack("<Q", n) + text + draw(st.sampled_from([b"", b"", b"\0" * 5, b"}"]))
    head = _rarely(draw, noisy, head, head[:7], head[:8], b"")
    size = 8 + len(text) + covered
    return head, _rarely(draw, noisy, size, size + 1, size - 1, 8 + len(text), 7, 0, -1)


@st.composite
def _batch(draw: Any) -> tuple[list, list, list, list, int]:
    shards = draw(st.lists(_shard(), max_size=4))
    names = [draw(st.sampled_from([f"model-{i:05d}.safetensors", None])) for i in range(len(shards))]
    return ([h for h, _ in shards], [s for _, s in shards], names, [object() for _ in shards],
            draw(st.integers(0, 10 ** 6)))


def _shard_file(head: bytes, size: int) -> bytes:
    """A shard of ``size`` bytes that begins with ``head`` (zeros after it)."""
    return (head + bytes(max(size - len(head), 0)))[:size]


def _single_file_batch(heads: list, sizes: list, shards: list, sources: list, first: int) -> list:
    """What a multi-file set makes of each shard through the single-file reader, when it has no problem at all:
    per shard ``(header length, metadata, tensors, data bytes)``."""
    batch, index = [], first
    for head, size, shard, source in zip(heads, sizes, shards, sources):
        with _written(_shard_file(head, size)) as path, LocalFile(path) as file_source:
            tf = st_reader.read(file_source)
            assert not tf.problems and not any(t.problems for t in tf.tensors), (
                head, tf.problems, [t.problems for t in tf.tensors])
            tensors = []
            for i, tensor in enumerate(tf.tensors):
                assert tensor.index == i
                tensor.shard, tensor.source, tensor.index_in_shard = shard, source, i
                tensor.index = index + i
                tensors.append(tensor)
            data_bytes = sum(t.components["data"].length for t in tensors)
            batch.append((tf.extra["header_length"], tf.attributes, tensors, data_bytes))
        index += len(tensors)
    return batch


@settings(max_examples=400, deadline=None)
@given(_batch(), st.booleans())
def test_read_batch_reads_what_the_single_file_reader_reads(batch, use_json):
    with _json_parser(use_json):
        found = fast_headers.read_batch(*batch)
        if found is None:
            return
        fast = found[1]
        reference = _single_file_batch(*batch)
    assert len(fast) == len(reference)
    for (n, metadata, tensors, data_bytes), (rn, rmetadata, rtensors, rdata_bytes) in zip(fast, reference):
        assert (type(n), n, type(data_bytes), data_bytes) == (int, rn, int, rdata_bytes)
        assert type(metadata) is dict and repr(metadata) == repr(rmetadata)
        _equal_tensors(tensors, rtensors)
