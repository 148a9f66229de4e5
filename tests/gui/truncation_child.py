"""Run in a child process by ``test_truncated_under_views``: open a file in the offscreen app, show one view of
its data, truncate the file as another program would, then make the view repaint, re-read, scroll, zoom and
copy. A SIGBUS would kill this process; the parent asserts its exit status and what it printed.

``python -m tests.gui.truncation_child FILE VIEW [OTHER]`` with VIEW one of :data:`VIEWS` (``compare`` opens
FILE against OTHER). Prints ``UNCAUGHT`` for every exception that escaped into Qt, then ``TOLD <text>`` (the
changed-on-disk warning), ``EDITS KEPT`` when the unsaved edit survived, and ``SURVIVED`` last.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
import traceback

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

VIEWS = ("heatmap", "values", "hex", "spy", "tt", "compare")
TRUNCATE_TO = 300


def main(path: str, view_name: str, other: str | None = None) -> None:
    from PySide6.QtCore import QCoreApplication, QRectF, QSettings
    from PySide6.QtWidgets import QApplication

    import ztviewer.gui  # noqa: F401  (binding work-arounds before any widget exists)

    uncaught: list[str] = []

    def hook(kind, exc, tb) -> None:
        uncaught.append(f"{kind.__name__}: {exc}")
        print("UNCAUGHT", "".join(traceback.format_exception(kind, exc, tb)), flush=True)

    sys.excepthook = hook
    app = QApplication.instance() or QApplication([])
    folder = tempfile.mkdtemp()
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, folder)
    QCoreApplication.setOrganizationName("ztviewer-tests")
    QCoreApplication.setApplicationName("ztviewer-tests")

    from ztviewer.codec.edit import SetFileAttribute
    from ztviewer.gui.main_window import MainWindow

    def wait(predicate, timeout: float = 20.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            app.processEvents()
            if predicate():
                return True
            time.sleep(0.01)
        return False

    def settle(seconds: float = 0.4) -> None:
        wait(lambda: False, seconds)

    window = MainWindow(settings=QSettings(os.path.join(folder, "z.ini"), QSettings.Format.IniFormat))
    window.editing.ask_unsaved = lambda view: "discard"
    window.disk_watch.timer.stop()        # polled by hand below, after the views were exercised
    window.resize(1400, 900)
    window.show()
    window.opener.open_path(path)
    assert wait(lambda: window.view_for(path) is not None), "the file did not open"
    view = window.view_for(path)
    view.edit_session.edits.push(SetFileAttribute("note", "unsaved"))
    tf = view.tensor_file

    def inspect(name: str):
        view.select_item(tf.tensor(name))
        view.inspect_tabs.setCurrentWidget(view.inspect)
        panel = view.inspect.panel
        panel.show_item(tf.tensor(name))
        return panel

    exercise = None
    if view_name in ("heatmap", "values"):
        panel = inspect("dense")
        heat = panel.heatmap
        assert wait(lambda: heat.base is not None and heat.base.method != "strided"
                    and not heat.image_jobs.base_slot.busy)
        if view_name == "values":
            heat.values_button.setChecked(True)
            grid = heat.values
            assert grid.model.data(grid.model.index(3, 4)) not in (None, "")

            def exercise() -> None:
                grid.go_to(60, 70)
                grid.grab()
                grid.table.selectAll()
                print("COPIED", (grid.copy_tsv() or "")[:20])
                print("CELL", grid.model.data(grid.model.index(61, 71)))
        else:
            def exercise() -> None:
                heat.image.grab()
                heat._hovered((5, 6))
                print("READOUT", heat.readout.text())
                heat.image.view.setRange(QRectF(10, 10, 20, 20), padding=0)    # a zoomed region: re-read
                settle()
                heat.axes.set_index(0, 1)                                        # another slice
                settle()
                heat.controls.colormap.setCurrentIndex(1)
                heat.grab()
    elif view_name == "hex":
        heat = inspect("dense").heatmap                 # the file is mapped once something was shown from it
        assert wait(lambda: heat.base is not None and not heat.image_jobs.base_slot.busy)
        view.inspect_tabs.setCurrentIndex(0)
        view.select_item(tf.tensor("dense"))
        hexv = view.hex_view
        hexv.grab()

        def exercise() -> None:
            component = tf.tensor("dense").components["data"]
            hexv.set_cursor(component.offset + 4096)          # bytes past the new end: scroll and repaint
            hexv.grab()
            hexv.set_selection(component.offset, 4096)
            print("COPIED", (view.decoded_bytes.hex_actions.copy("hex") or "")[:20])
            window.inspector.set_offset(component.offset + 8192)
            print("INSPECTOR", repr(window.inspector.value_text("f32")))
            hexv.scroll_to_row(hexv.total_rows() - 1)
            hexv.grab()
            window.inspector.grab()
    elif view_name == "spy":
        panel = inspect("sparse")
        spy = panel.sparse
        assert wait(lambda: spy.prepared is not None and not spy.slot.busy)

        def exercise() -> None:
            spy.plot.view.setRange(QRectF(2, 2, 10, 10), padding=0)
            settle()
            spy.grab()
    elif view_name == "tt":
        panel = inspect("train")
        ttv = panel.tt
        assert wait(lambda: ttv.core is not None and not ttv.slot.busy)

        def exercise() -> None:
            ttv.core_box.setCurrentIndex(1)
            settle()
            ttv.tabs.setCurrentIndex(ttv.tabs.count() - 1)
            ttv.reconstruction.axes.set_index(0, 2) if ttv.reconstruction.data is not None else None
            settle()
            ttv.grab()
    elif view_name == "compare":
        assert other is not None
        window.opener.compare_paths(path, other)
        assert wait(lambda: window.opener.compare_views() and window.opener.compare_views()[0].session.state == "done")
        compare = window.opener.compare_views()[0]
        assert compare.select_name("dense")
        assert wait(lambda: compare.pair_view.data is not None)
        maps = compare.pair_view.heatmaps
        assert wait(lambda: all(m.base is not None and not m.image_jobs.base_slot.busy for m in maps.values()))

        def exercise() -> None:
            maps["B"].image.view.setRange(QRectF(5, 7, 10, 6), padding=0)      # all three re-read a region
            settle()
            for side in maps.values():
                side._hovered((3, 4))
            compare.select_name("cube")
            settle()
            compare.pair_view.grab()
    else:
        raise SystemExit(f"unknown view {view_name!r}")

    with open(path, "r+b") as another_program:
        another_program.truncate(TRUNCATE_TO)
    print("TRUNCATED", flush=True)
    exercise()
    settle(1.0)
    window.disk_watch.poll()
    box = window.disk_watch.box
    if box is not None:
        print("TOLD", box.text(), box.informativeText())
    if view.edit_session.modified and view.edit_session.doc.attributes.get("note") == "unsaved":
        print("EDITS KEPT")
    print("UNCAUGHT COUNT", len(uncaught))
    print("SURVIVED", flush=True)
    os._exit(0)   # no teardown: jobs still failing on the truncated file are not what is tested


if __name__ == "__main__":
    main(*sys.argv[1:])
