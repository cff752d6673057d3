"""``torch.autograd.gradcheck``: the analytic Jacobian (from the recorded graph) against
central finite differences, element by element, for small inputs, in the inputs' dtype.

PyTorch's defaults (eps=1e-6, atol=1e-5, rtol=1e-3) assume float64 inputs, and are the defaults
here when every input that requires grad is float64. In float32 a central difference has a
rounding error near 1e-7 / eps, so with any float32 input the defaults are eps=1e-3, atol=1e-3
and rtol=1e-2 (the truncation error then stays near eps^2).
"""
import numpy as np

from ... import _C
from ..._tensor import Tensor, no_grad, tensor

__all__ = ["gradcheck"]


def _outputs(func, inputs):
    result = func(*inputs)
    return [result] if isinstance(result, Tensor) else [r for r in result if isinstance(r, Tensor)]


def _numerical_jacobians(func, inputs, index, eps):
    """d outputs / d inputs[index] by central differences: one (out numel, in numel) array per
    output."""
    base = inputs[index].detach().numpy().astype(np.float64)
    columns = []
    for k in range(base.size):
        sides = []
        for sign in (1.0, -1.0):
            shifted = base.copy()
            shifted.reshape(-1)[k] += sign * eps
            args = list(inputs)
            args[index] = tensor(shifted, dtype=inputs[index].dtype, device=inputs[index].device)
            with no_grad():
                sides.append([o.numpy().astype(np.float64).reshape(-1)
                              for o in _outputs(func, args)])
        columns.append([(p - m) / (2 * eps) for p, m in zip(*sides)])
    return [np.stack([c[o] for c in columns], axis=1) for o in range(len(columns[0]))]


def _analytical_jacobians(outputs, source):
    rows = []
    for out in outputs:
        flat = out.numel()
        jac = np.zeros((flat, source.numel()))
        for j in range(flat):
            seed = np.zeros(flat)
            seed[j] = 1.0
            with no_grad():
                grad, = _C.compute_gradients(
                    [out], [tensor(seed.reshape(tuple(out.shape)), dtype=out.dtype,
                                   device=out.device)], [source])
            if grad is not None:
                jac[j] = grad.numpy().reshape(-1)
        rows.append(jac)
    return rows


_FLOAT64_DEFAULTS = {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3}  # PyTorch's
_FLOAT32_DEFAULTS = {"eps": 1e-3, "atol": 1e-3, "rtol": 1e-2}


def gradcheck(func, inputs, *, eps=None, atol=None, rtol=None, raise_exception=True,
              **unused_options):
    """True when the gradients of ``func(*inputs)`` with respect to each input requiring grad
    match finite differences; otherwise raises RuntimeError ("Jacobian mismatch ...") or, with
    ``raise_exception=False``, returns False."""
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    differentiable = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    defaults = (_FLOAT64_DEFAULTS if differentiable and all(x._dtype_name == "float64"
                                                             for x in differentiable)
                else _FLOAT32_DEFAULTS)
    eps = defaults["eps"] if eps is None else eps
    atol = defaults["atol"] if atol is None else atol
    rtol = defaults["rtol"] if rtol is None else rtol
    outputs = _outputs(func, inputs)
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        numerical = _numerical_jacobians(func, inputs, i, eps)
        analytical = _analytical_jacobians(outputs, x)
        for o, (num, ana) in enumerate(zip(numerical, analytical)):
            if not np.allclose(ana, num, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise RuntimeError(f"Jacobian mismatch for output {o} with respect to input "
                                   f"{i},\nnumerical:{num}\nanalytical:{ana}\n")
    return True
