"""``gpuaccel.keras``: Keras 3's names over the C++ layers, models and training loop.

Course code written for ``tensorflow.keras`` / ``keras`` runs with its import changed::

    from gpuaccel import keras
    model = keras.Sequential([keras.layers.Dense(10)])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
"""
from . import activations
from . import initializers
from . import regularizers
from . import constraints
from . import layers
from . import losses
from . import metrics
from . import optimizers
from . import callbacks
from . import datasets
from . import models
from . import mixed_precision
from . import ops
from . import random
from . import saving
from . import utils
from ._symbolic import Input, KerasTensor
from ._input_spec import InputSpec
from ._keras_variable import Variable
from .models import Model, Sequential
from ._tfsm_layer import TFSMLayer as _TFSMLayer

# keras.layers.TFSMLayer loads with the .keras archive reader, which itself builds layers from
# keras.layers by name; layers.py importing it would close a circle, so it joins the module here.
layers.TFSMLayer = _TFSMLayer
layers.__all__.append("TFSMLayer")

__all__ = ["activations", "initializers", "regularizers", "constraints", "layers", "losses",
           "metrics", "optimizers", "callbacks", "datasets", "models", "mixed_precision", "ops", "random",
           "saving", "utils", "Input", "InputSpec", "KerasTensor", "Model", "Sequential", "Variable"]


def __getattr__(name):
    from .. import _unsupported
    return _unsupported.module_getattr(__name__, "keras", {
        "applications": "building the network with keras.layers (no pretrained models)",
        "preprocessing": "NumPy preprocessing in a Dataset.map",
        "backend": "the top-level gpuaccel functions",
    })(name)
