"""Format modules: one reader per format; :mod:`.magic` recognises them and :mod:`ztviewer.codec.registry`
lists the built-in ones."""
