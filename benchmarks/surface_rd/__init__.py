"""Benchmarks of the surface reaction–diffusion family: the chemotaxis kernel ladder."""
