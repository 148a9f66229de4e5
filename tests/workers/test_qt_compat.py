"""The binding work-around keeps the interpreter alive through many void calls and signal emits."""
import subprocess
import sys


def test_many_void_calls_and_emits_do_not_abort_the_interpreter():
    code = (
        "import ztviewer.workers\n"
        "from PySide6.QtCore import QObject, Signal\n"
        "class O(QObject):\n"
        "    s = Signal(object)\n"
        "o = O()\n"
        "for i in range(300_000):\n"
        "    o.setObjectName('x'); o.s.emit(i)\n"
        "print('alive')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "alive" in result.stdout
