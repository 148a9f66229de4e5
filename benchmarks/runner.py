"""Discover ``benchmarks/bench_*.py``, run them in one temporary directory, print a table, write JSON.

Adding a benchmark: create ``benchmarks/bench_<topic>.py`` with ``run(tmpdir: Path, quick: bool) ->
list[dict]`` returning rows built with :func:`benchmarks.common.result`. Large inputs go under ``tmpdir``
(shared makers live in :mod:`benchmarks.files`); the directory is removed when the run ends.
"""
from __future__ import annotations

import argparse
import cProfile
import datetime as _dt
import importlib
import io
import json
import math
import os
import pkgutil
import platform
import pstats
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import files
from .common import REQUIRED_KEYS

PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_OUTPUT = PACKAGE_DIR / "results" / "latest.json"


def discover() -> list[str]:
    """Names of the benchmark modules (``open`` for ``bench_open.py``), sorted."""
    return sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(PACKAGE_DIR)])
                  if m.name.startswith("bench_"))


def _select(names: list[str], only: list[str] | None) -> list[str]:
    if not only:
        return names
    wanted = [o.strip().removeprefix("bench_").removesuffix(".py") for item in only for o in item.split(",")]
    unknown = [w for w in wanted if w not in names]
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(names)}")
    return [n for n in names if n in wanted]


def _error_row(module: str, exc: BaseException) -> dict[str, Any]:
    return {"name": f"{module}: ERROR", "ours_s": math.nan, "reference_s": math.nan, "ratio": math.nan,
            "goal": "", "passed": False, "note": f"{type(exc).__name__}: {exc}", "unit": "s", "module": module}


def run_module(name: str, tmpdir: Path, quick: bool) -> list[dict[str, Any]]:
    module = importlib.import_module(f"{__package__}.bench_{name}")
    start = time.perf_counter()
    try:
        rows = list(module.run(tmpdir, quick))
    except Exception as exc:
        traceback.print_exc()
        return [_error_row(name, exc)]
    for row in rows:
        missing = [k for k in REQUIRED_KEYS if k not in row]
        if missing:
            row.update(dict.fromkeys(missing))
            row["passed"] = False
            row["note"] = f"{row.get('note') or ''} (row lacks keys {missing})".strip()
        row.setdefault("unit", "s")
        row["module"] = name
    print(f"  [{name}: {len(rows)} figure(s) in {time.perf_counter() - start:.1f} s]", file=sys.stderr)
    return rows


def _num(value: Any, unit: str) -> str:
    if not isinstance(value, (int, float)) or math.isnan(value):
        return "—"
    if unit != "s":
        return f"{value:.1f} {unit}"
    if value >= 1:
        return f"{value:.3f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.1f} µs"


def format_table(rows: list[dict[str, Any]]) -> str:
    header = ("benchmark", "ours", "reference", "ratio", "goal", "result")
    body = []
    for r in rows:
        verdict = {True: "PASS", False: "FAIL", None: "info"}.get(r.get("passed"), "?")
        ratio = r.get("ratio")
        body.append((str(r.get("name")), _num(r.get("ours_s"), r.get("unit", "s")),
                     _num(r.get("reference_s"), r.get("unit", "s")),
                     f"{ratio:.3f}" if isinstance(ratio, (int, float)) and not math.isnan(ratio) else "—",
                     str(r.get("goal") or "—"), verdict))
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(b, widths)))
              for b in body]
    return "\n".join(lines)


def profile_row(row: dict[str, Any], limit: int = 15) -> str:
    """cProfile of our side of a row: the hottest functions by own time and by cumulative time."""
    profiler = cProfile.Profile()
    profiler.runcall(row["_profile"])
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(limit)
    stats.sort_stats("cumulative").print_stats(limit)
    return out.getvalue()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60]


def _jsonable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    clean = []
    for row in rows:
        entry = {}
        for key, value in row.items():
            if key.startswith("_"):
                continue
            if isinstance(value, float) and not math.isfinite(value):
                value = None
            entry[key] = value
        clean.append(entry)
    return clean


def run(
    quick: bool = False, only: Sequence[str] | None = None, output: Path | None = DEFAULT_OUTPUT,
    tmp_root: str | None = None, profile: bool | None = None, echo: bool = True,
) -> list[dict[str, Any]]:
    """Run the selected benchmarks; returns the rows (without the private ``_`` keys)."""
    names = _select(discover(), list(only) if only else None)
    profile = (not quick) if profile is None else profile
    started = time.time()
    rows: list[dict[str, Any]] = []
    profiles: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="ztviewer-bench-", dir=tmp_root) as tmp:
        tmpdir = Path(tmp)
        try:
            for name in names:
                if echo:
                    print(f"running {name} …", file=sys.stderr)
                rows += run_module(name, tmpdir, quick)
            if echo:
                print(format_table(rows))
            if profile:
                for row in rows:
                    if row.get("passed") is False and callable(row.get("_profile")):
                        text = profile_row(row)
                        profiles[row["name"]] = text
                        if echo:
                            print(f"\n=== profile of our side: {row['name']} ===\n{text}")
        finally:
            for row in rows:
                row.pop("_profile", None)
            files.drop_cache(tmpdir)
    clean = _jsonable(rows)
    if output is not None:
        output = Path(output)
        output.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "created": _dt.datetime.fromtimestamp(started, _dt.UTC).isoformat(timespec="seconds"),
            "seconds": round(time.time() - started, 1), "quick": quick, "modules": names,
            "python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "results": clean, "profiles": profiles,
        }
        output.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        if echo:
            print(f"\nwrote {output} ({doc['seconds']} s)")
    return clean


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (smoke test)")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help=f"run only these modules (repeat or comma-separate): {', '.join(discover())}")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="JSON results path")
    parser.add_argument("--tmpdir", help="where to write the large temporary files (default: system temp)")
    parser.add_argument("--profile", dest="profile", action="store_true", default=None,
                        help="cProfile our side of every figure that misses its goal (default unless --quick)")
    parser.add_argument("--no-profile", dest="profile", action="store_false")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a figure misses its goal")
    parser.add_argument("--list", action="store_true", help="list the benchmark modules and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(discover()))
        return 0
    rows = run(quick=args.quick, only=args.only, output=args.output, tmp_root=args.tmpdir, profile=args.profile)
    if any(r["name"].endswith(": ERROR") for r in rows):
        return 2
    if args.strict and any(r.get("passed") is False for r in rows):
        return 1
    return 0
