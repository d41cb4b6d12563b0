"""Measurements of the curvature flows (mean-curvature, willmore): kernel, attempt and time-to-T
timings (timing.py), the phase breakdown of a persistent attempt (phases.py), the convergence
tables of docs/VALIDATION.md (eoc.py) and everything in one go on a GPU machine (gpu_check.sh)."""
