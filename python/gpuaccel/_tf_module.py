"""``tf.Module``: the TensorFlow base class for a bag of variables and submodules.

TF's guides build models from it (``class MyModule(tf.Module)`` with ``tf.Variable``
attributes and a ``@tf.function __call__``) and read ``module.trainable_variables`` for the tape
and the optimizer. It owns no computation, so it is plain Python: the variables and
submodules are found by walking the instance's attributes, as TF does (attribute names in
sorted order, lists/tuples/dicts searched through ``tf.nest``, the module's own first, then
each submodule's).
"""
import re

from . import nest
from ._tensor import Tensor
from ._tf_control_flow import name_scope as _name_scope
from .keras._snake_case import snake_case

__all__ = ["Module"]

_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")


def _is_variable(value):
    return isinstance(value, Tensor) and getattr(value, "_is_variable", False)


class Module:
    """``tf.Module(name=None)``: ``variables``, ``trainable_variables``,
    ``non_trainable_variables`` and ``submodules`` are collected from the attributes."""

    def __init__(self, name=None):
        if name is None:
            name = snake_case(type(self).__name__)
        elif not isinstance(name, str) or not _VALID_NAME.match(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be valid "
                             f"Python identifiers (e.g. a valid class name).")
        self._name = name
        self._scope_name = name + "/"

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        """The module's ``tf.name_scope`` (entered, it names ops ``<module name>/...``)."""
        return _name_scope(self._scope_name)

    @property
    def variables(self):
        return self._collect(_is_variable)

    @property
    def trainable_variables(self):
        return self._collect(lambda v: _is_variable(v) and getattr(v, "trainable", True))

    @property
    def non_trainable_variables(self):
        return self._collect(lambda v: _is_variable(v) and not getattr(v, "trainable", True))

    @property
    def submodules(self):
        return self._collect(lambda v: isinstance(v, Module))

    def _collect(self, wanted):
        """The values ``wanted`` picks, each once (by identity): this module's attributes in
        sorted name order, then each submodule's in turn, depth first (TF's order)."""
        found, seen = [], set()
        self._walk(wanted, found, seen, {id(self)})
        return tuple(found)

    def _walk(self, wanted, found, seen, visited):
        submodules = []
        for key in sorted(vars(self)):
            if key in ("_name", "_scope_name"):
                continue
            for leaf in nest.flatten(vars(self)[key]):
                if wanted(leaf) and id(leaf) not in seen:
                    seen.add(id(leaf))
                    found.append(leaf)
                if isinstance(leaf, Module) and id(leaf) not in visited:
                    visited.add(id(leaf))
                    submodules.append(leaf)
        for module in submodules:
            module._walk(wanted, found, seen, visited)

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: runs ``method`` inside the module's ``name_scope``."""
        def scoped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        scoped.__name__ = method.__name__
        scoped.__doc__ = method.__doc__
        return scoped

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} object named {self._name!r}>"
