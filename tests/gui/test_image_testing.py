"""The reference-image comparison saves result, baseline and diff on a mismatch and names them."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage

from tests.gui import image_testing
from tests.gui.image_testing import assert_image_matches, pixels, to_image


def _image(colour: str, width: int = 40, height: int = 30) -> QImage:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor(colour))
    return image


@pytest.fixture
def comparing(monkeypatch):
    monkeypatch.setattr(image_testing, "REGENERATE", False)


def test_pixels_are_rgb_and_round_trip_through_to_image():
    rgb = np.zeros((3, 5, 3), np.int16)
    rgb[..., 0], rgb[1, 2] = 200, (1, 2, 3)
    assert tuple(pixels(_image("#c81e0a"))[0, 0]) == (0xC8, 0x1E, 0x0A)
    np.testing.assert_array_equal(pixels(to_image(rgb)), rgb)


def test_matching_image_passes_and_writes_nothing(tmp_path, comparing):
    reference = tmp_path / "ref" / "same.png"
    reference.parent.mkdir()
    assert _image("white").save(str(reference))
    near = _image("#f0f0f0")          # within the tolerance of 24 on every channel
    out = tmp_path / "out"
    out.mkdir()
    assert_image_matches(near, reference, out)
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(("colour", "size"), [("black", (40, 30)), ("white", (41, 30))], ids=["pixels", "size"])
def test_mismatch_saves_actual_expected_and_diff(tmp_path, comparing, colour, size):
    reference = tmp_path / "ref" / "plot.png"
    reference.parent.mkdir()
    assert _image("white").save(str(reference))
    got = _image(colour, *size)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(pytest.fail.Exception) as failure:
        assert_image_matches(got, reference, out)
    saved = {kind: out / f"plot.{kind}.png" for kind in ("actual", "expected", "diff")}
    for path in saved.values():
        assert str(path) in str(failure.value)
    np.testing.assert_array_equal(pixels(QImage(str(saved["actual"]))), pixels(got))
    np.testing.assert_array_equal(pixels(QImage(str(saved["expected"]))), pixels(QImage(str(reference))))
    diff = pixels(QImage(str(saved["diff"])))
    assert diff.shape[:2] == (30, 41 if size == (41, 30) else 40)
    red = np.all(diff == (255, 0, 0), axis=2)
    if size == (40, 30):
        assert red.all()                                  # every pixel differs by 255
    else:
        assert red[:, 40].all() and not red[:, :40].any()  # only the column the reference lacks
