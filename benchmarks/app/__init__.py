"""Measurements of the app's frame hand-over (solver thread -> screen), without Qt."""
