"""Comparing a rendered image with a stored reference PNG (in the spirit of pyqtgraph's ``image_testing``).

A pixel matches when every channel is within ``tolerance`` of the reference; the comparison fails when more
than ``max_mismatch`` of the pixels do not (or the sizes differ). On failure the result, the baseline and a
diff are written beside each other in the test's ``tmp_path`` — ``<name>.actual.png``, ``<name>.expected.png``,
``<name>.diff.png`` (mismatching pixels red over a faded copy of the reference, small differences in grey) — and
the failure message names the three paths, so a CI log says where to look.

Set ``ZTVIEWER_REGEN_PNG=1`` to (re)write the references instead of comparing.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

REGENERATE = os.environ.get("ZTVIEWER_REGEN_PNG") == "1"


def pixels(image: QImage) -> np.ndarray:
    """``(height, width, 3)`` RGB channels of ``image`` as int16 (room for differences)."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    data = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes())
    bgra = data.reshape(image.height(), image.bytesPerLine() // 4, 4)[:, :image.width(), :3]
    return bgra[:, :, ::-1].astype(np.int16)


def to_image(rgb: np.ndarray) -> QImage:
    """An RGB888 image of a ``(height, width, 3)`` array (values clipped to 0-255)."""
    data = np.ascontiguousarray(np.clip(rgb, 0, 255).astype(np.uint8))
    height, width = data.shape[:2]
    return QImage(data.data, width, height, 3 * width, QImage.Format.Format_RGB888).copy()


def diff_image(got: np.ndarray, want: np.ndarray, tolerance: int) -> np.ndarray:
    """Both arrays padded to a common size; pixels beyond ``tolerance`` red, the rest a faded reference with
    their (amplified) difference in grey. Pixels only one image has count as mismatching."""
    height, width = max(got.shape[0], want.shape[0]), max(got.shape[1], want.shape[1])
    padded = []
    for array in (got, want):
        out = np.full((height, width, 3), -1, np.int16)   # -1: no pixel here
        out[:array.shape[0], :array.shape[1]] = array
        padded.append(out)
    a, b = padded
    missing = np.any(a < 0, axis=2) | np.any(b < 0, axis=2)
    delta = np.abs(a - b).max(axis=2)
    bad = missing | (delta > tolerance)
    faded = 255 - (255 - np.clip(b, 0, 255)) // 4
    grey = np.clip(faded - 4 * delta[:, :, None], 0, 255)
    grey[bad] = (255, 0, 0)
    return grey


def assert_image_matches(image: QImage, reference: Path, tmp_path: Path, *, tolerance: int = 24,
                         max_mismatch: float = 0.02) -> None:
    """Fail (saving result, baseline and diff in ``tmp_path``) unless ``image`` matches ``reference``."""
    if REGENERATE:
        reference.parent.mkdir(exist_ok=True)
        assert image.save(str(reference))
        pytest.skip(f"regenerated {reference}")
    assert reference.is_file(), f"missing reference {reference}; run with ZTVIEWER_REGEN_PNG=1 to create it"
    got, want = pixels(image), pixels(QImage(str(reference)))
    if got.shape == want.shape:
        share = float(np.any(np.abs(got - want) > tolerance, axis=2).mean())
        if share <= max_mismatch:
            return
        why = f"{share:.1%} of the pixels differ by more than {tolerance} (at most {max_mismatch:.0%} may)"
    else:
        why = f"size {got.shape[1]}×{got.shape[0]} differs from the reference's {want.shape[1]}×{want.shape[0]}"
    name = reference.stem
    saved = {kind: tmp_path / f"{name}.{kind}.png" for kind in ("actual", "expected", "diff")}
    image.save(str(saved["actual"]))
    to_image(want).save(str(saved["expected"]))
    to_image(diff_image(got, want, tolerance)).save(str(saved["diff"]))
    pytest.fail(f"{name}: {why} against {reference}\n" + "\n".join(f"  {kind}: {path}" for kind, path in saved.items()))
