"""Regenerate docs/screenshots/*.png: the main window rendered offscreen in its main states.

    python scripts/screenshots.py [--out docs/screenshots] [--corpus ../shared/corpus]

Runs headless (Qt's offscreen platform with a 1920×1200 virtual screen) and never touches the user's
settings. Corpus files are used where they show something real (a sparse zTensor file, a hostile file);
everything else is generated into a temporary folder.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1680, 1000


def configure_qt(work: Path) -> None:
    config = work / "offscreen.json"
    config.write_text(json.dumps({"screens": [{"name": "screen", "x": 0, "y": 0, "width": 1920, "height": 1200,
                                               "logicalDpi": 96, "logicalBpp": 32, "dpr": 1}]}))
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"
    from PySide6.QtCore import qInstallMessageHandler

    def quiet(mode, context, message):     # the offscreen plugin cannot apply size hints; it says so often
        if "propagateSizeHints" not in message:
            print(message, file=sys.stderr)

    configure_qt.handler = quiet            # keep a reference for the life of the process
    qInstallMessageHandler(quiet)


def model_checkpoint(path: Path) -> str:
    """A small transformer-shaped checkpoint written by the codec's own zTensor writer (crc32c digests)."""
    import numpy as np

    from ztviewer.codec.arrays import save_arrays

    rng = np.random.default_rng(7)
    hidden, ffn, vocab = 64, 172, 320
    arrays = {"model.embed_tokens.weight": rng.standard_normal((vocab, hidden), dtype=np.float32)}
    for i in range(4):
        prefix = f"model.layers.{i}"
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            arrays[f"{prefix}.self_attn.{proj}.weight"] = rng.standard_normal((hidden, hidden)).astype(np.float16)
        arrays[f"{prefix}.mlp.gate_proj.weight"] = rng.standard_normal((ffn, hidden)).astype(np.float16)
        arrays[f"{prefix}.mlp.up_proj.weight"] = rng.standard_normal((ffn, hidden)).astype(np.float16)
        arrays[f"{prefix}.mlp.down_proj.weight"] = rng.standard_normal((hidden, ffn)).astype(np.float16)
        arrays[f"{prefix}.input_layernorm.weight"] = np.ones(hidden, dtype=np.float32)
    arrays["model.norm.weight"] = np.ones(hidden, dtype=np.float32)
    arrays["lm_head.weight"] = rng.standard_normal((vocab, hidden), dtype=np.float32)
    save_arrays(path, arrays, "zt", attributes={"producer": "ztviewer screenshots", "architecture": "tiny-llama"},
                digest="crc32c")
    return str(path)


def sparse_big_file(path: Path):
    """A multi-GiB file made of holes (no disk space), with a hand-made model that records digests."""
    from ztviewer.codec import Component, Region, Tensor, TensorFile
    from ztviewer.codec.source import LocalFile
    from ztviewer.session.file_layout import build_layout
    from ztviewer.workers.tasks import OpenedFile

    layer = 512 << 20
    with open(path, "wb") as f:
        f.truncate(64 + 8 * layer + 4096)
    tensors = []
    for i in range(8):
        name = f"model.layers.{i}.mlp.down_proj.weight"
        digest = "sha256:" + "0" * 64 if i % 2 else "crc32c:0x00000000"
        tensors.append(Tensor(name, "bfloat16", (16384, 16384), components={
            "data": Component("data", 64 + i * layer, layer, digest=digest, dtype="bfloat16")}, index=i))
    regions = [Region("magic", 0, 8, "magic ZTEN1000"), Region("manifest", 64 + 8 * layer, 4088, "CBOR manifest"),
               Region("footer", 64 + 8 * layer + 4088, 8, "manifest size (u64 LE)")]
    tf = TensorFile(str(path), "zt", "v1.0", {"producer": "screenshot"}, tensors, regions=regions,
                    source=LocalFile(path))
    return OpenedFile(tf, build_layout(tf))


def v2_checkpoint(path: Path) -> str:
    """A zTensor v2 file as ztviewer writes it: zstd-seekable parts (the MLP weight in several frames), tied
    embeddings (one blob, two owners), xxh3 digests, then two metadata edits saved in place (three generations)."""
    import numpy as np

    from ztviewer.codec.arrays import save_arrays
    from ztviewer.codec.edit import SetFileAttribute, SetTensorAttribute
    from ztviewer.codec.save import edit_file

    rng = np.random.default_rng(11)
    embed = rng.standard_normal((320, 64), dtype=np.float32)
    arrays = {"model.embed_tokens.weight": embed, "lm_head.weight": embed.copy(),
              "model.layers.0.mlp.up_proj.weight": (np.arange(1024 * 640, dtype=np.float32) % 97).reshape(1024, 640),
              "model.norm.weight": np.ones(64, np.float32)}
    save_arrays(path, arrays, "zt-v2", compress=("zstd", 3), digest="xxh3",
                attributes={"producer": "ztviewer screenshots"})
    edit_file(path, [SetFileAttribute("architecture", "tiny-llama")])
    edit_file(path, [SetTensorAttribute("lm_head.weight", "tied_to", "model.embed_tokens.weight")])
    return str(path)


class Shooter:
    def __init__(self, out: Path, work: Path) -> None:
        from PySide6.QtCore import QSettings
        from PySide6.QtWidgets import QApplication

        from ztviewer.gui.app import create_application
        from ztviewer.gui.main_window import MainWindow

        self.app: QApplication = create_application(["screenshots"])
        self.out, self.work = out, work
        self.settings = QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat)
        self.window = MainWindow(settings=self.settings)
        self.window.resize(WIDTH, HEIGHT)
        self.window.show()
        self.pump()

    def pump(self, seconds: float = 0.05) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.app.processEvents()

    def wait(self, condition, timeout: float = 20.0) -> None:
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                raise TimeoutError("the window did not reach the expected state")
            self.app.processEvents()

    def open(self, path: str):
        self.window.opener.open_path(path)
        self.wait(lambda: self.window.view_for(path) is not None)
        self.pump()
        return self.window.view_for(path)

    def save(self, name: str) -> None:
        self.pump()
        target = self.out / name
        self.window.grab().save(str(target))
        print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")

    def close_all(self) -> None:
        while self.window.tabs.count():
            self.window.close_tab(0)
        self.pump()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ztviewer-shots-") as tmp:
        work = Path(tmp)
        configure_qt(work)
        sys.path.insert(0, str(ROOT))
        shoot(Shooter(args.out, work), args.corpus, work)
    return 0


def shoot(s: Shooter, corpus: Path, work: Path) -> None:
    w = s.window
    s.save("01-empty-window.png")

    checkpoint = model_checkpoint(work / "tiny-llama.zt")
    view = s.open(checkpoint)
    w.set_grouped(True)
    model = view.tree_model
    layer = model.index_of(view.tensor_file.tensor("model.layers.1.self_attn.q_proj.weight"))
    view.tree.expand(view.proxy.mapFromSource(layer.parent().parent()))
    view.select_item(view.tensor_file.tensor("model.layers.1.self_attn.q_proj.weight"), "data")
    view.tree.expand(view.proxy.mapFromSource(layer))
    s.save("02-file-open-tree.png")

    sparse = corpus / "zt_v1.0" / "ztensor-1.0.1-rust" / "crc32c_zstd_sparse.zt"
    if sparse.is_file():
        s.close_all()
        view = s.open(str(sparse))
        tensor = view.tensor_file.tensor("csr_f32_5x6_crc")
        view.select_item(tensor, "indices")
        view.tree.expand(view.proxy.mapFromSource(view.tree_model.index_of(tensor)))
        s.save("03-hex-selection.png")
    else:
        print(f"skipped 03-hex-selection.png: {sparse} not found")

    s.close_all()
    w.set_grouped(False)
    view = w.opener.show_file(sparse_big_file(work / "shard-00001-of-00004.zt"))
    view.select_item(view.tensor_file.tensors[2])
    task = w.verify()
    seen: list[int] = []
    task.signals.progress.connect(lambda done, total: seen.append(done))
    s.wait(lambda: bool(seen) and seen[-1] > task.total_bytes * 0.3)
    s.save("04-verify-in-progress.png")
    view.checks.verifier.cancel()
    s.wait(lambda: not view.checks.verifier.running)

    hostile = corpus / "hostile" / "zt01_overlapping_blobs.zt"
    if hostile.is_file():
        s.close_all()
        view = s.open(str(hostile))
        panel = w.problems_panel
        rows = [r for r in range(panel.proxy.rowCount()) if "overlaps" in (panel.proxy.index(r, 3).data() or "")]
        panel.table.selectRow(rows[0] if rows else 0)
        panel.activate_row(rows[0] if rows else 0)
        s.save("05-problems-hostile-file.png")
    else:
        print(f"skipped 05-problems-hostile-file.png: {hostile} not found")

    shoot_v2(s, work)

    s.close_all()
    light = s.app.palette()
    s.app.setPalette(dark_palette())      # what the app shows when the system is in dark mode
    view = s.open(checkpoint)
    w.set_grouped(False)
    tensor = view.tensor_file.tensor("model.layers.0.mlp.up_proj.weight")
    view.select_item(tensor, "data")
    s.save("06-dark-palette.png")
    s.app.setPalette(light)
    s.close_all()

    view = s.open(checkpoint)               # the values grid of a weight, a few cells selected
    tensor = view.tensor_file.tensor("model.layers.1.mlp.up_proj.weight")
    view.select_item(tensor)
    view.inspect_tabs.setCurrentIndex(1)
    heatmap = view.inspect.panel.heatmap
    s.wait(lambda: heatmap.data is not None and heatmap.base is not None)
    heatmap.values_button.setChecked(True)
    grid = heatmap.values
    grid.go_to(40, 3)
    from PySide6.QtCore import QItemSelection, QItemSelectionModel

    grid.table.selectionModel().select(QItemSelection(grid.model.index(40, 3), grid.model.index(43, 6)),
                                       QItemSelectionModel.SelectionFlag.ClearAndSelect)
    s.save("07-values-grid.png")

    view.inspect_tabs.setCurrentIndex(0)    # the hex find bar: a tensor name found in the header
    bar = view.decoded_bytes.find_bar
    w.actions_.find_bytes.trigger()
    bar.kind.setCurrentIndex(bar.kind.findData("text"))
    bar.pattern.setText("layers.2.mlp")
    done: list[object] = []
    bar.finished.connect(done.append)
    bar.find_next()
    s.wait(lambda: bool(done))
    s.save("08-hex-find.png")
    s.close_all()
    shoot_compare(s, checkpoint, work)
    shoot_polish(s, corpus, checkpoint)
    shoot_help(s, checkpoint)
    shoot_tt_compare(s, corpus)
    w.close()


def shoot_tt_compare(s: Shooter, corpus: Path) -> None:
    """The tensor-train browser compared with the dense original beside the file: error figures and the error
    map (TT − reference) of the reconstructed slice."""
    train = corpus / "blz" / "t3_4x5x6_truncated.blz"
    if not train.is_file():
        print(f"skipped 20-tt-compare.png: {train} not found")
        return
    s.close_all()
    view = s.open(str(train))
    view.select_item(view.tensor_file.tensors[0])
    view.inspect_tabs.setCurrentIndex(1)
    s.pump(0.3)
    tt = view.inspect.panel.tt
    tt.tabs.setCurrentWidget(tt.compare)
    tt.reconstruction.axes.set_index(0, 2)
    tt.compare.reference.setCurrentIndex(1)
    tt.compare.reference.activated.emit(1)
    s.wait(lambda: tt.compare.error is not None)
    s.pump(1.0)
    s.save("20-tt-compare.png")
    s.close_all()


def shoot_help(s: Shooter, checkpoint: str) -> None:
    """Help ▸ Keyboard Shortcuts (read from the actions, a file open so the views' keys are listed too) and
    Help ▸ Quick Guide, each grabbed as its own window."""
    s.close_all()
    s.open(checkpoint)
    for name, show in (("18-keyboard-shortcuts.png", s.window.show_shortcuts),
                       ("19-quick-guide.png", s.window.show_quick_guide)):
        dialog = show()
        s.pump(0.3)
        target = s.out / name
        dialog.grab().save(str(target))
        print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
        dialog.close()
    s.close_all()


def shoot_polish(s: Shooter, corpus: Path, checkpoint: str) -> None:
    """Issue 17: Check File surfacing a decode error; the tree at 1280×800 (names shortened by segments)."""
    w = s.window
    damaged = corpus / "hostile" / "zt10_csr_column_out_of_range.zt"
    if damaged.is_file():
        s.close_all()
        view = s.open(str(damaged))
        w.check_file()
        s.wait(lambda: not view.checks.checker.running)
        view.select_item(view.tensor_file.tensor("csr_f32_5x6"))
        s.save("21-check-file-problem.png")
    else:
        print(f"skipped 21-check-file-problem.png: {damaged} not found")
    s.close_all()
    w.resize(1280, 800)
    s.pump()
    w.dock_layout.apply_default_sizes()            # as a window opened at this size lays itself out
    view = s.open(checkpoint)
    w.set_grouped(False)
    view.select_item(view.tensor_file.tensor("model.layers.2.self_attn.q_proj.weight"))
    s.pump(0.5)
    s.save("22-tree-1280x800.png")
    s.close_all()
    w.resize(WIDTH, HEIGHT)
    s.pump()
    w.dock_layout.apply_default_sizes()


def fine_tuned(checkpoint: str, path: Path) -> str:
    """``checkpoint`` as a safetensors file after a pretend fine-tune: two weights nudged (a block of one by a
    known amount), the head renamed, the final norm dropped, an attribute changed."""
    import numpy as np

    from ztviewer.codec.arrays import save_arrays
    from ztviewer.codec.dense import to_dense
    from ztviewer.codec.multifile import open_path

    with open_path(checkpoint) as tf:
        arrays = {t.name: np.array(to_dense(tf, t)) for t in tf.tensors}
    rng = np.random.default_rng(11)
    q = arrays["model.layers.1.self_attn.q_proj.weight"]
    q[16:40, 8:30] += rng.normal(0, 0.02, (24, 22)).astype(q.dtype)
    q[21, 12] += np.float16(0.75)
    up = arrays["model.layers.2.mlp.up_proj.weight"]
    arrays["model.layers.2.mlp.up_proj.weight"] = (up * np.float16(1.01)).astype(up.dtype)
    arrays["output.weight"] = arrays.pop("lm_head.weight")
    del arrays["model.norm.weight"]
    save_arrays(path, arrays, "safetensors", attributes={"producer": "ztviewer screenshots", "step": "1200"})
    return str(path)


def shoot_compare(s: Shooter, checkpoint: str, work: Path) -> None:
    """File ▸ Compare…: the checkpoint against a fine-tuned copy, the nudged weight selected and the largest
    difference jumped to."""
    from PySide6.QtCore import Qt

    from ztviewer.gui.compare.pairs_model import FIRST_METRIC

    w = s.window
    view = w.opener.compare_paths(checkpoint, fine_tuned(checkpoint, work / "tiny-llama-tuned.safetensors"))
    s.wait(lambda: view.session.state == "done")
    view.tree_b.sortByColumn(FIRST_METRIC, Qt.SortOrder.DescendingOrder)     # largest max |Δ| first
    view.select_name("model.layers.1.self_attn.q_proj.weight")
    s.wait(lambda: view.pair_view.data is not None)
    pair_view = view.pair_view
    pair_view.worst.setCurrentIndex(pair_view.worst_model.index(0, 0))
    pair_view.worst.clicked.emit(pair_view.worst_model.index(0, 0))
    s.pump(0.5)
    s.save("12-compare.png")
    s.close_all()


def shoot_v2(s: Shooter, work: Path) -> None:
    """zTensor v2: generations and a shared blob on the file map, Properties of the file, the Generations dialog,
    an earlier generation opened read-only, and a seekable part's decoded bytes."""
    s.close_all()
    w = s.window
    w.set_grouped(False)
    path = v2_checkpoint(work / "tiny-llama-v2.zt")
    view = s.open(path)
    view.tree.expandAll()
    view.select_item(None)
    s.save("13-zt-v2-file.png")
    dialog = w.opener.show_generations()
    dialog.table.setCurrentItem(dialog.table.topLevelItem(2))
    s.pump(0.3)
    dialog.grab().save(str(s.out / "14-zt-v2-generations-dialog.png"))
    print(f"wrote {s.out / '14-zt-v2-generations-dialog.png'}")
    dialog.open_button.click()
    s.wait(lambda: w.generation_view(path, 1) is not None)
    s.pump(0.3)
    s.save("15-zt-v2-earlier-generation.png")
    w.tabs.setCurrentWidget(view)
    tensor = view.tensor_file.tensor("model.layers.0.mlp.up_proj.weight")
    view.select_item(tensor, "data")
    view.decoded_bytes.check.setChecked(True)
    view.hex_view.set_cursor(0x27FFF0)
    s.save("16-zt-v2-decoded-bytes.png")
    view.decoded_bytes.check.setChecked(False)
    shared = view.tensor_file.tensor("lm_head.weight")
    view.select_item(shared, "data")
    s.save("17-zt-v2-shared-blob.png")


def dark_palette():
    """A dark palette like the one Qt's Fusion style uses when the platform reports a dark scheme."""
    from PySide6.QtGui import QColor, QPalette

    p = QPalette()
    roles = QPalette.ColorRole
    for role, color in ((roles.Window, 0x2B2B2B), (roles.WindowText, 0xE6E6E6), (roles.Base, 0x1E1E1E),
                        (roles.AlternateBase, 0x262626), (roles.Text, 0xE6E6E6), (roles.Button, 0x333333),
                        (roles.ButtonText, 0xE6E6E6), (roles.Highlight, 0x2F6DB5), (roles.HighlightedText, 0xFFFFFF),
                        (roles.ToolTipBase, 0x333333), (roles.ToolTipText, 0xE6E6E6), (roles.Mid, 0x444444),
                        (roles.PlaceholderText, 0x8C8C8C), (roles.Light, 0x3C3C3C), (roles.Dark, 0x1A1A1A)):
        p.setColor(role, QColor(color))
    p.setColor(QPalette.ColorGroup.Disabled, roles.Text, QColor(0x6E6E6E))
    p.setColor(QPalette.ColorGroup.Disabled, roles.WindowText, QColor(0x6E6E6E))
    p.setColor(QPalette.ColorGroup.Disabled, roles.ButtonText, QColor(0x6E6E6E))
    return p


if __name__ == "__main__":
    sys.exit(main())
