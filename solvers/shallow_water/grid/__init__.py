"""The one-layer scheme on the structured grid: reference.py (xp), fused.py + kernels/grid.cu."""
