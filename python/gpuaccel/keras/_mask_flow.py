"""How a timestep mask (_masking.py) flows through a model: which layers pass it on, which use
it, and which refuse it. Below the layer base (the symbolic call attaches masks to outputs), so
it names layers by class rather than importing them.

Keras attaches a mask to a layer's output and every layer that supports masking uses it or
passes it on. The layers listed in ``_KEEPS_MASK`` compute each time step on its own and pass a
mask on; those in ``_DROPS_MASK`` do not support masking in Keras, which drops the mask there
with a warning, as gpuaccel does; a layer that uses masks says whether its output keeps one
(``_keeps_timestep_mask``); a user's layer whose ``call`` takes no ``mask`` drops it, as in
Keras; a mask that reaches any other layer (one that would use it in Keras), or a model's
output (where Keras would mask the loss), is refused rather than silently dropped.
"""
import inspect
import warnings

import numpy as np

from .. import _C
from .._tensor import Tensor, tensor as _make_tensor

_KEEPS_MASK = ("Dropout", "SpatialDropout1D", "GaussianNoise", "GaussianDropout", "Activation",
               "ReLU", "LeakyReLU", "ELU", "PReLU", "Softmax", "Dense", "LayerNormalization",
               "UnitNormalization", "Identity", "TimeDistributed", "Masking")

# Keras's layers that do not support masking (``supports_masking`` False): Keras drops the mask
# there with a warning, and so does gpuaccel.
_DROPS_MASK = frozenset((
    "Flatten", "Reshape", "Permute", "RepeatVector", "Lambda", "Embedding", "EinsumDense",
    "RMSNormalization", "SpectralNormalization", "ReversibleEmbedding",
    "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
    "DepthwiseConv1D", "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D",
    "Cropping1D", "Cropping2D", "Cropping3D", "UpSampling1D", "UpSampling2D", "UpSampling3D",
    "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D",
    "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
    "AveragePooling3D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D",
    "GlobalAveragePooling2D", "GlobalAveragePooling3D",
    "CenterCrop", "Resizing", "IntegerLookup", "RandomCrop", "RandomFlip", "RandomGrayscale",
    "RandomInvert", "Solarization", "AutoContrast"))


def step_mask(mask, what):
    """A mask given to a layer that uses one (a (batch, time) bool array or tensor, or the
    (batch, time, 1) float mask of a source) as the (batch, time, 1) float tensor the
    recurrence takes; KerasTensors pass as they are."""
    if not isinstance(mask, Tensor):
        if hasattr(mask, "node") and hasattr(mask, "shape"):  # a KerasTensor
            return mask
        mask = _make_tensor(np.asarray(mask))
    if mask.ndim == 3 and mask._dtype_name == "float32":
        return mask
    if mask.ndim != 2:
        raise ValueError(f"{what}: `mask` must be a (batch, timesteps) boolean tensor, received "
                         f"shape {tuple(mask.shape)}")
    return _C.expand_dims(_C.cast(mask, "float32"), -1)


def output_mask(layer, mask):
    """The mask ``layer``'s output carries when its input carries ``mask`` (None for none);
    refuses a mask this layer would have to use but cannot."""
    if mask is None:
        return None
    keeps = getattr(layer, "_keeps_timestep_mask", None)
    if keeps is not None:  # a layer that uses masks says whether its output keeps it
        return mask if keeps() else None
    if type(layer).__name__ in _KEEPS_MASK:
        return mask
    if type(layer).__name__ in _DROPS_MASK:
        warnings.warn(f"Layer '{layer.name}' (of type {type(layer).__name__}) was passed an "
                      "input with a mask attached to it. However, this layer does not support "
                      "masking and will therefore destroy the mask information. Downstream "
                      "layers will not see the mask.", stacklevel=3)
        return None
    if not type(layer).__module__.startswith("gpuaccel.") and not _takes_mask(layer):
        return None  # Keras gives a user layer without a `mask` argument none, and drops it
    raise NotImplementedError(
        f"layer '{layer.name}' ({type(layer).__name__}) receives a timestep mask "
        "(Embedding(mask_zero=True) or Masking upstream), which gpuaccel carries only into "
        f"recurrent layers and through {', '.join(_KEEPS_MASK)} yet")


def _takes_mask(layer):
    try:
        return "mask" in inspect.signature(layer.call).parameters
    except (TypeError, ValueError):
        return False


def refuse_output_mask(mask, model_name):
    """Keras masks the loss of a model output that carries a mask; gpuaccel does not yet."""
    if mask is not None:
        raise NotImplementedError(
            f"model '{model_name}': its output carries a timestep mask (from "
            "Embedding(mask_zero=True) or Masking), and Keras would mask the loss with it, "
            "which gpuaccel does not support yet; end the masked part with a recurrent "
            "layer with return_sequences=False")
