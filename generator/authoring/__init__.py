"""Authoring in the browser: ``carnet serve --edit`` (issue 59).

The server-side half of the edit layer: the safety of a write request (:mod:`.guard`),
a browser selection placed on the note's own text by the anchoring engine
(:mod:`.selection`), nested edits of an extractions file in its own layout
(:mod:`.nested`), the operations themselves, each one change through the write seam
(:mod:`.operations`), and the HTTP surface ``carnet serve`` hands its requests to
(:mod:`.api`). Nothing here runs during ``carnet build``.
"""
