"""Run in a child process (the scale factor is read when QApplication is created):

    QT_SCALE_FACTOR=1.5 python short_screen_probe.py WORKDIR WIDTH HEIGHT

opens a checkpoint in the main window as a first start on a WIDTH×HEIGHT screen would show it (default size fitted
to the screen, no saved layout), shows a 2-D tensor's heatmap and prints as JSON how tall the plot is and what the
dock tabs read (see test_short_screens.py)."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

work, width, height = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
(work / "screen.json").write_text(json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": width,
                                                          "height": height, "logicalDpi": 96, "logicalBpp": 32,
                                                          "dpr": 1}]}))
os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={work / 'screen.json'}"

import numpy as np
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QTabBar

import ztviewer.gui  # noqa: F401
from ztviewer.codec.arrays import save_arrays
from ztviewer.gui.main_window import MainWindow


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()


def main() -> None:
    app = QApplication(["probe"])
    path = work / "m.zt"
    save_arrays(path, {"model.layers.0.mlp.down_proj.weight": np.ones((64, 172), np.float32)}, "zt")
    window = MainWindow(settings=QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat))
    window.show()
    pump(app, 0.2)
    window.opener.open_path(str(path))
    while window.view_for(str(path)) is None:
        app.processEvents()
    view = window.view_for(str(path))
    view.select_item(view.tensor_file.tensors[0], "data")
    view.inspect_tabs.setCurrentIndex(1)
    pump(app, 1.0)
    heatmap = view.inspect.panel.heatmap
    bars = [bar for bar in window.findChildren(QTabBar) if bar.parent() is window]
    tabs = [[bar.tabText(i) for i in range(bar.count())] for bar in bars]
    elided = [bar.elideMode().name for bar in bars]
    print(json.dumps({"window": [window.width(), window.height()], "plot": heatmap.image.height(),
                      "plot_visible": heatmap.image.isVisible(), "tabs": tabs, "elide": elided}))


main()
