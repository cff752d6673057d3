"""Joining same-shaped tensors along a new axis, the core of ``tf.stack`` / ``torch.stack``.

It sits below both of its users so neither imports the other for it: ``_convert`` turns a list
of tensors into one tensor this way (as ``tf.convert_to_tensor`` does), and ``_array_ops.stack``
converts a list's non-tensor items first and then joins them here.
"""
from . import _C
from . import errors
from ._int_range import check_int


def stack_tensors(tensors, axis):
    """``tensors`` (a non-empty list of tensors of one shape) joined along a new ``axis``."""
    ndim = tensors[0].ndim
    axis = check_int(axis, "axis", error=errors.InvalidArgumentError)
    if not -ndim - 1 <= axis <= ndim:
        raise errors.InvalidArgumentError(
            f"axis {axis} is out of range for stacking tensors of rank {ndim}")
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(tensors[0].shape):
            raise errors.InvalidArgumentError(
                f"Shapes of all inputs must match: values[0].shape = {list(tensors[0].shape)} != "
                f"values[{i}].shape = {list(t.shape)}")
    return _C.concat([_C.expand_dims(t, axis) for t in tensors], axis)
