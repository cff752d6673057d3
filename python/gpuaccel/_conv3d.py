"""3-D convolutions (volumes: video clips, medical scans) for every face (tf.nn.conv3d,
keras Conv3D/Conv3DTranspose, F.conv3d/conv_transpose3d), written once here on the 2-D
convolution op, so they run wherever conv2d runs (oneDNN, cuDNN) and autograd differentiates
them with no kernel of their own.

The depth axis is folded into the batch: output depth slice o of a convolution is the sum over
the kernel's depth taps kd of the 2-D convolution of input slice o * stride + kd * dilation with
the kernel's 2-D slice kd. So one layer costs KD conv2d calls, each over a batch of
N * out_depth images: the same multiply-adds as a native 3-D kernel, plus the strided copies of
the input slices. The transposed convolution is its gradient, built the same way: each tap's
2-D transposed convolution lands on every stride-th depth position, shifted by the tap.

Layout everywhere: NDHWC input, kernels (KD, KH, KW, C / groups, F) for the convolution and
(KD, KH, KW, F, C) for the transposed one (Keras's and TensorFlow's). Padding is explicit
(front, back) per spatial axis; ``same_padding``/``valid_padding`` give TensorFlow's.
"""
from . import _C
from ._array_ops import pad as _pad


def window(kernel, dilation):
    """The extent a dilated kernel covers."""
    return (kernel - 1) * dilation + 1


def same_padding(size, kernel, stride, dilation):
    """TensorFlow's 'SAME' padding of one axis: (front, back), the back taking the odd one."""
    out = -(-size // stride)
    total = max((out - 1) * stride + window(kernel, dilation) - size, 0)
    return total // 2, total - total // 2


def padding_pairs(mode, sizes, kernels, strides, dilations):
    """(front, back) for each spatial axis of a 'VALID' or 'SAME' convolution of ``sizes``."""
    if mode == "VALID":
        return [(0, 0)] * len(sizes)
    if mode == "SAME":
        return [same_padding(*axis) for axis in zip(sizes, kernels, strides, dilations)]
    raise ValueError(f"padding must be 'VALID' or 'SAME', got {mode!r}")


def _slices(x, axis, start, stop, step=1):
    """x[..., start:stop:step, ...] along ``axis``."""
    return _C.slice(x, [(start, stop, step) if a == axis else (0, n, 1)
                        for a, n in enumerate(x.shape)])


def conv3d(x, kernel, bias, strides, pads, dilations, groups=1):
    """The convolution of x (N, D, H, W, C) with kernel (KD, KH, KW, C / groups, F); ``pads``
    three (front, back) pairs. Returns (N, OD, OH, OW, F)."""
    if x.ndim != 5 or kernel.ndim != 5:
        raise ValueError(f"a 3-D convolution needs input (batch, depth, height, width, channels) "
                         f"and kernel (depth, height, width, in_channels, filters), got shapes "
                         f"{tuple(x.shape)} and {tuple(kernel.shape)}")
    (sd, sh, sw), (dd, dh, dw) = strides, dilations
    if any(before or after for before, after in pads):
        x = _pad(x, [(0, 0), *pads, (0, 0)])
    n, depth, height, width, channels = x.shape
    taps = kernel.shape[0]
    out_depth = (depth - window(taps, dd)) // sd + 1
    if out_depth <= 0:
        raise ValueError(f"the 3-D convolution's input depth {depth} (padded) is smaller than "
                         f"the kernel's dilated depth {window(taps, dd)}")
    total = None
    for tap in range(taps):
        start = tap * dd
        planes = _slices(x, 1, start, start + (out_depth - 1) * sd + 1, sd)
        planes = _C.reshape(planes, [n * out_depth, height, width, channels])
        part = _C.conv2d(planes, _C.select(kernel, 0, tap), None, sh, sw, "VALID", dh, dw,
                         "linear", groups)
        total = part if total is None else _C.binary("add", total, part)
    out = _C.reshape(total, [n, out_depth, *total.shape[1:]])
    return out if bias is None else _C.binary("add", out, bias)


def conv3d_transpose(x, kernel, bias, output_size, strides, pads, dilations):
    """The transposed convolution (the gradient of ``conv3d`` with respect to its input) of x
    (N, D, H, W, C) with kernel (KD, KH, KW, F, C): an (N, OD, OH, OW, F) result for
    ``output_size`` (OD, OH, OW), ``pads`` the (front, back) pairs of that convolution."""
    if x.ndim != 5 or kernel.ndim != 5:
        raise ValueError(f"a 3-D transposed convolution needs input (batch, depth, height, "
                         f"width, channels) and kernel (depth, height, width, filters, "
                         f"in_channels), got shapes {tuple(x.shape)} and {tuple(kernel.shape)}")
    (sd, sh, sw), (dd, dh, dw) = strides, dilations
    out_depth, out_height, out_width = output_size
    n, depth, height, width, channels = x.shape
    taps = kernel.shape[0]
    planes = _C.reshape(x, [n * depth, height, width, channels])
    spread = (depth - 1) * sd + 1  # depth positions one tap's outputs cover, stride apart
    full = spread + (taps - 1) * dd  # the padded depth every tap lands in
    total = None
    for tap in range(taps):
        part = _C.conv2d_transpose_padded(planes, _C.select(kernel, 0, tap), None, out_height,
                                          out_width, sh, sw, dh, dw, [*pads[1], *pads[2]])
        part = _C.reshape(part, [n, depth, *part.shape[1:]])
        if sd > 1:  # depth slice i lands at i * stride: zeros between
            part = _pad(_C.expand_dims(part, 2), [(0, 0), (0, 0), (0, sd - 1), (0, 0), (0, 0),
                                                  (0, 0)])
            part = _slices(_C.reshape(part, [n, depth * sd, *part.shape[3:]]), 1, 0, spread)
        offset = tap * dd
        part = _pad(part, [(0, 0), (offset, full - offset - spread), (0, 0), (0, 0), (0, 0)])
        total = part if total is None else _C.binary("add", total, part)
    front = pads[0][0]
    if front + out_depth > full:  # output padding past the last tap's reach: zeros
        total = _pad(total, [(0, 0), (0, front + out_depth - full), (0, 0), (0, 0), (0, 0)])
    out = _slices(total, 1, front, front + out_depth)
    return out if bias is None else _C.binary("add", out, bias)
