"""The save benchmark runs end to end at a tiny size and reports its figures in the runner's row format."""
from __future__ import annotations

from benchmarks import bench_save
from benchmarks.common import REQUIRED_KEYS


def test_bench_save_runs_tiny(tmp_path):
    rows = bench_save.run(tmp_path, quick=True, size=1 << 20)
    assert [r["goal"] for r in rows] == ["<= 1.15", ">= 0.7", "<= 1.0", "<= 1.2", "<= 1.2"]
    for row in rows:
        assert set(REQUIRED_KEYS) <= set(row) and {"value", "reference", "ratio"} <= set(row)
        ratio = row["reference"] / row["value"] if row["kind"] == "throughput" else row["value"] / row["reference"]
        assert row["value"] > 0 and row["reference"] > 0 and row["ratio"] == ratio
    assert rows[2]["unit"] == "MiB" and rows[2]["passed"]  # converting a zstd tensor streams
    assert not [p for p in tmp_path.iterdir() if "ztviewer-tmp" in p.name]
