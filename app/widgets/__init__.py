"""Qt panels: the parameter panel built from a model's schema, and the profiler panel."""
