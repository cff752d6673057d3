"""``torch.utils`` of the PyTorch face: ``data`` (datasets and the DataLoader)."""
from . import data

__all__ = ["data"]
