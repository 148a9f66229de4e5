"""Where a file's bytes come from: the :class:`~.protocol.ByteSource` protocol and its implementations (a local
file in :mod:`ztviewer.codec.source`, bytes in memory in :mod:`.memory`, any fsspec file in :mod:`.fsspec_file`)."""
