"""Issue 16: hostile *values* in well-formed containers, drawn at random (derandomized: the same examples every
run; ``ZTVIEWER_FUZZ_EXAMPLES`` scales their number). Integers of any length, CBOR value sharing, deep legal
nesting, names and values with terminal escapes, C1 controls, bidi overrides, lone surrogates and NUL, put
where the readers look (attributes, keys, names, shapes, offsets) in zTensor 0.1 / 1.0 files, safetensors
headers and sharded checkpoints. Every command (``info`` text and ``--json``, ``check``, ``convert``) must end
with exit 0/1/2, no traceback or internal error, printable text and valid UTF-8 JSON.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tests.hostile_values import (
    FOUR_FLOATS,
    V01,
    V1,
    bignum,
    cbor_array,
    cbor_map,
    cbor_text,
    enc,
    laughs,
    safetensors_file,
    self_containing,
    v01_entry,
    v10,
    v10_dense,
    zt_file,
)
from ztviewer.cli import main

SCALE = float(os.environ.get("ZTVIEWER_FUZZ_EXAMPLES", "1"))
COMMON = {"deadline": None, "derandomize": True, "print_blob": True,
          "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
NASTY_CHARS = "\x00\x07\x08\x1b\x7f\x85\x9b\u200b\u202e\u2028\u2066\ufeff\ud800\udfff"


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


# ------------------------------------------------------------------------------------------ strategies

nasty_text = st.text(alphabet=st.sampled_from(list(NASTY_CHARS) + list("ab/.:é✓ ")), min_size=0, max_size=12)
huge_int = st.builds(lambda bits, sign: sign * ((1 << bits) - 1), st.integers(65, 20_000), st.sampled_from([1, -1]))


@st.composite
def cbor_value(draw: st.DrawFn) -> bytes:
    """One hostile CBOR item (hand-written bytes)."""
    kind = draw(st.sampled_from(["bignum", "self", "laughs", "nest", "text", "map"]))
    if kind == "bignum":
        return bignum(draw(huge_int))
    if kind == "self":
        return self_containing()
    if kind == "laughs":
        return laughs(draw(st.integers(1, 60)))
    if kind == "nest":
        return b"\x81" * draw(st.integers(1, 80)) + enc(1)
    if kind == "text":
        return cbor_text(draw(nasty_text))
    return cbor_map([(bignum(draw(huge_int)), cbor_text(draw(nasty_text)))])


@st.composite
def zt_hostile(draw: st.DrawFn) -> bytes:
    value = draw(cbor_value())
    where = draw(st.sampled_from(["attribute", "key", "name", "shape", "offset", "length", "version"]))
    if draw(st.booleans()):  # v1.0
        name = cbor_text(draw(nasty_text)) if where == "name" else enc("t")
        dense = v10_dense(shape=cbor_array([value]) if where == "shape" else None,
                          offset=value if where == "offset" else None, length=value if where == "length" else None)
        attributes = (cbor_map([(enc("a"), value)]) if where == "attribute"
                      else cbor_map([(value, enc(1))]) if where == "key" else None)
        return zt_file(V1, v10(cbor_map([(name, dense)]), attributes=attributes,
                               version=value if where == "version" else None), FOUR_FLOATS)
    name = cbor_text(draw(nasty_text)) if where == "name" else enc("a")
    more = [(enc("x"), value)] if where in ("attribute", "version") else [(value, enc(1))] if where == "key" else []
    entry = v01_entry(name, shape=cbor_array([value]) if where == "shape" else None,
                      offset=value if where == "offset" else None, size=value if where == "length" else None,
                      more=more)
    return zt_file(V01, cbor_array([entry]), FOUR_FLOATS)


@st.composite
def json_value(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["long", "nest", "text", "surrogate"]))
    if kind == "long":
        return ("-" if draw(st.booleans()) else "") + "9" * draw(st.integers(20, 6000))
    if kind == "nest":
        depth = draw(st.integers(1, 1200))
        return "[" * depth + "]" * depth
    if kind == "surrogate":
        return '"\\ud800\\udfff\\udc00x"'
    return json.dumps(draw(nasty_text))


@st.composite
def safetensors_hostile(draw: st.DrawFn) -> bytes:
    value = draw(json_value())
    where = draw(st.sampled_from(["metadata", "shape", "offsets", "name"]))
    name = json.dumps(draw(nasty_text)) if where == "name" else '"t"'
    shape = f"[{value}]" if where == "shape" else "[4]"
    offsets = f"[0, {value}]" if where == "offsets" else "[0, 16]"
    metadata = f'"__metadata__": {{"k": {value}}}, ' if where == "metadata" else ""
    return safetensors_file(f'{{{metadata}{name}: {{"dtype": "F32", "shape": {shape}, "data_offsets": {offsets}}}}}')


# ------------------------------------------------------------------------------------------ the property

def run_all(path: Path) -> None:
    """Every command over ``path``: clean exits, printable text, valid JSON."""
    for argv in (["info", str(path)], ["info", "--json", "--hash", str(path)], ["check", str(path)],
                 ["convert", str(path), str(path.parent / "out.zt")],
                 ["convert", str(path), str(path.parent / "out.safetensors")]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        text, errors = out.getvalue(), err.getvalue()
        note(f"{argv[:2]} → {code}: {(text + errors)[:400]!r}")
        assert code in (0, 1, 2), (argv, code, errors)
        assert "Traceback" not in errors and "internal error" not in errors, errors
        if "--json" in argv:
            json.loads(text)
            text.encode("utf-8")
            text = ""  # JSON escapes controls itself; C1 and surrogates are checked by encoding and below
        bad = [c for c in text + errors if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F
               or 0xD800 <= ord(c) <= 0xDFFF or c in "\u202e\u2066"]
        assert not bad, (argv, bad)


def run_bytes(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"hostile{suffix}"
        path.write_bytes(data)
        run_all(path)


@settings(max_examples=examples(60), **COMMON)
@given(data=zt_hostile())
def test_hostile_zt_values_in_every_command(data):
    run_bytes(data, ".zt")


@settings(max_examples=examples(60), **COMMON)
@given(data=safetensors_hostile())
def test_hostile_safetensors_values_in_every_command(data):
    run_bytes(data, ".safetensors")


@settings(max_examples=examples(30), **COMMON)
@given(names=st.lists(nasty_text.filter(bool), min_size=1, max_size=3),
       total=st.one_of(st.integers(0, 100), st.just("9" * 5000), st.just("[" * 600 + "]" * 600)),
       escape_folder=st.sampled_from(["", "../", "/abs/", "sub/../../"]))
def test_hostile_sharded_checkpoints(names, total, escape_folder):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        weight_map = {}
        for k, name in enumerate(names):
            shard = f"{escape_folder}{name}-{k}.safetensors"
            weight_map[name or f"t{k}"] = shard
            safe = shard.replace("\0", "")
            target = root / safe if not escape_folder else None
            if target is not None and "/" not in safe and "\ud800" not in safe and "\udfff" not in safe:
                with contextlib.suppress(OSError, ValueError):
                    target.write_bytes(safetensors_file(json.dumps({name or f"t{k}": {
                        "dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})))
        text = json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map})
        text = text.replace('"total_size": 0', f'"total_size": {total}')
        index = root / "model.safetensors.index.json"
        index.write_bytes(text.encode("utf-8", "surrogatepass"))
        run_all(index)
