"""Citation verification (INV-7): per (claim, source) pair, a verbatim check in every
build, cached NLI verdicts written by ``carnet verify`` (or by people), human
contestations, and the state each pair shows with its provenance. Pure, apart from
the judge in :mod:`generator.verification.judge`, the only part that calls a model."""
