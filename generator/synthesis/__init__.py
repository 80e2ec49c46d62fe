"""Synthesis layer: coverage now; perimeters, citations, discarded evidence later. Pure."""
