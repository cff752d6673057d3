"""The scatters and segment reductions on the one row scatter (backend op scatter_rows: sum, max,
min, product), against PyTorch 1.13 (torch_reference), TensorFlow 2.21, Keras and NumPy:
``torch.scatter``/``scatter_add``/``scatter_reduce`` and ``index_add``/``index_copy``/
``index_fill``/``index_reduce`` (values for float and integer dtypes, self included or not,
repeated destinations, gradients, PyTorch's errors), ``tf.math.(unsorted_)segment_prod`` and
integer segment sums (TF's dtype, wrapping), ``tf.tensor_scatter_nd_*`` (values, dtypes, the
max's gradient split between ties), ``confusion_matrix``/``histogram_fixed_width``/``histc``/
``bincount(weights=)``/``invert_permutation``, and sizes the one-hot products they replaced could
not hold (index x size)."""
import keras
import numpy as np
import pytest
import tensorflow as tf_real

import gpuaccel as tf
import gpuaccel.torch as torch
import torch_reference

RNG = np.random.default_rng(11)
SELF = RNG.standard_normal((3, 4)).astype(np.float32)
SRC = RNG.standard_normal((3, 5)).astype(np.float32)
# index (2, 3) along dim 1 of a (3, 4) self, read from the top-left corner of src (3, 5):
# destinations repeat (0 twice in row 0; 2 three times in row 1), row 2 untouched
INDEX = np.array([[0, 3, 0], [2, 2, 2]], np.int64)
INT_SELF = RNG.integers(-9, 9, (3, 4)).astype(np.int64)
INT_SRC = RNG.integers(-9, 9, (3, 5)).astype(np.int64)
# index_* along dim 0 of (4, 3): slice 1 gets three sources, slice 3 one, 0 and 2 none
INDEX_SELF = RNG.standard_normal((4, 3)).astype(np.float32)
INDEX_SOURCE = RNG.standard_normal((5, 3)).astype(np.float32)
INDEX_IDS = np.array([1, 3, 1, 1, 0], np.int64)
SCATTER_REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]
INDEX_REDUCTIONS = ["prod", "mean", "amax", "amin"]

_REFERENCE = r"""
out = {}
for kind, (s, src) in {"float": (self_f, src_f), "int": (self_i, src_i)}.items():
    for r in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            out[f"scatter_reduce/{kind}/{r}/{inc}"] = torch.from_numpy(s).scatter_reduce(
                1, torch.from_numpy(index), torch.from_numpy(src), r, include_self=inc).numpy()
    out[f"scatter/{kind}"] = torch.from_numpy(s).scatter(1, torch.from_numpy(index),
                                                         torch.from_numpy(src)).numpy()
    out[f"scatter_add/{kind}"] = torch.from_numpy(s).scatter_add(
        1, torch.from_numpy(index), torch.from_numpy(src)).numpy()
    for mode in ("add", "multiply"):
        out[f"scatter/{kind}/{mode}"] = torch.from_numpy(s).scatter(
            1, torch.from_numpy(index), torch.from_numpy(src), reduce=mode).numpy()
out["scatter/value"] = torch.from_numpy(self_f).scatter(1, torch.from_numpy(index), 2.5).numpy()
for r in ("prod", "mean", "amax", "amin"):
    for inc in (True, False):
        out[f"index_reduce/{r}/{inc}"] = torch.from_numpy(index_self).index_reduce(
            0, torch.from_numpy(index_ids), torch.from_numpy(index_source), r,
            include_self=inc).numpy()
ids = torch.from_numpy(index_ids)
out["index_add"] = torch.from_numpy(index_self).index_add(0, ids, torch.from_numpy(index_source),
                                                          alpha=2).numpy()
out["index_add/int"] = torch.from_numpy(index_self_i).index_add(
    1, torch.tensor([2, 0, 2]), torch.from_numpy(index_source_i)).numpy()
out["index_copy"] = torch.from_numpy(index_self).index_copy(
    0, ids, torch.from_numpy(index_source)).numpy()
out["index_fill"] = torch.from_numpy(index_self).index_fill(1, torch.tensor([2, 0, 2]),
                                                            -1.5).numpy()
# gradients: self and src, with ties and zeros where they matter
for r in ("sum", "prod", "mean", "amax", "amin"):
    for inc in (True, False):
        a = torch.from_numpy(grad_self).requires_grad_()
        b = torch.from_numpy(grad_src).requires_grad_()
        y = a.scatter_reduce(0, torch.from_numpy(grad_index), b, r, include_self=inc)
        (y * torch.from_numpy(weights)).sum().backward()
        out[f"grad/{r}/{inc}/self"] = a.grad.numpy()
        out[f"grad/{r}/{inc}/src"] = b.grad.numpy()
a = torch.from_numpy(grad_self).requires_grad_()
b = torch.from_numpy(grad_src).requires_grad_()
(a.scatter(0, torch.from_numpy(grad_index), b) * torch.from_numpy(weights)).sum().backward()
out["grad/scatter/self"], out["grad/scatter/src"] = a.grad.numpy(), b.grad.numpy()
"""

# 1-D gradient case: destination 0 gets 3 (a tie with src[1]... ), 1 gets 0 and 0 (two zeros
# with self's 2), 2 gets one zero, 3 nothing
GRAD_SELF = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
GRAD_SRC = np.array([3.0, 3.0, 0.0, 0.0, 0.0, -1.5], np.float32)
GRAD_INDEX = np.array([0, 0, 1, 1, 2, 2], np.int64)
WEIGHTS = np.array([0.5, -2.0, 1.5, 3.0], np.float32)


@pytest.fixture(scope="module")
def reference():
    return torch_reference.run(
        _REFERENCE, self_f=SELF, src_f=SRC, self_i=INT_SELF, src_i=INT_SRC, index=INDEX,
        index_self=INDEX_SELF, index_source=INDEX_SOURCE, index_ids=INDEX_IDS,
        index_self_i=INT_SELF, index_source_i=INT_SELF[:, :3].copy(), grad_self=GRAD_SELF,
        grad_src=GRAD_SRC, grad_index=GRAD_INDEX, weights=WEIGHTS)


def _operands(kind):
    return (SELF, SRC) if kind == "float" else (INT_SELF, INT_SRC)


def _assert_same(ours, theirs):
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["float", "int"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", SCATTER_REDUCTIONS)
def test_scatter_reduce_matches_torch(reference, kind, include_self, reduce):
    s, src = _operands(kind)
    ours = torch.from_numpy(s).scatter_reduce(1, torch.from_numpy(INDEX), torch.from_numpy(src),
                                              reduce, include_self=include_self)
    _assert_same(ours.numpy(), reference[f"scatter_reduce/{kind}/{reduce}/{include_self}"])


@pytest.mark.parametrize("kind", ["float", "int"])
def test_scatter_and_scatter_add_match_torch(reference, kind):
    s, src = _operands(kind)
    x, ids, source = torch.from_numpy(s), torch.from_numpy(INDEX), torch.from_numpy(src)
    # a repeated destination keeps the last write (the one-hot form summed the writes)
    _assert_same(x.scatter(1, ids, source).numpy(), reference[f"scatter/{kind}"])
    _assert_same(torch.scatter_add(x, 1, ids, source).numpy(), reference[f"scatter_add/{kind}"])
    for mode in ("add", "multiply"):
        _assert_same(x.scatter(1, ids, source, reduce=mode).numpy(),
                     reference[f"scatter/{kind}/{mode}"])
    if kind == "float":
        _assert_same(x.scatter(1, ids, 2.5).numpy(), reference["scatter/value"])
        y = x.clone()
        y.scatter_reduce_(1, ids, source, "amax")
        _assert_same(y.numpy(), reference["scatter_reduce/float/amax/True"])


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", INDEX_REDUCTIONS)
def test_index_reduce_matches_torch(reference, include_self, reduce):
    ours = torch.from_numpy(INDEX_SELF).index_reduce(
        0, torch.from_numpy(INDEX_IDS), torch.from_numpy(INDEX_SOURCE), reduce,
        include_self=include_self)
    _assert_same(ours.numpy(), reference[f"index_reduce/{reduce}/{include_self}"])


def test_index_add_copy_fill_match_torch(reference):
    x, ids = torch.from_numpy(INDEX_SELF), torch.from_numpy(INDEX_IDS)
    source = torch.from_numpy(INDEX_SOURCE)
    _assert_same(x.index_add(0, ids, source, alpha=2).numpy(), reference["index_add"])
    # integers stay integers, exactly (they went through a float one-hot product)
    ints = torch.from_numpy(INT_SELF).index_add(1, torch.tensor([2, 0, 2]),
                                                torch.from_numpy(INT_SELF[:, :3].copy()))
    _assert_same(ints.numpy(), reference["index_add/int"])
    _assert_same(x.index_copy(0, ids, source).numpy(), reference["index_copy"])
    _assert_same(x.index_fill(1, torch.tensor([2, 0, 2]), -1.5).numpy(), reference["index_fill"])


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", SCATTER_REDUCTIONS)
def test_scatter_reduce_gradients_match_torch(reference, include_self, reduce):
    """Ties share the gradient of a max/min evenly (self's entry among them when included); a
    product's gradient is the other entries' product, zeros handled (two zeros give 0)."""
    a = torch.tensor(GRAD_SELF, requires_grad=True)
    b = torch.tensor(GRAD_SRC, requires_grad=True)
    y = a.scatter_reduce(0, torch.from_numpy(GRAD_INDEX), b, reduce, include_self=include_self)
    (y * torch.from_numpy(WEIGHTS)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), reference[f"grad/{reduce}/{include_self}/self"],
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), reference[f"grad/{reduce}/{include_self}/src"],
                               rtol=1e-6, atol=1e-6)


def test_scatter_gradient_reaches_every_write_as_torchs(reference):
    """Self gets the gradient where nothing was written; every write gets its destination's,
    an overwritten one too (PyTorch's gather of the gradient)."""
    a = torch.tensor(GRAD_SELF, requires_grad=True)
    b = torch.tensor(GRAD_SRC, requires_grad=True)
    (a.scatter(0, torch.from_numpy(GRAD_INDEX), b) * torch.from_numpy(WEIGHTS)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), reference["grad/scatter/self"])
    np.testing.assert_allclose(b.grad.numpy(), reference["grad/scatter/src"])


def test_scatter_errors_are_pytorchs():
    x = torch.zeros(2, 3)
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.scatter_add(1, torch.tensor([[0, 3]]), torch.ones(1, 2))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0"):
        x.index_reduce(0, torch.tensor([-1]), torch.ones(1, 3), "amax")
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean"):
        x.scatter_reduce(1, torch.tensor([[0]]), torch.ones(1, 1), "max")
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax"):
        x.index_reduce(0, torch.tensor([0]), torch.ones(1, 3), "sum")
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.scatter(1, torch.tensor([0, 1]), torch.ones(2))
    with pytest.raises(RuntimeError, match="smaller than src"):
        x.scatter(1, torch.tensor([[0, 1]]), torch.ones(1, 1))


def test_bincount_weights_and_histc_match_torch():
    values = np.array([0, 3, 1, 3, 3, 0], np.int64)
    weights = RNG.standard_normal(6).astype(np.float32)
    # outside [min, max] ignored; NaN is left out here: PyTorch 1.13's CPU loop casts it to an
    # integer bin (undefined behaviour that lands in bin 0), gpuaccel ignores it (asserted below)
    samples = np.concatenate([RNG.standard_normal(200), [5.0, -5.0, 2.0, -2.0]]).astype(np.float32)
    theirs = torch_reference.run(
        "out['w32'] = torch.bincount(torch.from_numpy(v), weights=torch.from_numpy(w)).numpy()\n"
        "out['w64'] = torch.bincount(torch.from_numpy(v), weights=torch.from_numpy(w).double(),"
        " minlength=6).numpy()\n"
        "out['hist'] = torch.histc(torch.from_numpy(x), bins=7, min=-2, max=2).numpy()\n",
        v=values, w=weights, x=samples)
    _assert_same(torch.bincount(torch.from_numpy(values), weights=torch.from_numpy(weights)).numpy(),
                 theirs["w32"])
    _assert_same(torch.bincount(torch.from_numpy(values), weights=torch.from_numpy(weights).double(),
                                minlength=6).numpy(), theirs["w64"])
    _assert_same(torch.histc(torch.from_numpy(samples), bins=7, min=-2, max=2).numpy(),
                 theirs["hist"])
    with_nan = np.append(samples, np.nan).astype(np.float32)
    np.testing.assert_array_equal(torch.histc(torch.from_numpy(with_nan), bins=7, min=-2,
                                              max=2).numpy(), theirs["hist"])


# ---- TensorFlow and Keras ----

SEGMENT_IDS = np.array([3, 0, 3, 1, 0, 3, 5], np.int32)  # 2 and 4 empty


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "int8",
                                   "int16"])
@pytest.mark.parametrize("op", ["unsorted_segment_sum", "unsorted_segment_prod"])
def test_unsorted_segment_sum_and_prod_keep_tensorflows_dtype(op, dtype):
    data = RNG.integers(-4, 5, (7, 2, 3)).astype(np.float64)
    if dtype == "uint8":
        data = np.abs(data) * 40  # sums and products wrap past 255, as TF's
    ours = getattr(tf.math, op)(tf.cast(tf.constant(data), dtype), SEGMENT_IDS, 6)
    theirs = getattr(tf_real.math, op)(tf_real.cast(tf_real.constant(data), dtype),
                                       SEGMENT_IDS, 6)
    assert ours.dtype.name == theirs.dtype.name
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_int64_segment_sums_are_exact_beyond_float64():
    big = np.array([[2**60 + 1], [3], [2**60 + 7]], np.int64)
    out = tf.math.unsorted_segment_sum(big, [0, 1, 0], 2).numpy()
    np.testing.assert_array_equal(out, [[2**61 + 8], [3]])


def test_sorted_segment_prod_and_keras_ops_match():
    ids = np.array([0, 0, 2, 2, 2, 5], np.int64)
    data = RNG.standard_normal((6, 4)).astype(np.float32)
    np.testing.assert_allclose(tf.math.segment_prod(data, ids).numpy(),
                               tf_real.math.segment_prod(data, ids).numpy(), rtol=1e-6)
    for sorted_ids in (True, False):
        ours = tf.keras.ops.segment_prod(data, ids, sorted=sorted_ids)
        theirs = keras.ops.segment_prod(data, ids, sorted=sorted_ids)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    ours = tf.keras.ops.segment_sum(data, ids, num_segments=7)
    np.testing.assert_allclose(np.asarray(ours),
                               np.asarray(keras.ops.segment_sum(data, ids, num_segments=7)),
                               rtol=1e-6)


def test_segment_prod_gradient_matches_tensorflow_with_zeros():
    """Segment 0: no zero; 1: one zero (its gradient is the others' product); 2: two zeros
    (all 0); the gradient of an entry with a dropped id is 0."""
    data = np.array([[2.0], [-3.0], [0.0], [4.0], [0.0], [0.0], [5.0], [7.0]], np.float32)
    ids = np.array([0, 0, 1, 1, 2, 2, 2, -1], np.int32)
    upstream = np.array([[1.5], [-2.0], [0.5]], np.float32)

    x, x_real = tf.constant(data), tf_real.constant(data)
    with tf.GradientTape() as tape, tf_real.GradientTape() as tape_real:
        tape.watch(x)
        tape_real.watch(x_real)
        y = tf.math.unsorted_segment_prod(x, ids, 3)
        y_real = tf_real.math.unsorted_segment_prod(x_real, ids, 3)
    np.testing.assert_array_equal(y.numpy(), y_real.numpy())
    np.testing.assert_allclose(
        tape.gradient(y, x, output_gradients=tf.constant(upstream)).numpy(),
        tape_real.gradient(y_real, x_real, output_gradients=tf_real.constant(upstream)).numpy(),
        rtol=1e-6)


@pytest.mark.parametrize("op", ["tensor_scatter_nd_add", "tensor_scatter_nd_sub",
                                "tensor_scatter_nd_max", "tensor_scatter_nd_min",
                                "tensor_scatter_nd_update"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_tensor_scatter_nd_matches_tensorflow(op, dtype):
    base = RNG.integers(-9, 9, (5, 3)).astype(dtype)
    indices = np.array([[3], [1], [3], [4], [3]], np.int32)
    updates = RNG.integers(-9, 9, (5, 3)).astype(dtype)
    ours = getattr(tf, op)(tf.constant(base), indices, tf.constant(updates))
    theirs = getattr(tf_real, op)(tf_real.constant(base), indices, tf_real.constant(updates))
    assert ours.dtype.name == theirs.dtype.name
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_tensor_scatter_nd_update_gradient_reaches_every_update_as_tensorflow():
    base = np.arange(8, dtype=np.float32).reshape(4, 2)
    indices = np.array([[2], [0], [2]], np.int32)  # row 2 written twice: the last wins
    updates = np.array([[10.0, 11.0], [12.0, 13.0], [14.0, 15.0]], np.float32)
    upstream = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]], np.float32)
    results = []
    for module in (tf, tf_real):
        x, u = module.constant(base), module.constant(updates)
        with module.GradientTape() as tape:
            tape.watch([x, u])
            y = module.tensor_scatter_nd_update(x, indices, u)
        results.append([y.numpy()] + [g.numpy() for g in tape.gradient(
            y, [x, u], output_gradients=module.constant(upstream))])
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


def test_tensor_scatter_nd_max_gradient_splits_ties_as_tensorflow():
    base = np.array([[1.0, 5.0], [2.0, 0.0]], np.float32)
    indices = np.array([[0], [0], [1]], np.int32)
    updates = np.array([[1.0, 3.0], [1.0, 5.0], [-1.0, 0.0]], np.float32)
    upstream = np.array([[3.0, -1.0], [2.0, 4.0]], np.float32)

    def gradients(module):
        x, u = module.constant(base), module.constant(updates)
        with module.GradientTape() as tape:
            tape.watch([x, u])
            y = module.tensor_scatter_nd_max(x, indices, u)
        return [g.numpy() for g in tape.gradient(y, [x, u], output_gradients=module.constant(upstream))]

    for ours, theirs in zip(gradients(tf), gradients(tf_real)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_confusion_matrix_histogram_and_invert_permutation_match_tensorflow():
    labels = RNG.integers(0, 4, 50)
    predictions = RNG.integers(0, 4, 50)
    weights = RNG.random(50).astype(np.float32)
    np.testing.assert_array_equal(tf.math.confusion_matrix(labels, predictions).numpy(),
                                  tf_real.math.confusion_matrix(labels, predictions).numpy())
    np.testing.assert_allclose(
        tf.math.confusion_matrix(labels, predictions, num_classes=6, weights=weights,
                                 dtype=tf.float32).numpy(),
        tf_real.math.confusion_matrix(labels, predictions, num_classes=6, weights=weights,
                                      dtype=tf_real.float32).numpy(), rtol=1e-6)
    values = RNG.standard_normal(300).astype(np.float32) * 3
    np.testing.assert_array_equal(tf.histogram_fixed_width(values, [-2.0, 2.0], nbins=9).numpy(),
                                  tf_real.histogram_fixed_width(values, [-2.0, 2.0],
                                                                nbins=9).numpy())
    permutation = RNG.permutation(12).astype(np.int32)
    np.testing.assert_array_equal(tf.math.invert_permutation(permutation).numpy(),
                                  tf_real.math.invert_permutation(permutation).numpy())


def test_sizes_a_one_hot_could_not_hold():
    """200,000 entries scattered into 200,000 destinations: index x size would be 4e10
    elements (160 GB as float32); the row scatter needs the operands alone."""
    n = 200_000
    ids = RNG.integers(0, n, n).astype(np.int64)
    values = RNG.integers(-5, 5, n).astype(np.int64)
    ours = torch.zeros(n, dtype=torch.int64).scatter_add(0, torch.from_numpy(ids),
                                                         torch.from_numpy(values))
    np.testing.assert_array_equal(ours.numpy(), np.bincount(ids, weights=values, minlength=n)
                                  .astype(np.int64))
    table = tf.tensor_scatter_nd_max(tf.zeros([n, 1]), ids[:, None].astype(np.int32),
                                     values[:, None].astype(np.float32))
    want = np.zeros(n, np.float32)
    np.maximum.at(want, ids, values.astype(np.float32))
    np.testing.assert_array_equal(table.numpy()[:, 0], want)
