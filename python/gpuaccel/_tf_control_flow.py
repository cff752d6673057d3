"""TensorFlow's control flow (``tf.cond``, ``tf.case``, ``tf.switch_case``, ``tf.while_loop``,
``tf.foldl``/``foldr``, ``tf.scan``, ``tf.map_fn``/``tf.vectorized_map``) and its graph bookkeeping (``tf.group``, ``tf.no_op``,
``tf.tuple``, ``tf.name_scope``), as TensorFlow runs them eagerly.

In eager mode TF reads the predicate or index on the host and runs the chosen Python function,
loops in Python, and stacks a scan's outputs; gpuaccel always runs eagerly, so these are that
Python control flow over tensors, and gradients flow through whatever ops the branches and
bodies ran. The argument checks and the errors are TF's eager ones. ``keras.ops`` has the
Keras spellings (cond, switch, while_loop, scan) with Keras's argument conventions.
"""
import threading

import numpy as np

from . import _C, errors, nest
from ._array_ops import identity, stack
from ._convert import convert_to_tensor
from ._tensor import Tensor
from .dtypes import as_dtype

__all__ = ["cond", "case", "switch_case", "while_loop", "foldl", "foldr", "scan", "map_fn",
           "vectorized_map", "no_op",
           "group", "tuple_", "name_scope", "get_current_name_scope", "grad_pass_through",
           "recompute_grad", "is_symbolic_tensor", "inside_function"]


def _as_tensor(value):
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


def _scalar_bool(pred, what):
    pred = _as_tensor(pred)
    if pred._dtype_name != "bool":
        raise TypeError(f"{what} must be a bool tensor, got dtype {pred._dtype_name}")
    if pred.ndim != 0:
        raise ValueError(f"{what} must be a scalar, got shape {tuple(pred.shape)}")
    return bool(pred)


def _unpacked_singleton(result):
    return result[0] if isinstance(result, (list, tuple)) and len(result) == 1 else result


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``tf.cond``: ``true_fn()`` if ``pred`` (a tensor or Python value) is true, else
    ``false_fn()``; the branch's result comes back as it is (TF 2's strict cond)."""
    if not callable(true_fn):
        raise TypeError("'true_fn' must be callable.")
    if not callable(false_fn):
        raise TypeError("'false_fn' must be callable.")
    return true_fn() if bool(_as_tensor(pred)) else false_fn()


def _case_pairs(pred_fn_pairs, exclusive):
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(f"'pred_fn_pairs' must be a list, tuple, or dict. Received: "
                        f"{type(pred_fn_pairs)}")
    if isinstance(pred_fn_pairs, dict):
        if not exclusive:
            raise ValueError("Unordered dictionaries are not supported for the 'pred_fn_pairs' "
                             "argument when `exclusive=False` and eager mode is enabled.")
        pred_fn_pairs = list(pred_fn_pairs.items())
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.")
        if not isinstance(pair[0], Tensor):
            raise TypeError(f"pred must be a Tensor, got: {pair[0]}")
        if not callable(pair[1]):
            raise TypeError(f"fn for pred {pair[0]} must be callable.")
    return list(pred_fn_pairs)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """``tf.case``: the function of the first true predicate, else ``default`` (without one,
    the last pair's function, whose predicate must then hold: TF's rule)."""
    pairs = _case_pairs(pred_fn_pairs, exclusive)
    truth = [_scalar_bool(pred, "pred") for pred, _ in pairs]
    if exclusive and sum(truth) > 1:
        raise errors.InvalidArgumentError(
            f"Input error: exclusive=True: more than 1 conditions ({sum(truth)}) evaluated as "
            f"True: {truth}")
    if default is None:
        *pairs, (last_pred, default) = pairs
        *truth, last_truth = truth
        if not any(truth) and not last_truth:
            raise errors.InvalidArgumentError(
                f"Input error: None of conditions evaluated as True: {truth + [last_truth]}")
    elif not callable(default):
        raise TypeError("default must be callable.")
    for holds, (_, fn) in zip(truth, pairs):
        if holds:
            return _unpacked_singleton(fn()) if not strict else fn()
    return _unpacked_singleton(default()) if not strict else default()


def _switch_branches(branch_fns):
    if not branch_fns:
        raise ValueError("Must provide at least one item in 'branch_fns'")
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError("'branch_fns' must be a list, tuple, or dict")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(fn) for fn in pairs):
        pairs = list(enumerate(pairs))
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'branch_fns' must be a 2-tuple. Received {pair}.")
        if not isinstance(pair[0], int):
            raise TypeError(f"key must be a Python `int`, got {type(pair[0])}")
        if not callable(pair[1]):
            raise TypeError(f"fn for key {pair[0]} must be callable.")
    keys = sorted(key for key, _ in pairs)
    if keys != list(range(len(keys))):
        raise ValueError(f"branch indices (keys) must form contiguous range of [0 to "
                         f"{len(keys)}) but found {{{','.join(map(str, keys))}}}")
    return [fn for _, fn in sorted(pairs, key=lambda pair: pair[0])]


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """``tf.switch_case``: ``branch_fns[branch_index]()``; an index out of range runs
    ``default`` (without one, the last branch)."""
    if not isinstance(branch_index, Tensor):
        raise TypeError(f"'branch_index' must be a Tensor, got {type(branch_index)}")
    if branch_index.dtype.is_floating_point or branch_index._dtype_name == "bool":
        raise TypeError(f"'branch_index' must be an integer Tensor, got "
                        f"{branch_index._dtype_name}")
    actions = _switch_branches(branch_fns)
    if default is not None:
        actions.append(default)
    chosen = int(branch_index)
    if not 0 <= chosen < len(actions):
        chosen = len(actions) - 1
    return actions[chosen]()


def _converted(structure):
    return nest.map_structure(_as_tensor, structure)


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """``tf.while_loop``: ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (and fewer
    than ``maximum_iterations`` steps ran); the result has ``loop_vars``' structure, its leaves
    as tensors. ``body`` returns a list or tuple shaped like ``loop_vars`` (TF checks it, so
    a one-variable loop's body returns ``[v]``)."""
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if not nest.is_nested(loop_vars) or not loop_vars:
        raise ValueError("'loop_vars' must be provided.")
    if maximum_iterations is not None:
        limit = _as_tensor(maximum_iterations)
        if limit.ndim != 0:
            raise ValueError(f"'maximum_iterations' must be a scalar. Received shape: "
                             f"{tuple(limit.shape)}")
        maximum_iterations = int(limit)
    state, steps = loop_vars, 0
    while (maximum_iterations is None or steps < maximum_iterations) and bool(cond(*state)):
        state = body(*state)
        nest.assert_same_structure(list(loop_vars), list(state) if nest.is_nested(state) else
                                   state, check_types=False)
        steps += 1
    return _converted(nest.pack_sequence_as(loop_vars, nest.flatten(state)))


def _slices(elems):
    """The structure ``elems`` cut along its leaves' first axis: a list of structures."""
    leaves = [_as_tensor(leaf) for leaf in nest.flatten(elems)]
    sizes = {leaf.shape[0] if leaf.ndim else None for leaf in leaves}
    if len(sizes) != 1 or None in sizes:
        raise ValueError(f"elems must be tensors of rank >= 1 with one first-axis length, got "
                         f"shapes {[tuple(leaf.shape) for leaf in leaves]}")
    n = sizes.pop()
    return [nest.pack_sequence_as(elems, [leaf[i] for leaf in leaves]) for i in range(n)]


def _fold(fn, elems, initializer, reverse):
    if not callable(fn):
        raise TypeError(f"{fn.__name__ if hasattr(fn, '__name__') else fn} is not callable. "
                        "Please provide a callable function.")
    items = _slices(elems)
    if reverse:
        items = items[::-1]
    if initializer is None:
        if not items:
            raise ValueError("elems must have a non-empty first axis when no initializer is "
                             "given")
        accumulator, items = items[0], items[1:]
    else:
        accumulator = initializer
    for item in items:
        accumulator = fn(accumulator, item)
    return _converted(accumulator)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``tf.foldl``: ``acc = fn(acc, x)`` over ``elems``' first axis, left to right (``acc``
    starts at ``initializer``, else at the first slice)."""
    return _fold(fn, elems, initializer, reverse=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``tf.foldr``: as foldl, right to left."""
    return _fold(fn, elems, initializer, reverse=True)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """``tf.scan``: every accumulator of ``acc = fn(acc, x)`` over ``elems``' first axis,
    stacked (without ``initializer`` the first slice is the first accumulator and output);
    ``reverse`` scans from the end and keeps each output at its slice's position."""
    if not callable(fn):
        raise TypeError(f"{fn} is not callable. Please provide a callable function.")
    items = _slices(elems)
    order = list(range(len(items)))[::-1] if reverse else list(range(len(items)))
    outputs = [None] * len(items)
    if initializer is None:
        if not items:
            raise ValueError("elems must have a non-empty first axis when no initializer is "
                             "given")
        accumulator = items[order[0]]
        outputs[order[0]] = accumulator
        order = order[1:]
    else:
        accumulator = initializer
    for i in order:
        accumulator = fn(accumulator, items[i])
        outputs[i] = accumulator
    template = outputs[0]
    columns = zip(*(nest.flatten(_converted(out)) for out in outputs))
    return nest.pack_sequence_as(template, [stack(list(column), 0) for column in columns])


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """``tf.map_fn``: ``fn`` applied to each slice of ``elems``' first axis (a structure's
    leaves sliced together), the results stacked. The results have ``elems``' structure and
    dtypes unless ``fn_output_signature`` (or the older ``dtype``) says otherwise, and every
    slice's result has the first one's shapes, with TF's eager errors."""
    signature = fn_output_signature if fn_output_signature is not None else dtype
    return _map_slices("tf.map_fn", fn, elems, signature, signature is None)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``tf.vectorized_map``: the results of ``fn`` on each slice of ``elems``, stacked. TF
    vectorizes ``fn``; run eagerly it is ``map_fn`` whose results keep ``fn``'s own structure
    and dtypes (what TF's vectorized ``fn`` gives)."""
    return _map_slices("tf.vectorized_map", fn, elems, None, False)


def _map_slices(caller, fn, elems, signature, like_elems):
    """The stacked results of ``fn`` on each slice of ``elems``: shaped and typed like ``elems``
    (``like_elems``), like ``signature``, or (both unset) like the first result."""
    if not callable(fn):
        raise TypeError(f"{caller}: fn must be callable, got {fn!r}")
    leaves = [_as_tensor(leaf) for leaf in nest.flatten(elems)]
    if any(leaf.ndim == 0 for leaf in leaves):
        raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    count = leaves[0].shape[0]
    for leaf in leaves[1:]:
        if leaf.shape[0] != count:
            raise ValueError(f"Dimensions {count} and {leaf.shape[0]} are not compatible")
    template, dtypes = None, None
    if like_elems:
        template, dtypes = elems, [leaf._dtype_name for leaf in leaves]
    elif signature is not None:
        template = signature
        dtypes = [as_dtype(getattr(spec, "dtype", spec)).name for spec in nest.flatten(signature)]
    columns = None
    for i in range(count):
        result = fn(nest.pack_sequence_as(elems, [leaf[i] for leaf in leaves]))
        values = [_as_tensor(value) for value in nest.flatten(result)]
        if template is None:  # vectorized_map: the first result sets structure and dtypes
            template, dtypes = result, [value._dtype_name for value in values]
        nest.assert_same_structure(template, result)
        columns = columns or [[] for _ in values]
        for column, expected, value in zip(columns, dtypes, values):
            if value._dtype_name != expected:
                raise errors.InvalidArgumentError(
                    f"TensorArray dtype is {expected} but Op is trying to write dtype "
                    f"{value._dtype_name}", caller)
            if column and tuple(value.shape) != tuple(column[0].shape):
                raise ValueError(f"Incompatible shape for value ({tuple(value.shape)}), "
                                 f"expected ({tuple(column[0].shape)})")
            column.append(value)
    if columns is None:  # no slices: TF gives empty 1-D tensors of the expected dtypes
        if template is None:
            template, dtypes = elems, [leaf._dtype_name for leaf in leaves]
        empty = convert_to_tensor(np.zeros(0, np.float32))
        return nest.pack_sequence_as(template, [_C.cast(empty, d) for d in dtypes])
    return nest.pack_sequence_as(template, [stack(column, 0) for column in columns])


def no_op(name=None):
    """``tf.no_op``: nothing to run eagerly; returns None, as TF's eager no_op."""
    return None


def group(*inputs, **kwargs):
    """``tf.group``: eager ops already ran, so there is nothing to wait for; returns None."""
    unknown = sorted(set(kwargs) - {"name"})
    if unknown:
        raise TypeError(f"Unknown keyword arguments: {unknown}")
    return None


def tuple_(tensors, name=None, control_inputs=None):
    """``tf.tuple``: the tensors, as a list of identities (their values are already
    computed)."""
    return [None if t is None else identity(t) for t in tensors]


_scopes = threading.local()


def _scope_stack():
    if not hasattr(_scopes, "names"):
        _scopes.names = []
    return _scopes.names


def get_current_name_scope():
    """``tf.get_current_name_scope``: the enclosing ``name_scope`` names joined with '/'
    ('' outside any)."""
    return "/".join(_scope_stack())


class name_scope:
    """``tf.name_scope(name)``: names the ops inside it in TF's graphs and profiles; here it
    keeps the scope names (``get_current_name_scope``) and enters as the 'a/b/' string."""

    def __init__(self, name):
        if not isinstance(name, str):
            raise ValueError("name for name_scope must be a string.")
        self._name = name

    @property
    def name(self):
        return self._name

    def __enter__(self):
        names = _scope_stack()
        if self._name.endswith("/"):  # an absolute scope name, as TF takes one
            self._saved, names[:] = list(names), [part for part in self._name.split("/") if part]
        else:
            self._saved = None
            names.append(self._name)
        return get_current_name_scope() + "/" if names else ""

    def __exit__(self, *exc):
        names = _scope_stack()
        if self._saved is not None:
            names[:] = self._saved
        else:
            names.pop()
        return False


def grad_pass_through(f):
    """``tf.grad_pass_through(f)``: a function computing ``f(x)`` whose gradient with respect
    to ``x`` is the identity (straight-through), as TF's: the forward value is f's, the
    backward skips f."""

    def wrapped(x):
        x = _as_tensor(x)
        y = _as_tensor(f(x))
        if tuple(y.shape) != tuple(x.shape):
            raise ValueError(f"grad_pass_through needs f(x) shaped like x (the gradient passes "
                             f"through unchanged), got {tuple(y.shape)} from {tuple(x.shape)}")
        # y + (x - x): y's value, x's gradient.
        return _C.binary("add", _C.detach(y), _C.binary("sub", x, _C.detach(x)))

    return wrapped


def recompute_grad(f):
    """``tf.recompute_grad(f)``: TF recomputes f's forward pass during backprop to save
    memory; the values and gradients are f's, which is what this returns (gpuaccel keeps f's
    intermediate tensors, so it saves no memory)."""

    def wrapped(*args, **kwargs):
        return f(*args, **kwargs)

    wrapped.__wrapped__ = f
    return wrapped


def is_symbolic_tensor(tensor):
    """``tf.is_symbolic_tensor``: False, gpuaccel's tensors always hold values (eager)."""
    return False


def inside_function():
    """``tf.inside_function``: False, gpuaccel never traces a tf.function graph."""
    return False
