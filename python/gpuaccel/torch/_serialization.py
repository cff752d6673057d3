"""``torch.save`` / ``torch.load`` of the PyTorch face, in PyTorch's own file format.

PyTorch's examples checkpoint with ``torch.save(model.state_dict(), "model.pth")`` and read it
back with ``torch.load``; files exchanged with real PyTorch are common in a course. So the files
are PyTorch's zip format (1.6 and later): ``<name>/data.pkl``, a protocol-2 pickle of the object
in which each tensor is ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, hooks)`` and each storage a persistent id ``('storage', torch.<Type>Storage, key,
location, numel)`` whose bytes are the zip entry ``<name>/data/<key>``; ``<name>/version``.
PyTorch loads these files and this module loads PyTorch's.

Writing needs no torch: the torch globals are written by name (``_TorchName``). Reading
resolves only the globals a checkpoint of tensors, numbers, strings and containers uses; any
other (a pickled model class, say) is refused by name instead of importing and running it.
Paths are written atomically (``_atomic_file``).
"""
import collections
import io
import os
import pickle
import zipfile

import numpy as np

from .. import cuda as _cuda
from .._atomic_file import atomic_open
from .._placement import device as _device_class
from .._tensor import Tensor, tensor as _tensor
from ._module import Parameter

# torch's storage class per dtype (1.13's typed storages), and the NumPy dtype of its bytes.
_STORAGE_OF_DTYPE = {"float32": "FloatStorage", "float16": "HalfStorage",
                     "bfloat16": "BFloat16Storage", "int32": "IntStorage",
                     "int64": "LongStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
                     "float64": "DoubleStorage", "int8": "CharStorage", "int16": "ShortStorage"}
_DTYPE_OF_STORAGE = {storage: dtype for dtype, storage in _STORAGE_OF_DTYPE.items()}

_ARCHIVE_NAME = "archive"


class _TorchName:
    """A torch global (``torch._utils._rebuild_tensor_v2``) written by its name."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's REDUCE needs a callable; it is never called here
        raise TypeError(f"{self.module}.{self.name} is written by name only")


_REBUILD_TENSOR = _TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchName("torch._utils", "_rebuild_parameter")
_STORAGE_NAMES = {name: _TorchName("torch", name) for name in _STORAGE_OF_DTYPE.values()}


class _Storage:
    """A tensor's bytes, written as the zip entry ``data/<key>``."""

    def __init__(self, key, array, location, dtype_name):
        self.key, self.array, self.location = key, array, location
        self.dtype_name = dtype_name


class _PlainTensor:
    """A Parameter's data, written as a plain tensor inside ``_rebuild_parameter``."""

    def __init__(self, tensor):
        self.tensor = tensor


def _location(t):
    device = t.device
    return "cpu" if device.type == "cpu" else f"cuda:{device.index or 0}"


class _Writer(pickle._Pickler):
    """The pure-Python pickler, so the torch globals can be written without torch."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages = []
        self.dispatch_table = {Tensor: self._reduce_tensor, _PlainTensor: self._reduce_plain}

    def _save_torch_name(self, obj):
        if id(obj) in self.memo:
            self.write(self.get(self.memo[id(obj)][0]))
            return
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_TorchName] = _save_torch_name

    def persistent_id(self, obj):
        if isinstance(obj, _Storage):
            storage_name = _STORAGE_NAMES[_STORAGE_OF_DTYPE[obj.dtype_name]]
            return ("storage", storage_name, obj.key, obj.location, int(obj.array.size))
        return None

    def _reduce_tensor(self, t):
        if getattr(t, "_is_parameter", False):
            return _REBUILD_PARAMETER, (_PlainTensor(t), bool(t.requires_grad),
                                        collections.OrderedDict())
        return self._reduce_plain(_PlainTensor(t))

    def _reduce_plain(self, plain):
        t = plain.tensor
        name = t._dtype_name
        if name not in _STORAGE_OF_DTYPE:
            raise TypeError(f"torch.save cannot write a {name} tensor (dtypes: "
                            f"{', '.join(_STORAGE_OF_DTYPE)})")
        array = np.array(t.detach().cpu().numpy(), order="C")  # 0-d stays 0-d
        storage = _Storage(str(len(self.storages)), array.reshape(-1), _location(t), name)
        self.storages.append(storage)
        shape = tuple(int(d) for d in array.shape)
        strides = tuple(int(s) // array.itemsize for s in array.strides) if array.size else \
            tuple(int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape)))
        return _REBUILD_TENSOR, (storage, 0, shape, strides, bool(t.requires_grad),
                                 collections.OrderedDict())


def _write_archive(obj, file):
    buffer = io.BytesIO()
    writer = _Writer(buffer)
    writer.dump(obj)
    with zipfile.ZipFile(file, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{_ARCHIVE_NAME}/data.pkl", buffer.getvalue())
        for storage in writer.storages:
            archive.writestr(f"{_ARCHIVE_NAME}/data/{storage.key}",
                             storage.array.astype(storage.array.dtype.newbyteorder("<"),
                                                  copy=False).tobytes())
        archive.writestr(f"{_ARCHIVE_NAME}/version", "3\n")


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Writes ``obj`` (tensors, state_dicts, optimizer state, numbers, strings, lists, tuples,
    dicts) to the path or binary file ``f`` in PyTorch's format; a path is replaced whole."""
    if pickle_module is not None or not _use_new_zipfile_serialization:
        raise ValueError("torch.save here writes PyTorch's zip format with its own pickler; "
                         "leave pickle_module and _use_new_zipfile_serialization at their "
                         "defaults")
    if isinstance(f, (str, os.PathLike)):
        with atomic_open(f) as file:
            _write_archive(obj, file)
    else:
        _write_archive(obj, f)


# ---- reading ----

class _StorageType:
    def __init__(self, name):
        self.name = name


def _tensor_at(array, offset, size, stride):
    """The tensor a PyTorch view (offset, size, stride in elements) of ``array`` shows."""
    itemsize = array.itemsize
    if int(np.prod(size, dtype=np.int64)) and offset + sum(
            (s - 1) * st for s, st in zip(size, stride)) >= array.size:
        raise pickle.UnpicklingError("a tensor in the file reaches past its storage: the file "
                                     "is damaged")
    view = np.lib.stride_tricks.as_strided(array[offset:], shape=tuple(size),
                                           strides=tuple(st * itemsize for st in stride))
    # The stored dtype, float64 included (a bare array of float64 would become float32).
    return _tensor(np.array(view), dtype="float64" if array.dtype == np.float64 else None)


def _rebuild_parameter(data, requires_grad, hooks=None):
    return Parameter(data, requires_grad)


_SAFE_GLOBALS = {("collections", "OrderedDict"): collections.OrderedDict,
                 ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
                 ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
                 ("builtins", "slice"): slice, ("__builtin__", "set"): set}


def _numpy_dtype(dtype_name):
    if dtype_name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype_name if dtype_name != "bool" else np.bool_).newbyteorder("<")


def _target_device(saved, map_location):
    """Where a tensor saved at ``saved`` goes (None: where it was saved)."""
    if isinstance(map_location, dict):
        target = str(map_location.get(saved, saved))
    else:
        target = saved if map_location is None else str(map_location)
    if target.startswith("cuda") and not _cuda.is_available():
        raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                           "torch.cuda.is_available() is False. If you are running on a "
                           "CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")
    return target


class _Reader(pickle.Unpickler):
    """Resolves only the globals a checkpoint of tensors and containers needs (``find_class``)
    and reads each storage's zip entry once (``persistent_load``)."""

    def __init__(self, file, archive, prefix, map_location):
        super().__init__(file)
        self.archive, self.prefix, self.storages = archive, prefix, {}
        self.map_location = map_location

    def find_class(self, module, name):
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return self._rebuild_tensor
        if (module, name) in _SAFE_GLOBALS:
            return _SAFE_GLOBALS[(module, name)]
        if module == "torch" and name in _DTYPE_OF_STORAGE:
            return _StorageType(name)
        raise pickle.UnpicklingError(
            f"torch.load here reads tensors, numbers, strings and containers of them (a "
            f"state_dict, optimizer state, a dict of such); the file needs {module}.{name}, "
            f"which it does not load (save a state_dict rather than a whole model or other "
            f"objects)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and
                isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r} in the file")
        _, storage_type, key, location, numel = pid
        if key not in self.storages:
            dtype_name = _DTYPE_OF_STORAGE[storage_type.name]
            raw = self.archive.read(f"{self.prefix}data/{key}")
            array = np.frombuffer(raw, dtype=_numpy_dtype(dtype_name)).copy()
            if array.size != numel:
                raise pickle.UnpicklingError(f"storage {key} has {array.size} elements, the "
                                             f"file says {numel}: the file is damaged")
            self.storages[key] = (array, location)
        return self.storages[key]

    def _rebuild_tensor(self, storage, offset, size, stride, requires_grad=False, hooks=None,
                        metadata=None):
        array, saved = storage
        result = _tensor_at(array, offset, size, stride)
        if callable(self.map_location) and not isinstance(self.map_location,
                                                          (str, _device_class)):
            result = self.map_location(result, saved)
        else:
            target = _target_device(saved, self.map_location)
            if target != "cpu":
                result = result.to(target)
        if requires_grad:
            result.requires_grad_(True)
        return result


def load(f, map_location=None, pickle_module=None, *, weights_only=False, **pickle_load_args):
    """Reads what ``save`` (this one or PyTorch's, zip format) wrote to the path or binary file
    ``f``; ``map_location`` ('cpu', 'cuda', a device, a {saved: target} dict or a function)
    says where the tensors go."""
    if pickle_module is not None:
        raise ValueError("torch.load here reads with its own unpickler; leave pickle_module "
                         "at its default")
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "the file")
    try:
        archive = zipfile.ZipFile(f if not isinstance(f, os.PathLike) else os.fspath(f))
    except zipfile.BadZipFile:
        raise pickle.UnpicklingError(
            f"{name} is not a file torch.save writes (PyTorch's zip format, torch 1.6 and "
            f"later): gpuaccel reads that format only (re-save it with a recent PyTorch)"
        ) from None
    with archive:
        pickles = [n for n in archive.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            raise pickle.UnpicklingError(f"{name} is a zip file but not one torch.save wrote "
                                         f"(no <name>/data.pkl entry)")
        prefix = pickles[0][:-len("data.pkl")]
        with archive.open(pickles[0]) as data:
            return _Reader(io.BytesIO(data.read()), archive, prefix, map_location).load()
