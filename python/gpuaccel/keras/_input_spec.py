"""Keras's ``InputSpec``: what a layer declares about its inputs (rank, shape, dtype, sizes of
given axes), and the check ``Layer.__call__`` runs against it, with Keras's words, before the
layer builds or runs. Its own module so the layer base and user code share it."""
from ..dtypes import as_dtype


class InputSpec:
    """``keras.InputSpec(dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
    axes=None, allow_last_axis_squeeze=False, name=None, optional=False)``; a ``shape``
    includes the batch axis (None for any size) and sets ``ndim``."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None, allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = None if dtype is None else as_dtype(dtype).name
        if shape is not None:
            self.shape = tuple(None if d is None else int(d) for d in shape)
            self.ndim = len(self.shape)
        else:
            self.shape = None
            self.ndim = ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.optional = optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): axes[k] for k in axes}
        except (ValueError, TypeError):
            raise TypeError(f"Argument `axes` must be a dict with integer keys. Received: "
                            f"axes={axes}") from None
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim else self.max_ndim) - 1
            if max(self.axes) > max_dim:
                raise ValueError(f"Axis {max(self.axes)} is greater than the maximum allowed "
                                 f"value: {max_dim}")

    def __repr__(self):
        parts = [f"{key}={value}" for key, value in (
            ("dtype", self.dtype), ("shape", self.shape), ("ndim", self.ndim),
            ("max_ndim", self.max_ndim), ("min_ndim", self.min_ndim), ("axes", self.axes))
            if value]
        return f"InputSpec({', '.join(parts)})"

    def get_config(self):
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim,
                "max_ndim": self.max_ndim, "min_ndim": self.min_ndim, "axes": self.axes,
                "optional": self.optional}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _incompatible(index, spec, layer_name, expectation):
    return ValueError(f"Input {index} with name '{spec.name}' of layer '{layer_name}' is "
                      f"incompatible with the layer: {expectation}")


def assert_input_compatibility(input_spec, inputs, layer_name):
    """Keras's check of ``inputs`` (a list of tensors or KerasTensors, each with ``shape``
    and ``dtype``) against a layer's ``input_spec`` (one InputSpec or a list)."""
    if not input_spec:
        return
    specs = list(input_spec) if isinstance(input_spec, (list, tuple)) else [input_spec]
    if len(inputs) != len(specs):
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received '
                         f"{len(inputs)} input tensors. Inputs received: {inputs}")
    for index, (x, spec) in enumerate(zip(inputs, specs)):
        if spec is None or (x is None and spec.optional):
            continue
        shape = tuple(None if d is None else int(d) for d in x.shape)
        ndim = len(shape)
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
            raise _incompatible(index, spec, layer_name, f"expected ndim={spec.ndim}, found "
                                f"ndim={ndim}. Full shape received: {shape}")
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise _incompatible(index, spec, layer_name, f"expected max_ndim={spec.max_ndim}, "
                                f"found ndim={ndim}")
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise _incompatible(index, spec, layer_name, f"expected min_ndim={spec.min_ndim}, "
                                f"found ndim={ndim}. Full shape received: {shape}")
        if spec.dtype is not None:
            dtype = as_dtype(getattr(x, "_dtype_name", None) or x.dtype).name
            if dtype != spec.dtype:
                raise _incompatible(index, spec, layer_name, f"expected dtype={spec.dtype}, "
                                    f"found dtype={dtype}")
        for axis, value in spec.axes.items():
            if value is not None and shape[axis] not in (value, None):
                raise _incompatible(index, spec, layer_name, f"expected axis {axis} of input "
                                    f"shape to have value {value}, but received input with "
                                    f"shape {shape}")
        if spec.shape is not None:
            spec_shape, found = spec.shape, shape
            if spec.allow_last_axis_squeeze:
                found = found[:-1] if found and found[-1] == 1 else found
                spec_shape = spec_shape[:-1] if spec_shape and spec_shape[-1] == 1 else spec_shape
            for expected, dim in zip(spec_shape, found):
                if expected is not None and dim is not None and expected != dim:
                    raise _incompatible(index, spec, layer_name, f"expected shape={spec.shape}, "
                                        f"found shape={found}")
