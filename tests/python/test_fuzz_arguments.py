"""Property-based fuzzing of argument misuse a new user commits (issue 28's findings), so the
class of bug stays found rather than the three instances:

- an axis or dim that is not an integer (a string '0', a float, a bool, NumPy floats and bools)
  wherever one is taken: a ``TypeError`` (PyTorch's type everywhere, TF's for argmax), while
  Python and NumPy integers keep working;
- a dtype name where a device is expected (``t.to('float64')``, ``zeros(2, device='int16')``):
  a ``ValueError`` that says it is a dtype, never a confusing "invalid device";
- an optional extra that is not installed (nbformat, nbclient, h5py, pydot, ml_dtypes): an error
  that says what to ``pip install``.

Each example runs in the isolated worker (crash_isolation.py), as the other fuzz suites.
"""
import contextlib
import io
import sys

import numpy as np
from hypothesis import given, strategies as st

from crash_isolation import isolated  # noqa: F401 -- the module-scoped worker fixture

# ---- non-integer axes ----

# Each op takes an axis/dim; every one is called on a (2, 3, 4) tensor.
AXIS_OPS = {
    "math.argmax": lambda g, t, a: g.math.argmax(t, axis=a),
    "math.argmin": lambda g, t, a: g.math.argmin(t, axis=a),
    "argmax(dim)": lambda g, t, a: g.torch.argmax(t, dim=a),
    "max(dim)": lambda g, t, a: g.max(t, dim=a),
    "min(dim)": lambda g, t, a: g.min(t, dim=a),
    "reduce_sum": lambda g, t, a: g.math.reduce_sum(t, axis=a),
    "reduce_mean": lambda g, t, a: g.math.reduce_mean(t, axis=a),
    "reduce_logsumexp": lambda g, t, a: g.math.reduce_logsumexp(t, axis=a),
    "t.sum": lambda g, t, a: t.sum(dim=a),
    "t.argmax": lambda g, t, a: t.argmax(dim=a),
    "t.unsqueeze": lambda g, t, a: t.unsqueeze(a),
    "t.squeeze": lambda g, t, a: t.squeeze(a),
    "t.softmax": lambda g, t, a: t.softmax(a),
    "expand_dims": lambda g, t, a: g.expand_dims(t, a),
    "concat": lambda g, t, a: g.concat([t, t], axis=a),
    "stack": lambda g, t, a: g.stack([t, t], axis=a),
    "split": lambda g, t, a: g.split(t, 1, axis=a),
    "nn.softmax": lambda g, t, a: g.nn.softmax(t, axis=a),
    "F.normalize": lambda g, t, a: g.nn.functional.normalize(t, dim=a),
}


def _is_integer(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_axis(op, axis):
    import gpuaccel
    t = gpuaccel.ones((2, 3, 4))
    try:
        AXIS_OPS[op](gpuaccel, t, axis)
    except Exception as error:  # noqa: BLE001
        if _is_integer(axis):
            # an integer may be out of range: a typed error, not a TypeError about its type
            assert not isinstance(error, TypeError), f"{op}(axis={axis!r}): {error}"
            assert type(error).__name__ in ("InvalidArgumentError", "ValueError", "IndexError"), \
                f"{op}(axis={axis!r}) raised {type(error).__name__}: {error}"
            return
        assert isinstance(error, TypeError), \
            f"{op}(axis={axis!r}) raised {type(error).__name__}, not TypeError: {error}"
        assert "incompatible function arguments" not in str(error), str(error)
        return
    assert _is_integer(axis), f"{op} accepted the non-integer axis {axis!r}"
    assert -4 <= int(axis) <= 4, f"{op} accepted the out-of-range axis {axis!r}"


non_integer_axes = st.one_of(
    st.text(alphabet="0123-1", min_size=1, max_size=3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.sampled_from([np.float32(1.0), np.float64(0.0), np.bool_(True), np.bool_(False)]),
)
integer_axes = st.one_of(
    st.integers(-3, 2),
    st.integers(-3, 2).map(np.int64),
    st.integers(-3, 2).map(np.int32),
)


@given(st.sampled_from(sorted(AXIS_OPS)), st.one_of(non_integer_axes, integer_axes))
def test_axes_must_be_integers(isolated, op, axis):
    isolated.call("test_fuzz_arguments", "check_axis", op, axis)


# ---- dtype names where a device is expected ----

DEVICE_ARGUMENTS = {
    "t.to(name)": lambda g, name: g.ones(2).to(name),
    "t.to(device=name)": lambda g, name: g.ones(2).to(device=name),
    "zeros(device=name)": lambda g, name: g.zeros(2, device=name),
    "tensor(device=name)": lambda g, name: g.tensor([1.0], device=name),
}
# NumPy's dtype names: gpuaccel's own and those it lacks (uint16, complex64...).
DTYPE_NAMES = sorted({k for k in np.sctypeDict if isinstance(k, str) and len(k) > 1
                      and np.dtype(k).kind in "fciub"})


def check_dtype_name_as_device(call, name):
    import gpuaccel
    from gpuaccel.dtypes import as_dtype
    try:
        ours = as_dtype(name)
    except (TypeError, ValueError):
        ours = None
    try:
        result = DEVICE_ARGUMENTS[call](gpuaccel, name)
    except ValueError as error:
        text = str(error)
        assert "is a dtype" in text and "device" in text, f"{call} with {name!r}: {text}"
        if ours is None:
            assert "use " in text, f"{call} with {name!r} says nothing to use instead: {text}"
        return
    # only t.to(name) may read a gpuaccel dtype name as the cast it asks for
    assert call == "t.to(name)" and ours is not None, f"{call} accepted {name!r}"
    assert result.dtype == ours


@given(st.sampled_from(sorted(DEVICE_ARGUMENTS)), st.sampled_from(DTYPE_NAMES))
def test_dtype_names_where_a_device_is_expected(isolated, call, name):
    isolated.call("test_fuzz_arguments", "check_dtype_name_as_device", call, name)


# ---- missing optional extras ----

def _grade_a_notebook(folder):
    from gpuaccel import grade
    path = f"{folder}/hw.ipynb"
    with open(path, "w") as f:
        f.write('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        status = grade.main([path])
    assert status == 2
    raise ImportError(stderr.getvalue())


def _save_weights(folder):
    from gpuaccel import keras
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.save_weights(f"{folder}/m.weights.h5")


def _plot_model(folder):
    from gpuaccel import keras
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    keras.utils.plot_model(model, to_file=f"{folder}/m.png")


def _bfloat16_to_numpy(folder):
    import gpuaccel
    gpuaccel.ones(2).bfloat16().numpy()


# (the module made unimportable, what uses it, what the error must tell to install)
EXTRAS = {
    "nbformat": (_grade_a_notebook, 'pip install "gpuaccel[notebooks]"'),
    "nbclient": (_grade_a_notebook, 'pip install "gpuaccel[notebooks]"'),
    "h5py": (_save_weights, "pip install h5py"),
    "pydot": (_plot_model, "pip install pydot"),
    "ml_dtypes": (_bfloat16_to_numpy, "pip install ml_dtypes"),
}


def use_without(module):
    """In a fresh interpreter where ``module`` cannot be imported: runs what uses it and
    returns the error it raised as "Type: text" (or "" if none)."""
    import tempfile
    use, _ = EXTRAS[module]
    with tempfile.TemporaryDirectory() as folder:
        try:
            use(folder)
        except (ImportError, TypeError) as error:
            return f"{type(error).__name__}: {error}"
    return ""


def check_missing_extra(module):
    # A fresh process: one that imported the module already keeps using it (and h5py's own
    # submodules would break halfway) whatever sys.modules says afterwards.
    import os
    import subprocess
    code = (f"import sys; sys.modules[{module!r}] = None; "
            f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
            f"import test_fuzz_arguments as t; print('ERROR=' + t.use_without({module!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    error = done.stdout.rsplit("ERROR=", 1)[-1].strip()
    assert error, f"without {module}, {EXTRAS[module][0].__name__} raised nothing"
    assert EXTRAS[module][1] in error, f"without {module}: {error}"


@given(st.sampled_from(sorted(EXTRAS)))
def test_missing_optional_extras_say_what_to_install(isolated, module):
    isolated.call("test_fuzz_arguments", "check_missing_extra", module)
