"""Why a shallow-water run stopped, and the advice that helps (issue 16, item 5).

Dry cells are out of scope of these schemes (no wetting and drying): every depth (h, or h1 and h2
of the two layers) must stay > 0. A Roe-type step is not positivity-preserving near h = 0, so a
strong rarefaction (flows moving apart at about 2 (√(g h_L) + √(g h_R)) or faster), a bottom that
rises to the free surface or a layer that thins out can leave a depth ≤ 0 after some step; the
step after that takes √h of it and the state turns NaN. The generic finiteness check of the base
class saw only that NaN, one step late: it kept a state with a negative depth and advised reducing
the time step.

Measured on a dam break that forms a dry core (still water 1 m deep, ±10 m/s apart; tests/solvers/
shallow_water/test_guards.py): a smaller cfl is no reliable cure. First order on a 40 × 4 grid went
dry at cfl 0.9 and passed at 0.5 (refilled by the walls' reflections), on 200 × 4 went dry down to
cfl 0.5 and passed at 0.2; on triangles the Roe schemes went dry down to cfl 0.5, ir-roe on 4,000
cells again at 0.05, pvm-ifcp at every cfl down to 0.05; third order turned non-finite with every
cell average still > 0 (the reconstruction dips below 0 at the edge of a nearly dry cell) at every
cfl from 0.5 to 0.05 (docs/VALIDATION.md, `python -m benchmarks.shallow_water.validate_domain`).
So the advice says what the cause is and that cfl helps only against a CFL instability.

`first_bad` checks, in the same single host sync as the finiteness of every field, that every
depth is > 0 (one more reduction per depth field per check interval of 64 steps; the replay of
the base class then finds the step that emptied the cell and keeps the state from before it). A
depth ≤ 0 is reported as a `DryCell`, a SimulationDiverged whose message names the field, its
minimum and where it is; every divergence carries `advice` (for two layers with the number of
edges whose Roe matrix has complex internal eigenvalues, a loss of hyperbolicity under shear).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import SimulationDiverged
from .riemann import _Edge2, quartic_roots

DRY = {  # why a depth reached 0 and what to change
    1: ("Dry cells (h <= 0) are out of scope of these schemes (no wetting and drying): a strong "
        "rarefaction nearly emptied the cell (flows moving apart at about 2(sqrt(g h_L) + "
        "sqrt(g h_R)) or faster leave a dry core) or the bottom comes up to the free surface, "
        "and the step, not positivity-preserving near h = 0, went below 0. Keep the water "
        "deeper there (a higher free surface eta or a lower bottom, i.e. larger H) or the "
        "velocities smaller. "),
    2: ("A layer that vanishes (h1 or h2 <= 0) is out of scope of these schemes: the interface "
        "reached the free surface or the bottom, or a strong rarefaction emptied the layer, and "
        "the step, not positivity-preserving near 0, went below 0. Keep both layers thicker "
        "there (the interface away from the surface and the bottom) or the velocities "
        "smaller. "),
}
DRY_CFL = ("A smaller cfl is no cure: it helps only for a CFL instability, which this is not; "
           "near h = 0 it sometimes carries a first-order run further, not reliably, and the "
           "near-dry flow stays out of scope.")
NONFINITE = {
    1: ("From a state with every depth > 0 one step turns non-finite where a depth is close to "
        "0 (u = q/h overflows; with order 3 the reconstruction dips below 0 at the edge of a "
        "nearly dry cell) or where the data are extreme (velocities, g). The smallest depth of "
        "the state kept: {low}. Keep h well above 0 (order=1 is more robust near dry cells). "),
    2: ("From a state with both layers > 0 one step turns non-finite where a layer is close to "
        "0 (u = q/h overflows) or where the data are extreme (velocities, g). The thinnest "
        "layer of the state kept: {low}. Keep both layers thicker. "),
}
NONFINITE_CFL = ("Reducing cfl helps only for a CFL instability; if the run fails the same way "
                 "at a smaller cfl, the cause is one of the above.")
SHEAR = ("In the state kept {n} of {m} edges have complex internal eigenvalues: the shear "
         "|u1 - u2| exceeds what the internal waves carry, roughly (u1 - u2)^2 > (1 - r) g "
         "(h1 + h2) (a loss of hyperbolicity, Kelvin-Helmholtz). The Roe schemes fall back to "
         "the IFCP viscosity on those edges; "
         "{scheme}a density ratio r further below 1 (a larger density difference) widens the "
         "hyperbolic range, and weaker shear avoids it. ")
PVM = "scheme=pvm-ifcp, more dissipative than the Roe schemes, smooths such regions more; "


class DryCell(SimulationDiverged):
    """A step left a depth <= 0 (a dry cell or a vanished layer). Like every SimulationDiverged
    the state from before that step is kept; `low` is the depth's minimum after the step and
    `where` its cell centre (x, y)."""

    def __init__(self, model: str, t: float, step: int, field: str, low: float,
                 where: tuple[float, float], advice: str):
        super().__init__(model, t, step, field, advice)
        self.low, self.where = low, where
        self.args = (
            f"{model}: the depth '{field}' reached {low:.3g} (<= 0: a dry cell) at x = "
            f"{where[0]:.6g}, y = {where[1]:.6g} in step {step + 1} (from t = {t:.6g}); the state "
            f"from before that step (step {step}, t = {t:.6g}) is kept. " + self.advice,)

    def __str__(self) -> str:
        return self.args[0]


def bad_checks(sim, depths: tuple[str, ...]) -> list:
    """first_bad's checks as 0-d device arrays (no host sync): each field finite, then each
    depth > 0."""
    be, state = sim._be, sim.state
    return [be.all_finite(state[k]) for k in state] + [be.all_positive(state[k]) for k in depths]


def first_bad(sim, depths: tuple[str, ...], ok=None):
    """(field, why) of the first field that is not finite or depth that is not > 0, why being
    None (non-finite) or (minimum, flat index) for a finite depth <= 0; None if all is well.
    `ok`: the host values of `bad_checks` where they were read already; else one host sync
    for all checks."""
    xp, state = sim.xp, sim.state
    names = list(state)
    if ok is None:
        ok = sim._be.asnumpy(xp.stack(bad_checks(sim, depths)))
    if np.all(ok):
        return None
    for k, good in zip(depths, ok[len(names):]):
        if not good:  # finite depths <= 0 come first: the NaN that follows is their consequence
            v = state[k]
            low = xp.where(xp.isfinite(v), v, xp.inf).min()
            i = int(xp.argmin(xp.where(xp.isfinite(v), v, xp.inf)))
            if float(low) <= 0:
                return k, (float(low), i)
    for k, good in zip(names, ok):
        if not good:
            return k, None
    return None


def nonhyperbolic_edges(sim) -> tuple[int, int]:
    """(edges whose Roe matrix has complex internal eigenvalues, edges) of a two-layer
    simulation's current state (riemann.quartic_roots' discriminant < 0 at the Roe state of
    riemann._Edge2, in float64 with the simulation's xp). For a diverged run's message only."""
    t, xp = sim.tables, sim.xp
    W = sim.W.astype(xp.float64)
    H = sim.state["H"].astype(xp.float64)
    left = xp.asarray(t.edge_l.astype(np.int64))
    right = xp.asarray(np.where(t.edge_r >= 0, t.edge_r, t.edge_l).astype(np.int64))
    f = lambda a: xp.asarray(a, dtype=xp.float64)  # noqa: E731
    with np.errstate(all="ignore"):
        e = _Edge2(xp, tuple(W[:, left]), tuple(W[:, right]), H[left], H[right], f(t.nx),
                   f(t.ny), xp.asarray(t.edge_r < 0), sim.params["g"], sim.params["r"])
        um = 0.5 * (e.u1 + e.u2)
        disc2 = quartic_roots(xp, e.u1 - um, e.u2 - um, xp.sqrt(e.c1s), xp.sqrt(e.c2s),
                              e.r)[-1]
        n = int(xp.count_nonzero(disc2 < 0))
    return n, t.n_edges


def smallest_depth(sim) -> str:
    """'<value> (<field>) at x = .., y = ..' of the smallest finite depth of the current state."""
    xp, best = sim.xp, None
    for k in sim.state_names[::3]:
        v = sim.state[k]
        i = int(xp.argmin(xp.where(xp.isfinite(v), v, xp.inf)))
        low = float(v.ravel()[i])
        if best is None or low < best[0]:
            best = (low, k, i)
    low, k, i = best
    x, y = sim._cell_xy(i)
    return f"{low:.3g} ({k}) at x = {x:.6g}, y = {y:.6g}"


def advice(sim, why) -> str:
    """The advice of a divergence of `sim`: `why` as from first_bad (None: not known)."""
    layers = sim.layers
    dry = why is not None and why[1] is not None
    text = DRY[layers] if dry else NONFINITE[layers].format(low=smallest_depth(sim))
    if layers == 2:
        n, m = nonhyperbolic_edges(sim)
        if n:
            pvm = PVM if sim.params["scheme"] != "pvm-ifcp" else ""
            text += SHEAR.format(n=n, m=m, scheme=pvm)
    return text + (DRY_CFL if dry else NONFINITE_CFL)
