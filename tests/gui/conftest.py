"""GUI test setup: headless Qt, isolated QSettings, a main-window fixture and synthetic files."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ztviewer.gui  # noqa: E402,F401  (binding work-arounds before any widget exists)
from PySide6.QtCore import QCoreApplication, QSettings  # noqa: E402

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
    from synthetic_files import build_file, sample_specs

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
