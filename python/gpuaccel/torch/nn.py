"""``torch.nn`` of the PyTorch face: ``functional`` (``import gpuaccel.torch.nn.functional as F``,
NCHW images and torch's argument names), ``init``, ``utils`` (gradient clipping), and the
modules PyTorch's examples build models from (Module, Parameter, containers, layers, losses);
``parallel`` has DistributedDataParallel.
``gpuaccel.nn`` is TensorFlow's ``tf.nn`` (NHWC), so the PyTorch face needs its own; torch.nn
modules not here are refused with what to use instead.
"""
import sys as _sys

from .. import _torch_functional as functional
from .. import _unsupported
from ..nn import TORCH_NN_MODULE_REFUSALS
from . import init
from . import nn_parallel as parallel
from . import nn_utils as utils
from ._containers import ModuleDict, ModuleList, Sequential
from ._layers import (ELU, GELU, AdaptiveAvgPool2d, AvgPool2d, Conv2d, Dropout, Embedding,
                      Flatten, Identity, LeakyReLU, Linear, LogSoftmax, MaxPool2d, ReLU, ReLU6,
                      Sigmoid, SiLU, Softmax, Softplus, Tanh, Upsample, UpsamplingBilinear2d,
                      UpsamplingNearest2d)
from ._losses import BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from ._module import Module, Parameter
from ._normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from ._recurrent import LSTM

# `import gpuaccel.torch.nn.functional as F` finds the module without nn being a package.
_sys.modules[__name__ + ".functional"] = functional
_sys.modules[__name__ + ".init"] = init
_sys.modules[__name__ + ".utils"] = utils
_sys.modules[__name__ + ".parallel"] = parallel

__all__ = ["functional", "init", "utils", "parallel", "Module", "Parameter", "Sequential", "ModuleList",
           "ModuleDict", "Identity", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Embedding",
           "Flatten", "Dropout", "ReLU",
           "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softplus", "Softmax",
           "LogSoftmax", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss",
           "BCEWithLogitsLoss", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "LSTM"]

_IMPLEMENTED_HERE = set(__all__)
__getattr__ = _unsupported.module_getattr(__name__, "torch.nn", {
    k: v for k, v in TORCH_NN_MODULE_REFUSALS.items() if k not in _IMPLEMENTED_HERE})
