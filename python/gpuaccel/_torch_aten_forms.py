"""The top-level ``torch.*`` forms of torch.nn.functional's functions whose arguments differ
from F's (ATen's signatures): losses take ``reduction`` as an int (0 none, 1 mean, 2 sum; none when left out, as
PyTorch 1.13's top-level forms do),
``torch.batch_norm``/``instance_norm`` put weight and bias before the running statistics,
``torch.embedding`` takes the weight first, and the ``native_*`` forms return the statistics
with the output. Each calls the functional form in ``_torch_functional``.
"""


from . import _C
from . import _array_ops
from . import _torch_functional as _F
from ._convert import convert_to_tensor
from ._torch_generator import drawing_from

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(value):
    if value not in _REDUCTIONS:
        raise ValueError(f"reduction must be 0 (none), 1 (mean) or 2 (sum), got {value!r}")
    return _REDUCTIONS[value]


def kl_div(input, target, reduction=1, log_target=False):
    return _F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return _F.binary_cross_entropy_with_logits(input, target, weight, _reduction(reduction),
                                               pos_weight)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return _F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return _F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return _F.cosine_embedding_loss(input1, input2, target, margin,
                                    reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                               reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=0):
    return _F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                  reduction=_reduction(reduction))


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled=True):
    return _F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled=True):
    return _F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                            momentum, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return _F.embedding(indices, weight)


def constant_pad_nd(input, pad, value=0):
    return _F.pad(input, pad, value=value)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd), the statistics with keepdim over the normalized dimensions."""
    x = convert_to_tensor(input)
    axes = list(range(x.ndim - len(normalized_shape), x.ndim))
    mean = _C.reduce("mean", x, axes, True)
    var = _C.reduce("mean", (x - mean) * (x - mean), axes, True)
    # torch's backward ignores gradients arriving at mean and rstd: they are constants here
    return (_F.layer_norm(x, normalized_shape, weight, bias, eps), _C.detach(mean),
            _C.detach(_C.unary("rsqrt", var + float(eps))))


def native_channel_shuffle(input, groups):
    return _F.channel_shuffle(input, groups)


def native_dropout(input, p, train):
    """(output, keep mask): the mask is True where an entry was kept."""
    x = convert_to_tensor(input)
    if not train or p == 0:
        return _C.clone(x), _C.cast(_array_ops.ones_like(x), "bool")
    scaled_mask = _C.dropout(_array_ops.ones_like(x), float(p), True)
    return x * scaled_mask, scaled_mask > 0


def frobenius_norm(input, dim=(), keepdim=False):
    x = convert_to_tensor(input)
    axes = None if dim in ((), []) else list(dim) if isinstance(dim, (list, tuple)) else [dim]
    return _C.unary("sqrt", _C.reduce("sum", x * x, axes, bool(keepdim)))


def norm_except_dim(v, pow=2, dim=0):  # noqa: A002 - torch's names
    """The p-norm over every dimension but ``dim`` (weight normalization's g), keeping dims."""
    x = convert_to_tensor(v)
    if dim == -1:
        return _C.reduce("sum", _C.unary("abs", x) ** float(pow), None, False) ** (1.0 / float(pow))
    others = [k for k in range(x.ndim) if k != dim % x.ndim]
    return _C.reduce("sum", _C.unary("abs", x) ** float(pow), others, True) ** (1.0 / float(pow))


def feature_dropout(input, p, train):
    x = convert_to_tensor(input)
    return _F.dropout2d(x, p, train) if x.ndim in (3, 4) else _F.dropout1d(x, p, train)


_SELU_NEGATIVE = -1.0507009873554804934193349852946 * 1.6732632423543772848170429916717


def alpha_dropout(input, p, train):
    """Dropout that keeps SELU's mean and variance: dropped entries become SELU's negative
    saturation value, then an affine correction (torch's alpha dropout)."""
    x = convert_to_tensor(input)
    if not train or p == 0:
        return x
    if p == 1:
        return x * 0.0
    keep = _C.cast(_C.dropout(_array_ops.ones_like(x), float(p), True) > 0, x._dtype_name)
    a = ((1 - p) * (1 + p * _SELU_NEGATIVE ** 2)) ** -0.5
    b = -a * _SELU_NEGATIVE * p
    return (x * keep + (1.0 - keep) * _SELU_NEGATIVE) * a + b


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Leaky ReLU with the slope (lower + upper) / 2 in eval, a uniform draw per entry in
    training."""
    x = convert_to_tensor(input)
    if not training:
        return _F.leaky_relu(x, (lower + upper) / 2)
    with drawing_from(generator, "rrelu"):
        draws = _C.tensor_random("uniform", list(x.shape), x._dtype_name, x._device_name)
    slope = draws * (upper - lower) + lower
    return _array_ops.where(x >= 0, x, x * slope)


def _in_place_of(fn):
    def in_place(input, *args, **kwargs):
        return input.copy_(fn(input, *args, **kwargs))
    in_place.__name__ = fn.__name__ + "_"
    return in_place


rrelu_ = _in_place_of(rrelu)
feature_dropout_ = _in_place_of(feature_dropout)
alpha_dropout_ = _in_place_of(alpha_dropout)
dropout_ = _in_place_of(lambda input, p, train: _F.dropout(input, p, train))
