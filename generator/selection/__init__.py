"""Evidence selection (INV-10): embeddings, single-linkage groups with explained
memberships and chaining warnings, oppositions, debate order, and a 2-D map.
Pure, apart from the oppositions pass (``carnet select --oppositions``), which calls
the LLM seam."""
