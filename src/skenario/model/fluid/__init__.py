"""Fluid mode's plant: requests as levels and flows instead of entities (issue 34, in progress)."""
