"""The `xp` scheme of model files (docs/EQUATIONS.md): the float64 reference, the CPU backend and
the GPU array path. The tree of expr.py is walked node by node over arrays (nothing is ever
passed to eval); the operators come from ops.py.

Explicit integrators, all written in one stage form so that the fused CUDA scheme runs the same
recurrence (one kernel per stage): with U the state at the start of the step, Y the stage value
(Y = U for the first stage), k = f(Y, t + c·dt) and acc an accumulator,

    out = a0·U + a1·Y + a2·dt·k + a3·acc,        acc += b·dt·k

    euler    (c, a0, a1, a2, a3, b) = (0, 1, 0, 1, 0, 0)
    ssprk3   (0, 1, 0, 1, 0, 0), (1, 3/4, 1/4, 1/4, 0, 0), (1/2, 1/3, 2/3, 2/3, 0, 0)
             (Shu–Osher; stable for dt·λ ≤ 2.51 on the negative axis)
    rk4      (0, 1, 0, 1/2, 0, 1/6), (1/2, 1, 0, 1/2, 0, 1/3), (1/2, 1, 0, 1, 0, 1/3),
             (1, 1, 0, 1/6, 1, 0)      (stable for dt·λ ≤ 2.785)

Species with a positive edge flux on a mesh (system.Transport) take, each step, at most
THETA / max_i λ_i with λ_i the vertex's loss rate per unit density (edge losses plus
max(−R_i/s_i, 0) of the reaction R), as chemotaxis' positive scheme does (docs/MODELS.md).
"""
from __future__ import annotations

import numpy as np

from ..core.scheme import SchemeBase

THETA = 0.9
TABLEAUS = {
    "euler": ((0.0, 1.0, 0.0, 1.0, 0.0, 0.0),),
    "ssprk3": ((0.0, 1.0, 0.0, 1.0, 0.0, 0.0), (1.0, 0.75, 0.25, 0.25, 0.0, 0.0),
               (0.5, 1 / 3, 2 / 3, 2 / 3, 0.0, 0.0)),
    "rk4": ((0.0, 1.0, 0.0, 0.5, 0.0, 1 / 6), (0.5, 1.0, 0.0, 0.5, 0.0, 1 / 3),
            (0.5, 1.0, 0.0, 1.0, 0.0, 1 / 3), (1.0, 1.0, 0.0, 1 / 6, 1.0, 0.0)),
}
STABILITY = {"euler": 2.0, "ssprk3": 2.5127, "rk4": 2.7853, "imex": 2.0, "imex1": 2.0,
             "imex3": 2.0, "imex443": 2.0}
IMEX = ("imex", "imex1", "imex3", "imex443")  # ARS(2,2,2), Euler, ARS(3,4,3), ARS(4,4,3) (imex.py)


def _is_array(a) -> bool:
    return hasattr(a, "shape") and getattr(a, "ndim", 0) > 0



def combine_stage(sim, U, Y, k, acc, coeffs, dt):
    """One stage of the tableau (module docstring): out = a0·U + a1·Y + a2·dt·k + a3·acc and
    acc += b·dt·k, species by species in the real type; (out, acc)."""
    a0, a1, a2, a3, b = coeffs
    real = sim.real
    nxt = {}
    for s in sim.species:
        v = U[s] if a0 == 1.0 else real(a0) * U[s]
        if a1:
            v = v + real(a1) * Y[s]
        v = v + real(a2 * dt) * k[s]
        if a3:
            v = v + real(a3) * acc[s]
        nxt[s] = v
    if b:
        acc = {s: (0 if acc is None else acc[s]) + real(b * dt) * k[s] for s in sim.species}
    return nxt, acc

class Evaluator:
    """Evaluates operator-free trees over `xp` arrays of real type `dtype`; Python floats stay
    floats (weak scalars: a float32 field stays float32)."""

    def __init__(self, xp, dtype):
        self.xp, self.dtype = xp, dtype

    def __call__(self, tree, env):
        with np.errstate(all="ignore"):
            return self.ev(tree, env)

    def _bool(self, a):
        if _is_array(a):
            return a.astype(self.dtype)
        return float(bool(a))

    def _scalar(self, fn, *args):
        if any(_is_array(a) for a in args):
            return fn(*args)
        return float(fn(*[np.float64(a) for a in args]))

    def ev(self, n, env):
        xp, k = self.xp, n[0]
        if k == "num":
            return n[1]
        if k == "var":
            if n[1] == "pi":
                return float(np.pi)
            return env[n[1]]
        if k == "neg":
            return -self.ev(n[1], env)
        if k in ("add", "sub", "mul", "div", "pow"):
            a, b = self.ev(n[1], env), self.ev(n[2], env)
            if k == "add":
                return a + b
            if k == "sub":
                return a - b
            if k == "mul":
                return a * b
            if k == "div":
                return self._scalar(lambda p, q: p / q, a, b)
            return self._scalar(lambda p, q: p ** q, a, b)
        if k == "cmp":
            a, b = self.ev(n[2], env), self.ev(n[3], env)
            op = n[1]
            r = {"<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b,
                 ">=": lambda: a >= b, "==": lambda: a == b, "!=": lambda: a != b}[op]()
            return self._bool(r)
        if k in ("and", "or"):
            a, b = self.ev(n[1], env), self.ev(n[2], env)
            f = xp.logical_and if k == "and" else xp.logical_or
            return self._bool(f(a != 0, b != 0))
        if k == "not":
            return self._bool(self.ev(n[1], env) == 0)
        if k == "fn":
            args = [self.ev(a, env) for a in n[2]]
            return self._scalar(lambda *a: self.function(n[1], *a), *args)
        raise ValueError(f"operator node {k} outside a term")  # split() keeps them out

    def function(self, name, *a):
        xp = self.xp if any(_is_array(x) for x in a) else np
        if name == "min":
            return xp.minimum(a[0], a[1])
        if name == "max":
            return xp.maximum(a[0], a[1])
        if name == "where":
            c, p, q = a
            return xp.where(c != 0, p, q)
        if name == "heaviside":
            return xp.where(a[0] >= 0, 1.0, 0.0).astype(self.dtype) if _is_array(a[0]) \
                else float(a[0] >= 0)
        return getattr(xp, name)(a[0])


class Rates:
    """f(Y, t) of a model on its operators: {species: rate} and the positive-flux loss rates."""

    def __init__(self, sim, ops, xp, dtype):
        self.sim, self.ops, self.xp, self.dtype = sim, ops, xp, dtype
        self.ev = Evaluator(xp, dtype)
        self.coords = {k: xp.asarray(v, dtype=dtype) for k, v in sim.coords.items()}

    def env(self, Y, t):
        env = {**self.coords, **{k: float(v) for k, v in self.sim.user_params.items()},
               "t": float(t), **Y}
        for name, tree in self.sim.definition.algebraic.items():
            env[name] = self._full(self.ev(tree, env))
        return env

    def _full(self, a):
        if _is_array(a):
            return a
        return self.xp.full(self.ops.size if not hasattr(self.ops, "shape") else self.ops.shape,
                            a, dtype=self.dtype)

    def __call__(self, Y, t, implicit=()):
        """({species: dY/dt}, λ max or None). `implicit`: (species, coef) lap terms left out
        (IMEX)."""
        env = self.env(Y, t)
        ops, ev = self.ops, self.ev
        out, lam = {}, None
        for s in self.sim.species:
            split = self.sim.splits[s]
            terms = self.sim.central_terms[s]
            rate = 0
            tr = self.sim.transports.get(s)
            if tr is not None:
                D, alpha = float(ev(tr.D, env)), float(ev(tr.alpha, env))
                rate, loss = ops.positive(Y[s], env[tr.v], D, alpha)
            for term in terms:
                if (s, term) in implicit:
                    continue
                c = ev(term.coef, env)
                if term.kind == "lap":
                    rate = rate + c * ops.lap(env[term.operand], term.operand, env, ev)
                else:
                    K = ev(term.K, env)
                    rate = rate + c * ops.divgrad(K, env[term.operand], term.operand, env, ev)
            R = ev(split.reaction, env)
            rate = rate + R
            if tr is not None:
                xp = self.xp
                n = Y[s]
                react = xp.where(n > 0, xp.maximum(-R / xp.where(n > 0, n, 1), 0), 0)
                lam_s = float((loss + react).max())
                lam = lam_s if lam is None or not lam_s <= lam else lam
            out[s] = self._full(rate)
        return out, lam


class ExplicitReference(SchemeBase):
    """The explicit integrators of the module docstring with the model's step `sim.dt`."""

    def __init__(self, sim):
        super().__init__(sim)
        self.ops = sim.make_ops(sim.xp, sim.real)
        self.rates = Rates(sim, self.ops, sim.xp, sim.real)

    def step(self, t, dt_limit):
        sim = self.sim
        dt = sim.dt if dt_limit is None else min(sim.dt, dt_limit)
        U = dict(sim.state)
        Y, acc = U, None
        stages = TABLEAUS[sim.params["integrator"]]
        for i, (c, a0, a1, a2, a3, b) in enumerate(stages):
            k, lam = self.rates(Y, t + c * dt)
            if i == 0 and lam is not None:
                if not lam >= 0:
                    return float("nan")
                if lam > 0:
                    dt = min(dt, THETA / lam)
            nxt, acc = combine_stage(sim, U, Y, k, acc, (a0, a1, a2, a3, b), dt)
            t_out = t + (stages[i + 1][0] if i + 1 < len(stages) else 1.0) * dt
            self.pin(nxt, t_out)
            Y = nxt
        for s in sim.species:
            sim.state[s] = Y[s]
        return dt

    def pin(self, Y, t):
        """Dirichlet nodes (vertex grids, mesh boundaries) set to their values at time t."""
        if not any(self.ops.pinned(s) for s in self.sim.species):
            return
        env = self.rates.env(Y, t)
        for s in self.sim.species:
            if self.ops.pinned(s):
                Y[s] = self.ops.pin_values(Y[s].copy(), s, env, self.rates.ev)
