"""Run in a child process (the scale factor is read when QApplication is created):

    QT_SCALE_FACTOR=1.5 python layout_probe.py WORKDIR

opens a transformer-shaped checkpoint in a 1280×800 main window on an offscreen screen and prints, as JSON,
what a user would see of each checked widget (see test_layout_scaling.py)."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

work = Path(sys.argv[1])
(work / "screen.json").write_text(json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": 2880, "height": 1800,
                                                          "logicalDpi": 96, "logicalBpp": 32, "dpr": 1}]}))
os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={work / 'screen.json'}"

import numpy as np
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem

import ztviewer.gui  # noqa: F401
from ztviewer.codec.arrays import save_arrays
from ztviewer.gui.main_window import MainWindow
from ztviewer.gui.models.tree_roles import Column
from ztviewer.gui.tree_columns import IMPORTANT

LONG_NAME = "model.layers.1.self_attn.q_proj.weight"


def checkpoint(path: Path) -> Path:
    rng = np.random.default_rng(1)
    arrays = {"model.embed_tokens.weight": rng.standard_normal((320, 64)).astype(np.float32)}
    for i in range(3):
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            arrays[f"model.layers.{i}.self_attn.{proj}.weight"] = rng.standard_normal((64, 64)).astype(np.float16)
        arrays[f"model.layers.{i}.mlp.down_proj.weight"] = rng.standard_normal((64, 172)).astype(np.float16)
    save_arrays(path, arrays, "zt", digest="crc32c")
    return path


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()


def tree_facts(view) -> dict:
    tree, header = view.tree, view.tree.header()
    model = tree.model()
    root = model.index(0, 0)
    rows = [model.index(r, 0, root) for r in range(model.rowCount(root))]
    metrics = tree.fontMetrics()
    columns = {}
    for column in Column:
        texts = [str(model.index(r.row(), column, root).data() or "") for r in rows]
        columns[column.name] = {
            "left": header.sectionViewportPosition(column), "width": header.sectionSize(column),
            "header_hint": header.sectionSizeHint(column),
            "widest_text": max(metrics.horizontalAdvance(t) for t in texts),
        }
    index = next(i for i in rows if i.data() == LONG_NAME)
    option = QStyleOptionViewItem()
    option.initFrom(tree)
    option.rect = tree.visualRect(index)
    delegate = tree.itemDelegateForColumn(Column.NAME)
    delegate.initStyleOption(option, index)
    return {"viewport": tree.viewport().width(), "columns": columns, "important": [c.name for c in IMPORTANT],
            "shown_name": option.text, "name_room": option.rect.width(),
            "shown_name_width": metrics.horizontalAdvance(option.text)}


def hex_facts(view) -> dict:
    hex_view = view.hex_view
    return {"viewport": hex_view.viewport().width(), "content": hex_view._content_w,
            "hex_end": hex_view._ascii_x - hex_view._cw}


def inspector_facts(window) -> dict:
    table = window.inspector.findChild(__import__("PySide6.QtWidgets", fromlist=["QTableWidget"]).QTableWidget)
    cut = []
    if table is not None:
        from PySide6.QtGui import QFontMetrics

        for row in range(table.rowCount()):
            for column in range(table.columnCount()):
                item = table.item(row, column)
                if item is not None and item.text():
                    need = QFontMetrics(item.font()).horizontalAdvance(item.text()) + 6   # the cell margins
                    if need > table.columnWidth(column):
                        cut.append(item.text())
    return {"found": table is not None, "cut": cut}


def goto_facts(window, app) -> dict:
    from PySide6.QtWidgets import QLabel

    from ztviewer.gui.dialogs.goto_offset import GoToOffsetDialog

    dialog = GoToOffsetDialog(10**9, 0, window)
    dialog.show()
    pump(app, 0.2)
    cut = [label.text() for label in dialog.findChildren(QLabel)
           if label.text() and not label.wordWrap()
           and label.fontMetrics().horizontalAdvance(label.text().split("<")[0]) > label.width() + 1]
    clipped = [label.text() for label in dialog.findChildren(QLabel)
               if label.wordWrap() and label.heightForWidth(label.width()) > label.height() + 1]
    dialog.close()
    return {"cut": cut, "clipped": clipped}


def profile_facts(app) -> dict:
    """The spy view's entries-per-row histogram, as narrow as the side panel gets, over 123,456 and 12,345,678
    rows: where its x tick labels are drawn."""
    from PySide6.QtGui import QImage, QPainter

    from ztviewer.gui.views.inspect.sparse_view import ProfilePlot

    facts = []
    for rows in (123_456, 12_345_678):
        plot = ProfilePlot("row")
        plot.resize(170, 150)
        plot.show()
        edges = np.linspace(0, rows, 129).astype(np.int64)
        plot.show_profile(np.arange(128) % 7, edges)
        pump(app, 0.2)
        image = QImage(8, 8, QImage.Format.Format_ARGB32)
        painter = QPainter(image)
        _axis, _ticks, texts = plot.getPlotItem().getAxis("bottom").generateDrawSpecs(painter)
        painter.end()
        facts.append({"rows": rows, "width": plot.width(),
                      "labels": [[spec[2], spec[0].left(), spec[0].right()] for spec in texts]})
        plot.close()
    return {"plots": facts}


def main() -> None:
    app = QApplication(["probe"])
    window = MainWindow(settings=QSettings(str(work / "s.ini"), QSettings.Format.IniFormat))
    window.resize(1280, 800)
    window.show()
    path = str(checkpoint(work / "model.zt"))
    window.opener.open_path(path)
    end = time.monotonic() + 20
    while window.view_for(path) is None and time.monotonic() < end:
        app.processEvents()
    pump(app, 0.5)
    view = window.view_for(path)
    facts = {"scale": os.environ.get("QT_SCALE_FACTOR", "1"), "window": [window.width(), window.height()],
             "tree": tree_facts(view), "hex": hex_facts(view), "inspector": inspector_facts(window),
             "goto": goto_facts(window, app), "profile": profile_facts(app)}
    print(json.dumps(facts))
    window.close()


main()
