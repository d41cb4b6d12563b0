"""Measurements of the shared machinery (core/): the brush's geodesic distances against exact
polyhedral ones (geodesic_brush.py)."""
