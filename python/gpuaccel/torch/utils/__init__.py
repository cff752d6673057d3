"""``torch.utils`` of the PyTorch face: ``data`` (datasets and the DataLoader). The rest of
torch.utils (checkpoint, tensorboard, cpp_extension...) is refused with what to use instead."""
from ... import _unsupported
from . import data

__all__ = ["data"]

__getattr__ = _unsupported.module_getattr(__name__, "torch.utils", {
    "tensorboard": "keras.callbacks.TensorBoard",
    "checkpoint": "plain backward (no activation checkpointing)",
})
