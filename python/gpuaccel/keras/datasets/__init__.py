"""``keras.datasets``: the course's small image datasets as NumPy arrays, as Keras returns them.

Works offline: each loader looks in local places first (see its ``load_data``), so a lab
machine with ``GPUACCEL_DATA`` set or Debian's dataset packages installed never downloads.
"""
from . import fashion_mnist, mnist
from ._files import DatasetFormatError, DatasetNotFoundError

__all__ = ["fashion_mnist", "mnist", "DatasetNotFoundError", "DatasetFormatError"]
