"""``tf.conv2d_backprop_input_v2`` / ``tf.conv2d_backprop_filter_v2``: the two gradients of
``tf.nn.conv2d`` as ops of their own (the course's backprop-by-hand exercises call them).

Each is the vector-Jacobian product autograd already computes for conv2d: the convolution runs
under a GradientTape seeded with ``out_backprop``, so the result is exactly what training
uses. The results are values, not recorded for a further gradient (gpuaccel has no
higher-order gradients).
"""
from ._convert import convert_to_tensor
from ._tensor import GradientTape
from .nn import conv2d

__all__ = ["conv2d_backprop_input_v2", "conv2d_backprop_filter_v2"]


def _conv_gradient(input, filter, out_backprop, strides, padding, data_format, dilations,
                   explicit_paddings, of_input):
    if data_format not in ("NHWC", None):
        raise ValueError(f"only data_format='NHWC' is supported, got {data_format!r}")
    if explicit_paddings:
        raise NotImplementedError("explicit_paddings are not supported; use 'SAME' or 'VALID'")
    x, f, seed = (convert_to_tensor(v) for v in (input, filter, out_backprop))
    source = x if of_input else f
    with GradientTape() as tape:
        tape.watch(source)
        out = conv2d(x, f, strides, padding, dilations)
    if tuple(out.shape) != tuple(seed.shape):
        raise ValueError(f"out_backprop has shape {tuple(seed.shape)}, but the convolution "
                         f"gives {tuple(out.shape)}")
    return tape.gradient(out, source, output_gradients=seed)


def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding,  # noqa: A002
                             use_cudnn_on_gpu=True, explicit_paddings=(), data_format="NHWC",
                             dilations=(1, 1, 1, 1), name=None):
    """The gradient of conv2d(input, filter) with respect to ``input``, given the gradient
    ``out_backprop`` of its output."""
    return _conv_gradient(input, filter, out_backprop, strides, padding, data_format,
                          list(dilations), explicit_paddings, of_input=True)


def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding,  # noqa: A002
                              use_cudnn_on_gpu=True, explicit_paddings=(), data_format="NHWC",
                              dilations=(1, 1, 1, 1), name=None):
    """The gradient of conv2d(input, filter) with respect to ``filter``."""
    return _conv_gradient(input, filter, out_backprop, strides, padding, data_format,
                          list(dilations), explicit_paddings, of_input=False)
