"""``gpuaccel.keras.mixed_precision``: Keras 3's dtype policies, and what is fast where.

A policy pairs a compute dtype (what a layer computes in: its inputs and weights are cast to
it) with a variable dtype (what its weights are stored in: always float32 here, the "master
weights"). Layers read the global policy when they are constructed, as Keras does::

    from gpuaccel import keras
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    model = keras.Sequential([keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(10),
                              keras.layers.Activation("softmax", dtype="float32")])

:func:`supported` says whether float16/bfloat16 actually run faster than float32 on a device,
and :func:`set_global_policy` warns once when they would not (the course measures the speedup,
so a silent emulation would be a confusing result).
"""
import numbers
import warnings

import numpy as np

from .. import _C

__all__ = ["DTypePolicy", "Policy", "set_global_policy", "global_policy", "set_dtype_policy",
           "dtype_policy", "supported", "LossScaleOptimizer"]

# The compute dtypes the layers implement; every other dtype name Keras accepts as a policy
# (float64, integer policies, float8) has no kernels here.
_COMPUTE_DTYPES = ("float32", "float16", "bfloat16")
# Keras 3's ALLOWED_DTYPES: names DTypePolicy accepts, even though gpuaccel computes in only
# three of them (the others raise NotImplementedError rather than Keras's ValueError).
_KERAS_DTYPES = ("float16", "float32", "float64", "uint8", "uint16", "uint32", "uint64", "int8",
                 "int16", "int32", "int64", "bfloat16", "bool", "string", "float8_e4m3fn",
                 "float8_e5m2", "complex64", "complex128")


def _parse_name(name):
    """A policy name -> (compute dtype, variable dtype), with Keras's errors."""
    if not isinstance(name, str):
        raise TypeError("'name' must be a string, such as 'mixed_float16'. "
                        f"Received: name={name} (of type {type(name)})")
    if name == "mixed_float16":
        return "float16", "float32"
    if name == "mixed_bfloat16":
        return "bfloat16", "float32"
    if name not in _KERAS_DTYPES:
        raise ValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid "
                         "policies include 'mixed_float16', 'mixed_bfloat16', and the name of "
                         "any float dtype such as 'float32'.")
    if name not in _COMPUTE_DTYPES:
        raise NotImplementedError(
            f"dtype policy '{name}': gpuaccel layers compute in float32, float16 or bfloat16 "
            "only (policies 'float32', 'float16', 'bfloat16', 'mixed_float16', "
            "'mixed_bfloat16')")
    # Pure float16/bfloat16 policies store the variables in that dtype in Keras. gpuaccel keeps
    # float32 masters for every policy (the optimizers update float32 weights), so a pure
    # policy here computes like the mixed one; variable_dtype still answers as Keras does.
    return name, name


class DTypePolicy:
    """``keras.mixed_precision.DTypePolicy(name)``: a layer's compute and variable dtypes.

    ``name`` is 'float32', 'float16', 'bfloat16', 'mixed_float16' or 'mixed_bfloat16'; None
    means the global policy's name."""

    def __init__(self, name=None):
        if name is None:
            name = global_policy().name
        self._compute_dtype, self._variable_dtype = _parse_name(name)
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        """The dtype a layer's inputs and weights are cast to for its computation."""
        return self._compute_dtype

    @property
    def variable_dtype(self):
        """The dtype Keras would store the layer's weights in (gpuaccel stores float32)."""
        return self._variable_dtype

    @property
    def quantization_mode(self):
        return None

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'

    def __eq__(self, other):
        return type(other) is type(self) and other._name == self._name

    def __hash__(self):
        return hash(self._name)


Policy = DTypePolicy  # keras.mixed_precision.Policy (the TF 2.x name)

_global = None  # None until first asked for: float32


def global_policy():
    """``keras.mixed_precision.global_policy()``: the policy new layers get by default."""
    global _global
    if _global is None:
        _global = DTypePolicy("float32")
    return _global


def set_global_policy(policy):
    """``keras.mixed_precision.set_global_policy(policy)``: a policy or its name.

    Layers constructed afterwards use it (existing layers keep theirs). Warns once per dtype
    when float16/bfloat16 compute has no fast path on this machine (see :func:`supported`)."""
    global _global
    if not isinstance(policy, DTypePolicy):
        if not isinstance(policy, str):
            raise ValueError("Invalid `policy` argument. Expected the string name of a policy "
                             "(such as 'mixed_float16') or a `DTypePolicy` instance. Received: "
                             f"policy={policy} (of type {type(policy)})")
        policy = DTypePolicy(policy)
    _global = policy
    if policy.compute_dtype != "float32":
        _warn_if_slow(policy)


# Keras 3 names the same two functions dtype_policy / set_dtype_policy.
dtype_policy = global_policy
set_dtype_policy = set_global_policy


def get(identifier):
    """A layer's ``dtype=`` argument as a policy (``keras.dtype_policies.get``): None is the
    global policy; a name, a policy, a policy config dict, or a dtype object (gpuaccel DType,
    NumPy dtype) are accepted."""
    if identifier is None:
        return global_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict) and "config" in identifier:
        return DTypePolicy.from_config(identifier["config"])
    if isinstance(identifier, str):
        return DTypePolicy(identifier)
    if identifier is float:
        return DTypePolicy("float32")
    name = getattr(identifier, "name", None)
    if not isinstance(name, str) and not isinstance(identifier, numbers.Number):
        try:
            name = np.dtype(identifier).name
        except (TypeError, ValueError):
            name = None
    if isinstance(name, str) and name in _KERAS_DTYPES:
        return DTypePolicy(name)
    raise ValueError("Cannot interpret `dtype` argument. Expected a string or an instance of "
                     f"DTypePolicy. Received: dtype={identifier}")


# ---- hardware truth ----

def _resolve_device(device):
    """``device`` -> ('CPU', 0) or ('GPU', i). None: the first visible GPU, else the CPU."""
    if device is None:
        gpus = _C.visible_devices("GPU")
        return tuple(gpus[0]) if gpus else ("CPU", 0)
    if isinstance(device, tuple) and len(device) == 2 and isinstance(device[1], int):
        return (str(device[0]).upper(), device[1])
    name = getattr(device, "name", device)
    if not isinstance(name, str):
        raise ValueError(f"supported(device): expected a device name such as 'CPU', 'GPU:0', "
                         f"'cuda:0' or a PhysicalDevice, received {device!r}")
    text = name.strip()
    if text.lower() in ("cpu", "gpu", "cuda"):
        text += ":0"
    device_type, index = _C.parse_device_name(text)
    return (device_type, 0 if index is None else index)


def _cpu_truth():
    flags = _C.cpu_info()["flags"]
    if flags.get("amx_bf16"):
        bf16, how = True, "bfloat16 matmuls and convolutions run on AMX tiles"
    elif flags.get("avx512_bf16"):
        bf16, how = True, "bfloat16 matmuls and convolutions use AVX512-BF16 instructions"
    elif flags.get("avx512f"):
        bf16, how = False, ("bfloat16 is emulated with AVX-512 (no AVX512-BF16 or AMX "
                            "instructions): correct, but no faster than float32")
    else:
        bf16, how = False, ("bfloat16 matmuls and convolutions are computed in float32 (no "
                            "AVX-512 on this CPU, AVX2 at most): correct, but no faster")
    fp16 = "float16 is always computed in float32 on the CPU (oneDNN 2.x has no CPU float16 kernels)"
    return {"device": "CPU:0", "float32": True, "float16": False, "bfloat16": bf16,
            "reason": f"CPU: {how}; {fp16}", "_why": {"float16": fp16, "bfloat16": how}}


def _gpu_truth(index):
    info = _C.gpu_info(index)
    cc = (int(info["major"]), int(info["minor"]))
    fp16 = cc >= (7, 0)
    bf16 = cc >= (8, 0)
    why = {"float16": "float16 runs on tensor cores" if fp16 else
                      "float16 has no tensor cores below compute capability 7.0",
           "bfloat16": "bfloat16 runs on tensor cores" if bf16 else
                       "bfloat16 needs compute capability 8.0 (Ampere) for tensor cores; it is "
                       "slow or emulated here"}
    where = f"GPU:{index} ({info['name']}, compute capability {cc[0]}.{cc[1]})"
    return {"device": f"GPU:{index}", "float32": True, "float16": fp16, "bfloat16": bf16,
            "compute_capability": cc, "reason": f"{where}: {why['float16']}; {why['bfloat16']}",
            "_why": why}


def supported(device=None):
    """What is fast where: ``{'device', 'float32', 'float16', 'bfloat16', 'reason'}``, the
    dtype entries True when that compute dtype runs faster than float32 on ``device`` (a name
    such as 'CPU', 'GPU:0', 'cuda:0', or a PhysicalDevice; None: the first GPU, else the CPU).

    CPU: bfloat16 is fast with AMX or AVX512-BF16; float16 never is (computed in float32).
    GPU: float16 from compute capability 7.0 (tensor cores), bfloat16 from 8.0."""
    truth = _truth(device)
    truth.pop("_why")
    return truth


def _truth(device):
    device_type, index = _resolve_device(device)
    if device_type == "CPU":
        return _cpu_truth()
    if device_type == "GPU":
        return _gpu_truth(index)
    raise ValueError(f"supported(device): unknown device type {device_type!r} in {device!r}")


_warned = set()  # compute dtypes already warned about in this process


def _reset_warnings():
    """Forget which warnings were given (tests)."""
    _warned.clear()


def _warn_if_slow(policy):
    dtype = policy.compute_dtype
    if dtype in _warned:
        return
    truth = _truth(None)
    if truth.get(dtype, False):
        return
    _warned.add(dtype)
    if truth["device"].startswith("GPU"):
        need = "7.0" if dtype == "float16" else "8.0"
        cc = truth["compute_capability"]
        detail = (f"Your GPU may run slowly with dtype policy {policy.name} because it does not "
                  f"have compute capability of at least {need} (it has {cc[0]}.{cc[1]}).")
    else:
        detail = (f"This machine has no GPU and its CPU has no fast {dtype} path, so dtype "
                  f"policy {policy.name} will likely run no faster than float32 here (results "
                  "are still correct).")
    warnings.warn(f"Mixed precision compatibility check ({policy.name}): WARNING. {detail} "
                  f"{truth['device']}: {truth['_why'][dtype]}. This warning is only shown once.",
                  UserWarning, stacklevel=3)


# keras.mixed_precision.LossScaleOptimizer is the same class as keras.optimizers'.
from .optimizers import LossScaleOptimizer  # noqa: E402
