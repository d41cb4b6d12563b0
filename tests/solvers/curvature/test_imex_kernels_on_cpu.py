"""FusedIMEX's elementwise kernels (the CUDA snippets imex_fused.py hands to
cupy.ElementwiseKernel) compiled for the CPU with g++ and run through a stand-in for the CuPy
module (NumPy arrays, numpy.fft), against IMEXReference: node-field assembly, the linearised
operator, the DST-I solves, the stage combinations and whole IMEX steps. This checks the
kernels' index arithmetic and the scheme's use of them on machines without a GPU; the `gpu`
tests (test_gpu_imex.py) check them on the device."""
import ctypes
import hashlib
import shutil
import subprocess
import types

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.curvature.imex import IMEXReference
from pdestudio.solvers.curvature.imex_fused import FusedIMEX
from pdestudio.solvers.curvature.reference import interior_rhs

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")

CTYPE = {np.dtype("float64"): "double", np.dtype("float32"): "float"}
LIBS = {}  # compiled kernels by source, shared by the tests of this module


class HostKernel:
    """cupy.ElementwiseKernel on the host: the snippet in a C++ loop over i, arrays passed as
    contiguous pointers (raw ones indexed by the snippet, the others element i), one library per
    real type and set of array arguments."""

    def __init__(self, in_params, out_params, operation, name, tmp):
        def parse(text, out):
            for p in text.split(","):
                toks = p.split()
                raw = toks[0] == "raw"
                yield (raw, toks[-2], toks[-1], out)
        self.params = list(parse(in_params, False)) + list(parse(out_params, True))
        self.operation, self.name, self.tmp, self.libs = operation, name, tmp, {}

    def _lib(self, dtype, is_array):
        key = (dtype, tuple(is_array))
        if key in self.libs:
            return self.libs[key]
        args, decl = [], []
        for (raw, typ, name, out), arr in zip(self.params, is_array):
            if raw:
                args.append(f"T* {name}")
            elif out:
                args.append(f"T* _{name}")
                decl.append(f"T& {name} = _{name}[i];")
            elif arr:
                args.append(f"const T* _{name}")
                decl.append(f"const T {name} = _{name}[i];")
            else:
                args.append(f"{'int' if typ == 'int32' else 'T'} {name}")
        src = ("#include <algorithm>\nusing std::min; using std::max;\n"
               f"typedef {CTYPE[dtype]} T;\n"
               f"extern \"C\" void k({', '.join(args)}, long long n) {{\n"
               f"  for (long long i = 0; i < n; ++i) {{ {' '.join(decl)} {self.operation}; }}\n}}\n")
        if src not in LIBS:
            tag = hashlib.sha1(src.encode()).hexdigest()[:12]
            cpp, so = self.tmp / f"{self.name}_{tag}.cpp", self.tmp / f"{self.name}_{tag}.so"
            cpp.write_text(src)
            subprocess.run([GXX, "-O1", "-ffp-contract=off", "-shared", "-fPIC", str(cpp), "-o",
                            str(so)], check=True, capture_output=True)
            LIBS[src] = ctypes.CDLL(str(so)).k
        self.libs[key] = LIBS[src]
        return self.libs[key]

    def __call__(self, *args, size=None):
        n_in = sum(1 for p in self.params if not p[3])
        args = list(args)
        dtype = next(a.dtype for a in args if isinstance(a, np.ndarray))
        if len(args) == n_in:  # output not given: shaped like the first non-raw array input
            first = next(a for p, a in zip(self.params, args) if not p[0] and
                         isinstance(a, np.ndarray))
            args.append(np.empty(first.shape, dtype=dtype))
        is_array = [isinstance(a, np.ndarray) for a in args]
        n = size if size is not None else next(a.size for p, a in zip(self.params, args)
                                               if not p[0] and isinstance(a, np.ndarray))
        conv, keep = [], []
        for p, a in zip(self.params, args):
            if isinstance(a, np.ndarray):
                c = a if p[3] else np.ascontiguousarray(a, dtype=dtype)
                assert c.flags.c_contiguous
                keep.append(c)
                conv.append(c.ctypes.data_as(ctypes.c_void_p))
            elif p[1] == "int32":
                conv.append(ctypes.c_int(int(a)))
            else:
                conv.append((ctypes.c_double if dtype == np.float64 else ctypes.c_float)(a))
        self._lib(dtype, is_array)(*conv, ctypes.c_longlong(n))
        return args[n_in]


def host_cupy(tmp):
    cp = types.SimpleNamespace(**{n: getattr(np, n) for n in (
        "empty", "empty_like", "zeros", "zeros_like", "ascontiguousarray", "fft")})
    cp.ElementwiseKernel = lambda i, o, op, name: HostKernel(i, o, op, name, tmp)
    return cp


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("imex_kernels")


def pair(model, boundary, tmp, **kw):
    p = dict(scenario="eoc-exact", boundary=boundary, nx=13, ny=9, Lx=5.0, Ly=3.0,
             integrator="imex", F=0.2)
    p.update(kw)
    ref = solvers.create(model, backend="numpy", **p)
    host = solvers.create(model, backend="numpy", **p)
    host.scheme = FusedIMEX(host, cp=host_cupy(tmp))
    host.scheme.rhs_full = lambda t, phi: interior_rhs(host, t, phi)  # the fused rhs: GPU only
    assert isinstance(ref.scheme, IMEXReference) and not isinstance(ref.scheme, FusedIMEX)
    return ref, host


@pytest.mark.parametrize("boundary", ["dirichlet", "neumann"])
@pytest.mark.parametrize("model", ["mean-curvature", "willmore"])
def test_kernels_equal_the_array_code(model, boundary, build_dir):
    ref, host = pair(model, boundary, build_dir)
    rng = np.random.default_rng(5)
    phi = ref.state["phi"] + 0.05 * rng.normal(size=ref.state["phi"].shape)
    a, b = ref.scheme, host.scheme
    for s in (a, b):
        s.begin(phi, 0.01)
    inner = rng.normal(size=(ref.state["phi"].shape[0] - 2, ref.state["phi"].shape[1] - 2))
    t, c = 0.027, 3e-3
    np.testing.assert_array_equal(b.full(inner, t), a.full(inner, t))
    ga = a.g(t, inner)
    np.testing.assert_allclose(b.g(t, inner), ga, rtol=1e-13, atol=1e-13 * np.abs(ga).max())
    sa = a.solve(t, inner, c)
    np.testing.assert_allclose(b.solve(t, inner, c), sa, rtol=1e-12, atol=1e-12)
    ea = a.smooth(inner, c)
    np.testing.assert_allclose(b.smooth(inner, c), ea, rtol=1e-12, atol=1e-12)
    terms = [(0.5, inner), (-1.25, 2 * inner + 1), (3.0, inner**2)]
    np.testing.assert_allclose(b.combine(inner, terms),
                               inner + 0.5 * inner - 1.25 * (2 * inner + 1) + 3.0 * inner**2,
                               rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("boundary", ["dirichlet", "neumann"])
@pytest.mark.parametrize("model", ["mean-curvature", "willmore"])
def test_adaptive_steps_equal_the_array_code(model, boundary, build_dir):
    ref, host = pair(model, boundary, build_dir)
    t_end = 0.02 if model == "mean-curvature" else 2e-3
    for s in (ref, host):
        s.advance(t_end)
    assert host.steps == ref.steps and host.t == ref.t == t_end
    a, b = host.fields()["phi"], ref.fields()["phi"]
    assert np.abs(a - b).max() < 1e-11 * np.abs(b).max()
