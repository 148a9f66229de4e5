"""The analysis package is headless: importing all of it loads no Qt."""
import subprocess
import sys

MODULES = ["ztviewer.analysis", "ztviewer.analysis.reduce", "ztviewer.analysis.slicing", "ztviewer.analysis.spy",
           "ztviewer.analysis.stats", "ztviewer.analysis.structure", "ztviewer.analysis.tensor_stats",
           "ztviewer.analysis.tt_view", "ztviewer.analysis.diff", "ztviewer.analysis.mapped",
           "ztviewer.analysis.plane_jobs", "ztviewer.analysis.spy_sources"]


def test_analysis_imports_no_qt() -> None:
    code = (f"import sys, {', '.join(MODULES)}; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
