"""Property-based fuzzing of the ways data enters gpuaccel, added after the first fuzz suites:
NumPy arrays of every dtype, byte order and memory layout (Fortran order, negative strides,
unaligned, read-only) turned into tensors, ``from_numpy`` views and ``Dataset`` slices;
``predict``/``predict_on_batch``/``evaluate``/``model(x)`` on such arrays with odd batch sizes;
chains of ``Dataset`` transformations with odd arguments; ``fit`` on a generator whose batches
change shape in the middle of an epoch.

The contract: the numbers that come out are the numbers that went in (against NumPy's own
conversion), or a typed error without pybind11 text; never a crash, a hang or a silently
different value. Every example runs in an isolated worker (crash_isolation.py); the seed is
fixed so every run tries the same examples, after the stored failures in hypothesis-db.
"""
import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given, seed, settings, strategies as st

from crash_isolation import isolated  # noqa: F401 -- the module-scoped worker fixture

TYPED_ERRORS = ("ValueError", "TypeError", "IndexError", "NotImplementedError", "OpError")
PYBIND_TEXT = ("incompatible function arguments", "Unable to cast", "incompatible constructor")
FUZZ = settings()  # the profile's budget (conftest.py): 100 examples in CI, 1500 with --hypothesis-profile=long
FUZZ_SEED = 20261124

# NumPy dtype -> the tensor dtype gpuaccel.tensor makes of it (None: refused).
TENSOR_DTYPE = {"float32": "float32", "float16": "float16", "float64": "float32",
                "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool",
                "int8": "int8", "int16": "int16", "uint16": None, "uint32": None, "uint64": None,
                "complex64": None, "object": None, "U1": None, "datetime64[D]": None}
# ... and the dtype a Dataset batches it as (the integer widths tf.data would not lose).
# Strings ("bytes") stay host strings, UTF-8 bytes as tf.data's string tensors give them.
DATASET_DTYPE = dict(TENSOR_DTYPE, uint16="int32",
                     uint32="int64", uint64="int64", U1="bytes")
BYTE_ORDERS = ("=", "<", ">")
LAYOUTS = ("C", "F", "reversed", "strided", "unaligned")


def _assert_typed(error):
    names = [c.__name__ for c in type(error).__mro__]
    assert any(n in names for n in TYPED_ERRORS), f"untyped {type(error).__name__}: {error}"
    assert not any(t in str(error) for t in PYBIND_TEXT), f"pybind11 text leaked: {error}"


def make_array(dtype, byte_order, shape, layout, read_only, with_nan=False):
    """An array of small exact values (so float16 holds them) in the asked dtype, byte order
    and memory layout."""
    count = math.prod(shape)
    values = np.arange(count) % 7 - (0 if dtype in ("bool", "uint8", "uint16", "uint32",
                                                    "uint64") else 3)
    array = values.astype(np.dtype(dtype)).reshape(shape)
    if array.dtype.kind in "fiuc" and array.dtype.itemsize > 1:
        array = array.astype(array.dtype.newbyteorder(byte_order))
    if with_nan and array.dtype.kind == "f" and count:
        array.flat[count // 2] = np.nan
    if layout == "F":
        array = np.asfortranarray(array)
    elif layout == "reversed" and array.ndim:
        array = np.ascontiguousarray(array[::-1])[::-1]  # same values, negative stride
    elif layout == "strided" and array.ndim:
        doubled = np.repeat(array, 2, axis=0)
        array = doubled[::2]
    elif layout == "unaligned" and array.dtype != object:
        raw = np.zeros(array.nbytes + 1, np.uint8)
        view = raw[1:].view(array.dtype).reshape(array.shape)
        view[...] = array
        array = view
    if read_only:
        array.flags.writeable = False
    return array


def _native(array, dtype):
    """NumPy's own conversion: the reference for what a tensor of ``dtype`` must hold."""
    return np.array(array, dtype=np.dtype(dtype))


array_specs = st.tuples(
    st.sampled_from(sorted(TENSOR_DTYPE)), st.sampled_from(BYTE_ORDERS),
    st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple),
    st.sampled_from(LAYOUTS), st.booleans())


def check_array_conversions(spec):
    import gpuaccel
    array = make_array(*spec)
    dtype = spec[0]

    # gpuaccel.tensor: a copy with the same numbers, whatever the layout or byte order.
    try:
        t = gpuaccel.tensor(array)
    except Exception as error:  # noqa: BLE001
        _assert_typed(error)
        assert TENSOR_DTYPE[dtype] is None, f"{array.dtype} refused: {error}"
    else:
        assert TENSOR_DTYPE[dtype] is not None, f"{array.dtype} accepted as {t.dtype}"
        assert t.dtype.name == TENSOR_DTYPE[dtype]
        np.testing.assert_array_equal(t.numpy(), _native(array, TENSOR_DTYPE[dtype]))

    # from_numpy: shares only what it can share as is; anything else is a clear refusal.
    shareable = (TENSOR_DTYPE[dtype] is not None and
                 all(s >= 0 and s % array.itemsize == 0 for s in array.strides) and
                 array.dtype.isnative and array.flags.writeable)
    try:
        shared = gpuaccel.from_numpy(array)
    except Exception as error:  # noqa: BLE001
        _assert_typed(error)
        assert not shareable, f"from_numpy refused a shareable {array.dtype} array: {error}"
    else:
        assert shareable, f"from_numpy shared an array it cannot ({array.dtype}, {spec})"
        np.testing.assert_array_equal(shared.numpy(), array)
        if array.size and array.dtype.name != "bfloat16":  # shared both ways (torch.from_numpy;
            # a bfloat16 tensor's .numpy() is a copy: NumPy has no bfloat16 buffer format)
            assert shared.numpy().__array_interface__["data"][0] == array.ctypes.data

    # Dataset.from_tensor_slices: the rows, batched, are the array's rows.
    try:
        batches = list(gpuaccel.data.Dataset.from_tensor_slices(array).batch(3)
                       .as_numpy_iterator())
    except Exception as error:  # noqa: BLE001
        _assert_typed(error)
        assert DATASET_DTYPE[dtype] is None or array.ndim == 0, f"refused: {error}"
        return "rejected"
    if dtype == "object" and array.size == 0 and array.ndim > 0:
        # An empty object array is an empty string Dataset (strings travel as bytes), as TF
        # makes a tf.string one of it; a non-empty one of non-strings is refused above.
        assert all(np.asarray(b).size == 0 for b in batches)
        return "ok"
    assert DATASET_DTYPE[dtype] is not None and array.ndim > 0
    if DATASET_DTYPE[dtype] == "bytes":
        expected = np.vectorize(str.encode, otypes=[object])(array)
    else:
        expected = _native(array, DATASET_DTYPE[dtype])
    got = np.concatenate(batches) if batches else expected[:0]
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected)
    return "ok"


@FUZZ
@seed(FUZZ_SEED)
@given(array_specs)
# Regressions: arrays in the other byte order were read as native bytes (1.0 came back as
# 4.6e-41; float64 as zeros through a Dataset); uint64 beyond int64 wrapped to negative.
@example(("float32", ">", (2, 3), "C", False))
@example(("float64", ">", (4,), "C", False))
@example(("int64", ">", (3,), "reversed", True))
@example(("int8", "=", (5,), "C", False))
def test_arrays_become_tensors_with_their_values(isolated, spec):
    isolated.call("test_fuzz_data", "check_array_conversions", spec)


def test_slice_steps_beyond_int64_index_as_numpy(isolated):
    # t[::2**70] leaked the slice binding's argument text (the step did not fit in int64).
    outcome = isolated.run(
        "import numpy as np, gpuaccel\n"
        "a = np.arange(12).reshape(3, 4)\nt = gpuaccel.tensor(a)\n"
        "for key in [np.s_[::2**70], np.s_[1::5], np.s_[:, 1::2**64]]:\n"
        "    np.testing.assert_array_equal(t[key].numpy(), a[key])\n"
        "t[:, ::2**70] = 7\na[:, ::2**70] = 7\n"
        "np.testing.assert_array_equal(t.numpy(), a)\n")
    assert outcome.error_type is None, outcome


def test_uint64_slices_beyond_int64_are_refused_not_wrapped(isolated):
    outcome = isolated.run(
        "import numpy as np, gpuaccel\n"
        "list(gpuaccel.data.Dataset.from_tensor_slices(np.array([1, 2**63], np.uint64)))")
    assert outcome.error_type == "ValueError", outcome
    assert "uint64" in outcome.message and "9223372036854775807" in outcome.message


# ---- predict / predict_on_batch / evaluate / model(x) on odd arrays ----

KERNEL = np.array([[1.0, -2.0], [0.5, 0.25], [-1.0, 3.0]], np.float32)
BIAS = np.array([0.5, -1.0], np.float32)


def _dense_model():
    from gpuaccel import keras
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.set_weights([KERNEL, BIAS])
    model.compile(optimizer="sgd", loss="mse")
    return model


def check_inference(spec, rows, batch_size):
    dtype, byte_order, layout, read_only, with_nan = spec
    x = make_array(dtype, byte_order, (rows, 3), layout, read_only, with_nan)
    numeric = x.dtype.kind in "fiub"
    batch_size_ok = batch_size is None or (isinstance(batch_size, int) and
                                           not isinstance(batch_size, bool) and batch_size > 0)
    expected = (_native(x, "float64") @ KERNEL.astype(np.float64) + BIAS) if numeric else None
    model = _dense_model()
    calls = {
        "predict": lambda: model.predict(x, batch_size=batch_size, verbose=0),
        "predict_on_batch": lambda: model.predict_on_batch(x),
        "call": lambda: model(x).numpy(),
        "evaluate": lambda: model.evaluate(x, np.zeros((rows, 2), np.float32),
                                           batch_size=batch_size, verbose=0),
    }
    for name, run in calls.items():
        uses_batch_size = name in ("predict", "evaluate")
        try:
            out = run()
        except Exception as error:  # noqa: BLE001
            _assert_typed(error)
            assert (not numeric or rows == 0 or (uses_batch_size and not batch_size_ok)), \
                f"{name} refused {x.dtype} {spec} rows={rows} batch_size={batch_size!r}: {error}"
            assert not isinstance(error, StopIteration)
            continue
        assert numeric and (batch_size_ok or not uses_batch_size), \
            f"{name} accepted {x.dtype} batch_size={batch_size!r}"
        if name == "evaluate":
            reference = np.mean(expected ** 2) if rows else None
            assert rows and np.isclose(out, reference, rtol=1e-4, equal_nan=True), (out, reference)
        else:
            assert out.shape == (rows, 2), (name, out.shape)
            np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5, equal_nan=True)
    return "ok"


@FUZZ
@seed(FUZZ_SEED)
@given(st.tuples(st.sampled_from(sorted(TENSOR_DTYPE)), st.sampled_from(BYTE_ORDERS),
                 st.sampled_from(LAYOUTS), st.booleans(), st.booleans()),
       st.integers(0, 9),
       st.one_of(st.none(), st.integers(-2, 12), st.sampled_from([2**40, 2**63, True]),
                 st.floats(0, 4)))
# Regressions: read-only arrays were refused ("array is not writeable"); predict_on_batch on
# zero rows raised a bare StopIteration.
@example(("float32", "=", "C", True, False), 5, None)
@example(("float32", "=", "C", False, False), 0, None)
@example(("float32", ">", "F", True, True), 4, 3)
def test_inference_on_odd_arrays_matches_numpy(isolated, spec, rows, batch_size):
    isolated.call("test_fuzz_data", "check_inference", spec, rows, batch_size)


# ---- Dataset transformation chains against a reference over Python lists ----

ODD_INT = st.one_of(st.integers(-3, 7), st.sampled_from([2**63, 2**70, True]),
                    st.floats(0, 3), st.none(), st.just("2"))
STEPS = st.lists(st.tuples(st.sampled_from(["batch", "batch_drop", "repeat", "take", "skip",
                                            "prefetch", "shuffle", "map", "unbatch"]),
                           ODD_INT), max_size=4)
LIMIT = 40  # elements read from a pipeline (a repeat() without take is infinite)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _reference(elements, step, arg):
    """What tf.data yields, on lists of NumPy values; None when the argument is invalid."""
    if step in ("batch", "batch_drop"):
        if not _is_int(arg) or not 1 <= arg < 2**63:
            return None
        chunks = [elements[i:i + arg] for i in range(0, len(elements), arg)]
        if step == "batch_drop":
            chunks = [c for c in chunks if len(c) == arg]
        return [np.stack(c) for c in chunks]
    if step == "unbatch":
        if any(np.ndim(e) == 0 for e in elements):
            return None
        return [row for e in elements for row in e]
    if step == "map":
        return [e + 1 for e in elements]
    if arg is None and step == "repeat":
        arg = -1
    if not _is_int(arg) or arg >= 2**63:
        return None
    if step == "repeat":
        if arg < -1:
            return None
        count = LIMIT if arg == -1 else arg
        return (elements * count)[:LIMIT] if elements else []
    if step in ("take", "skip"):
        if arg < -1:
            return None
        if step == "take":
            return elements if arg == -1 else elements[:arg]
        return [] if arg == -1 else elements[arg:]
    if step == "prefetch":
        return elements if arg >= -1 else None
    if step == "shuffle":
        return elements if arg >= 1 else None  # compared as a multiset
    raise AssertionError(step)


def _apply(dataset, step, arg):
    if step == "batch_drop":
        return dataset.batch(arg, drop_remainder=True)
    if step == "map":
        return dataset.map(lambda e: e + 1)
    if step == "unbatch":
        return dataset.unbatch()
    if step == "shuffle":
        return dataset.shuffle(arg, seed=3)
    return getattr(dataset, step)(arg)


def _source(kind, size):
    """The chain's first dataset: slices of an array, or Dataset.range (planned as row indices,
    or streamed as it is for ranges too long to plan)."""
    import gpuaccel
    from gpuaccel.data import dataset as dataset_module
    if kind == "slices":
        return gpuaccel.data.Dataset.from_tensor_slices(np.arange(size, dtype=np.int64))
    dataset_module._RangeDataset._PLANNED_RANGE = 1 << 22 if kind == "range" else 0
    return gpuaccel.data.Dataset.range(size)


def check_dataset_chain(size, steps, source="slices"):
    dataset = _source(source, size)
    expected = [np.int64(v) for v in range(size)]
    shuffled = False
    for step, arg in steps:
        reference = _reference(expected, step, arg)
        try:
            dataset = _apply(dataset, step, arg)
            got = list(itertools.islice(dataset.as_numpy_iterator(), LIMIT))
        except Exception as error:  # noqa: BLE001
            _assert_typed(error)
            assert reference is None, f"{step}({arg!r}) refused: {error}"
            return "rejected"
        assert reference is not None, f"{step}({arg!r}) accepted"
        expected = reference[:LIMIT]
        if step == "repeat" and len(reference) >= LIMIT:
            # an infinite (or long) dataset: later steps see only its first LIMIT elements
            dataset = dataset.take(LIMIT)
        shuffled = shuffled or step == "shuffle"
        assert len(got) == len(expected), (step, arg, len(got), len(expected))
        if shuffled:
            key = [np.asarray(e).tolist() for e in got]
            assert sorted(map(repr, key)) == sorted(repr(np.asarray(e).tolist())
                                                    for e in expected)
        else:
            for g, e in zip(got, expected):
                np.testing.assert_array_equal(g, e)
    return "ok"


@FUZZ
@seed(FUZZ_SEED)
@given(st.integers(0, 9), STEPS, st.sampled_from(["slices", "range", "range_streamed"]))
@example(3, [("take", 2**70)], "slices")      # was islice's "Stop argument ..." ValueError
@example(3, [("prefetch", 2**70)], "slices")  # was the Prefetcher binding's argument text
def test_dataset_chains_match_a_list_reference(isolated, size, steps, source):
    isolated.call("test_fuzz_data", "check_dataset_chain", size, steps, source)


# ---- Dataset.range: lazy, exact over all of int64, odd bounds refused ----

RANGE_BOUND = st.one_of(st.integers(-12, 12), st.sampled_from(
    [10**12, -10**12, 2**62, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 2**70, True, 2.5, "3", None]))


def _range_reference(args):
    """Python's range (arbitrary precision) where tf.data accepts the bounds, else None."""
    if not 1 <= len(args) <= 3 or not all(_is_int(a) and -2**63 <= a < 2**63 for a in args):
        return None
    if len(args) == 3 and args[2] == 0:
        return None
    return range(*args)


def check_range(args, take, batch):
    import tracemalloc

    import gpuaccel
    reference = _range_reference(args)
    tracemalloc.start()
    try:
        dataset = gpuaccel.data.Dataset.range(*args)
        cardinality = dataset.cardinality()
        got = [b.tolist() for b in dataset.take(take).batch(batch).as_numpy_iterator()]
    except Exception as error:  # noqa: BLE001
        _assert_typed(error)
        assert reference is None, f"range{tuple(args)} refused: {error}"
        return "rejected"
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert reference is not None, f"range{tuple(args)} accepted"
    start, stop, step = reference.start, reference.stop, reference.step
    assert cardinality == max(0, -(-(stop - start) // step)), (args, cardinality)
    first = [start + i * step for i in range(min(take, cardinality))]  # len(range) stops at 2**63
    assert got == [first[i:i + batch] for i in range(0, len(first), batch)], (args, got)
    # Nothing proportional to the range's length was made (its first batches only).
    assert peak < 1 << 20, f"range{tuple(args)} took {peak} bytes to read {take} elements"
    return "ok"


@FUZZ
@seed(FUZZ_SEED)
@given(st.lists(RANGE_BOUND, max_size=4), st.integers(0, 7), st.integers(1, 3))
# Regression: range(10**12) made the whole int64 array first (a MemoryError of 7.28 TiB).
@example([10**12], 5, 2)
@example([-2**63, 2**63 - 1], 3, 2)  # nearly 2**64 elements: len() of a range overflows
@example([2.5], 3, 1)  # int() read 2.5 as 2
def test_range_is_lazy_and_exact(isolated, args, take, batch):
    isolated.call("test_fuzz_data", "check_range", args, take, batch)


def test_python_generators_get_a_pointer_to_from_generator(isolated):
    # NumPy made an object array of the generator: "x has dtype object, which is not numeric".
    outcome = isolated.run(
        "import numpy as np\nfrom gpuaccel import keras\n"
        "model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])\n"
        "model.compile(optimizer='sgd', loss='mse')\n"
        "batches = iter([(np.zeros((2, 3)), np.zeros((2, 2)))])\n"
        "model.fit(batches, steps_per_epoch=1, verbose=0)")
    assert outcome.error_type == "TypeError" and "from_generator" in outcome.message, outcome


def test_dataset_range_step_zero_is_a_clear_error(isolated):
    outcome = isolated.run("import gpuaccel\ngpuaccel.data.Dataset.range(0, 10, 0)")
    assert outcome.error_type == "ValueError" and "step must not be 0" in outcome.message


def test_padded_batch_takes_a_tuple_as_one_components_shape(isolated):
    # TF reads padded_shapes=(3,) as the shape of a one-component dataset; it raised
    # "'int' object is not iterable", and a shape of the wrong rank an IndexError.
    outcome = isolated.run(
        "import numpy as np, gpuaccel\n"
        "ds = gpuaccel.data.Dataset.from_tensor_slices(np.ones((4, 2), np.float32))\n"
        "result = [b.shape for b in ds.padded_batch(2, padded_shapes=(3,)).as_numpy_iterator()]")
    assert outcome.value == "[(2, 3), (2, 3)]", outcome
    outcome = isolated.run(
        "import numpy as np, gpuaccel\n"
        "ds = gpuaccel.data.Dataset.from_tensor_slices(np.ones((4, 2), np.float32))\n"
        "list(ds.padded_batch(2, padded_shapes=(3, 3)))")
    assert outcome.error_type == "ValueError" and "must list 1 sizes" in outcome.message, outcome


def test_dataset_sample_weights_are_applied_not_dropped(isolated):
    # A Dataset's third component (x, y, sample_weight) used to be dropped silently, training
    # on other weights than the ones given (then refused); now it weighs the loss as Keras's.
    outcome = isolated.run(
        "import numpy as np, gpuaccel\nfrom gpuaccel import keras\n"
        "model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])\n"
        "model.compile(optimizer='sgd', loss='mse')\n"
        "x, y = np.ones((4, 3)), np.zeros((4, 2))\n"
        "weighted = gpuaccel.data.Dataset.from_tensor_slices((x, y, np.full(4, 5.0))).batch(2)\n"
        "plain = gpuaccel.data.Dataset.from_tensor_slices((x, y)).batch(2)\n"
        "result = round(model.evaluate(weighted, verbose=0) / model.evaluate(plain, verbose=0), 4)")
    assert outcome.value == "5.0", outcome


# ---- fit on a generator whose batches change in the middle of an epoch ----

batch_shapes = st.lists(st.tuples(st.integers(0, 3), st.sampled_from([3, 3, 3, 4, 1]),
                                  st.integers(0, 3), st.sampled_from([2, 2, 2, 1, 3])),
                        min_size=1, max_size=4)


def check_fit_on_changing_batches(shapes, prefetch):
    import gpuaccel
    model = _dense_model()
    batches = [(np.linspace(-1, 1, rx * f, dtype=np.float32).reshape(rx, f),
                np.full((ry, c), 0.5, np.float32)) for rx, f, ry, c in shapes]
    # labels of width 1 broadcast against the 2 outputs in the squared error, as in Keras
    consistent = all(rx == ry and f == 3 and c in (1, 2) for rx, f, ry, c in shapes)
    signature = (gpuaccel.TensorSpec((None, None), "float32"),
                 gpuaccel.TensorSpec((None, None), "float32"))
    dataset = gpuaccel.data.Dataset.from_generator(lambda: iter(batches),
                                                   output_signature=signature)
    if prefetch:
        dataset = dataset.prefetch(2)
    try:
        model.fit(dataset, epochs=2, verbose=0)
    except Exception as error:  # noqa: BLE001
        _assert_typed(error)
        assert not consistent or all(rx == 0 for rx, _, _, _ in shapes), \
            f"consistent batches refused: {error}"
        return "rejected"
    assert consistent, f"fit trained on inconsistent batches {shapes}"
    for weight in model.get_weights():
        assert np.all(np.isfinite(weight)), f"an empty or odd batch made the weights {weight}"
    return "ok"


@FUZZ
@seed(FUZZ_SEED)
@given(batch_shapes, st.booleans())
def test_fit_on_batches_that_change_mid_epoch(isolated, shapes, prefetch):
    isolated.call("test_fuzz_data", "check_fit_on_changing_batches", shapes, prefetch)


@pytest.mark.parametrize("code", [
    "model(x)",
    "model.predict(x, verbose=0)",
    "model.evaluate(x, y, verbose=0)",
    "model.fit(x, y, verbose=0)",
])
def test_read_only_arrays_are_accepted(isolated, code):
    # np.load(mmap_mode='r') and broadcast views are read-only; Keras takes them. They used to
    # fail with NumPy's "array is not writeable".
    outcome = isolated.run(
        "import numpy as np\nfrom gpuaccel import keras\n"
        "model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])\n"
        "model.compile(optimizer='sgd', loss='mse')\n"
        "x = np.zeros((2, 3), np.float32)\n"
        "y = np.zeros((2, 2), np.float32)\n"
        "x.flags.writeable = y.flags.writeable = False\n"
        f"result = {code}\n")
    assert outcome.error_type is None, outcome


# ---- compile's arguments, before the data reaches fit ----

def check_compile(optimizer, loss, metrics):
    from gpuaccel import keras
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    try:
        model.compile(optimizer=optimizer, loss=loss, metrics=metrics)
        history = model.fit(np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32), verbose=0)
    except Exception as error:  # noqa: BLE001
        _assert_typed(error)
        return "rejected"
    assert all(np.isfinite(v) for v in history.history["loss"]), history.history
    return "ok"


COMPILE_VALUES = st.one_of(st.none(), st.integers(-1, 2), st.sampled_from(
    ["sgd", "adam", "rmsprop", "mse", "mae", "accuracy", "bogus", "", ["mae"], ["bogus"], [5],
     ("mse", "mae"), {"out": "mae"}]))


@FUZZ
@seed(FUZZ_SEED)
@given(COMPILE_VALUES, COMPILE_VALUES, COMPILE_VALUES)
def test_compile_arguments_give_typed_errors_or_train(isolated, optimizer, loss, metrics):
    isolated.call("test_fuzz_data", "check_compile", optimizer, loss, metrics)


def test_compile_metrics_that_are_no_list_name_the_argument(isolated):
    # metrics=5 raised "'int' object is not iterable".
    outcome = isolated.run(
        "from gpuaccel import keras\n"
        "model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])\n"
        "model.compile(optimizer='sgd', loss='mse', metrics=5)")
    assert outcome.error_type == "ValueError" and "metrics=5" in outcome.message, outcome
