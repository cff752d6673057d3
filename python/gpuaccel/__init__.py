"""gpuaccel: a deep-learning runtime for a course on GPU acceleration.

The names mirror ``tf.config`` / ``tf.keras`` and ``torch.cuda`` so course code runs with only
its import changed.
"""
from . import _C
from . import errors

__version__ = "0.1.0"
