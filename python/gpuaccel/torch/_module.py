"""``torch.nn.Module`` and ``torch.nn.Parameter`` of the PyTorch face.

PyTorch's examples define models as Module subclasses whose attributes are parameters and
submodules; the optimizer gets ``model.parameters()`` and checkpoints are
``model.state_dict()``. This module keeps that bookkeeping (registration by attribute
assignment, dotted state_dict keys in PyTorch's order, train/eval, to(device)) over gpuaccel's
tensors, which already carry autograd.

A Parameter is a gpuaccel tensor marked as one (gpuaccel's Tensor is a C++ class, so there is no
subclass): ``isinstance(t, nn.Parameter)`` reads the mark.
"""
import collections
import collections.abc
import itertools

from .._tensor import Tensor, no_grad, tensor as _tensor
from .._creation import empty as _empty
from ..dtypes import FLOATING_NAMES, DType

_FLOAT_NAMES = FLOATING_NAMES

_MARK = "_is_parameter"


class _ParameterType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and getattr(obj, _MARK, False)


class Parameter(metaclass=_ParameterType):
    """``nn.Parameter(data, requires_grad=True)``: a tensor a Module registers as a parameter.
    It is a leaf of its own (``data`` detached), as in PyTorch."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"nn.Parameter takes a tensor, got {type(data).__name__}; wrap "
                            f"the values with torch.tensor(...) first")
        param = data.detach()
        setattr(param, _MARK, True)
        param.requires_grad_(bool(requires_grad))
        return param


_IncompatibleKeys = collections.namedtuple("IncompatibleKeys", ["missing_keys",
                                                                "unexpected_keys"])


def _shape_text(shape):
    return f"torch.Size([{', '.join(str(d) for d in shape)}])"



def zero_gradients(params, set_to_none):
    """``zero_grad`` of Module and Optimizer: each gradient dropped, or zeroed in place."""
    for param in params:
        if param.grad is None:
            continue
        if set_to_none:
            param.grad = None
        else:
            param.grad = param.grad.detach().zero_()

class Module:
    """Base class of the layers and of user models: override ``forward``; calling the module
    calls it. Parameters, buffers and submodules register themselves by attribute assignment."""

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", collections.OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ---- registration ----

    def _registries(self):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameters, buffers or modules before "
                                 "Module.__init__() call (call super().__init__() first)")
        return self._parameters, self._buffers, self._modules

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self._forget(name)
            self._registries()[2][name] = value
        elif "_parameters" in self.__dict__ and name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter "
                                f"'{name}' (torch.nn.Parameter or None expected)")
            self._parameters[name] = None
        elif "_buffers" in self.__dict__ and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                f"(torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            if "_modules" in self.__dict__:
                self._modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        registries = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in registries and name in registries[registry]:
                return registries[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def _forget(self, name):
        for registry in self._registries():
            registry.pop(name, None)
        self.__dict__.pop(name, None)
        self._non_persistent_buffers.discard(name)

    def _check_new_name(self, name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name or name == "":
            raise KeyError(f'{kind} name can\'t contain "." or be empty, got {name!r}')

    def register_parameter(self, name, param):
        self._registries()
        self._check_new_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        self._forget(name)
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._registries()
        self._check_new_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent_buffers.add(name)

    def add_module(self, name, module):
        self._registries()
        self._check_new_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    # ---- walking the tree ----

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                                remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, registry, prefix, recurse):
        owners = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        seen = set()
        for owner_prefix, owner in owners:
            for name, value in getattr(owner, registry).items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield owner_prefix + ("." if owner_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True):
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True):
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse=True):
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def get_submodule(self, target):
        module = self
        for part in target.split(".") if target else []:
            if part not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no attribute `{part}`")
            module = module._modules[part]
        return module

    # ---- modes and gradients ----

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=False):
        """PyTorch 1.13's default keeps the gradients as zeros (set_to_none=False)."""
        zero_gradients(self.parameters(), set_to_none)

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- devices and dtypes ----

    def _convert(self, convert):
        """Moves or casts every parameter and buffer with ``convert(tensor)``. Parameters stay
        the same Python objects, as PyTorch's do (their data is replaced in place, their
        gradient moved with them), so an optimizer made before ``model.to(device)`` or
        ``model.to(memory_format=torch.channels_last)`` still updates the parameters the model
        uses; buffers are replaced."""
        def changed(old, new):
            return (old._device_name, old._dtype_name, old._strides()) != \
                (new._device_name, new._dtype_name, new._strides())
        with no_grad():
            for module in self.modules():
                for param in module._parameters.values():
                    if param is None:
                        continue
                    moved = convert(param.detach())
                    if changed(param, moved):
                        requires_grad, grad = param.requires_grad, param.grad
                        param._rebind_(moved)
                        param.requires_grad = requires_grad
                        param.grad = None if grad is None else convert(grad)
                for name, buffer in module._buffers.items():
                    if buffer is not None:
                        moved = convert(buffer)
                        if changed(buffer, moved):
                            module._buffers[name] = moved
        return self

    def to(self, *args, **kwargs):
        """``to(device)``, ``to(dtype)`` or both; integer buffers keep their dtype, and a
        ``memory_format`` applies to the 4-d and 5-d tensors only (conv weights), as torch's."""
        def convert(t):
            here = kwargs if t.ndim in (4, 5) else \
                {k: v for k, v in kwargs.items() if k != "memory_format"}
            if t._dtype_name not in _FLOAT_NAMES:
                dropped = {k: v for k, v in here.items() if k != "dtype"}
                kept = [a for a in args if not _is_dtype(a)]
                return t.to(*kept, **dropped) if (kept or dropped) else t
            return t.to(*args, **here)
        return self._convert(convert)

    def cuda(self, device=None):
        return self._convert(lambda t: t.cuda(device))

    def cpu(self):
        return self._convert(lambda t: t.cpu())

    def float(self):
        return self.to(dtype="float32")

    def half(self):
        return self.to(dtype="float16")

    def double(self):
        return self.to(dtype="float64")

    # ---- checkpoints ----

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Parameters then persistent buffers of each module, parents before children, under
        dotted names: PyTorch's keys and order."""
        destination = collections.OrderedDict() if destination is None else destination
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True):
        """Copies ``state_dict``'s tensors into the parameters and buffers in place (the
        optimizer keeps holding the same tensors); PyTorch's errors for missing, unexpected or
        differently shaped entries."""
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict:
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.append("Missing key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in missing) + ". ")
        pairs = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                value = _tensor(value)
            if tuple(value.shape) != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{_shape_text(value.shape)} from checkpoint, the shape in "
                              f"current model is {_shape_text(target.shape)}.")
                continue
            pairs.append((target, value))
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for target, value in pairs:
                target.copy_(value.to(device=target.device, dtype=target.dtype))
        return _IncompatibleKeys(missing, unexpected)

    # ---- printing ----

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [line for line in self.extra_repr().split("\n") if line]
        for name, module in self._modules.items():
            text = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {text}")
        if not self._modules and len(lines) <= 1:
            return f"{type(self).__name__}({''.join(lines)})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(itertools.chain(super().__dir__(), self._parameters, self._buffers,
                                          self._modules)))


def _is_dtype(value):
    return isinstance(value, DType) or (isinstance(value, str) and value in _FLOAT_NAMES)
