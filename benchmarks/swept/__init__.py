"""Benchmarks of the 1D swept family: classic, classic + CUDA graphs and swept per step."""
