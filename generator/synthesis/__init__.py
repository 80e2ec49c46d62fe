"""Synthesis layer: claims and citations, perimeters, discarded evidence, coverage, the lifecycle
of directed syntheses, section operations. Pure."""
