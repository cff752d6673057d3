"""``tf.train``: checkpoints for custom training loops (``Checkpoint``, ``CheckpointManager``,
``latest_checkpoint``) and the ``Example`` protos of TFRecord files (``Example``, ``Features``,
``Feature``, ``BytesList``...). The rest of TensorFlow's ``tf.train`` is refused with what to use
instead (docs/compatibility.md)."""
import numpy as np

from .. import _unsupported
from ..errors import NotFoundError
from . import _checkpoint_file
from ._checkpoint import Checkpoint, CheckpointLoadStatus
from ._checkpoint_manager import CheckpointManager
from ._checkpoint_state import CheckpointState, get_checkpoint_state, latest_checkpoint
from .._example_proto import (BytesList, Example, Feature, FeatureList, FeatureLists, Features,
                              FloatList, Int64List, SequenceExample)

__all__ = ["Checkpoint", "CheckpointManager", "CheckpointLoadStatus", "CheckpointState",
           "latest_checkpoint", "get_checkpoint_state", "list_variables", "load_variable",
           "Example", "SequenceExample", "Features", "Feature", "FeatureList", "FeatureLists",
           "BytesList", "FloatList", "Int64List"]


def _prefix_of(ckpt_dir_or_file):
    """A checkpoint prefix, or a directory's latest checkpoint (TensorFlow accepts both)."""
    import os
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {path}")
        return latest
    return path


def list_variables(ckpt_dir_or_file):
    """[(key, shape)] of a checkpoint, sorted by key (gpuaccel's keys: docs/training.md)."""
    variables = _checkpoint_file.read_index(_prefix_of(ckpt_dir_or_file))
    return sorted((key, list(shape)) for key, shape, _ in variables)


def load_variable(ckpt_dir_or_file, name):
    """The value stored under ``name`` in a checkpoint, as a NumPy array."""
    values = _checkpoint_file.read(_prefix_of(ckpt_dir_or_file))
    if name not in values:
        raise NotFoundError(f"Key {name} not found in checkpoint")
    return np.array(values[name], copy=True)


_REFUSED = {
    "GradientDescentOptimizer": "keras.optimizers.SGD (the TF1 optimizers are gone)",
    "MomentumOptimizer": "keras.optimizers.SGD(momentum=...) (the TF1 optimizers are gone)",
    "AdamOptimizer": "keras.optimizers.Adam (the TF1 optimizers are gone)",
    "RMSPropOptimizer": "keras.optimizers.RMSprop (the TF1 optimizers are gone)",
    "AdagradOptimizer": "keras.optimizers.Adagrad (the TF1 optimizers are gone)",
    "Optimizer": "keras.optimizers.Optimizer (the TF1 optimizers are gone)",
    "Saver": "train.Checkpoint (TF1's Saver is graph-mode only)",
    "Server": "gpuaccel.distribute (no parameter servers)",
    "ClusterSpec": "gpuaccel.distribute (no parameter servers)",
    "ClusterDef": "gpuaccel.distribute (no parameter servers)",
    "ServerDef": "gpuaccel.distribute (no parameter servers)",
    "CheckpointOptions": "no options (gpuaccel's checkpoint writer has none)",
    "checkpoints_iterator": "a loop over train.latest_checkpoint(directory)",
    "get_global_step": "an optimizer's `iterations` or a Variable of your own",
    "ExponentialMovingAverage": "keras optimizers' use_ema=True",
}

__getattr__ = _unsupported.module_getattr(__name__, "tf.train", _REFUSED)
