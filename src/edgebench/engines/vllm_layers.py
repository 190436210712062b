"""What each linear layer of a loaded vLLM model runs, read from the model itself.

vLLM picks a linear kernel per layer when it loads (for example `CPUWNA16LinearKernel` for GPTQ
W4A16, `CPUInt8ScaledMMLinearKernel` for W8A8, or the unquantized method for bf16). The class a
layer holds is the path it runs, whatever the flags or the config say it should be.
"""

from __future__ import annotations

from edgebench.engines.base import layer_kernels_of


def layer_kernel(module) -> str | None:
    """The class that computes a linear module: its kernel when its quantization method (or
    compressed-tensors scheme) holds one, else the method itself; None for a non-linear module."""
    method = getattr(module, "quant_method", None)
    if method is None:
        return None
    scheme = getattr(module, "scheme", None)
    for holder in (method, scheme):
        kernel = getattr(holder, "kernel", None)
        if kernel is not None:
            return type(kernel).__name__
    return type(scheme if scheme is not None else method).__name__


class LayerKernels:
    """Mixed into vLLM's worker (worker_extension_cls): runs where the model lives."""

    def edgebench_layer_kernels(self) -> dict[str, str]:
        return layer_kernels_of(self.model_runner.get_model(), layer_kernel)
