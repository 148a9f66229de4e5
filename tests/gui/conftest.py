"""GUI test setup: headless Qt, isolated QSettings, a main-window fixture and synthetic files."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QSettings, QThreadPool

import ztviewer.gui  # noqa: F401  (binding work-arounds before any widget exists)
from tests.gui.inspect_helpers import SIZE
from ztviewer.codec import open_file
from ztviewer.codec.arrays import save_arrays
from ztviewer.session.decode_cache import DecodedCache

HERE = Path(__file__).resolve().parent

# The offscreen platform cannot resize native windows to size hints; Qt says so as a warning whenever a
# dock or status-bar widget changes a top-level window's constraints. It is not a warning about our code.
OFFSCREEN_NOISE = r"This plugin does not support propagateSizeHints\(\)"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@pytest.fixture(scope="session", autouse=True)
def isolated_settings(tmp_path_factory):
    """Every QSettings() of the test session lives in a temporary folder, never the user's."""
    folder = tmp_path_factory.mktemp("qsettings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    QCoreApplication.setOrganizationName("ztviewer-tests")
    QCoreApplication.setApplicationName("ztviewer-tests")
    return folder


@pytest.fixture
def settings(tmp_path) -> QSettings:
    return QSettings(str(tmp_path / "ztviewer.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings):
    from ztviewer.gui.main_window import MainWindow

    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()


@pytest.fixture
def sample_file(tmp_path):
    from tests.gui.synthetic_files import build_file, sample_specs

    tf = build_file(tmp_path / "sample.zt", sample_specs())
    yield tf
    tf.close()


@pytest.fixture
def file_view(qtbot, sample_file):
    """A FileView over the synthetic sample (known byte ranges), without a main window."""
    from ztviewer.gui.file_view import FileView
    from ztviewer.workers.tasks import OpenedFile

    view = FileView(OpenedFile(sample_file))
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    yield view
    view.shutdown()


# --- inspect panel (tests/gui/test_inspect_*.py) ---
@pytest.fixture
def pool():
    pool = QThreadPool()
    pool.setMaxThreadCount(2)
    yield pool
    pool.waitForDone(10_000)


@pytest.fixture
def cache():
    return DecodedCache(budget=64 << 20)


@pytest.fixture
def open_arrays(tmp_path):
    """``open_arrays(arrays, name="t.zt", **save_kw)`` writes the arrays and returns the opened file."""
    opened = []

    def make(arrays, name: str = "t.zt", **kw):
        path = tmp_path / name
        to = "safetensors" if name.endswith(".safetensors") else "blz" if name.endswith(".blz") else "zt"
        save_arrays(path, arrays, to=to, **kw)
        tf = open_file(path)
        opened.append(tf)
        return tf

    yield make
    for tf in opened:
        tf.close()


@pytest.fixture
def panel(qtbot, pool, cache):
    from ztviewer.gui.views.inspect import InspectPanel

    widget = InspectPanel(pool, cache)
    qtbot.addWidget(widget)
    widget.resize(*SIZE)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.shutdown()


@pytest.fixture
def heatmap(qtbot, pool):
    from ztviewer.gui.views.inspect.heatmap import HeatmapView

    view = HeatmapView(pool)
    qtbot.addWidget(view)
    view.resize(*SIZE)
    view.show()
    qtbot.waitExposed(view)
    yield view
    view.shutdown()


@pytest.fixture
def discard_on_teardown(request):
    """Closing the test window must not block on the Save / Discard / Cancel box (test_edit_*: usefixtures)."""
    if "window" in request.fixturenames:
        request.getfixturevalue("window").editing.ask_unsaved = lambda view: "discard"
