"""torch.nn's loss modules: the ``torch.nn.functional`` loss with the options given to the
constructor (``reduction`` and the loss's own)."""
from .. import _torch_functional as F
from ._module import Module


class _Loss(Module):
    function = None
    options = ()

    def __init__(self, reduction="mean", **options):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"{reduction} is not a valid value for reduction (use 'mean', "
                             f"'sum' or 'none')")
        self.reduction = reduction
        for key, value in options.items():
            setattr(self, key, value)

    def forward(self, input, target):
        options = {k: getattr(self, k) for k in self.options}
        return type(self).function(input, target, reduction=self.reduction, **options)


class CrossEntropyLoss(_Loss):
    """Logits (N, C) against class indices (N,) or class probabilities (N, C)."""
    function = staticmethod(F.cross_entropy)
    options = ("weight", "ignore_index", "label_smoothing")

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(reduction, weight=weight, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)


class NLLLoss(_Loss):
    function = staticmethod(F.nll_loss)
    options = ("weight", "ignore_index")

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(reduction, weight=weight, ignore_index=ignore_index)


class MSELoss(_Loss):
    function = staticmethod(F.mse_loss)

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction)


class L1Loss(_Loss):
    function = staticmethod(F.l1_loss)

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction)


class BCEWithLogitsLoss(_Loss):
    function = staticmethod(F.binary_cross_entropy_with_logits)
    options = ("weight",)

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction, weight=weight)
