"""How many nodes ks-1d needs per unit length: the experiment behind its resolution guard.

    python -m benchmarks.swept.ks_resolution [--T 1000] [--lengths 16 32 64] [--density 0.7 ...] [--jobs 2]

Kuramoto–Sivashinsky's unstable band is 0 < k < 1 and its chaotic attractor carries energy up to
k ≈ 2 (fastest growth at k = 1/√2, a cell size of about 2π·√2 ≈ 8.9). For each domain length L
(in units of π) and each density ν = nx / L (nodes per unit length), the registered model (NumPy,
its default dt, the scenario's initial state) runs to T; the script reports when it diverges and,
where it does not, the time mean over [100, T] (every 2 time units) of ⟨u²⟩ and of the dominant
wavelength, beside a spectral reference (ETDRK4, Kassam & Trefethen 2005, h = 1/32, 8L/π modes,
the nonlinear term dealiased by the 2/3 rule) of the same initial value problem. A grid is
*wrong* where ⟨u²⟩ is off by more than 20 % or the dominant wavelength by more than 10 % from the
reference (the chaotic state's statistics, not its trajectory, can be compared after t ≈ 100).
The model is built unguarded (a subclass with min_nodes_per_length = 0), so that grids below the
guard can be run. The table in docs/VALIDATION.md comes from the defaults (≈ 5 min, 1 job).

Beyond the public API it imports the model class (core.registry) for its resolution guard's constant.
"""
from __future__ import annotations

import argparse
import math
from multiprocessing import Pool

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.core.registry import model_class


def sample_times(T):
    """The times the statistics average over: every 2 time units in [min(100, T/3), T]."""
    t0 = min(100.0, T / 3)
    return np.linspace(t0, T, int((T - t0) / 2) + 1)


def spectrum_stats(us, L):
    """Time means of ⟨u²⟩ and of the wavelength of the largest Fourier mode (k ≥ 1)."""
    e = float(np.mean([np.mean(u * u) for u in us]))
    lam = []
    for u in us:
        a = np.abs(np.fft.rfft(u))
        k = 1 + int(np.argmax(a[1:]))
        lam.append(L / k)
    return e, float(np.mean(lam))


def spectral_reference(L, T, samples):
    """ETDRK4 on N = 8L/π modes with the 2/3 rule, h = 1/32 (Kassam & Trefethen's kursiv.m),
    sampled at `samples`."""
    N = int(8 * L / math.pi) // 2 * 2
    x = L * np.arange(N) / N
    u = np.cos(2 * np.pi * x / L) * (1 + np.sin(2 * np.pi * x / L))
    v = np.fft.rfft(u)  # real transforms: with fft/ifft, the anti-Hermitian round-off at the
    # unstable wavenumbers grows unseen as exp(t/4) and swamps u by t ≈ 250
    h = 1 / 32  # |u| k_max h ≲ 1 (k_max = 8): the explicit nonlinear part stays stable
    k = 2 * np.pi / L * np.arange(N // 2 + 1)
    Lk = k**2 - k**4
    E, E2 = np.exp(h * Lk), np.exp(h * Lk / 2)
    M = 32
    r = np.exp(1j * np.pi * (np.arange(1, M + 1) - 0.5) / M)
    LR = h * Lk[:, None] + r[None, :]
    Q = h * np.real(np.mean((np.exp(LR / 2) - 1) / LR, axis=1))
    f1 = h * np.real(np.mean((-4 - LR + np.exp(LR) * (4 - 3 * LR + LR**2)) / LR**3, axis=1))
    f2 = h * np.real(np.mean((2 + LR + np.exp(LR) * (-2 + LR)) / LR**3, axis=1))
    f3 = h * np.real(np.mean((-4 - 3 * LR - LR**2 + np.exp(LR) * (4 - LR)) / LR**3, axis=1))
    g = -0.5j * k
    g[np.arange(N // 2 + 1) >= N / 3] = 0  # dealiasing (2/3 rule)

    def nl(w):
        return g * np.fft.rfft(np.fft.irfft(w, N) ** 2)
    out = []
    nsteps = int(round(T / h))
    want = {int(round(s / h)) for s in samples}
    for n in range(1, nsteps + 1):
        Nv = nl(v)
        a = E2 * v + Q * Nv
        Na = nl(a)
        b = E2 * v + Q * Na
        Nb = nl(b)
        c = E2 * a + Q * (2 * Nb - Nv)
        Nc = nl(c)
        v = E * v + Nv * f1 + 2 * (Na + Nb) * f2 + Nc * f3
        if n in want:
            out.append(np.fft.irfft(v, N))
    return out


def run_model(args):
    Lpi, nu, T = args
    L = Lpi * math.pi
    nx = max(8, int(round(nu * L)))
    samples = sample_times(T)
    cls = model_class("ks-1d")
    unguarded = type("UnguardedKS", (cls,), {"min_nodes_per_length": 0.0})  # no refusal
    sim = unguarded(backend="numpy", nx=nx, L=L)
    us = []
    try:
        for s in samples:
            sim.advance(float(s))
            us.append(np.array(sim.fields()["u"]))
    except solvers.SimulationDiverged:
        return Lpi, nu, nx, sim.t, None, None
    e, lam = spectrum_stats(us, L)
    return Lpi, nu, nx, None, e, lam


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=float, default=1000.0)
    ap.add_argument("--lengths", type=float, nargs="+", default=[16, 32, 64],
                    help="domain lengths L in units of π")
    ap.add_argument("--density", type=float, nargs="+",
                    default=[0.7, 0.75, 0.8, 0.9, 1.0, 1.2, 1.5, 2.0],
                    help="nodes per unit length nx / L")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    T = a.T
    refs = {}
    for Lpi in a.lengths:
        L = Lpi * math.pi
        refs[Lpi] = spectrum_stats(spectral_reference(L, T, sample_times(T)), L)
    jobs = [(Lpi, nu, T) for Lpi in a.lengths for nu in a.density]
    with Pool(a.jobs) as pool:
        rows = pool.map(run_model, jobs)
    print(f"ks-1d, default dt, u0 = cos(2πx/L)(1 + sin(2πx/L)), T = {T:g}; statistics every 2 time "
          f"units over [min(100, T/3), T]; reference: ETDRK4 spectral")
    print("| L | nx | nodes per unit length | nodes per 2π | diverged at t | ⟨u²⟩ (ref) | "
          "dominant wavelength (ref) | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    for Lpi, nu, nx, tdiv, e, lam in rows:
        er, lr = refs[Lpi]
        L = Lpi * math.pi
        if tdiv is not None:
            verdict, e_s, l_s, td = "diverges", "–", "–", f"{tdiv:.1f}"
        else:
            wrong = abs(e - er) > 0.2 * er or abs(lam - lr) > 0.1 * lr
            verdict = "wrong statistics" if wrong else "ok"
            e_s, l_s, td = f"{e:.3f} ({er:.3f})", f"{lam:.2f} ({lr:.2f})", "–"
            verdict += f" (⟨u²⟩ {100 * (e - er) / er:+.0f} %)"
        print(f"| {Lpi:g}π | {nx} | {nx / L:.3f} | {2 * math.pi * nx / L:.2f} | {td} | {e_s} | "
              f"{l_s} | {verdict} |")


if __name__ == "__main__":
    main()
