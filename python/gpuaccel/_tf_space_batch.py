"""``tf.space_to_batch_nd`` / ``tf.batch_to_space`` (and their aliases): moving spatial blocks
into the batch axis and back, as dilated ("atrous") convolutions are written by hand. Pure
pad / reshape / transpose compositions, so the gradient flows through them.
"""
import numbers

from ._array_ops import pad, reshape, transpose
from ._convert import convert_to_tensor


def _block_shape(block_shape):
    values = block_shape.numpy().tolist() if hasattr(block_shape, "numpy") else block_shape
    values = [values] if isinstance(values, numbers.Integral) else list(values)
    if not values or any(isinstance(b, bool) or not isinstance(b, numbers.Integral) or b < 1
                         for b in values):
        raise ValueError(f"block_shape must be a list of positive ints, got {block_shape!r}")
    return [int(b) for b in values]


def _pairs(pairs, count, name):
    values = pairs.numpy().tolist() if hasattr(pairs, "numpy") else pairs
    values = [[int(a), int(b)] for a, b in values]
    if len(values) != count or any(a < 0 or b < 0 for a, b in values):
        raise ValueError(f"{name} must hold one non-negative (before, after) pair per block "
                         f"dimension ({count}), got {pairs!r}")
    return values


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002 -- TF's name
    """Pads the M spatial axes after the batch by ``paddings``, cuts them into blocks of
    ``block_shape`` and stacks the block offsets on the batch axis (offset-major, as TF)."""
    x = convert_to_tensor(input)
    blocks = _block_shape(block_shape)
    m = len(blocks)
    if x.ndim < m + 1:
        raise ValueError(f"input of rank {x.ndim} has fewer than the {m} spatial axes "
                         f"block_shape {blocks} names (after the batch axis)")
    padded = pad(x, [[0, 0]] + _pairs(paddings, m, "paddings") + [[0, 0]] * (x.ndim - 1 - m))
    batch, spatial, rest = padded.shape[0], list(padded.shape[1:m + 1]), list(padded.shape[m + 1:])
    if any(s % b for s, b in zip(spatial, blocks)):
        raise ValueError(f"padded spatial shape {spatial} must be divisible by block_shape "
                         f"{blocks}")
    split = [batch] + [v for s, b in zip(spatial, blocks) for v in (s // b, b)] + rest
    order = ([2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] +
             list(range(1 + 2 * m, len(split))))
    moved = transpose(reshape(padded, split), order)
    count = 1
    for b in blocks:
        count *= b
    return reshape(moved, [batch * count] + [s // b for s, b in zip(spatial, blocks)] + rest)


def batch_to_space(input, block_shape, crops, name=None):  # noqa: A002
    """The inverse of space_to_batch_nd: block offsets moved from the batch axis back into the
    M spatial axes, then ``crops`` removed from each."""
    x = convert_to_tensor(input)
    blocks = _block_shape(block_shape)
    m = len(blocks)
    count = 1
    for b in blocks:
        count *= b
    if x.ndim < m + 1 or x.shape[0] % count:
        raise ValueError(f"input of shape {tuple(x.shape)} needs {m} spatial axes and a batch "
                         f"divisible by the block count {count}")
    crop = _pairs(crops, m, "crops")
    batch, spatial, rest = x.shape[0] // count, list(x.shape[1:m + 1]), list(x.shape[m + 1:])
    split = blocks + [batch] + spatial + rest
    order = [m] + [v for i in range(m) for v in (m + 1 + i, i)] + list(range(2 * m + 1,
                                                                               len(split)))
    full = reshape(transpose(reshape(x, split), order),
                   [batch] + [s * b for s, b in zip(spatial, blocks)] + rest)
    sizes = [s * b for s, b in zip(spatial, blocks)]
    if any(a + b > n for (a, b), n in zip(crop, sizes)):
        raise ValueError(f"crops {crop} remove more than the spatial shape {sizes}")
    return full[(slice(None),) + tuple(slice(a, n - b) for (a, b), n in zip(crop, sizes))]


def space_to_batch(input, block_shape, paddings, name=None):  # noqa: A002
    """``tf.space_to_batch`` (and ``tf.nn.space_to_batch``): space_to_batch_nd."""
    return space_to_batch_nd(input, block_shape, paddings)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """``tf.required_space_to_batch_paddings``: (paddings, crops), int32 (M, 2): the
    base paddings with the end of each axis padded up to a multiple of its block, and the
    crops that undo that extra end padding."""
    import numpy as np
    shape = np.asarray(input_shape.numpy() if hasattr(input_shape, "numpy") else input_shape,
                       np.int64).reshape(-1)
    block = np.asarray(_block_shape(block_shape), np.int64)
    if block.shape != shape.shape:
        raise ValueError(f"block_shape {block.tolist()} needs one entry per input_shape entry "
                         f"{shape.tolist()}")
    base = np.zeros((shape.size, 2), np.int64) if base_paddings is None else \
        np.asarray(_pairs(base_paddings, shape.size, "base_paddings"), np.int64)
    full = shape + base[:, 0] + base[:, 1]
    extra = (block - full % block) % block
    paddings = np.stack([base[:, 0], base[:, 1] + extra], 1).astype(np.int32)
    crops = np.stack([np.zeros_like(extra), extra], 1).astype(np.int32)
    return convert_to_tensor(paddings), convert_to_tensor(crops)
