"""``gpuaccel``'s TensorFlow top level against real TensorFlow on the same seeded inputs: the
indexing ops (strided_slice, tensor_scatter_nd_*, dynamic_partition/stitch, unique), the
run-time checks and their errors, eager control flow (cond, case, switch_case, while_loop,
foldl/foldr, scan) with gradients through it, tf.nest, and tf.print's text."""
import collections
import io

import numpy as np
import pytest

import gpuaccel as gt
from tf_comparison import as_array, assert_case_matches, case_ids

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(2021)
A = RNG.normal(size=(4, 3)).astype(np.float32)
CUBE = RNG.normal(size=(3, 4, 5)).astype(np.float32)
UPDATES = RNG.normal(size=(3, 3)).astype(np.float32)
ROW_INDICES = np.array([[1], [3], [1]], np.int32)  # row 1 twice
POINT_INDICES = np.array([[0, 2], [3, 1], [0, 2]], np.int64)
POINT_UPDATES = RNG.normal(size=(3,)).astype(np.float32)
INTS = np.array([[5, -3, 7], [0, 9, -1], [2, 2, 2], [8, -8, 4]], np.int32)
INT_UPDATES = np.array([[1, 20, -30], [4, 5, 6], [7, -70, 0]], np.int32)

# tf's op, gpuaccel's, positional arguments (the first float32 array is differentiated),
# keyword arguments, whether to compare gradients.
CASES = [
    (tf.strided_slice, gt.strided_slice, (CUBE, [0, 1, 0], [3, 4, 5], [2, 1, 2]), {}, True),
    (tf.strided_slice, gt.strided_slice, (CUBE, [-1, 3, -1], [0, 0, 0], [-1, -2, -2]), {},
     True),
    (tf.strided_slice, gt.strided_slice, (CUBE, [1, 0, 2], [2, 0, 4], [1, 1, 1]),
     {"begin_mask": 2, "end_mask": 2, "shrink_axis_mask": 1}, True),
    (tf.strided_slice, gt.strided_slice, (CUBE, [0, 0, 1], [0, 0, 3], [1, 1, 1]),
     {"ellipsis_mask": 1, "new_axis_mask": 2}, True),
    (tf.strided_slice, gt.strided_slice, (CUBE, [7, -9], [-7, 9], [1, 1]), {}, True),
    (tf.tensor_scatter_nd_add, gt.tensor_scatter_nd_add, (A, ROW_INDICES, UPDATES), {}, True),
    (tf.tensor_scatter_nd_sub, gt.tensor_scatter_nd_sub, (A, ROW_INDICES, UPDATES), {}, True),
    (tf.tensor_scatter_nd_max, gt.tensor_scatter_nd_max, (A, ROW_INDICES, UPDATES), {}, True),
    (tf.tensor_scatter_nd_min, gt.tensor_scatter_nd_min, (A, ROW_INDICES, UPDATES), {}, True),
    (tf.tensor_scatter_nd_add, gt.tensor_scatter_nd_add, (A, POINT_INDICES, POINT_UPDATES), {},
     True),
    (tf.tensor_scatter_nd_update, gt.tensor_scatter_nd_update,
     (A, np.array([[2], [0]], np.int32), UPDATES[:2]), {}, True),
    (tf.tensor_scatter_nd_add, gt.tensor_scatter_nd_add, (INTS, ROW_INDICES, INT_UPDATES), {},
     False),
    (tf.tensor_scatter_nd_min, gt.tensor_scatter_nd_min, (INTS, ROW_INDICES, INT_UPDATES), {},
     False),
    (tf.tensor_scatter_nd_max, gt.tensor_scatter_nd_max, (INTS, ROW_INDICES, INT_UPDATES), {},
     False),
    (tf.saturate_cast, gt.saturate_cast, (np.array([300, -5, 7], np.int32), "uint8"), {}, False),
    (tf.saturate_cast, gt.saturate_cast, (np.float32([3e9, -3e9, 1.7, -2.5]), "int32"), {},
     False),
    (tf.ensure_shape, gt.ensure_shape, (A, (None, 3)), {}, True),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_matches_tensorflow(case):
    assert_case_matches(case, atol=1e-6, rtol=1e-5)


def test_scatter_gradient_reaches_the_updates():
    """The gradient with respect to the updates (the cases above differentiate the tensor):
    for update, a later write to the same row takes the gradient, the earlier none."""
    indices = np.array([[1], [3], [2]], np.int32)  # distinct (see tensor_scatter_nd_update)
    cotangent = RNG.normal(size=A.shape).astype(np.float32)
    for theirs, ours in ((tf.tensor_scatter_nd_add, gt.tensor_scatter_nd_add),
                         (tf.tensor_scatter_nd_update, gt.tensor_scatter_nd_update)):
        u_tf = tf.constant(UPDATES)
        with tf.GradientTape() as tape:
            tape.watch(u_tf)
            loss = tf.reduce_sum(theirs(A, indices, u_tf) * cotangent)
        u = gt.constant(UPDATES)
        with gt.GradientTape() as tape2:
            tape2.watch(u)
            loss2 = gt.reduce_sum(ours(gt.constant(A), indices, u) * gt.constant(cotangent))
        np.testing.assert_allclose(as_array(tape2.gradient(loss2, u)),
                                   tape.gradient(loss, u_tf).numpy(), rtol=1e-6)


def test_tensor_scatter_nd_update_int_tensor():
    out = gt.tensor_scatter_nd_update(INTS, np.array([[3], [0]], np.int32), INT_UPDATES[:2])
    expected = tf.tensor_scatter_nd_update(INTS, np.array([[3], [0]], np.int32), INT_UPDATES[:2])
    assert out.dtype.name == "int32"
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


@pytest.mark.parametrize("call", [
    lambda m: m.tensor_scatter_nd_add(A, np.array([[4]], np.int32), UPDATES[:1]),
    lambda m: m.tensor_scatter_nd_add(A, ROW_INDICES, UPDATES[:, :2]),
    lambda m: m.tensor_scatter_nd_add(m.constant(A), ROW_INDICES, m.constant(INT_UPDATES)),
    lambda m: m.strided_slice(A, [5], [6], shrink_axis_mask=1),
    lambda m: m.strided_slice(A, [0], [2], [0]),
    lambda m: m.dynamic_partition(np.float32([1, 2, 3]), np.int32([0, 2, 1]), 2),
    lambda m: m.dynamic_partition(np.float32([1, 2, 3]), np.int32([0, 1]), 2),
    lambda m: m.unique(np.int32([[1, 2]])),
    lambda m: m.ensure_shape(A, (4, 2)),
    lambda m: m.broadcast_dynamic_shape(np.int32([2, 3]), np.int32([4, 1])),
], ids=["scatter-index", "scatter-updates-shape", "scatter-dtype", "shrink-out-of-range",
        "zero-stride", "partition-value", "partition-shape", "unique-rank", "ensure-shape",
        "broadcast-dynamic"])
def test_bad_arguments_raise_invalid_argument_error(call):
    with pytest.raises(tf.errors.InvalidArgumentError):
        call(tf)
    with pytest.raises(gt.errors.InvalidArgumentError):
        call(gt)


def test_ensure_shape_and_broadcast_shape_messages():
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.ensure_shape(A, (4, 2))
    with pytest.raises(gt.errors.InvalidArgumentError) as ours:
        gt.ensure_shape(A, (4, 2))
    assert str(ours.value) in str(theirs.value)
    assert gt.broadcast_dynamic_shape(np.int32([2, 1, 3]), np.int32([4, 1])).numpy().tolist() == \
        tf.broadcast_dynamic_shape(np.int32([2, 1, 3]), np.int32([4, 1])).numpy().tolist()
    assert gt.broadcast_static_shape((2, 1, 3), (4, 1)) == \
        tuple(tf.broadcast_static_shape(tf.TensorShape([2, 1, 3]), tf.TensorShape([4, 1])))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        tf.broadcast_static_shape(tf.TensorShape([2, 3]), tf.TensorShape([4, 1]))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        gt.broadcast_static_shape((2, 3), (4, 1))


def test_dynamic_partition_and_stitch():
    data = RNG.normal(size=(5, 2)).astype(np.float32)
    parts = np.int32([1, 0, 2, 1, 1])
    theirs = tf.dynamic_partition(data, parts, 4)
    ours = gt.dynamic_partition(data, parts, 4)
    assert len(ours) == len(theirs) == 4
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(as_array(a), b.numpy())
    indices = [np.int32([0, 4]), np.int32([[1, 4], [2, 6]])]
    values = [RNG.normal(size=(2, 3)).astype(np.float32),
              RNG.normal(size=(2, 2, 3)).astype(np.float32)]
    expected = tf.dynamic_stitch(indices, values)
    got = gt.dynamic_stitch(indices, values)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(as_array(got), expected.numpy())
    # The gradient reaches each data tensor (indices without overwrites: see dynamic_stitch).
    indices = [np.int32([0, 4]), np.int32([[1, 5], [3, 6]])]
    watched_tf = [tf.constant(v) for v in values]
    cotangent = RNG.normal(size=tuple(expected.shape)).astype(np.float32)
    with tf.GradientTape() as tape:
        tape.watch(watched_tf)
        loss = tf.reduce_sum(tf.dynamic_stitch(indices, watched_tf) * cotangent)
    watched = [gt.constant(v) for v in values]
    with gt.GradientTape() as tape2:
        tape2.watch(watched)
        loss2 = gt.reduce_sum(gt.dynamic_stitch(indices, watched) * gt.constant(cotangent))
    for a, b in zip(tape2.gradient(loss2, watched), tape.gradient(loss, watched_tf)):
        np.testing.assert_allclose(as_array(a), b.numpy(), rtol=1e-6)


def test_unique_and_unique_with_counts():
    x = np.int32([4, 1, 4, 7, 1, 1, 9])
    y, idx, count = gt.unique_with_counts(x)
    ty, tidx, tcount = tf.unique_with_counts(x)
    for a, b in ((y, ty), (idx, tidx), (count, tcount)):
        assert a.dtype.name == b.dtype.name
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    floats = np.float32([0.5, -1.0, 0.5, 2.0])
    ours, theirs = gt.unique(floats, out_idx="int64"), tf.unique(floats, out_idx=tf.int64)
    np.testing.assert_array_equal(ours.y.numpy(), theirs.y.numpy())
    assert ours.idx.dtype.name == theirs.idx.dtype.name == "int64"
    np.testing.assert_array_equal(ours.idx.numpy(), theirs.idx.numpy())


@pytest.mark.parametrize("name, x, y", [
    ("assert_equal", np.int32([1, 2, 3]), np.int32([1, 2, 4])),
    ("assert_less", np.int32([1, 2, 3]), np.int32([2, 2, 4])),
    ("assert_greater", np.float32([1, 2, 3]), np.float32(2.0)),
    ("assert_equal", np.float32([[1, 5], [3, 4]]), np.float32([[1, 2], [3, 0]])),
])
def test_failed_asserts_say_what_tensorflow_says(name, x, y):
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        getattr(tf, name)(x, y, message="check")
    with pytest.raises(gt.errors.InvalidArgumentError) as ours:
        getattr(gt, name)(x, y, message="check")
    assert ours.value.message == theirs.value.message


def test_passing_asserts_return_none_and_assert_rank():
    assert gt.assert_equal(A, A) is None and tf.assert_equal(A, A) is None
    assert gt.assert_less(A, A + 1) is None and tf.assert_less(A, A + 1) is None
    assert gt.assert_greater(A + 1, A) is None and tf.assert_greater(A + 1, A) is None
    assert gt.assert_rank(A, 2) is None and tf.assert_rank(A, 2) is None
    with pytest.raises(ValueError) as theirs:
        tf.assert_rank(A, 3)
    with pytest.raises(ValueError) as ours:
        gt.assert_rank(A, 3)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        tf.assert_equal(A, A[:, :2])
    with pytest.raises(gt.errors.InvalidArgumentError, match="Incompatible shapes"):
        gt.assert_equal(A, A[:, :2])


# ---- control flow ----

def _both(fn):
    """fn(module, x) in TF and gpuaccel: (value, d sum(value)/dx) each."""
    results = []
    for module in (tf, gt):
        x = module.constant(A)
        with module.GradientTape() as tape:
            tape.watch(x)
            out = fn(module, x)
            loss = module.reduce_sum(out)
        results.append((as_array(out), as_array(tape.gradient(loss, x))))
    return results


@pytest.mark.parametrize("fn", [
    lambda m, x: m.cond(m.reduce_sum(x) > 0.0, lambda: m.square(x), lambda: x * 3.0),
    lambda m, x: m.cond(m.reduce_sum(x) < 0.0, lambda: m.square(x), lambda: x * 3.0),
    lambda m, x: m.case([(m.reduce_max(x) > 100.0, lambda: x), (m.reduce_max(x) > 0.0,
                                                               lambda: m.exp(x))],
                        default=lambda: -x),
    lambda m, x: m.switch_case(m.constant(1, dtype=m.int32), [lambda: x, lambda: x * x]),
    lambda m, x: m.switch_case(m.constant(7, dtype=m.int32), [lambda: x, lambda: x * x],
                               default=lambda: m.tanh(x)),
    lambda m, x: m.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, acc * x + 1.0),
                              [m.constant(0), m.ones_like(x)])[1],
    lambda m, x: m.while_loop(lambda v: m.reduce_max(v) < 50.0, lambda v: [v * 2.0 + 1.0],
                              [x], maximum_iterations=4)[0],
    lambda m, x: m.foldl(lambda acc, row: acc * row + 1.0, x),
    lambda m, x: m.foldl(lambda acc, pair: acc + pair[0] * pair[1], (x, m.exp(x)),
                         initializer=m.zeros((3,))),
    lambda m, x: m.foldr(lambda acc, row: acc * 0.5 + m.square(row), x),
    lambda m, x: m.foldr(lambda acc, row: acc * row - row, x, initializer=m.ones((3,))),
    lambda m, x: m.scan(lambda acc, row: acc * 0.5 + row, x),
    lambda m, x: m.scan(lambda acc, row: acc * row + 1.0, x, initializer=m.ones((3,)),
                        reverse=True),
    lambda m, x: m.scan(lambda acc, pair: (acc[0] + pair["a"], acc[1] * pair["b"]),
                        {"a": x, "b": m.sigmoid(x)}, initializer=(m.zeros((3,)),
                                                                 m.ones((3,))))[1],
    lambda m, x: m.grad_pass_through(lambda v: m.round(v * 4.0) / 4.0)(x),
    lambda m, x: m.recompute_grad(lambda v: m.sin(v) * v)(x),
    lambda m, x: m.grad_pass_through(lambda v: m.clip_by_value(v, -0.5, 0.5))(x) * x,
    lambda m, x: m.recompute_grad(lambda v, w: m.tanh(v) * w)(x, m.exp(x)),
    lambda m, x: m.map_fn(lambda row: row * row + 1.0, x),
    lambda m, x: m.map_fn(lambda row: m.reduce_sum(row * row), x),
    lambda m, x: m.map_fn(lambda pair: pair[0] * pair[1], (x, m.exp(x)),
                          fn_output_signature=m.float32),
    lambda m, x: m.map_fn(lambda row: (row, m.reduce_max(row)), x,
                          fn_output_signature=(m.float32, m.float32))[1],
    lambda m, x: m.map_fn(lambda d: d["a"] + d["b"], {"a": x, "b": m.sigmoid(x)},
                          fn_output_signature=m.TensorSpec((3,), m.float32)),
    lambda m, x: m.vectorized_map(lambda row: m.tanh(row) * 2.0, x),
    lambda m, x: m.vectorized_map(lambda row: (m.reduce_sum(row), row * 3.0), x)[1],
], ids=["cond-true", "cond-false", "case", "switch_case", "switch_case-default", "while_loop",
        "while_loop-max-iterations", "foldl", "foldl-nested-initializer", "foldr",
        "foldr-initializer", "scan", "scan-reverse", "scan-nested", "grad_pass_through",
        "recompute_grad", "grad_pass_through-clip", "recompute_grad-two-arguments",
        "map_fn", "map_fn-reduces", "map_fn-nested-elems", "map_fn-nested-output",
        "map_fn-dict-spec", "vectorized_map", "vectorized_map-nested-output"])
def test_control_flow_values_and_gradients(fn):
    (theirs, their_grad), (ours, our_grad) = _both(fn)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-5, atol=1e-6)


def test_control_flow_argument_errors():
    for module in (tf, gt):
        with pytest.raises(TypeError, match="'branch_index' must be a Tensor"):
            module.switch_case(1, [lambda: 1])
        with pytest.raises(ValueError, match="contiguous range"):
            module.switch_case(module.constant(0), {0: lambda: 1, 2: lambda: 2})
        with pytest.raises(TypeError, match="true_fn' must be callable"):
            module.cond(True, 1, lambda: 2)
        with pytest.raises(module.errors.InvalidArgumentError, match="None of conditions"):
            module.case([(module.constant(False), lambda: 1)])
        with pytest.raises(module.errors.InvalidArgumentError, match="exclusive"):
            module.case([(module.constant(True), lambda: 1), (module.constant(True), lambda: 2)],
                        default=lambda: 0, exclusive=True)
        with pytest.raises(ValueError):
            module.while_loop(lambda i: i < 2, lambda i: (i + 1, i), [module.constant(0)])


def test_map_fn_output_dtypes_and_empty_elems_as_tensorflow():
    for module in (tf, gt):
        x = module.constant(A)
        ints = module.map_fn(lambda row: module.cast(row * 10.0, module.int32), x,
                             fn_output_signature=module.int32)
        np.testing.assert_array_equal(as_array(ints), (A * 10).astype(np.int32))
        assert ints.dtype.name == "int32"
        empty = module.map_fn(lambda row: row * 2.0, module.zeros((0, 3)))
        assert tuple(empty.shape) == (0,) and empty.dtype.name == "float32"


def _map_fn_error(module, call):
    try:
        call(module, module.constant(A))
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error).split("\n")[0].strip()
    return None


@pytest.mark.parametrize("call", [
    lambda m, x: m.map_fn(lambda row: (row, row), x),
    lambda m, x: m.map_fn(lambda row: m.cast(row, m.int32), x),
    lambda m, x: m.map_fn(lambda row: row, x, fn_output_signature=m.int32),
    lambda m, x: m.map_fn(lambda row: row, m.constant(3.0)),
    lambda m, x: m.map_fn(lambda pair: pair[0], (x, x[:2])),
    lambda m, x: m.map_fn(lambda row: row[:1 + int(float(row[0]) > 0.0)], x),
], ids=["structure", "dtype", "signature-dtype", "scalar", "lengths", "shapes"])
def test_map_fn_errors_are_tensorflows(call):
    theirs = _map_fn_error(tf, call)
    assert theirs is not None
    ours = _map_fn_error(gt, call)
    if theirs[1].startswith("The two structures"):  # TF's text goes on to print the values
        assert ours[0] == theirs[0] and "don't have the same nested structure" in ours[1]
    else:
        assert ours == theirs


def test_while_loop_structure_and_grouping_helpers():
    State = collections.namedtuple("State", ["step", "total"])
    for module in (tf, gt):
        out = module.while_loop(lambda s: s.step < 4,
                                lambda s: [State(s.step + 1, s.total + module.cast(s.step,
                                                                                   "float32"))],
                                [State(module.constant(0), module.constant(0.0))])
        assert isinstance(out, list) and isinstance(out[0], State)
        assert int(out[0].step) == 4 and float(out[0].total) == 6.0
        assert module.get_current_name_scope() == ""
        assert module.get_current_name_scope() == ""
        with module.name_scope("outer") as outer:
            with module.name_scope("inner") as inner:
                assert (outer, inner) == ("outer/", "outer/inner/")
                assert module.get_current_name_scope() == "outer/inner"
        with pytest.raises(ValueError, match="must be a string"):
            module.name_scope(3)


def test_eager_graph_helpers():
    """What TF's graph helpers do eagerly: nothing to group or wait for, identities, and no
    symbolic tensors or function graphs."""
    assert tf.group(tf.zeros(2), tf.ones(1)) is None and gt.group(gt.zeros(2), gt.ones(1)) is None
    assert tf.no_op() is None and gt.no_op() is None
    theirs, ours = tf.tuple([tf.zeros(2), tf.ones(1)]), gt.tuple([gt.zeros(2), gt.ones(1)])
    assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in theirs] == [(2,), (1,)]
    assert tf.is_symbolic_tensor(tf.zeros(2)) is gt.is_symbolic_tensor(gt.zeros(2)) is False
    assert tf.inside_function() is gt.inside_function() is False
    assert {m.name: m.value for m in gt.VariableAggregation} == \
        {m.name: m.value for m in tf.VariableAggregation}
    assert {m.name: m.value for m in gt.VariableSynchronization} == \
        {m.name: m.value for m in tf.VariableSynchronization}
    assert isinstance(gt.get_logger(), type(tf.get_logger()))
    assert gt.timestamp().dtype == tf.timestamp().dtype.name == "float64"


def test_assert_raises_with_tensorflows_summary():
    data = ["x is", np.float32([1.0, 2.0, 3.0, 4.0]), np.int32(7)]
    assert tf.debugging.Assert(True, data) is None and gt.Assert(True, data) is None
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.Assert(tf.constant(False), data)
    with pytest.raises(gt.errors.InvalidArgumentError) as ours:
        gt.Assert(gt.constant(False), data)
    summary = "Summarized data: b'x is'\n1.0, 2.0, 3.0, ...\n7"
    assert str(theirs.value.message).endswith(summary)
    assert str(ours.value.message).endswith(summary)


# ---- TensorArray, bitcast, space-to-batch paddings, conv backprops, approx_top_k ----

def test_tensor_array_as_tensorflow_runs_it_eagerly():
    rows = RNG.normal(size=(3, 2)).astype(np.float32)
    results = []
    for module in (tf, gt):
        x = module.constant(rows)
        with module.GradientTape() as tape:
            tape.watch(x)
            ta = module.TensorArray(module.float32, size=4)
            for i in range(3):
                ta = ta.write(i, module.square(x[i]) * float(i + 1))
            stacked = ta.stack()  # row 3 was never written: zeros
            loss = module.reduce_sum(stacked * stacked)
        grown = module.TensorArray(module.float32, size=0, dynamic_size=True)
        grown = grown.write(0, [1.0, 2.0]).write(2, [5.0, 6.0])
        unstacked = module.TensorArray(module.float32, size=3).unstack(rows)
        pieces = module.TensorArray(module.float32, size=2).split(np.float32([1, 2, 3]), [1, 2])
        results.append([as_array(stacked), as_array(tape.gradient(loss, x)),
                        int(ta.size()), as_array(grown.stack()), as_array(unstacked.read(1)),
                        as_array(unstacked.gather([2, 0])), as_array(pieces.concat())])
        with pytest.raises(module.errors.OutOfRangeError, match="not resizeable"):
            module.TensorArray(module.float32, size=2).write(5, 1.0)
        with pytest.raises(ValueError, match="Incompatible shape"):
            module.TensorArray(module.float32, size=2).write(0, [1.0, 2.0]).write(1, [1.0])
        with pytest.raises(module.errors.InvalidArgumentError, match="dtype"):
            module.TensorArray(module.float32, size=1).write(0, module.constant(np.int32(1)))
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("values, target", [
    (np.float32([1.0, -2.5, 0.0]), "int32"),
    (np.float32([[1.0, 3.0]]), "uint8"),
    (np.uint8([[1, 2, 3, 4], [255, 0, 0, 128]]), "int32"),
    (np.int32([[7, -1]]), "int64"),
    (np.float16([1.5, -2.0]), "bfloat16"),
])
def test_bitcast(values, target):
    ours, theirs = gt.bitcast(values, target), tf.bitcast(values, target)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype.name == theirs.dtype.name
    np.testing.assert_array_equal(np.asarray(ours.numpy()).view(np.uint8),
                                  np.asarray(theirs.numpy()).view(np.uint8))


def test_required_space_to_batch_paddings():
    for args in (([5, 7], [2, 3]), ([5, 7], [2, 3], [[1, 0], [0, 2]]), ([4], [4], [[2, 2]])):
        for ours, theirs in zip(gt.required_space_to_batch_paddings(*args),
                                tf.required_space_to_batch_paddings(*args)):
            assert ours.dtype.name == theirs.dtype.name == "int32"
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("strides, padding, dilations", [
    ([1, 2, 2, 1], "SAME", [1, 1, 1, 1]), ([1, 1, 1, 1], "VALID", [1, 2, 2, 1])])
def test_conv2d_backprops_match_tensorflow(strides, padding, dilations):
    x = RNG.normal(size=(2, 6, 5, 3)).astype(np.float32)
    f = RNG.normal(size=(3, 2, 3, 4)).astype(np.float32)
    out_shape = tf.nn.conv2d(x, f, strides, padding, dilations=dilations).shape
    seed = RNG.normal(size=tuple(out_shape)).astype(np.float32)
    # TF 2.21 registers no CPU kernel for the V2 ops: its tape gives the same two gradients.
    x_tf, f_tf = tf.constant(x), tf.constant(f)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x_tf, f_tf])
        out = tf.nn.conv2d(x_tf, f_tf, strides, padding, dilations=dilations)
    their_input, their_filter = tape.gradient(out, [x_tf, f_tf], output_gradients=seed)
    ours = gt.conv2d_backprop_input_v2(x, f, seed, strides, padding, dilations=dilations)
    np.testing.assert_allclose(as_array(ours), their_input.numpy(), rtol=1e-4, atol=1e-5)
    ours = gt.conv2d_backprop_filter_v2(x, f, seed, strides, padding, dilations=dilations)
    np.testing.assert_allclose(as_array(ours), their_filter.numpy(), rtol=1e-4, atol=1e-4)


def test_approx_top_k():
    scores = RNG.normal(size=(4, 9)).astype(np.float32)
    values, indices = tf.approx_top_k(scores, 3)
    ours, our_indices = gt.approx_top_k(scores, 3)
    np.testing.assert_array_equal(as_array(ours), values.numpy())
    np.testing.assert_array_equal(our_indices.numpy(), indices.numpy())
    low, low_indices = gt.approx_top_k(scores, 2, is_max_k=False)
    np.testing.assert_array_equal(as_array(low), -tf.approx_top_k(-scores, 2)[0].numpy())
    np.testing.assert_array_equal(low_indices.numpy(), tf.approx_top_k(-scores, 2)[1].numpy())


def test_keras_modules_at_the_top_level():
    """tf.losses/metrics/optimizers/initializers are Keras's modules in TF 2.21; gpuaccel's
    are its Keras face's."""
    assert gt.losses is gt.keras.losses and tf.losses.MeanSquaredError is \
        __import__("keras").losses.MeanSquaredError
    assert gt.metrics is gt.keras.metrics and gt.optimizers is gt.keras.optimizers
    assert gt.initializers is gt.keras.initializers
    y, p = RNG.random((4, 3)).astype(np.float32), RNG.random((4, 3)).astype(np.float32)
    np.testing.assert_allclose(float(gt.losses.MeanSquaredError()(y, p)),
                               float(tf.losses.MeanSquaredError()(y, p)), rtol=1e-6)
    ours, theirs = gt.metrics.MeanAbsoluteError(), tf.metrics.MeanAbsoluteError()
    ours.update_state(y, p)
    theirs.update_state(y, p)
    np.testing.assert_allclose(float(ours.result()), float(theirs.result()), rtol=1e-6)
    np.testing.assert_array_equal(gt.initializers.Constant(2.5)((2, 3)).numpy(),
                                  tf.initializers.Constant(2.5)((2, 3)).numpy())
    w_tf, w = tf.Variable([1.0, -2.0]), gt.Variable([1.0, -2.0])
    tf.optimizers.SGD(0.1).apply_gradients([(tf.constant([0.5, 0.5]), w_tf)])
    gt.optimizers.SGD(0.1).apply_gradients([(gt.constant([0.5, 0.5]), w)])
    np.testing.assert_allclose(w.numpy(), w_tf.numpy(), rtol=1e-6)


# ---- tf.nest ----

Point = collections.namedtuple("Point", ["x", "y"])
NESTED = {"b": [1, (2, 3)], "a": None, "c": Point(4, 5)}


def test_nest_matches_tensorflow():
    assert gt.nest.flatten(NESTED) == tf.nest.flatten(NESTED)
    assert gt.nest.flatten(collections.OrderedDict([("b", 1), ("a", 2)])) == [2, 1]
    assert gt.nest.flatten("abc") == tf.nest.flatten("abc")
    packed = gt.nest.pack_sequence_as(NESTED, list(range(6)))
    assert packed == tf.nest.pack_sequence_as(NESTED, list(range(6)))
    assert isinstance(packed["c"], Point)
    assert gt.nest.map_structure(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]) == \
        tf.nest.map_structure(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)])
    assert gt.nest.map_structure(lambda a, b: a * b, [1, (2, 3)], [1, [2, 3]],
                                 check_types=False) == [1, (4, 9)]
    assert gt.nest.is_nested([1]) and not gt.nest.is_nested(np.zeros(2))
    for first, second, error in (([1, (2, 3)], [1, (2,)], ValueError),
                                 ([1, (2, 3)], (1, (2, 3)), TypeError),
                                 ({"a": 1}, {"b": 1}, ValueError)):
        with pytest.raises(error, match="don't have the same nested structure"):
            tf.nest.assert_same_structure(first, second)
        with pytest.raises(error, match="don't have the same nested structure"):
            gt.nest.assert_same_structure(first, second)
    with pytest.raises(ValueError, match="Could not pack sequence"):
        tf.nest.pack_sequence_as(NESTED, [1, 2])
    with pytest.raises(ValueError, match="Could not pack sequence"):
        gt.nest.pack_sequence_as(NESTED, [1, 2])


# ---- tf.print ----

PRINT_CASES = [
    (lambda m: (m.constant(np.float32([1.5, 2, 3.25])), "hi", m.constant(np.int32(7))), {}),
    (lambda m: (m.constant(np.arange(80, dtype=np.int32).reshape(10, 8)),), {}),
    (lambda m: (m.constant(np.arange(24, dtype=np.int32).reshape(2, 3, 4)), 3.5), {"sep": "|"}),
    (lambda m: (m.constant(np.arange(160, dtype=np.int32).reshape(10, 2, 8)),),
     {"summarize": 2}),
    (lambda m: (m.constant(np.arange(10, dtype=np.int32)),), {"summarize": -1, "end": "<\n"}),
    (lambda m: (m.constant(np.float32([-1.0, 0.5, np.nan, np.inf, 0.1, 1e-7, 123456.7])),
                m.constant(np.float32(2.0))), {}),
    (lambda m: (m.constant(np.array([True, False])), [1, m.constant(np.int32(2)), "s"],
                {"a": m.constant(np.float32(1.0)), "b": (m.constant(np.uint8(3)),)}), {}),
]


@pytest.mark.parametrize("make_args, kwargs", PRINT_CASES,
                         ids=["mixed", "rows-summarized", "3d-sep", "3d-summarize", "all-end",
                              "floats", "structures"])
def test_print_writes_what_tensorflow_writes(make_args, kwargs, capfd):
    import sys
    tf.print(*make_args(tf), output_stream=sys.stdout, **kwargs)
    theirs = capfd.readouterr().out
    ours = io.StringIO()
    gt.print(*make_args(gt), output_stream=ours, **kwargs)
    assert ours.getvalue() == theirs


# The ops above build index and mask tensors from NumPy on the host; with a GPU present they
# must land on the data's device, not the default one (a CPU tensor under a GPU default).
HOST_INDEX_PROBE = """
import json
import numpy as np
import gpuaccel as tf
with tf.device("/CPU:0"):
    c = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    ints = tf.constant(np.int32([3, 1, 3]))
g = tf.constant(np.ones((4, 3), np.float32))
ta = tf.TensorArray(tf.float32, size=2).write(0, c[0])
outs = {
    "default": g, "scatter": tf.tensor_scatter_nd_add(c, [[1], [1]], c[:2]),
    "update": tf.tensor_scatter_nd_update(c, [[0]], c[:1] * 2.0),
    "strided": tf.strided_slice(c, [3], [0], [-2]), "unique": tf.unique(ints).idx,
    "partition": tf.dynamic_partition(c, [0, 1, 0, 1], 2)[1],
    "stitch": tf.dynamic_stitch([[0, 2], [1]], [c[:2], c[2:3]]),
    "diag": tf.linalg.diag(c[0]), "set_diag": tf.linalg.set_diag(c, c[0]),
    "band": tf.linalg.band_part(c, 0, 0), "tril": tf.keras.ops.tril(c),
    "argmax": tf.nn.max_pool_with_argmax(tf.reshape(c, (1, 2, 6, 1)), 2, 2, "VALID")[1],
    "tensor_array": ta.stack(),
}
print(json.dumps({k: str(v.device) for k, v in outs.items()}))
"""


def test_host_built_indices_follow_the_data_to_its_device():
    from test_library_backend import run_with_fake
    devices = run_with_fake(HOST_INDEX_PROBE)
    assert devices.pop("default") == "cuda:0"
    assert devices == {name: "cpu" for name in devices}
