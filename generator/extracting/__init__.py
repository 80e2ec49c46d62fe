"""Proposing extractions: the pure core of ``carnet analyse`` (the command itself is
:mod:`generator.commands.analyse`; the checked content it reads, :class:`generator.pipeline.CheckedContent`).

A note is cut into chunks on element boundaries (:mod:`.chunks`); a model quotes
passages of each chunk; each quote is resolved by the anchoring engine to portions
and recorded as the note's own text (:mod:`.passages`); the result is a proposal
(:mod:`.records`) that ``carnet apply`` turns into extractions (:mod:`.plan`,
:mod:`.sidecar`). Element fingerprints (:mod:`.fingerprints`) let a re-analysis send
only what changed. No files, no network, no clock here: the command
(:mod:`generator.commands.analyse`) does the I/O, and only it imports ``llm/``.
"""
