"""safetensors reader: ``[u64 N][N bytes of UTF-8 JSON header][byte buffer]``.

Container-level failures (header length, UTF-8, JSON) are fatal; everything the reference reader only
rejects per tensor, or tolerates although the spec forbids it (a leading space, identical duplicate keys),
becomes a :class:`Problem` so that a damaged file still lists every tensor it can.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, MutableSequence
from operator import itemgetter
from typing import Any

try:  # optional: parses a large header 2-3x faster than json; the standard library reads the same files
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    orjson = None  # type: ignore[assignment]  # the json module reads the same headers

from ..errors import HeaderError, HeaderTooLarge, ManifestDecodeError, TruncatedFile
from ..gc_pause import building_many
from ..huge_int import from_digits
from ..model import Problem, Region, Tensor, TensorFile, error, warning
from ..source import Source
from .magic import JSON_SPACE as _JSON_SPACE
from .safetensors_columns import METADATA_KEY, plain_header
from .safetensors_tensors import checked_tensors, fast_tensors, json_type

MAX_HEADER = 100_000_000  # the reference reader's cap
RULE_LENGTH = "0 < header length N <= min(100,000,000, file size - 8)"
RULE_JSON = "the header is N bytes of UTF-8 JSON"
RULE_START = "the header MUST begin with '{'"
RULE_DUPLICATE = "no duplicate tensor keys"
RULE_METADATA = "__metadata__ is a string-to-string map"
MAX_METADATA_DEPTH = 64  # nesting kept of a non-string metadata value; deeper is dropped with a problem
_KEY = re.compile(r'("(?:[^"\\]|\\.)*")\s*:')  # a JSON string followed by ':' is an object key
_first = itemgetter(0)


def read(source: Source) -> TensorFile:
    """Parse the header, check every rule, and list the tensors (fatal errors raise :class:`CodecError`)."""
    with building_many():
        n = _header_length(source)
        return _read_plain(source, n) or _read_checked(source, n)


def _read_plain(source: Source, n: int) -> TensorFile | None:
    """The whole read of a header with nothing to report, or ``None``: the checked path then reads it.

    A plain header begins with ``{``, ends with ``}`` (then spaces), has no duplicate key at any level,
    string-only ``__metadata__``, and entries the plain path accepts (:func:`.safetensors_columns.plain_header`).
    """
    raw = source.read(8, n, "header")
    if raw[:1] != b"{" or raw[-64:].rstrip(b" ")[-1:] != b"}":  # more padding than that: checked path
        return None
    base = 8 + n
    plain = plain_header(raw, _loads, base, source.size - base)
    if plain is None:
        return None
    metadata, tensors = plain
    return _tensor_file(source, n, metadata, tensors, [])


def _tensor_file(source: Source, n: int, metadata: dict[str, Any], tensors: MutableSequence[Tensor],
                 problems: list[Problem]) -> TensorFile:
    return TensorFile(
        path=source.path, format="safetensors", variant="safetensors", attributes=metadata, tensors=tensors,
        problems=problems, source=source, extra={"header_length": n, "buffer_offset": 8 + n},
        regions=[Region("header-length", 0, 8, "u64 LE header length"), Region("header", 8, n, "JSON header")],
    )


def _read_checked(source: Source, n: int) -> TensorFile:
    text = _header_text(source, n)
    problems: list[Problem] = []
    pairs = _parse(text, problems)
    locate = HeaderLocator(text)
    names = list(map(_first, pairs))
    tensor_problems: dict[str, list[Problem]] = {}
    if len(set(names)) != len(names):
        pairs, tensor_problems = _dedupe(pairs, locate)
        names = list(map(_first, pairs))
    entries, metadata = _split_metadata(pairs, names, problems, locate)
    base, buffer_len = 8 + n, source.size - 8 - n
    tensors = None if tensor_problems else fast_tensors(entries, base, buffer_len)
    if tensors is None:
        tensors = checked_tensors(entries, base, buffer_len, problems, locate)
        for tensor in tensors:
            tensor.problems[:0] = tensor_problems.pop(tensor.name, ())
        for notes in tensor_problems.values():  # a repeated __metadata__ key
            problems.extend(notes)
    return _tensor_file(source, n, metadata, tensors, problems)


def _header_length(source: Source) -> int:
    if source.size < 8:
        raise TruncatedFile(f"the file has {source.size} bytes; a safetensors file starts with an 8-byte header "
                            "length", offset=0, rule="file size >= 8")
    n = int.from_bytes(source.read(0, 8), "little")
    if n == 0:
        raise HeaderError("header length N is 0; the header must hold at least '{}'", offset=0, rule=RULE_LENGTH)
    if n > MAX_HEADER:
        raise HeaderTooLarge(f"header length N = {n}{' (2^64-1)' if n == (1 << 64) - 1 else ''} exceeds the "
                             f"{MAX_HEADER:,}-byte cap of the reference reader (the file has {source.size} bytes)",
                             offset=0, rule=RULE_LENGTH)
    if n > source.size - 8:
        raise HeaderTooLarge(f"header length N = {n} runs past the end of the file: the header would end at byte "
                             f"{8 + n}, but the file has {source.size} bytes", offset=0, rule=RULE_LENGTH)
    return n


def _header_text(source: Source, n: int) -> str:
    try:
        return str(source.read(8, n, "header"), "utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestDecodeError(f"the header is not valid UTF-8: {exc.reason} at byte {8 + exc.start}",
                                  offset=8 + exc.start, rule=RULE_JSON) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _json_loads(raw: bytes) -> Any:
    # Strict UTF-8 as in _header_text (json.loads(bytes) would let surrogates through).
    return json.loads(str(raw, "utf-8"), parse_constant=_reject_constant, parse_int=from_digits)


#: Any parser will do for plain headers: whatever it refuses or reads differently (orjson: integers past
#: 64 bits become floats) fails the fast path's checks, and the checked path parses again with json.
_loads = orjson.loads if orjson is not None else _json_loads


#: Decodes JSON bytes with the parser of the plain path (orjson when installed).
parse_json: Callable[[bytes], Any] = _loads


def _parse(text: str, problems: list[Problem]) -> tuple[tuple[str, Any], ...]:
    """The header object as ``(key, value)`` pairs, every nested object also as a tuple of pairs.

    Pairs keep duplicate keys visible; ``tuple`` as the hook is also faster than building dicts.
    """
    lead = len(text) - len(text.lstrip(_JSON_SPACE))
    if text[lead:lead + 1] != "{":
        raise HeaderError(f"the header must be a JSON object beginning with '{{', found {text[lead:lead + 16]!r}",
                          offset=8 + lead, rule=RULE_START)
    if lead:
        problems.append(error(f"the header begins with {lead} whitespace byte(s) before '{{' (the reference "
                              "reader tolerates this; ztviewer opens the file)", rule=RULE_START, offset=8))
    try:
        pairs: tuple[tuple[str, Any], ...] = json.loads(text, object_pairs_hook=tuple, parse_constant=_reject_constant,
                                                        parse_int=from_digits)
    except json.JSONDecodeError as exc:
        offset = 8 + len(text[:exc.pos].encode())
        raise ManifestDecodeError(f"the header is not valid JSON: {exc.msg} at byte {offset}", offset=offset,
                                  rule=RULE_JSON) from None
    except (ValueError, RecursionError) as exc:
        raise ManifestDecodeError(f"the header is not valid JSON: {exc}", offset=8, rule=RULE_JSON) from None
    if text.rstrip(" ")[-1:] != "}":
        problems.append(warning("the header is padded with whitespace other than spaces (0x20)",
                                rule="the header MAY be padded with 0x20", offset=8 + len(text.rstrip(_JSON_SPACE))))
    return pairs


def _dedupe(pairs: tuple[tuple[str, Any], ...], locate: HeaderLocator
            ) -> tuple[tuple[tuple[str, Any], ...], dict[str, list[Problem]]]:
    """Last value wins, at the first key's position (the reference reader's map does the same)."""
    counts = Counter(map(_first, pairs))
    places = locate.occurrences({name for name, count in counts.items() if count > 1})
    kept: dict[str, Any] = {}
    notes: dict[str, list[Problem]] = {}
    seen: Counter[str] = Counter()
    for name, value in pairs:
        nth = seen[name]
        seen[name] += 1
        if name not in kept:
            kept[name] = value
            continue
        if kept[name] == value:
            message = ("the key appears again with an identical entry; the reference reader accepts this "
                       "(the last one wins)")
        else:
            message = (f"the key appears again with a different entry ({_entry_summary(value)} instead of "
                       f"{_entry_summary(kept[name])}); ztviewer keeps the last one, as the reference reader "
                       "does, and ignores the earlier")
        offset = places[name][nth] if nth < len(places[name]) else None
        notes.setdefault(name, []).append(error(message, rule=RULE_DUPLICATE, tensor=name, offset=offset))
        kept[name] = value
    return tuple(kept.items()), notes


def _entry_summary(value: Any) -> str:
    if type(value) is not tuple:
        return json_type(value)
    info = dict(value)
    return f"dtype {info.get('dtype')!r}, shape {info.get('shape')}, data_offsets {info.get('data_offsets')}"


def _split_metadata(pairs: tuple[tuple[str, Any], ...], names: list[str], problems: list[Problem],
                    locate: HeaderLocator) -> tuple[tuple[tuple[str, Any], ...], dict[str, Any]]:
    """The tensor entries without ``__metadata__`` (usually first, as the reference writer puts it)."""
    if not names or (names[0] != METADATA_KEY and METADATA_KEY not in names):
        return pairs, {}
    index = names.index(METADATA_KEY)
    value = pairs[index][1]
    return pairs[:index] + pairs[index + 1:], _metadata(value, problems, locate(METADATA_KEY))


def _metadata(value: Any, problems: list[Problem], offset: int | None) -> dict[str, Any]:
    if value is None:
        problems.append(warning("__metadata__ is null; read as no metadata", rule=RULE_METADATA, offset=offset))
        return {}
    if type(value) is not tuple:
        problems.append(error(f"__metadata__ must be an object of strings, got {json_type(value)}; it is ignored",
                              rule=RULE_METADATA, offset=offset))
        return {}
    repeated = sorted(k for k, count in Counter(map(_first, value)).items() if count > 1)
    if repeated:
        problems.append(error(f"__metadata__ repeats key(s) {', '.join(map(repr, repeated))}; the last value is "
                              "kept", rule=RULE_METADATA, offset=offset))
    bad = [f"{key!r} is {json_type(v)}" for key, v in value if type(v) is not str]
    if bad:
        problems.append(error(f"__metadata__ values must be strings: {'; '.join(bad[:5])}"
                              f"{' …' if len(bad) > 5 else ''} (kept as found)", rule=RULE_METADATA, offset=offset))
    plain = {}
    for key, v in value:
        try:
            plain[key] = _plain(v, MAX_METADATA_DEPTH)
        except _TooDeep:
            problems.append(error(f"__metadata__ value {key!r} nests arrays or objects deeper than "
                                  f"{MAX_METADATA_DEPTH} levels; it is dropped", rule=RULE_METADATA, offset=offset))
            plain[key] = f"<dropped: nested deeper than {MAX_METADATA_DEPTH} levels>"
    return plain


class _TooDeep(Exception):
    pass


def _plain(value: Any, depth: int) -> Any:
    """Undo the tuple-of-pairs decoding of objects (only odd metadata needs it), at most ``depth`` levels."""
    if type(value) is tuple or type(value) is list:
        if depth == 0:
            raise _TooDeep
        if type(value) is tuple:
            return {key: _plain(v, depth - 1) for key, v in value}
        return [_plain(v, depth - 1) for v in value]
    return value


class HeaderLocator:
    """Absolute byte offsets of keys in the header text, for messages.

    Lookups usually come in header order and name keys written verbatim, so the search for ``"name"`` resumes
    where the last one ended. The first lookup that misses (a key written with JSON escapes, or asked for out
    of order) indexes every key of the header once, decoded, and all later lookups use that index: the work
    stays linear in the header however many keys are looked up.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._ascii = text.isascii()
        self._resume = 0
        self._mark = (0, 0)  # (character, byte) position already converted
        self._cache: dict[str, int | None] = {}
        self._index: dict[str, list[int]] | None = None

    def __call__(self, name: str) -> int | None:
        if name not in self._cache:
            self._cache[name] = self._find(name)
        return self._cache[name]

    def _find(self, name: str) -> int | None:
        if self._index is None:
            key = json.dumps(name, ensure_ascii=False)
            pos = self.text.find(key, self._resume)
            if pos >= 0:
                self._resume = pos + len(key)
                return self._byte(pos)
        places = self.index().get(name)
        return places[0] if places else None

    def index(self) -> dict[str, list[int]]:
        """Every ``"key":`` of the header (at any level), decoded, → its byte offsets in header order."""
        if self._index is None:
            index: dict[str, list[int]] = {}
            char = byte = 0
            text = self.text
            for match in _KEY.finditer(text):
                raw = match.group(1)
                try:
                    key = json.loads(raw) if "\\" in raw else raw[1:-1]
                except ValueError:
                    continue
                start = match.start()
                byte += start - char if self._ascii else len(text[char:start].encode())
                char = start
                index.setdefault(key, []).append(8 + byte)
            self._index = index
        return self._index

    def occurrences(self, names: set[str]) -> dict[str, list[int]]:
        """Byte offsets of every ``"name":`` key for the given names, in header order, in one pass."""
        index = self.index()
        return {name: index.get(name, []) for name in names}

    def _byte(self, pos: int) -> int:
        if self._ascii:
            return 8 + pos
        char, byte = self._mark if pos >= self._mark[0] else (0, 0)
        byte += len(self.text[char:pos].encode())
        self._mark = (pos, byte)
        return 8 + byte

