"""CUDA source generated from a model's expression trees (docs/EQUATIONS.md): the body of
kernels/equations.cu, the same discrete operators as ops.py and the stage form of reference.py.

    eq_stage   one thread per node: reads each species once at the node (and its neighbours for
               the operators), evaluates the algebraic species, the operator terms and the
               reaction, and writes the stage  out = a0·U + a1·Y + a2dt·k + a3·acc,
               acc = (init ? 0 : acc) + bdt·k; Dirichlet nodes take their value at t_out
    eq_rates   the same k written to R (and, with a positive edge flux on a mesh, the loss rate
               reduced into *lam by atomicMax on the bit pattern), for the schemes that pick the
               step from λ (the combination is then done as in reference.py)

C names: species s -> s_<s>, algebraic a -> a_<a>, parameter p -> p_<p> (prefixes keep user names
clear of C keywords and macros). Neighbour values are computed in inner scopes that shadow the
node's names, so one expression generator serves both.
"""
from __future__ import annotations

_CMP = {"<", "<=", ">", ">=", "==", "!="}
_FN = {"exp": "exp", "log": "log", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan",
       "tanh": "tanh", "sinh": "sinh", "cosh": "cosh", "abs": "fabs", "min": "fmin",
       "max": "fmax"}


def num(v: float) -> str:
    return f"T({float(v)!r})"


def tile_buffers(integrator: str) -> tuple[int, int]:
    """(nbuf, has_acc) of eq_tile for an explicit integrator: the state buffers a species keeps
    in shared memory (2 for one stage: in and out; 3 otherwise: the step's start U, the
    stage's input and output) and whether it keeps an accumulator (the tableau has one)."""
    from .reference import TABLEAUS
    stages = TABLEAUS[integrator]
    return (2 if len(stages) == 1 else 3), int(any(st[4] != 0 or st[5] != 0 for st in stages))


class Names:
    def __init__(self, species, algebraic, params):
        self.species, self.algebraic, self.params = tuple(species), tuple(algebraic), tuple(params)

    def c(self, name: str) -> str:
        if name in self.species:
            return f"s_{name}"
        if name in self.algebraic:
            return f"a_{name}"
        if name in self.params:
            return f"p_{name}"
        if name == "pi":
            return "T(3.141592653589793)"
        return name  # x y z r t


def expr(tree, nm: Names) -> str:
    """C text of an operator-free tree."""
    k = tree[0]
    if k == "num":
        return num(tree[1])
    if k == "var":
        return nm.c(tree[1])
    if k == "neg":
        return f"(-{expr(tree[1], nm)})"
    if k in ("add", "sub", "mul", "div"):
        op = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[k]
        return f"({expr(tree[1], nm)} {op} {expr(tree[2], nm)})"
    if k == "pow":
        e = tree[2]
        if e[0] == "num" and float(e[1]).is_integer() and 1 <= e[1] <= 8:
            return f"ipow<{int(e[1])}>({expr(tree[1], nm)})"
        return f"pow({expr(tree[1], nm)}, {expr(e, nm)})"
    if k == "cmp":
        return f"(({expr(tree[2], nm)} {tree[1]} {expr(tree[3], nm)}) ? T(1) : T(0))"
    if k in ("and", "or"):
        op = "&&" if k == "and" else "||"
        return (f"((({expr(tree[1], nm)}) != T(0) {op} ({expr(tree[2], nm)}) != T(0)) "
                "? T(1) : T(0))")
    if k == "not":
        return f"((({expr(tree[1], nm)}) == T(0)) ? T(1) : T(0))"
    if k == "fn":
        name, args = tree[1], [expr(a, nm) for a in tree[2]]
        if name == "where":
            return f"(({args[0]}) != T(0) ? ({args[1]}) : ({args[2]}))"
        if name == "heaviside":
            return f"(({args[0]}) >= T(0) ? T(1) : T(0))"
        if name == "sign":
            return f"sgn({args[0]})"
        return f"{_FN[name]}({', '.join(args)})"
    raise ValueError(f"operator node {k} in an expression")


class Generator:
    """The kernels' source for a simulation `sim` (model.EquationModel after _setup)."""

    def __init__(self, sim):
        d = sim.definition
        self.sim, self.d = sim, d
        self.species, self.alg = d.species, tuple(d.algebraic)
        self.params = tuple(d.parameters)
        self.nm = Names(self.species, self.alg, self.params)
        self.mesh = sim.params["kind"] == "mesh"
        self.axes = 0 if self.mesh else len(sim.shape)
        self.vertex = sim.params["grid"] == "vertex"
        self.terms = {s: sim.central_terms[s] for s in self.species}
        self.transports = dict(sim.transports)

    # ---- pieces ---------------------------------------------------------------------------
    def signature(self, kind: str) -> str:
        """The parameters of eq_stage ("stage"), eq_rates ("rates") or eq_stage_batch
        ("batch": the species' (members, n) arrays, the members' parameter rows `Pb` (np per
        member), their stage scalars `S` (t, t_out, a2dt, bdt per member) and `active` flags),
        or eq_tile ("tile")."""
        if kind == "tile":
            return self.tile_signature()
        a = []
        b = "b" if kind == "batch" else ""
        for s in self.species:
            a.append(f"const T* __restrict__ Y{b}_{s}")
            if kind in ("stage", "batch"):
                a += [f"const T* __restrict__ U{b}_{s}", f"T* __restrict__ O{b}_{s}",
                      f"T* __restrict__ A{b}_{s}"]
            else:
                a.append(f"T* __restrict__ R_{s}")
        if kind == "batch":
            a += ["const T* __restrict__ Pb", "const int np", "const T* __restrict__ S",
                  "const unsigned char* __restrict__ active", "const T a0", "const T a1",
                  "const T a3", "const int acc_init"]
        else:
            a += ["const T* __restrict__ P", "const T t", "const T t_out"]
        if kind == "stage":
            a += ["const T a0", "const T a1", "const T a2dt", "const T a3", "const T bdt",
                  "const int acc_init"]
        elif kind == "rates":
            a.append("T* __restrict__ lam")
        if self.mesh:
            a += ["const int n", "const int* __restrict__ indptr", "const int* __restrict__ nbr",
                  "const T* __restrict__ lw", "const T* __restrict__ hw",
                  "const T* __restrict__ area", "const T* __restrict__ X",
                  "const T* __restrict__ Yc", "const T* __restrict__ Z",
                  "const unsigned char* __restrict__ pinned"]
        else:
            a += ["const int nx", "const int ny", "const T hx", "const T hy"]
        return ",\n    ".join(a)

    def coords(self, index: str, xi: str, yi: str) -> list[str]:
        if self.mesh:
            return [f"const T x = X[{index}];", f"const T y = Yc[{index}];",
                    f"const T z = Z[{index}];", "const T r = sqrt(x * x + y * y);"]
        off = "T(0)" if self.vertex else "T(0.5)"
        y = f"(T({yi}) + {off}) * hy" if self.axes == 2 else "T(0)"
        return [f"const T x = (T({xi}) + {off}) * hx;", f"const T y = {y};", "const T z = T(0);",
                "const T r = sqrt(x * x + y * y);"]

    def load(self, index: str, local: str | None = None) -> list[str]:
        """The species at node `index` (and the algebraic species there); with `local`, read
        from the tile kernel's shared memory at that tile index instead."""
        if local is None:
            out = [f"const T s_{s} = Y_{s}[{index}];" for s in self.species]
        else:
            out = [f"const T s_{s} = Ys_{s}[{local}];" for s in self.species]
        out += [f"const T a_{a} = {expr(t, self.nm)};" for a, t in self.d.algebraic.items()]
        out.append("(void)x; (void)y; (void)z; (void)r;")
        out += [f"(void)s_{s};" for s in self.species] + [f"(void)a_{a};" for a in self.alg]
        return out

    def operands(self):
        """Every (operand, K tree or None) the node's operators need at the neighbours."""
        ops = []
        for s in self.species:
            for t in self.terms[s]:
                ops.append((t.operand, t.K))
        return ops

    # ---- grids ----------------------------------------------------------------------------
    def ghost(self, operand: str, side: str, axis: int) -> str:
        """C text of the ghost value of `operand` beyond `side` (ops.GridOps._ghost)."""
        h = "hx" if axis == 0 else "hy"
        sides = self.sim.sides.get(operand)
        here = self.nm.c(operand)
        inner = f"in_{operand}" if self.vertex else here
        if operand not in self.species or sides[side].kind == "periodic":  # algebraic: zero flux
            return inner
        sd = sides[side]
        shift = {"left": f"- T(0.5) * {h}", "right": f"+ T(0.5) * {h}",
                 "bottom": f"- T(0.5) * {h}", "top": f"+ T(0.5) * {h}"}[side]
        fx = "x" if self.vertex or axis == 1 else f"(x {shift})"
        fy = "y" if self.vertex or axis == 0 else f"(y {shift})"
        g = f"face_value_{side}_{operand}({fx}, {fy}, t, {here}, P)"
        if sd.kind == "dirichlet":
            return f"(T(2) * {g} - {inner})"
        return f"({inner} + {'T(2) * ' if self.vertex else ''}{h} * {g})"

    def face_functions(self) -> list[str]:
        """Device functions of the boundary values g(x, y, t, s, P) per side and species."""
        out = []
        for s in self.species:
            for side, sd in (self.sim.sides[s].items() if not self.mesh else []):
                if sd.kind == "periodic":
                    continue
                body = self.param_locals() + [f"const T s_{s} = sv; (void)s_{s};",
                                              "const T z = T(0); const T r = sqrt(x*x + y*y);",
                                              "(void)z; (void)r; (void)t;",
                                              f"return {expr(sd.value, self.nm)};"]
                out.append(f"template <typename T>\n__device__ __forceinline__ T "
                           f"face_value_{side}_{s}(const T x, const T y, const T t, const T sv, "
                           "const T* __restrict__ P)\n{\n    " + "\n    ".join(body) + "\n}")
        return out

    def param_locals(self) -> list[str]:
        return ([f"const T p_{p} = P[{i}]; (void)p_{p};" for i, p in enumerate(self.params)])

    def grid_neighbours(self, tile: bool = False) -> tuple[list[str], dict]:
        """Code that sets nb_<dir>_<operand> and K<dir>_<k> for the 4 (or 2) directions; with
        `tile`, the neighbours' values come from the tile in shared memory (eq_tile: local
        index l, row width TX), their global index j still giving their coordinates."""
        code, ops = [], self.operands()
        local = {"W": ("l - 1", "l + 1"), "E": ("l + 1", "l - 1"), "S": ("l - TX", "l + TX"),
                 "N": ("l + TX", "l - TX")}
        operands = sorted({o for o, _ in ops})
        ks = [(i, K) for i, (_, K) in enumerate(ops) if K is not None]
        dirs = [("W", 0, "left", "ix > 0", "i - 1", "i + nx - 1", "ix + 1 < nx", "i + 1"),
                ("E", 0, "right", "ix + 1 < nx", "i + 1", "i - (nx - 1)", "ix > 0", "i - 1")]
        if self.axes == 2:
            dirs += [("S", 1, "bottom", "iy > 0", "i - nx", "i + nx * (ny - 1)", "iy + 1 < ny",
                      "i + nx"),
                     ("N", 1, "top", "iy + 1 < ny", "i + nx", "i - nx * (ny - 1)", "iy > 0",
                      "i - nx")]
        per = {0: self._periodic(0), 1: self._periodic(1) if self.axes == 2 else False}
        for d, axis, side, inside, j_in, j_wrap, has_inner, j_inner in dirs:
            for o in operands:
                code.append(f"T nb_{d}_{o};")
            for i, _ in ks:
                code.append(f"T K{d}_{i};")
            wrap = f"({inside}) ? ({j_in}) : ({j_wrap})" if per[axis] else j_in
            cond = "true" if per[axis] else inside
            xi, yi = (("(j % nx)", "(j / nx)"))
            code.append(f"if ({cond}) {{")
            code.append(f"    const int j = {wrap};")
            code += ["    " + c for c in self.coords("j", xi, yi)]
            code += ["    " + c for c in self.load("j", local[d][0] if tile else None)]
            code += [f"    nb_{d}_{o} = {self.nm.c(o)};" for o in operands]
            code += [f"    K{d}_{i} = {expr(K, self.nm)};" for i, K in ks]
            code.append("} else {")
            if self.vertex:  # the ghost mirrors the node inside (ops.GridOps._ghost)
                code.append("    {")
                code.append(f"        const int j = {j_inner};")
                code += ["        " + c for c in self.coords("j", xi, yi)]
                code += ["        " + c for c in self.load("j", local[d][1] if tile else None)]
                code += [f"        in_{o} = {self.nm.c(o)};" for o in operands]
                code.append("    }")
            code += [f"    nb_{d}_{o} = {self.ghost(o, side, axis)};" for o in operands]
            code += [f"    K{d}_{i} = K_{i};" for i, _ in ks]
            code.append("}")
        return code, dict(ks)

    def _periodic(self, axis: int) -> bool:
        side = ("left", "bottom")[axis]
        return all(self.sim.sides[s][side].kind == "periodic" for s in self.species)

    def grid_operator(self, index: int, term) -> str:
        o = self.nm.c(term.operand)
        axes = [("W", "E", "ihxx")] + ([("S", "N", "ihyy")] if self.axes == 2 else [])
        parts = []
        for lo, hi, h in axes:
            a, b = f"nb_{lo}_{term.operand}", f"nb_{hi}_{term.operand}"
            if term.kind == "lap":
                parts.append(f"({a} - T(2) * {o} + {b}) * {h}")
            else:
                k, klo, khi = f"K_{index}", f"K{lo}_{index}", f"K{hi}_{index}"
                parts.append(f"(T(0.5) * ({k} + {khi}) * ({b} - {o}) - T(0.5) * ({klo} + {k})"
                             f" * ({o} - {a})) * {h}")
        return " + ".join(parts)

    # ---- meshes ---------------------------------------------------------------------------
    def mesh_loop(self) -> list[str]:
        ops = self.operands()
        code = [f"T sum_{i} = T(0);" for i in range(len(ops))]
        for s, tr in self.transports.items():
            code += [f"T flux_{s} = T(0), loss_{s} = T(0);"]
        code += [f"const T c_{o} = {self.nm.c(o)};" for o in sorted({o for o, _ in ops}
                                                                   | set(self.transports)
                                                                   | {t.v for t in
                                                                      self.transports.values()})]
        code.append("for (int k = indptr[i]; k < indptr[i + 1]; ++k) {")
        code.append("    const int j = nbr[k];")
        code += ["    " + c for c in self.coords("j", "", "")]
        code += ["    " + c for c in self.load("j")]
        for i, (o, K) in enumerate(ops):
            diff = f"({self.nm.c(o)} - c_{o})"
            if K is None:
                code.append(f"    sum_{i} += lw[k] * {diff};")
            else:
                code.append(f"    sum_{i} += hw[k] * (T(0.5) * (K_{i} + ({expr(K, self.nm)})))"
                            f" * {diff};")
        for s, tr in self.transports.items():
            code.append(f"    sg_edge(hw[k], c_{s}, {self.nm.c(s)}, {self.nm.c(tr.v)} - c_{tr.v},"
                        f" D_{s}, alpha_{s}, flux_{s}, loss_{s});")
        code.append("}")
        return code

    # ---- the kernels ----------------------------------------------------------------------
    def rates(self, tile: bool = False) -> list[str]:
        """The body computing k_<s> for every species at node i (with `tile`, grids only: at
        tile index l of eq_tile, whose loop sets i, ix and iy)."""
        ops = self.operands()
        body = self.param_locals()
        if self.mesh:
            body += self.coords("i", "", "")
        else:
            if not tile:
                body += ["const int ix = i % nx, iy = i / nx; (void)iy;"]
            # 1/h² once (FP64 division is a long instruction sequence; the operators multiply)
            body += ["const T ihxx = T(1) / (hx * hx), ihyy = T(1) / (hy * hy); (void)ihyy;"]
            body += self.coords("i", "ix", "iy")
        body += self.load("i", "l" if tile else None)
        for i, (o, K) in enumerate(ops):
            if K is not None:
                body.append(f"const T K_{i} = {expr(K, self.nm)};")
        for s, tr in self.transports.items():
            body.append(f"const T D_{s} = {expr(tr.D, self.nm)};")
            body.append(f"const T alpha_{s} = {expr(tr.alpha, self.nm)};")
        if self.mesh:
            body += self.mesh_loop()
        else:
            if self.vertex:
                body += [f"T in_{o};" for o in sorted({o for o, _ in ops})]
            code, _ = self.grid_neighbours(tile)
            body += code
        idx = 0
        for s in self.species:
            parts = []
            for t in self.terms[s]:
                if self.mesh:
                    op = f"sum_{idx}" if t.kind == "lap" else f"(sum_{idx} / area[i])"
                else:
                    op = f"({self.grid_operator(idx, t)})"
                parts.append(f"({expr(t.coef, self.nm)}) * {op}")
                idx += 1
            body.append(f"const T react_{s} = {expr(self.sim.splits[s].reaction, self.nm)};")
            if s in self.transports:
                parts.insert(0, f"(flux_{s} / area[i])")
            parts.append(f"react_{s}")
            body.append(f"const T k_{s} = " + " + ".join(parts) + ";")
        return body

    def pins(self) -> list[str]:
        """Per species: the condition and C value of a pinned (Dirichlet) node."""
        out = {}
        for s in self.species:
            if self.mesh:
                sd = self.sim.sides[s]["all"]
                if sd.kind == "dirichlet":
                    out[s] = ("pinned[i]", "all", sd)
            elif self.vertex:
                conds = []
                for side, sd in self.sim.sides[s].items():
                    if sd.kind == "dirichlet":
                        c = {"left": "ix == 0", "right": "ix == nx - 1", "bottom": "iy == 0",
                             "top": "iy == ny - 1"}[side]
                        conds.append((c, side, sd))
                if conds:
                    out[s] = conds
        return out

    def pin_code(self, s: str, var: str) -> list[str]:
        pins = self.pins().get(s)
        if not pins:
            return []
        code = []
        if self.mesh:
            sd = pins[2]
            code.append(f"if (pinned[i]) {{ const T t = t_out; (void)t; "
                        f"{var} = {expr(sd.value, self.nm)}; }}")
        else:
            for cond, side, sd in pins:
                code.append(f"if ({cond}) {var} = face_value_{side}_{s}(x, y, t_out, {var}, P);")
        return code

    def stage_update(self) -> list[str]:
        """The stage's combination and store at node i (eq_stage and eq_stage_batch)."""
        stage = []
        for s in self.species:
            stage += [f"T o_{s} = (a0 == T(1)) ? U_{s}[i] : a0 * U_{s}[i];",
                      f"if (a1 != T(0)) o_{s} += a1 * s_{s};",
                      f"o_{s} += a2dt * k_{s};",
                      f"if (a3 != T(0)) o_{s} += a3 * A_{s}[i];",
                      f"if (bdt != T(0)) A_{s}[i] = (acc_init ? T(0) : A_{s}[i]) + bdt * k_{s};"]
            stage += self.pin_code(s, f"o_{s}")
            stage.append(f"O_{s}[i] = o_{s};")
        return stage

    # ---- temporal blocking on grids ---------------------------------------------------------
    def tile_signature(self) -> str:
        a = []
        for s in self.species:
            a += [f"const T* __restrict__ Y_{s}", f"T* __restrict__ O_{s}"]
        a += ["const T* __restrict__ P", "const T* __restrict__ CS", "const int nsteps",
              "const T t", "const T t_out", "const int tile", "const int halo", "const int nx",
              "const int ny",
              "const T hx", "const T hy"]
        return ",\n    ".join(a)

    def tile_kernel(self) -> str:
        """eq_tile: `nsteps` whole explicit steps of a grid model in one launch (fused.py's
        tiled path). A block loads its tile of tile² nodes (tile on an interval) and a halo of
        `halo` nodes around it into shared memory, then does every stage of every step there:
        stage `sub` (counted over the steps) computes the tile grown by halo − sub, whose neighbours
        the previous stage computed, so after halo ≥ nsteps·nstage stages the tile itself holds
        the state after nsteps steps, and only the tile goes back to global memory. The node's
        arithmetic is eq_stage's, text for text (the same body and combination); a node outside
        a bounded side is never computed or read (the boundary's ghost takes its place), a
        periodic side wraps. The tableau's constants are in the code; the stage scalars are
        CS[2·st + (0, 1)] = (a2·dt, b·dt), as the host computes them for eq_stage. Per species
        the shared memory holds the buffers of `tile_buffers`. Only for models that never read
        t."""
        two = self.axes == 2
        px, py = self._periodic(0), (self._periodic(1) if two else True)

        def place(lx: str, ly: str) -> list[str]:
            code = [f"int ix = ox + {lx}, iy = oy + {ly};"]
            for v, n, per in (("ix", "nx", px), ("iy", "ny", py)):
                if per:
                    code.append(f"if ({v} < 0) {v} += {n}; else if ({v} >= {n}) {v} -= {n};")
                else:
                    code.append(f"if ({v} < 0 || {v} >= {n}) continue;")
            code.append("const int i = iy * nx + ix; (void)i;")
            return code

        ns = self.species
        nbuf, has_acc = tile_buffers(self.sim.params["integrator"])
        k = ["EQ_SHARED(eq_smem);",
             "T* const sm = reinterpret_cast<T*>(eq_smem);",
             "const int TX = tile + 2 * halo;",
             f"const int TY = {'TX' if two else '1'};",
             f"const int NN = TX * TY, per = {nbuf + has_acc};",
             "const int ox = blockIdx.x * tile - halo;",
             f"const int oy = {'blockIdx.y * tile - halo' if two else '0'};"]
        k += [f"T* const B_{s} = sm + {q} * per * NN;" for q, s in enumerate(ns)]
        k += ["for (int ly = threadIdx.y; ly < TY; ly += blockDim.y)",
              "for (int lx = threadIdx.x; lx < TX; lx += blockDim.x) {",
              "    const int q = ly * TX + lx;"]
        k += ["    " + c for c in place("lx", "ly")]
        k += [f"    B_{s}[q] = Y_{s}[i];" for s in ns]
        k += ["}", "__syncthreads();",
              "int cur = 0, yin = 0, sub = 0;",
              "for (int m = 0; m < nsteps; ++m) {"]
        # the stages unrolled with the tableau's constants (a2·dt and b·dt from CS): the
        # arithmetic of eq_stage's combination, whose a0, a1, a3 and b are then known; at stage
        # 0 the step's start U is the stage's input, so its value is the node's s_<species>
        from .reference import TABLEAUS
        for st, (_, a0, a1, _, a3, b) in enumerate(TABLEAUS[self.sim.params["integrator"]]):
            k += ["    {",
                  "        ++sub;",
                  "        const int out = " + ("1 - yin;" if nbuf == 2 else
                                               "(yin == cur) ? (cur + 1) % 3 : 3 - cur - yin;"),
                  f"        const T a2dt = CS[{2 * st}], bdt = CS[{2 * st + 1}]; (void)bdt;"]
            for sp in ns:
                k += [f"        const T* const Ys_{sp} = B_{sp} + yin * NN;",
                      f"        const T* const Uc_{sp} = B_{sp} + cur * NN; (void)Uc_{sp};",
                      f"        T* const Os_{sp} = B_{sp} + out * NN;",
                      f"        T* const Ac_{sp} = B_{sp} + {nbuf} * NN; (void)Ac_{sp};"]
            k += ["        const int wx = TX - 2 * sub;",
                  f"        const int wy = {'TY - 2 * sub' if two else '1'}, "
                  f"ry = {'sub' if two else '0'};",
                  "        for (int ly = ry + threadIdx.y; ly < ry + wy; ly += blockDim.y)",
                  "        for (int lx = sub + threadIdx.x; lx < sub + wx; lx += blockDim.x) {",
                  "            const int l = ly * TX + lx;"]
            k += ["            " + c for c in place("lx", "ly")]
            k += ["            " + c for c in self.rates(tile=True)]
            for sp in ns:
                u = f"s_{sp}" if st == 0 else f"Uc_{sp}[l]"
                upd = [f"T o_{sp} = {u};" if a0 == 1.0 else f"T o_{sp} = {num(a0)} * {u};"]
                if a1 != 0.0:
                    upd.append(f"o_{sp} += {num(a1)} * s_{sp};")
                upd.append(f"o_{sp} += a2dt * k_{sp};")
                if a3 != 0.0:
                    upd.append(f"o_{sp} += {num(a3)} * Ac_{sp}[l];")
                if b != 0.0:
                    upd.append(f"Ac_{sp}[l] = {'T(0)' if st == 0 else f'Ac_{sp}[l]'} "
                               f"+ bdt * k_{sp};")
                k += ["            " + c for c in upd + self.pin_code(sp, f"o_{sp}")
                      + [f"Os_{sp}[l] = o_{sp};"]]
            k += ["        }", "        __syncthreads();", "        yin = out;", "    }"]
        k += ["    cur = yin;", "}"]
        k += [f"for (int ly = {'halo' if two else '0'} + threadIdx.y; "
              f"ly < {'halo + tile' if two else '1'}; ly += blockDim.y)",
              "for (int lx = halo + threadIdx.x; lx < halo + tile; lx += blockDim.x) {",
              "    const int ix = ox + lx, iy = oy + ly;",
              "    if (ix >= nx || iy >= ny) continue;",
              "    const int l = ly * TX + lx;"]
        k += [f"    O_{s}[iy * nx + ix] = B_{s}[cur * NN + l];" for s in ns]
        k += ["}"]
        return ("template <typename T>\n__global__ void eq_tile(\n    " + self.tile_signature()
                + ")\n{\n    " + "\n    ".join(k) + "\n}")

    def batch_prologue(self) -> list[str]:
        """eq_stage_batch: member m = blockIdx.y; its rows of the species, its parameter row
        and stage scalars under the names eq_stage's body uses (an inactive member's row is
        copied unchanged: it has landed or stopped)."""
        nodes = "n" if self.mesh else "nx * ny"
        code = ["const int i = blockIdx.x * blockDim.x + threadIdx.x;",
                f"if (i >= {nodes}) return;",
                "const int m = blockIdx.y;",
                f"const long long off = (long long)m * (long long)({nodes});"]
        code.append("if (!active[m]) {")
        code += [f"    Ob_{s}[off + i] = Ub_{s}[off + i];" for s in self.species]
        code += ["    return;", "}"]
        for s in self.species:
            code += [f"const T* __restrict__ Y_{s} = Yb_{s} + off;",
                     f"const T* __restrict__ U_{s} = Ub_{s} + off;",
                     f"T* __restrict__ O_{s} = Ob_{s} + off;",
                     f"T* __restrict__ A_{s} = Ab_{s} + off;"]
        code += ["const T* __restrict__ P = Pb + (long long)m * (long long)np;",
                 "const T t = S[4 * m], t_out = S[4 * m + 1];",
                 "const T a2dt = S[4 * m + 2], bdt = S[4 * m + 3];",
                 "(void)t; (void)t_out;"]
        return code

    def source(self, batched: bool = False, tiled: bool = False) -> str:
        """The model's kernels; with `batched`, eq_stage_batch too (ensembles: one launch per
        stage for every member; the node's arithmetic is eq_stage's, text for text); with
        `tiled` (grids), eq_tile."""
        body = self.rates()
        stage = ["const int i = blockIdx.x * blockDim.x + threadIdx.x;",
                 f"if (i >= {'n' if self.mesh else 'nx * ny'}) return;"] + body
        stage += self.stage_update()
        rates = ["const int i = blockIdx.x * blockDim.x + threadIdx.x;",
                 "T my_lam = T(0);",
                 f"if (i < {'n' if self.mesh else 'nx * ny'}) {{"] + ["    " + b for b in body]
        for s in self.species:
            rates.append(f"    R_{s}[i] = k_{s};")
        for s in self.transports:
            rates.append(f"    const T lr_{s} = (s_{s} > T(0)) ? fmax(-react_{s} / s_{s}, T(0))"
                         " : T(0);")
            rates.append(f"    my_lam = fmax(my_lam, loss_{s} / area[i] + lr_{s});")
            rates.append(f"    if (!(loss_{s} / area[i] + lr_{s} >= T(0))) "
                         "my_lam = real_inf<T>();")
        rates.append("}")
        rates.append("(void)t_out;")
        rates.append("if (lam != nullptr) lam_max(lam, my_lam);")
        parts = self.face_functions()
        parts.append("template <typename T>\n__global__ void eq_stage(\n    "
                     + self.signature("stage") + ")\n{\n    " + "\n    ".join(stage) + "\n}")
        parts.append("template <typename T>\n__global__ void eq_rates(\n    "
                     + self.signature("rates") + ")\n{\n    " + "\n    ".join(rates) + "\n}")
        if batched:
            batch = self.batch_prologue() + body + self.stage_update()
            parts.append("template <typename T>\n__global__ void eq_stage_batch(\n    "
                         + self.signature("batch") + ")\n{\n    " + "\n    ".join(batch)
                         + "\n}")
        if tiled:
            parts.append(self.tile_kernel())
        return "\n\n".join(parts) + "\n"
