"""Does a gpuaccel model compute what the same Keras model computes?

The course's promise is that a Keras program runs with only its import changed; an instructor
checks a student's gpuaccel model against its real Keras twin with one assertion. Float
summation order differs between libraries and CPUs, so the comparison is within a tolerance,
never bit-equal.
"""
from __future__ import annotations

import numpy as np

__all__ = ["assert_close_to_keras"]


def _predict(model, x, who):
    try:
        out = model.predict(x, verbose=0)
    except Exception as e:  # noqa: BLE001 -- re-raised with which model failed
        raise AssertionError(f"{who}.predict(x) raised {type(e).__name__}: {e}") from e
    if isinstance(out, (list, tuple)):
        raise TypeError(f"{who} has several outputs; compare one output at a time")
    return np.asarray(out.numpy() if hasattr(out, "numpy") else out, dtype=np.float64)


def _copy_weights(model, keras_model):
    """Gives ``keras_model`` the weights of ``model`` (both in Keras's order)."""
    ours = [np.asarray(w) for w in model.get_weights()]
    theirs = keras_model.get_weights()
    if len(ours) != len(theirs) or any(a.shape != tuple(b.shape) for a, b in zip(ours, theirs)):
        raise AssertionError(
            "the models do not have the same weights, so they are not the same model: gpuaccel "
            f"has {[a.shape for a in ours]}, Keras has {[tuple(b.shape) for b in theirs]} "
            "(same layers, same units and kernel sizes, in the same order?)")
    keras_model.set_weights(ours)


def assert_close_to_keras(model, keras_model, x, rtol=1e-5, atol=None, copy_weights=True):
    """Asserts that ``model.predict(x)`` matches ``keras_model.predict(x)``.

    With ``copy_weights`` (default) the Keras model first receives the gpuaccel model's weights,
    so two freshly built twins compare their computation, not their random initializations.
    Elements must satisfy ``|ours - keras| <= atol + rtol * |keras|``; ``atol`` defaults to
    ``rtol`` times the largest ``|keras|`` so outputs near zero are not held to a relative
    bound they cannot meet in float32. Under a mixed precision policy use ``rtol`` of about
    1e-2. Returns the largest absolute difference.
    """
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)) or not rtol >= 0:
        raise ValueError(f"rtol must be a number >= 0, got {rtol!r}")
    if atol is not None and (isinstance(atol, bool) or not isinstance(atol, (int, float))
                             or not atol >= 0):
        raise ValueError(f"atol must be a number >= 0 or None, got {atol!r}")
    if keras_model is model:
        raise ValueError("model and keras_model are the same object: pass the gpuaccel model "
                         "and its Keras twin")
    x = np.asarray(x)
    if not keras_model.built:
        keras_model.predict(x[:1], verbose=0)  # Keras creates its weights on the first call
    if copy_weights:
        if not getattr(model, "built", True):
            model.predict(x[:1], verbose=0)
        _copy_weights(model, keras_model)
    ours = _predict(model, x, "the gpuaccel model")
    theirs = _predict(keras_model, x, "the Keras model")
    if ours.shape != theirs.shape:
        raise AssertionError(f"output shapes differ: gpuaccel {ours.shape}, Keras {theirs.shape}")
    if atol is None:
        atol = rtol * float(np.max(np.abs(theirs))) if theirs.size else 0.0
    diff = np.abs(ours - theirs)
    if not np.all(np.isfinite(ours)):
        raise AssertionError(f"the gpuaccel model's output has {int(np.sum(~np.isfinite(ours)))} "
                             "non-finite values (NaN or inf)")
    bad = diff > atol + rtol * np.abs(theirs)
    if np.any(bad):
        worst = np.unravel_index(int(np.argmax(np.where(bad, diff, -1))), diff.shape)
        raise AssertionError(
            f"{int(bad.sum())} of {bad.size} outputs differ from Keras beyond rtol={rtol:g}, "
            f"atol={atol:.3g}: worst at index {tuple(int(i) for i in worst)}, gpuaccel "
            f"{ours[worst]:.6g} vs Keras {theirs[worst]:.6g} (|diff| {diff[worst]:.3g}); "
            f"largest |diff| {diff.max():.3g}")
    return float(diff.max()) if diff.size else 0.0
