"""Issue 2 acceptance: property-based tests over random valid files of every format and random corruptions.

(1) a valid file opens cleanly and each tensor's content hash is the SHA-256 of the bytes it was built from;
(2) a corrupted file never makes the reader raise, and checking / hashing / decoding raise only CodecError
    and stop within a bounded number of chunks (decode cap 16 MiB);
(3) reading + checking a corrupted file allocates at most 16 × its size + 1 MiB (decode cap 1 MiB).

``ZTVIEWER_FUZZ_EXAMPLES`` scales the number of examples (default keeps the folder under a minute).
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tests.fuzz.properties import check_memory, check_valid, decode_cap, exercise
from tests.fuzz.strategies import FORMATS, corruptions

SCALE = float(os.environ.get("ZTVIEWER_FUZZ_EXAMPLES", "1"))
COMMON = {"deadline": None, "derandomize": False, "print_blob": True,
          "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                    HealthCheck.function_scoped_fixture]}
FORMAT_NAMES = sorted(FORMATS)


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@settings(max_examples=examples(60), **COMMON)
@given(data=st.data())
def test_valid_files_decode_to_their_bytes(fmt, data):
    built = data.draw(FORMATS[fmt](), label="file")
    check_valid(built)


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@settings(max_examples=examples(250), **COMMON)
@given(data=st.data())
def test_corrupted_files_raise_only_codec_errors(fmt, data):
    built = data.draw(FORMATS[fmt](), label="file")
    corrupted, how = data.draw(corruptions(built), label="corruption")
    note(f"corrupted = bytes.fromhex({corrupted.hex()!r})  # {how}")
    with decode_cap(16 << 20):
        exercise(corrupted, built.path)


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@settings(max_examples=examples(80), **COMMON)
@given(data=st.data())
def test_corrupted_files_allocate_little(fmt, data):
    built = data.draw(FORMATS[fmt](), label="file")
    corrupted, how = data.draw(corruptions(built), label="corruption")
    note(f"corrupted = bytes.fromhex({corrupted.hex()!r})  # {how}")
    check_memory(corrupted, built.path)
