"""``torch.cuda.amp``: PyTorch's mixed-precision pair, autocast (a block whose GPU matmuls and
convolutions compute in float16: _torch_autocast) and GradScaler (dynamic loss scaling:
_grad_scaler)."""
from .._torch_autocast import autocast as _autocast
from ..dtypes import float16
from ._grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):  # noqa: N801 - torch's name
    """``torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)``:
    ``torch.autocast('cuda', ...)``."""

    _stacklevel = 3

    def __init__(self, enabled=True, dtype=float16, cache_enabled=True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
