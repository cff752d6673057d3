"""torch.nn's normalization modules: BatchNorm1d/2d (batch statistics in training, moving the
running ones by ``momentum``; the running statistics in eval; ``momentum=None`` is the
cumulative average, as in PyTorch) and LayerNorm, over ``torch.nn.functional``'s ops."""
from .. import _torch_functional as F
from .._creation import ones, zeros
from .._tensor import tensor
from ._module import Module, Parameter


class _BatchNorm(Module):
    input_ranks = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = int(num_features), float(eps), momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = dtype or "float32"
        if affine:
            self.weight = Parameter(ones(self.num_features, dtype=dtype, device=device))
            self.bias = Parameter(zeros(self.num_features, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(self.num_features, dtype=dtype,
                                                       device=device))
            self.register_buffer("running_var", ones(self.num_features, dtype=dtype,
                                                     device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype="int64",
                                                               device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def forward(self, input):
        if input.ndim not in self.input_ranks:
            raise ValueError(f"expected {' or '.join(f'{r}D' for r in self.input_ranks)} input "
                             f"(got {input.ndim}D input)")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                momentum = 1.0 / float(self.num_batches_tracked.item())
        # Training uses the batch's statistics (and moves the running ones if tracked); eval
        # uses the running ones, or the batch's where none are tracked.
        use_batch_stats = self.training or self.running_mean is None
        update_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if update_running else None,
                            self.running_var if update_running else None, self.weight,
                            self.bias, use_batch_stats, momentum, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Over (N, C) or (N, C, L)."""
    input_ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Over (N, C, H, W)."""
    input_ranks = (4,)


class LayerNorm(Module):
    """Normalizes over the last dimensions (``normalized_shape``), with an elementwise affine
    weight (ones) and bias (zeros)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape, self.eps = tuple(int(d) for d in shape), float(eps)
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, dtype=dtype or "float32",
                                         device=device))
            self.bias = Parameter(zeros(*self.normalized_shape, dtype=dtype or "float32",
                                        device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
