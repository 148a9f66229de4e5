"""Numerical core of the tensor views: plane selection, screen-sized images, statistics, spy plots, TT facts.

Pure numpy, no Qt: every function can run headless or on a worker thread, takes ``cancelled`` /
``progress`` callbacks where the work is long, and reads large (memory-mapped) data in bounded strips.

Modules: :mod:`.slicing` (N-D → 2-D planes, value presentation), :mod:`.reduce` (strided previews, block
reductions), :mod:`.stats` and :mod:`.tensor_stats` (streaming statistics), :mod:`.spy` and
:mod:`.structure` (sparse patterns), :mod:`.tt_view` (tensor trains).

Import from the modules themselves: this package re-exports nothing, so each name has one home and importing
one module does not load the others.
"""
