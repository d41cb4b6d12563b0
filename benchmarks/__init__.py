"""Measurement scripts: per-family timing, phase and validation tables, the view and sweep
benchmarks. Run from the repository root (`python -m benchmarks.<family>.<script>`). Not part of
the wheel; they use pdestudio's public API and the documented `Simulation.scheme` hook only."""
