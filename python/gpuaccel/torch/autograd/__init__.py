"""``torch.autograd`` of the PyTorch face: ``grad`` and ``backward`` over gpuaccel's recorded
graph (the same one ``tensor.backward()`` walks), and the grad-mode switches.

One difference: ``grad`` leaves the graph in place whether or not ``retain_graph`` is given
(PyTorch frees it unless asked), so a second call on the same graph works here and fails there.
Higher-order gradients (``create_graph=True``) are refused: the backward functions are not
recorded.
"""
from ... import _unsupported
from ..._tensor import no_grad
from ..._torch_ops import enable_grad, set_grad_enabled
from . import function, functional
from ._grad import backward, grad
from .function import Function, FunctionCtx
from ._gradcheck import gradcheck

__all__ = ["Function", "FunctionCtx", "function", "functional", "gradcheck", "grad", "backward",
           "no_grad", "enable_grad", "set_grad_enabled", "Variable"]


def Variable(data, requires_grad=False, volatile=False):
    """The pre-0.4 wrapper, a tensor today (PyTorch's ``Variable(t)`` gives ``t``)."""
    if requires_grad:
        data.requires_grad_(True)
    return data


__getattr__ = _unsupported.module_getattr(__name__, "torch.autograd", {})
