"""Differentiable operations whose backward is Python code: one autograd node recorded in C++
(``_C.record_python_function``, cpp/bindings/python_function_node.cc) whose backward calls back
into Python with the GIL held. ``torch.autograd.Function``, ``tf.custom_gradient`` /
``keras.ops.custom_gradient`` and the host (LAPACK) linear algebra all stand on
``record_outputs``.

The node holds the backward callable exactly as long as the graph: it is dropped when the
outputs die or when ``backward()`` without ``retain_graph`` releases the graph. A Python
exception raised by the backward comes out of ``backward()`` / ``tape.gradient`` as itself.
"""
import functools
import inspect

from . import _C
from ._convert import convert_to_tensor
from ._tensor import Tensor


def fresh_output(output, inputs):
    """``output`` as a tensor the node can own: a forward that returns one of its inputs (or a
    tensor that already has a graph) gets an alias sharing its storage, so the input keeps its
    own place in the graph."""
    if any(output is t for t in inputs) or output._grad_fn_name is not None:
        return _C.detach(output)
    return output


def record_outputs(name, inputs, outputs, backward):
    """Records ``outputs`` as computed from ``inputs`` (tensors) by a node whose backward is
    ``backward(grad_outputs) -> one Tensor or None per input``. Returns whether a node was
    recorded (grad mode on and some input needing a gradient)."""
    return _C.record_python_function(name, list(inputs), list(outputs), backward)


def sum_to_shape(grad, shape):
    """``grad`` summed over the axes broadcasting added to ``shape`` (PyTorch accepts a
    gradient expandable from the input's shape and reduces it)."""
    shape = tuple(shape)
    lead = len(grad.shape) - len(shape)
    axes = list(range(lead)) + [lead + i for i, n in enumerate(shape)
                                if n == 1 and grad.shape[lead + i] != 1]
    if axes:
        grad = _C.reduce("sum", grad, axes, True)
        if lead:
            grad = _C.reshape(grad, list(shape))
    return grad


def broadcastable_to(shape, target):
    """Whether ``shape`` expands to ``target`` by NumPy broadcasting."""
    shape, target = tuple(shape), tuple(target)
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(shape, target[len(target) - len(shape):]))


# ----------------------------------------------------------------------------------------------
# tf.custom_gradient / keras.ops.custom_gradient


def _flat_grads(value):
    if value is None:
        return [None]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def custom_gradient(f=None):
    """``tf.custom_gradient``: ``f(*x)`` returns ``(y, grad_fn)``; gradients of ``y`` are
    ``grad_fn(*upstream)`` (one per tensor argument). When ``f`` reads variables (tensors with
    ``requires_grad`` that are not its arguments), ``grad_fn`` must take ``variables=`` and
    return ``(input_grads, variable_grads)``, as in TensorFlow. Also ``keras.ops.custom_gradient``
    (the upstream gradient arrives positionally, which Keras's ``grad(*args, upstream=None)``
    accepts)."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        args = [a if isinstance(a, Tensor) else convert_to_tensor(a) for a in args]
        # Running f recorded (with grad mode on) shows which variables it read; its own graph
        # is dropped: the outputs handed back are aliases owned by the custom node.
        result = f(*args, **kwargs)
        if not (isinstance(result, (tuple, list)) and len(result) == 2 and callable(result[1])):
            raise TypeError(f"{f.__name__} decorated with custom_gradient must return a pair "
                            "(outputs, grad_fn) with grad_fn callable")
        y, grad_fn = result
        single = isinstance(y, Tensor)
        outputs = [y] if single else list(y)
        if not all(isinstance(t, Tensor) for t in outputs):
            raise TypeError(f"{f.__name__} decorated with custom_gradient must return tensors "
                            "as its outputs")
        variables = _C.reachable_leaves(outputs, [a for a in args if isinstance(a, Tensor)])
        outputs = [_C.detach(t) for t in outputs]
        takes_variables = "variables" in inspect.signature(grad_fn).parameters or any(
            p.kind == p.VAR_KEYWORD for p in inspect.signature(grad_fn).parameters.values())
        if variables and not takes_variables:
            raise TypeError("If using @custom_gradient with a function that uses variables, "
                            "then grad_fn must accept a keyword argument 'variables'.")

        def backward(grad_outputs):
            if variables:
                returned = grad_fn(*grad_outputs, variables=variables)
                if not (isinstance(returned, (tuple, list)) and len(returned) == 2):
                    raise TypeError("grad_fn of a custom_gradient function that uses variables "
                                    "must return (input_grads, variable_grads)")
                input_grads, variable_grads = _flat_grads(returned[0]), _flat_grads(returned[1])
                if len(variable_grads) != len(variables):
                    raise ValueError(f"Must return gradient for each variable from "
                                     f"@custom_gradient grad_fn: got {len(variable_grads)} for "
                                     f"{len(variables)} variables")
            else:
                input_grads, variable_grads = _flat_grads(grad_fn(*grad_outputs)), []
            if len(input_grads) != len(args):
                raise ValueError(f"custom_gradient function expected to return {len(args)} "
                                 f"gradients, but returned {len(input_grads)} instead.")
            return [None if g is None else convert_to_tensor(g)
                    for g in input_grads + variable_grads]

        record_outputs(f"CustomGradient_{f.__name__}", args + variables, outputs, backward)
        return outputs[0] if single else type(y)(outputs) if isinstance(y, tuple) else outputs

    return decorated
