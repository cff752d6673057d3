"""TensorFlow's top-level spellings of the NumPy-style array ops in ``_numpy_ops``.

``tf.roll``, ``tf.reverse``, ``tf.repeat`` and ``tf.meshgrid`` compute what ``keras.ops``'s
roll/flip/repeat/meshgrid compute, but take TF's argument names (``input``, ``tensor``), a
``name``, and TF's required arguments (tf.roll needs ``axis``; tf.reverse reverses only the axes
listed, never all of them), so the TensorFlow face gets these thin adapters rather than the
Keras functions themselves.
"""
from . import _numpy_ops


def roll(input, shift, axis, name=None):  # noqa: A002 -- TF's argument name
    """``tf.roll``: entries shifted ``shift`` places along ``axis`` (ints or equal-length
    lists), wrapping around."""
    if axis is None:
        raise ValueError("tf.roll needs axis (an int or a list of ints, one per shift), got None")
    return _numpy_ops.roll(input, shift, axis)


def reverse(tensor, axis, name=None):
    """``tf.reverse``: ``tensor`` with the axes listed in ``axis`` (a list of ints) reversed."""
    if axis is None or not isinstance(axis, (list, tuple)):
        raise TypeError(f"tf.reverse needs axis as a list of ints (e.g. [0] or [-1]), "
                        f"got {axis!r}")
    return _numpy_ops.flip(tensor, tuple(axis))


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """``tf.repeat``: each entry repeated ``repeats`` times along ``axis`` (the flattened
    tensor when None)."""
    return _numpy_ops.repeat(input, repeats, axis)


def meshgrid(*args, indexing="xy", name=None):
    """``tf.meshgrid``: coordinate grids, Cartesian ('xy', the default) or matrix ('ij')
    indexing."""
    return _numpy_ops.meshgrid(*args, indexing=indexing)
