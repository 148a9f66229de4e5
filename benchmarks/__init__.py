"""ztviewer benchmarks: every figure is a ratio against a reference measured in the same run.

Run ``python -m benchmarks`` (``--quick`` for a smoke run, ``--only NAME`` for one module). Each module
``benchmarks/bench_*.py`` exposes ``run(tmpdir: Path, quick: bool) -> list[dict]``; every dict has the keys
``name, ours_s, reference_s, ratio, goal, passed, note`` (see :func:`benchmarks.common.result`).
"""
