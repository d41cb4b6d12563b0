"""The three errors of the public contract (docs/MODELS.md §0).

`ParameterError` and `MeshError` are `ValueError`s: bad input, raised before any state changes.
`SimulationDiverged` is raised when a step produces non-finite values; the simulation keeps the
state from before the failing step.
"""


class ParameterError(ValueError):
    """An unknown model, scenario, parameter or field, or a value outside its allowed range."""


class MeshError(ValueError):
    """A mesh file that cannot be used: unreadable, not triangles, degenerate, out-of-range indices."""


class SimulationDiverged(RuntimeError):
    """The solution became non-finite. Names the time, the step and the field."""

    DEFAULT_ADVICE = "Reduce the time step (cfl, dt, tolerance) or check the parameters."

    def __init__(self, model: str, t: float, step: int, field: str, advice: str | None = None):
        self.model, self.t, self.step, self.field = model, t, step, field
        self.advice = advice or self.DEFAULT_ADVICE
        super().__init__(
            f"{model}: field '{field}' became non-finite in step {step + 1} (from t = {t:.6g}); "
            f"the state from before that step (step {step}, t = {t:.6g}) is kept. "
            + self.advice
        )


class NonFiniteStep(ArithmeticError):
    """Internal: an integrator met a non-finite error estimate or step. The Simulation base class
    turns it into SimulationDiverged with the state from before the step."""
