"""torch.nn's containers: Sequential (calls its modules in order), ModuleList and ModuleDict
(hold modules so their parameters register); list children are named "0", "1", ... as in
PyTorch, which gives the state_dict keys ("0.weight")."""
import collections

from ._module import Module


class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        for module in modules or ():
            self.append(module)

    def _index(self, index):
        size = len(self._modules)
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of range")
        return str(index % size)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])
        return self._modules[self._index(index)]

    def __setitem__(self, index, module):
        self.add_module(self._index(index), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self


class Sequential(ModuleList):
    """``Sequential(m0, m1, ...)`` or ``Sequential(OrderedDict(name=module))``."""

    def __init__(self, *args):
        Module.__init__(self)
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for module in args:
                self.append(module)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Sequential(collections.OrderedDict(list(self._modules.items())[index]))
        return list(self._modules.values())[int(self._index(index))]

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        self.update(modules or {})

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        pairs = modules.items() if isinstance(modules, (dict, ModuleDict)) else modules
        for key, module in pairs:
            self[key] = module
