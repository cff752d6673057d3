"""Module ``__getattr__`` hooks: a TensorFlow/PyTorch name gpuaccel lacks raises an AttributeError
that says so and what to use instead, rather than Python's bare "module has no attribute".

It stays an AttributeError, so ``hasattr(tf, 'name')`` and ``getattr(tf, 'name', default)`` keep
working; docs/compatibility.md lists the same names.
"""

_DOCS = "docs/compatibility.md"


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
