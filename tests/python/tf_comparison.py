"""One gpuaccel op against its TensorFlow or Keras twin on the same inputs: the output's shape,
dtype and values, and the gradient of sum(output * cotangent) through both tapes with respect to
the first float32 NumPy argument (test_keras_ops.py and test_tf_math.py list the cases)."""
import zlib

import numpy as np
import tensorflow as tf

import gpuaccel as gt


def as_array(value):
    if isinstance(value, gt.Tensor):
        return np.asarray(gt.stop_gradient(value).numpy())
    return np.asarray(value)


def dtype_name(value):
    return str(getattr(value.dtype, "name", value.dtype))


def assert_forward_matches(theirs_op, ours_op, args, kwargs, atol):
    theirs = theirs_op(*args, **kwargs)
    ours = ours_op(*args, **kwargs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert dtype_name(ours) == dtype_name(theirs), (dtype_name(ours), dtype_name(theirs))
    np.testing.assert_allclose(as_array(ours), as_array(theirs), rtol=1e-5, atol=atol)


def assert_gradient_matches(theirs_op, ours_op, args, kwargs, rtol, atol):
    i = next(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == np.float32)
    # Seeded by the case, not drawn from a module's generator: the same cotangent whatever order
    # the tests run in (CI shuffles them).
    seed = zlib.crc32(f"{getattr(theirs_op, '__name__', theirs_op)}{sorted(kwargs)}".encode())
    rng = np.random.default_rng(seed)
    cotangent = rng.normal(size=tuple(theirs_op(*args, **kwargs).shape)).astype(np.float32)

    watched_tf = tf.constant(args[i])  # a tensor, not a Variable: some Keras ops read .ndim
    with tf.GradientTape() as tape:
        tape.watch(watched_tf)
        loss = tf.reduce_sum(theirs_op(*args[:i], watched_tf, *args[i + 1:], **kwargs) * cotangent)
    expected = tape.gradient(loss, watched_tf).numpy()

    watched = gt.constant(args[i])
    with gt.GradientTape() as tape:
        tape.watch(watched)
        out = ours_op(*args[:i], watched, *args[i + 1:], **kwargs)
        loss = gt.reduce_sum(out * gt.constant(cotangent))
    np.testing.assert_allclose(as_array(tape.gradient(loss, watched)), expected, rtol=rtol, atol=atol)


def case_ids(cases):
    """pytest ids for (theirs, ours, ...) case tuples: the framework op's name and the index."""
    return [f"{case[0].__name__}-{i}" for i, case in enumerate(cases)]


def assert_case_matches(case, atol, rtol):
    """One (theirs, ours, args, kwargs, differentiable) case: the forward always, the gradient
    where the op is differentiable."""
    theirs, ours, args, kwargs, differentiable = case
    assert_forward_matches(theirs, ours, args, kwargs, atol=atol)
    if differentiable:
        assert_gradient_matches(theirs, ours, args, kwargs, rtol=rtol, atol=atol)


def raised(call, *args, **kwargs):
    """(error type name, message) of what ``call(*args, **kwargs)`` raises, or None: compares a
    gpuaccel error with the framework's."""
    try:
        call(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the error itself is what is compared
        return type(error).__name__, str(error)
    return None
