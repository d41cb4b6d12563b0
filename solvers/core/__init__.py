"""Backend choice, parameter schema, errors, the Simulation base class, registry, integrators."""
