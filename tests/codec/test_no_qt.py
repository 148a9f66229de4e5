import subprocess
import sys


def test_codec_imports_no_qt():
    code = ("import sys, ztviewer.codec, ztviewer.codec.decode, ztviewer.codec.sparse, ztviewer.codec.check, "
            "ztviewer.codec.content_hash, ztviewer.cli; "
            "from ztviewer.codec.registry import formats; formats(); "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
