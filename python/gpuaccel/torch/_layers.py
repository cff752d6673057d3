"""torch.nn's layer modules: each holds its parameters and calls the matching
``torch.nn.functional`` op (``_torch_functional``) in ``forward``, so gradients come from those
ops. Default initialisations follow PyTorch's rules (``init``)."""
import math

from .. import _torch_functional as F
from .._array_ops import flatten as _flatten
from .._creation import empty
from . import init
from ._module import Module, Parameter


def _pair(value):
    return tuple(value) if isinstance(value, (list, tuple)) else (value, value)


def _init_bias_by_fan_in(bias, weight):
    fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    init.uniform_(bias, -bound, bound)


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x Wᵀ + b, W (out_features, in_features)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight = Parameter(empty(self.out_features, self.in_features, dtype=dtype or
                                      "float32", device=device))
        self.bias = Parameter(empty(self.out_features, dtype=dtype or "float32",
                                    device=device)) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            _init_bias_by_fan_in(self.bias, self.weight)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Conv2d(Module):
    """2-D convolution of NCHW input; weight (out_channels, in_channels / groups, kh, kw)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if padding_mode != "zeros":
            raise ValueError(f"Conv2d supports padding_mode='zeros' only, got {padding_mode!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must both be divisible by groups ({groups})")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.dilation, self.groups = _pair(dilation), int(groups)
        self.padding_mode = padding_mode
        dtype = dtype or "float32"
        self.weight = Parameter(empty(self.out_channels, self.in_channels // self.groups,
                                      *self.kernel_size, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(self.out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    reset_parameters = Linear.reset_parameters

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")


class _Pool2d(Module):
    """A 2-D pooling window: its size, stride (the size by default) and padding."""

    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding = padding

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_Pool2d):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__(kernel_size, stride, padding)
        if return_indices:
            raise ValueError("MaxPool2d(return_indices=True) is not supported; use "
                             "return_indices=False")
        self.dilation, self.ceil_mode = dilation, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode)


class AvgPool2d(_Pool2d):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__(kernel_size, stride, padding)
        if divisor_override is not None:
            raise ValueError("AvgPool2d(divisor_override=...) is not supported; leave it None")
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class Embedding(Module):
    """A lookup table (num_embeddings, embedding_dim), initialised N(0, 1) as in PyTorch."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 device=None, dtype=None):
        super().__init__()
        if padding_idx is not None or max_norm is not None or scale_grad_by_freq or sparse:
            raise ValueError("Embedding supports padding_idx=None, max_norm=None, "
                             "scale_grad_by_freq=False and sparse=False only")
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.padding_idx = None
        if _weight is None:
            self.weight = Parameter(empty(self.num_embeddings, self.embedding_dim,
                                          dtype=dtype or "float32", device=device))
            init.normal_(self.weight)
        else:
            self.weight = Parameter(_weight)

    def forward(self, input):
        return F.embedding(input, self.weight)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return _flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Upsample(Module):
    """``nn.Upsample``: F.interpolate with the arguments fixed at construction."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self):
        shown = f"scale_factor={self.scale_factor}" if self.size is None else f"size={self.size}"
        return f"{shown}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "bilinear", True)


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = float(p), inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class _Activation(Module):
    """An activation: ``function(input, **options)``; the options are its constructor's
    keyword arguments, stored as attributes."""
    function = None
    defaults = {}

    def __init__(self, *args, **kwargs):
        super().__init__()
        names = list(self.defaults)
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} arguments, got "
                            f"{len(args)}")
        options = dict(self.defaults)
        options.update(zip(names, args))
        for key in kwargs:
            if key not in options:
                raise TypeError(f"{type(self).__name__} got an unexpected keyword argument "
                                f"'{key}'")
        options.update(kwargs)
        for key, value in options.items():
            setattr(self, key, value)

    def forward(self, input):
        options = {k: getattr(self, k) for k in self.defaults if k != "inplace"}
        return type(self).function(input, **options)

    def extra_repr(self):
        return ", ".join(f"{k}={getattr(self, k)}" for k in self.defaults if k != "inplace")


def _activation(name, function, **defaults):
    return type(name, (_Activation,), {"function": staticmethod(function),
                                       "defaults": defaults, "__module__": __name__})


ReLU = _activation("ReLU", F.relu, inplace=False)
ReLU6 = _activation("ReLU6", F.relu6, inplace=False)
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, negative_slope=0.01, inplace=False)
ELU = _activation("ELU", F.elu, alpha=1.0, inplace=False)
GELU = _activation("GELU", F.gelu, approximate="none")
SiLU = _activation("SiLU", F.silu, inplace=False)
Sigmoid = _activation("Sigmoid", F.sigmoid)
Tanh = _activation("Tanh", F.tanh)
Softplus = _activation("Softplus", F.softplus, beta=1.0, threshold=20.0)
Softmax = _activation("Softmax", F.softmax, dim=None)
LogSoftmax = _activation("LogSoftmax", F.log_softmax, dim=None)
