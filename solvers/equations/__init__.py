"""Your own equations (docs/EQUATIONS.md): reaction–diffusion systems typed as model files (TOML
or a dict) and run on grids and triangulated surfaces, with a float64 NumPy reference
(reference.py, imex.py) and fused CUDA kernels generated from the same expression tree
(fused.py, codegen.py, kernels/)."""
from .api import check_model, model_latex  # noqa: F401
from .model import define  # noqa: F401  (registers the definer)
