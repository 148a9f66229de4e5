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
    assert path.read_bytes()[:1] is not None
    warm = resident_fraction(path)
    assert warm is not None and warm > 0.9
    left = make_cold(path)
    assert left <= 0.02 and resident_fraction(path) == left
