"""``keras.utils``' functions about Keras's global state and symbolic graph: ``clear_session``,
``is_keras_tensor``, ``get_source_inputs`` and ``standardize_dtype``.

Why together: each is a small query or reset of state the Keras face keeps (the automatic-name
counters of layers, models, optimizers and inputs; the functional API's KerasTensors and the
layer calls that produced them) that course code reaches for when it builds many models in one
process or inspects a functional graph."""
import gc
import itertools

from . import _io_utils, _layer_base, _symbolic, models, optimizers

# Keras's dtype names (backend.common.dtypes.ALLOWED_DTYPES): standardize_dtype accepts these
# names, which gpuaccel tensors need not all be able to hold.
ALLOWED_DTYPES = ("float16", "float32", "float64", "uint8", "uint16", "uint32", "uint64",
                  "int8", "int16", "int32", "int64", "bfloat16", "bool", "string",
                  "float8_e4m3fn", "float8_e5m2", "complex64", "complex128")
# Python types and names, as on Keras's TensorFlow backend
_PYTHON_DTYPES = {bool: "bool", int: "int64", float: "float32", str: "string", "int": "int64",
                  complex: "complex128"}


def clear_session(free_memory=True):
    """Resets the automatic names (the next Dense is 'dense' again, the next Input
    'input_layer') and interactive logging (on again), and with ``free_memory`` collects
    garbage."""
    _io_utils.reset()
    _layer_base._uids.clear()
    models._model_counters.clear()
    optimizers._name_counts.clear()
    _symbolic._input_names = itertools.count()
    if free_memory:
        gc.collect()


def is_keras_tensor(x):
    """Whether ``x`` is a symbolic tensor of the functional API (``keras.Input(...)`` or a
    layer's output on one)."""
    return isinstance(x, _symbolic.KerasTensor)


def get_source_inputs(tensor):
    """The model inputs ``tensor`` is computed from, each once, in the order met walking back
    through the layer calls (a list; a tensor that is no KerasTensor comes back as it is)."""
    if not isinstance(tensor, _symbolic.KerasTensor):
        return tensor
    if tensor.node is None:
        return [tensor]
    sources = []
    for argument in tensor.node.inputs:
        for source in get_source_inputs(argument):
            if all(source is not seen for seen in sources):
                sources.append(source)
    return sources


def standardize_dtype(dtype):
    """Keras's name of a dtype given as a name, a Python type, a NumPy, TensorFlow or gpuaccel
    dtype; None is 'float32'."""
    if dtype is None:
        return "float32"
    try:
        dtype = _PYTHON_DTYPES.get(dtype, dtype)
    except TypeError:  # an unhashable value: no Python type
        pass
    if hasattr(dtype, "name"):
        dtype = dtype.name
    elif hasattr(dtype, "__name__"):
        dtype = dtype.__name__
    elif "torch" in str(dtype) or "jax.numpy" in str(dtype):
        dtype = str(dtype).split(".")[-1]
    if dtype not in ALLOWED_DTYPES:
        raise ValueError(f"Invalid dtype: {dtype}")
    return dtype
