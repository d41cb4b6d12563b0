"""The finite volumes on triangles (one and two layers): tables.py (orderings, edge tables),
reference.py (xp), fused.py + kernels/*.cu."""
