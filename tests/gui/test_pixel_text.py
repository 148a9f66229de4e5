"""The hover read-out's "pixel:" part: what a reduced image shows at an element, nothing for exact or preview."""
import numpy as np

from ztviewer.analysis.plane_jobs import Rendered
from ztviewer.analysis.reduce import Image
from ztviewer.gui.views.inspect.image_jobs import pixel_text


def _rendered(method: str, base: bool = True, step: int = 10) -> Rendered:
    data = np.array([[1.0, 2.0], [3.0, 4.5]], np.float32)
    edges = np.array([0, step, 2 * step], np.int64)
    return Rendered(Image(data, edges, edges, method), (0, 2 * step, 0, 2 * step), base)


def test_the_first_reduced_image_answers():
    peak, detail = _rendered("peak"), _rendered("maxabs", base=False)
    assert pixel_text((None, peak), 15, 3) == "peak = 3"
    assert pixel_text((detail, peak), 19, 19) == "maxabs = 4.5"     # the zoomed detail first
    assert pixel_text((_rendered("strided"), peak), 0, 12) == "peak = 2"
    assert pixel_text((_rendered("strided"), _rendered("exact", step=1)), 0, 0) == ""
    assert pixel_text((peak,), 25, 0) == ""                         # outside the image


def test_exact_values_over_the_element_are_the_answer_not_the_overview_block():
    exact = Rendered(Image(np.array([[7.0]], np.float32), np.array([5, 6]), np.array([5, 6]), "exact"),
                     (5, 6, 5, 6), False)
    peak = _rendered("peak")
    assert exact.image.exact
    assert pixel_text((exact, peak), 5, 5) == ""                    # the zoomed exact detail shows the element
    assert pixel_text((exact, peak), 15, 3) == "peak = 3"           # outside the detail: the overview's block
