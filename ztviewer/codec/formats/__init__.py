"""Format modules: each defines a ``HANDLER``; :mod:`ztviewer.codec.registry` lists the built-in ones."""
