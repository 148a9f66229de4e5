"""The benchmarks' cold-cache helper: a file just written is resident, after make_cold it is not."""
import os

import pytest

from benchmarks.cold import make_cold, resident_fraction, why_not_cold


def test_a_written_file_is_resident_and_make_cold_drops_it(tmp_path):
    reason = why_not_cold()
    if reason is not None:
        pytest.skip(reason)
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(4 << 20))
    path.read_bytes()
    warm = resident_fraction(path)
    assert warm is not None and warm > 0.9
    try:
        left = make_cold(path)
    except RuntimeError:   # a file system whose pages cannot be dropped (tmpfs): what the cold rows refuse too
        pytest.skip(f"{tmp_path} cannot be made cold")
    assert left <= 0.02 and resident_fraction(path) == left
