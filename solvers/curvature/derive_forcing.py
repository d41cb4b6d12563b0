"""Symbolic derivation of the `eoc-exact` forcing ([P0], eq. (30); docs/MODELS.md §1.5). Run once:

    python -m pdestudio.solvers.curvature.derive_forcing
        (needs sympy; writes exact_ops.py, the companion of exact.py, and kernels/exact_ops.cuh)

The continuous right-hand-side operators of docs/MODELS.md §1.1 are written for a generic graph φ(x, y),
    L_mc[φ] = Q ∇·(∇φ/Q),                 Q = sqrt(1 + |∇φ|²)
    w[φ]    = L_mc[φ]
    L_w[φ]  = −Q ∇·( (1/Q) P ∇w − ½ (w²/Q³) ∇φ ),   P = I − (∇φ/Q) ⊗ (∇φ/Q),
and expanded into expressions in the partial derivatives p_ab = ∂x^a ∂y^b φ (a + b ≤ 4). The exact
solution ζ = cos(πt) X(x) Y(y) with X(x) = (x^n − r^n) exp(−σx²) / r^n (and Y likewise) has
p_ab = cos(πt) X^(a)(x) Y^(b)(y); X^(k) follows from Leibniz's rule with the derivatives of
exp(−σx²) = e(x) h_m(x) (polynomials h_m, also derived here) and of x^n (a falling factorial, done
at run time, so that any integer n ≥ 1 works). The forcing is F = ζ_t − L[ζ]. The generated
modules need no sympy and hold no parameter values: r, n, σ enter at run time.
"""
from __future__ import annotations

from pathlib import Path

import sympy as sp
from sympy.printing.c import C99CodePrinter

HERE = Path(__file__).resolve().parent
ORDER = [(a, k - a) for k in range(5) for a in range(k, -1, -1)]  # p00, p10, p01, p20, p11, ...


def pname(a: int, b: int) -> str:
    return f"p{a}{b}"


def operators():
    x, y = sp.symbols("x y", real=True)
    phi = sp.Function("phi")(x, y)
    grad = sp.Matrix([phi.diff(x), phi.diff(y)])
    Q = sp.sqrt(1 + grad.dot(grad))
    div = lambda v: v[0].diff(x) + v[1].diff(y)  # noqa: E731
    w = Q * div(grad / Q)
    n = grad / Q
    P = sp.eye(2) - n * n.T
    gw = sp.Matrix([w.diff(x), w.diff(y)])
    flux = P * gw / Q - sp.Rational(1, 2) * w**2 / Q**3 * grad
    lw = -Q * div(flux)
    subs = {}
    for a, b in sorted(ORDER, key=lambda ab: -(ab[0] + ab[1])):
        if a + b == 0:
            continue
        d = phi
        if a:
            d = d.diff(x, a)
        if b:
            d = d.diff(y, b)
        subs[d] = sp.Symbol(pname(a, b))
    def to_p(e):  # noqa: E306
        return e.subs(subs)
    return to_p(w), to_p(lw)


def gauss_polys(kmax: int = 4):
    """h_m with d^m/dx^m exp(−σx²) = h_m(x) exp(−σx²)."""
    x, s = sp.symbols("x sigma", real=True)
    e = sp.exp(-s * x**2)
    return [sp.expand(sp.simplify(e.diff(x, m) / e)) for m in range(kmax + 1)]


def py_function(name, args, expr, doc):
    reps, (red,) = sp.cse([expr], symbols=sp.numbered_symbols("c"), optimizations="basic")
    lines = [f"def {name}({', '.join(args)}, xp=np):", f'    """{doc}"""']
    from sympy.printing.pycode import PythonCodePrinter
    printer = PythonCodePrinter({"fully_qualified_modules": False})
    def pr(e):  # noqa: E306
        s = printer.doprint(e)
        return s.replace("math.sqrt", "xp.sqrt")
    for sym, val in reps:
        lines.append(f"    {sym} = {pr(val)}")
    lines.append(f"    return {pr(red)}")
    return "\n".join(lines), len(reps)


class _TypedCPrinter(C99CodePrinter):
    """C for a template on the real type T: integer powers as products, constants as T(p)/T(q)."""

    def _print_Pow(self, e):
        b, k = e.base, e.exp
        if k.is_Integer and 1 <= abs(int(k)) <= 4:
            base = self.parenthesize(b, 100)  # atoms stay bare, sums get brackets
            prod = "*".join([base] * abs(int(k)))
            return f"({prod})" if k > 0 else f"(T(1)/({prod}))"
        if k == sp.Rational(1, 2):
            return f"sqrt_t({self._print(b)})"
        if k == -sp.Rational(1, 2):
            return f"(T(1)/sqrt_t({self._print(b)}))"
        raise ValueError(f"unexpected power {e}")

    def _print_Rational(self, e):
        return f"(T({e.p})/T({e.q}))"

    def _print_Integer(self, e):
        return f"T({e.p})"


def rational_in_c(expr):
    """With p_ab = c q_ab (the exact solution is cos(πt) times a fixed graph):
    expr = Σ_m coef_m c^m / (1 + c² B)^K, B = q10² + q01². Returns ([coef_1, coef_3, ...], K)
    after checking that only odd powers of c occur and that the denominator has this form."""
    c = sp.Symbol("c")
    subs = {sp.Symbol(pname(a, b)): c * sp.Symbol("q" + pname(a, b)[1:]) for a, b in ORDER
            if a + b}
    num, den = sp.fraction(sp.together(expr.subs(subs)))
    D = 1 + c**2 * (sp.Symbol("q10") ** 2 + sp.Symbol("q01") ** 2)
    K = 0
    while K < 8 and sp.rem(sp.expand(den), sp.expand(D**(K + 1)), c) == 0:
        K += 1
    scale = sp.simplify(den / D**K)
    assert not scale.has(c), (den, K)
    poly = sp.Poly(sp.expand(num / scale), c)
    coefs = []
    for m in range(poly.degree() + 1):
        cm = poly.coeff_monomial(c**m)
        if m % 2 == 0:
            assert cm == 0, (m, cm)
        else:
            coefs.append(cm)
    return coefs, K


def py_multi(name, args, exprs, doc):
    reps, red = sp.cse(exprs, symbols=sp.numbered_symbols("c"), optimizations="basic")
    lines = [f"def {name}({', '.join(args)}):", f'    """{doc}"""']
    for sym, val in reps:
        lines.append(f"    {sym} = {sp.pycode(val)}")
    lines.append("    return [" + ", ".join(sp.pycode(e) for e in red) + "]")
    return "\n".join(lines)


def c_function(name, args, expr, doc):
    reps, (red,) = sp.cse([expr], symbols=sp.numbered_symbols("c"), optimizations="basic")
    out = [f"// {doc}", "template <typename T>",
           f"__device__ __forceinline__ T {name}({', '.join('const T ' + a for a in args)})", "{"]
    printer = _TypedCPrinter()
    cc = printer.doprint
    for sym, val in reps:
        out.append(f"    const T {sym} = {cc(val)};")
    out.append(f"    return {cc(red)};")
    out.append("}")
    return "\n".join(out)


def main():
    w, lw = operators()
    mc_args = [pname(a, b) for a, b in ORDER if 1 <= a + b <= 2]
    w_args = [pname(a, b) for a, b in ORDER if 1 <= a + b <= 4]
    missing = (w.free_symbols | lw.free_symbols) - set(sp.Symbol(a) for a in w_args)
    assert not missing, missing
    hs = gauss_polys()
    header = ('"""GENERATED by solvers/curvature/derive_forcing.py (sympy) — do not edit.\n\n'
              "The continuous operators of docs/MODELS.md §1.1 in the partial derivatives p_ab = ∂x^a ∂y^b φ, "
              "and the\npolynomials h_m with d^m/dx^m exp(−σx²) = h_m(x) exp(−σx²). No sympy at run time."
              '\n"""\nimport numpy as np\n')
    f1, n1 = py_function("mean_curvature_op", mc_args, w,
                         "Q ∇·(∇φ/Q) (= w of the Willmore flow) from the derivatives of φ.")
    f2, n2 = py_function("willmore_op", w_args, lw,
                         "−Q ∇·((1/Q) P ∇w − ½ (w²/Q³) ∇φ) from the derivatives of φ.")
    hlines = ["def gauss_derivative_polys(x, sigma):",
              '    """[h_0, ..., h_4]: d^m/dx^m exp(−σx²) = h_m(x) exp(−σx²)."""',
              "    return [" + ", ".join(sp.pycode(h) if h.free_symbols else f"{h} + 0 * x"
                                        for h in hs) + "]"]
    args_line = (f"MC_ARGS = {tuple(mc_args)!r}\nW_ARGS = {tuple(w_args)!r}\n")
    q_w = ["q" + a[1:] for a in w_args]
    q_mc = ["q" + a[1:] for a in mc_args]
    wc, kw = rational_in_c(w)
    lc, kl = rational_in_c(lw)
    f3 = py_multi("mean_curvature_coefficients", q_mc, wc,
                  f"[b_1, b_3, ...]: Q ∇·(∇ζ/Q) = Σ b_m c^m / (1 + c² B)^{kw} for ζ = c g, "
                  "q_ab = ∂x^a ∂y^b g, B = q10² + q01².")
    f4 = py_multi("willmore_coefficients", q_w, lc,
                  f"[a_1, a_3, ...]: L_w[ζ] = Σ a_m c^m / (1 + c² B)^{kl} for ζ = c g.")
    powers = f"MC_DEN_POWER = {kw}\nW_DEN_POWER = {kl}\n"
    (HERE / "exact_ops.py").write_text(header + "\n" + args_line + powers + "\n\n"
                                       + "\n".join(hlines) + "\n\n\n" + f1 + "\n\n\n" + f2
                                       + "\n\n\n" + f3 + "\n\n\n" + f4 + "\n")
    c1 = c_function("mean_curvature_op", mc_args, w, "Q div(grad phi / Q) from the derivatives of phi.")
    cuh = ("// GENERATED by solvers/curvature/derive_forcing.py (sympy) -- do not edit.\n"
           "// The operators of SPEC 1.1 in the partial derivatives p_ab of phi (exact forcing of "
           "eoc-exact).\n#pragma once\n"
           "__device__ __forceinline__ float sqrt_t(float a) { return sqrtf(a); }\n"
           "__device__ __forceinline__ double sqrt_t(double a) { return sqrt(a); }\n"
           "\n"
           + c1 + "\n")
    (HERE / "kernels" / "exact_ops.cuh").write_text(cuh)
    print(f"mean_curvature_op: {n1} subexpressions; willmore_op: {n2} subexpressions")


if __name__ == "__main__":
    main()
