"""``torch.nn.utils``' gradient clipping, which training loops call between ``backward()`` and
``optimizer.step()``: ``clip_grad_norm_`` scales all gradients together so their total norm is
at most ``max_norm`` (PyTorch 1.13's rule: coefficient max_norm / (norm + 1e-6), at most 1);
``clip_grad_value_`` clamps each element."""
import math

from .._array_ops import stack
from .._tensor import Tensor, no_grad, tensor


def _grads(parameters):
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in parameters if p.grad is not None]


def _norm(values, norm_type):
    if norm_type == math.inf:
        return values.abs().max()
    return (values.abs() ** norm_type).sum() ** (1.0 / norm_type)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales the gradients in place; returns their total norm (before clipping)."""
    norm_type = float(norm_type)
    grads = _grads(parameters)
    if not grads:
        return tensor(0.0)
    with no_grad():
        norms = [_norm(g.detach().float(), norm_type) for g in grads]
        total = _norm(stack(norms), norm_type)
        value = total.item()
        if error_if_nonfinite and not math.isfinite(value):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                               f"`parameters` is non-finite, so it cannot be clipped. To "
                               f"disable this error and scale the gradients by the non-finite "
                               f"norm anyway, set `error_if_nonfinite=False`")
        coefficient = min(float(max_norm) / (value + 1e-6), 1.0)
        for g in grads:
            g.mul_(coefficient)
    return total


def clip_grad_value_(parameters, clip_value):
    """Clamps every gradient element to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
