"""(in progress) The fused CUDA scheme of model files."""


def fused_scheme(sim):
    raise NotImplementedError("fused equations: in progress")
