"""Module ``__getattr__`` hooks: a TensorFlow/PyTorch name gpuaccel lacks raises an AttributeError
that says so and what to use instead, rather than Python's bare "module has no attribute".

It stays an AttributeError, so ``hasattr(tf, 'name')`` and ``getattr(tf, 'name', default)`` keep
working; docs/compatibility.md lists the same names.
"""

_DOCS = "docs/compatibility.md"

# Names of both frameworks' top levels that gpuaccel lacks, and what to use instead: the
# `gpuaccel` (TensorFlow) face and the `gpuaccel.torch` face both answer with them.
SHARED_REFUSALS = {
    "complex64": "two float32 tensors (no complex dtypes)",
    "string": "Python strings (no string tensors)",
    "topk": "math.top_k (TensorFlow's name)",
    "distributions": "nothing yet (no probability distributions)",
    "autograd": "tensor.backward() / GradientTape (PyTorch's is gpuaccel.torch.autograd)",
    "optim": "keras.optimizers (PyTorch's is gpuaccel.torch.optim)",
    "save": "model.save(...) / save_weights (PyTorch's is gpuaccel.torch.save)",
    "load": "keras.models.load_model (PyTorch's is gpuaccel.torch.load)",
    "compile": "plain eager code (torch.compile is not there yet)",
    "xla": "plain eager code (no XLA)",
    # gpuaccel.train exists (tf.train: Checkpoint, CheckpointManager, latest_checkpoint), so
    # only the torch face answers with this; PyTorch has no torch.train.
    "train": "gpuaccel.train (TensorFlow's tf.train: Checkpoint, CheckpointManager, "
             "latest_checkpoint) or torch.save(model.state_dict(), path)",
    "experimental": "the stable names listed in docs/compatibility.md",
}


def message(face, name, instead=None):
    text = f"{face}.{name} is not supported by gpuaccel yet"
    if instead:
        text += f"; use {instead} instead"
    return f"{text} (see {_DOCS} for what each face supports)"


def module_getattr(module_name, face, known):
    """A ``__getattr__`` for module ``module_name`` (shown as ``face``): names in ``known`` get
    their suggestion, any other public name the generic message."""

    def __getattr__(name):
        if name.startswith("__") and name.endswith("__"):  # keep Python's protocol lookups quiet
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        error = AttributeError(message(face, name, known.get(name)))
        error.name, error.obj = name, None
        raise error

    return __getattr__


class AmbiguousNameError(TypeError):
    """A call at the shared top level ``gpuaccel.X`` that uses PyTorch's arguments for a name
    whose PyTorch meaning differs from TensorFlow's. The top level is the TensorFlow face
    (``import gpuaccel as tf``), so it refuses rather than guess; ``gpuaccel.torch`` gives the
    PyTorch meaning (docs/compatibility.md, "One namespace, two frameworks")."""


def ambiguous(name, tf_meaning, torch_meaning):
    """The error for ``gpuaccel.<name>`` called with PyTorch's arguments."""
    return AmbiguousNameError(
        f"gpuaccel.{name} is ambiguous: TensorFlow's {tf_meaning} and PyTorch's "
        f"{torch_meaning} differ, and this call uses PyTorch's arguments. The top level "
        f"gpuaccel is the TensorFlow face: use \"import gpuaccel as tf\" with TensorFlow's "
        f"arguments, or \"import gpuaccel.torch as torch\" for PyTorch's meaning (see {_DOCS})")
