"""Memory probes: a script run in a fresh Python process, so that its peak RSS is its own, reporting JSON."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: Source text a probe script starts with. ``status(key)``: this process's own figure from /proc/self/status in
#: bytes (ru_maxrss would include the parent's before exec). ``peak_kib()``: its peak RSS (VmHWM) in KiB, or
#: ru_maxrss where there is no /proc.
HELPERS = '''
import json, sys

def status(key):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key + ":"))

def peak_kib():
    try:
        return status("VmHWM") // 1024
    except OSError:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
'''


def run_probe(script: str, *args: str | Path, timeout: float | None = None, what: str = "probe") -> dict[str, Any]:
    """Run :data:`HELPERS` + ``script`` with ``args`` in a fresh Python from the repository root (first on
    PYTHONPATH); its last line on stdout is JSON. ``RuntimeError`` naming ``what`` if it fails."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", HELPERS + script, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT, check=False)
    if proc.returncode:
        raise RuntimeError(f"{what} failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
