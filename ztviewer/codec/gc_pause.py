"""The cyclic garbage collector paused while a reader builds the model of a large file (:func:`building_many`)."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def building_many() -> Iterator[None]:
    """Pause the cyclic garbage collector while a reader builds the model of a large file.

    A 10,000-tensor manifest allocates some 100,000 small acyclic containers. With the collector running,
    they trigger collection after collection that rescan the growing object graph; resumed afterwards, its
    first young collection would still walk all of them once. They all live as long as the open file, so
    on success they are filed straight with the oldest generation (``gc.freeze`` then ``gc.unfreeze``: two
    list splices, no traversal), as the collector itself would after two young collections. Skipped when
    the collector was already off or the program keeps objects frozen (``gc.freeze``) for itself.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
    finally:
        gc.enable()
