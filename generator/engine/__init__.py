"""The build's engine: everything a build reuses, and how it spreads work.

The cores (``corpus``, ``anchoring``, ``synthesis``, ``verification``, ``selection``) and
``site/`` take plain data and return plain data. What makes a rebuild cheap lives here, in
one room: the memo protocol and the on-disk build cache, the worker processes, and the
callables the engine hands the cores in place of their plain loops (the notes' parse,
recalled from the cache or made in worker processes: :func:`notes.notes_parser`).
"""
