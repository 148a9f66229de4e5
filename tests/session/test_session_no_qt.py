"""The session layer is headless: importing every module of it loads no Qt (and no worker, which is QtCore)."""
import pkgutil
import subprocess
import sys

import ztviewer.session


def test_session_imports_no_qt_and_no_workers() -> None:
    modules = sorted(f"ztviewer.session.{m.name}" for m in pkgutil.walk_packages(ztviewer.session.__path__))
    assert "ztviewer.session.file_layout" in modules
    code = (f"import sys, {', '.join(modules)}; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph') "
            "or m.startswith(('ztviewer.gui', 'ztviewer.workers'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
