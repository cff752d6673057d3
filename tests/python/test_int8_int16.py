"""int8 and int16 (torch.int8/int16/short, tf.int8/int16) against NumPy, TensorFlow and PyTorch
(torch_reference): creation and NumPy sharing, two's-complement wrap-around of the arithmetic,
the promotion table (uint8 with int8 is int16, as PyTorch), reductions (sums in int64),
comparisons, sort, bitwise ops, casts (truncating and saturating), Python numbers that do not
fit, and the file formats that carry these dtypes (torch.save, tf.io.serialize_tensor,
tf.io.decode_raw, tf.data from arrays)."""

import numpy as np
import pytest
import tensorflow as tf_real

import gpuaccel as tf
import gpuaccel.torch as torch
import torch_reference
from gpuaccel import errors

RNG = np.random.default_rng(816)
A8 = RNG.integers(-128, 128, (4, 6)).astype(np.int8)
B8 = RNG.integers(-128, 128, (4, 6)).astype(np.int8)
A16 = RNG.integers(-32768, 32768, (4, 6)).astype(np.int16)
B16 = RNG.integers(-32768, 32768, (4, 6)).astype(np.int16)
U8 = RNG.integers(0, 256, (4, 6)).astype(np.uint8)
V8 = RNG.integers(0, 256, (4, 6)).astype(np.uint8)
NARROW = ("int8", "int16")


def test_the_dtype_objects_of_both_faces():
    assert torch.int8 is tf.int8 and torch.int16 is tf.int16 is torch.short
    for name, np_type, size in (("int8", np.int8, 1), ("int16", np.int16, 2)):
        d = tf.as_dtype(name)
        assert d.name == name and d.itemsize == size and not d.is_floating_point
        assert d == np_type and d.as_numpy_dtype is np_type
        assert tf.as_dtype(np.dtype(name)) is d
        assert d.name == tf_real.as_dtype(name).name
    assert tf.as_dtype("short") is tf.int16


def test_numpy_arrays_keep_their_dtype_and_from_numpy_shares_them():
    for array in (A8, A16):
        assert tf.constant(array).dtype.name == tf_real.constant(array).dtype.name
        t = torch.tensor(array)
        assert t.dtype.name == array.dtype.name
        np.testing.assert_array_equal(t.numpy(), array)
        assert t.numpy().dtype == array.dtype
    shared = A16.copy()
    t = torch.from_numpy(shared)
    shared[0, 0] = 1234
    assert t.dtype == torch.int16 and int(t[0, 0]) == 1234
    t[1, 1] = -7
    assert shared[1, 1] == -7


def test_creation_functions_and_legacy_constructors_match_pytorch():
    ref = torch_reference.run(
        "out['full'] = torch.full((2, 3), -5, dtype=torch.int8).numpy()\n"
        "out['arange'] = torch.arange(-3, 9, 2, dtype=torch.int16).numpy()\n"
        "out['char'] = torch.CharTensor([1, -2]).numpy()\n"
        "out['short'] = torch.ShortTensor([300, -2]).numpy()\n"
        "out['type8'] = torch.ones(2, dtype=torch.int8).type()\n"
        "out['type16'] = torch.ones(2, dtype=torch.short).type()\n"
        "out['typed'] = torch.tensor([2.9, -300.0]).type('torch.ShortTensor').numpy()\n"
        "out['iinfo'] = [torch.iinfo(torch.int8).min, torch.iinfo(torch.int8).max,\n"
        "                torch.iinfo(torch.int16).min, torch.iinfo(torch.int16).max,\n"
        "                torch.iinfo(torch.int16).bits]\n"
        "out['methods'] = [str(torch.tensor([1.7, -1.7]).char().dtype),\n"
        "                  str(torch.tensor([1.7]).short().dtype)]\n"
        "out['char_values'] = torch.tensor([1.7, -1.7, 127.9]).char().numpy()\n")
    full = torch.full((2, 3), -5, dtype=torch.int8)
    assert full.dtype == torch.int8
    np.testing.assert_array_equal(full.numpy(), ref["full"])
    arange = torch.arange(-3, 9, 2, dtype=torch.int16)
    assert arange.dtype == torch.int16
    np.testing.assert_array_equal(arange.numpy(), ref["arange"])
    np.testing.assert_array_equal(torch.CharTensor([1, -2]).numpy(), ref["char"])
    np.testing.assert_array_equal(torch.ShortTensor([300, -2]).numpy(), ref["short"])
    assert torch.ones(2, dtype=torch.int8).type() == ref["type8"]
    assert torch.ones(2, dtype=torch.short).type() == ref["type16"]
    typed = torch.tensor([2.9, -300.0]).type("torch.ShortTensor")
    assert typed.dtype == torch.int16
    np.testing.assert_array_equal(typed.numpy(), ref["typed"])
    assert [torch.iinfo(torch.int8).min, torch.iinfo(torch.int8).max,
            torch.iinfo(torch.int16).min, torch.iinfo(torch.int16).max,
            torch.iinfo(torch.int16).bits] == ref["iinfo"]
    assert [str(torch.tensor([1.7, -1.7]).char().dtype).replace("gpuaccel", "torch"),
            str(torch.tensor([1.7]).short().dtype).replace("gpuaccel", "torch")] == ref["methods"]
    np.testing.assert_array_equal(torch.tensor([1.7, -1.7, 127.9]).char().numpy(),
                                  ref["char_values"])


ARITHMETIC = ["a + b", "a - b", "a * b", "-a", "abs(a)", "a // b_nonzero", "a % b_nonzero",
              "a / b_nonzero", "torch.maximum(a, b)", "torch.minimum(a, b)", "a == b", "a < b",
              "torch.where(a > b, a, b)", "a & b", "a | b", "a ^ b", "~a", "a << 1", "a >> 2",
              "a * 3", "a + 1"]


@pytest.mark.parametrize("name", NARROW + ("uint8",))
def test_arithmetic_wraps_and_matches_pytorch(name):
    # uint8 computes in int32 and wraps back as int8/int16 do (it used to be refused)
    a, b = {"int8": (A8, B8), "int16": (A16, B16), "uint8": (U8, V8)}[name]
    b_nonzero = np.where(b == 0, 1, b).astype(b.dtype)
    snippet = "".join(f"out[{i}] = ({e}).numpy()\n" for i, e in enumerate(ARITHMETIC))
    snippet = ("a, b, b_nonzero = torch.from_numpy(a), torch.from_numpy(b), "
               "torch.from_numpy(b_nonzero)\nout = {}\n" + snippet +
               "out = {str(k): v for k, v in out.items()}\n")
    ref = torch_reference.run(snippet, a=a, b=b, b_nonzero=b_nonzero)
    scope = {"torch": torch, "a": torch.tensor(a), "b": torch.tensor(b),
             "b_nonzero": torch.tensor(b_nonzero)}
    for i, expression in enumerate(ARITHMETIC):
        ours = eval(expression, scope).numpy()
        theirs = ref[str(i)]
        assert ours.dtype == theirs.dtype, (expression, ours.dtype, theirs.dtype)
        if ours.dtype.kind == "f":
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, err_msg=expression)
        else:
            np.testing.assert_array_equal(ours, theirs, err_msg=expression)


def test_overflow_wraps_as_twos_complement():
    # PyTorch and NumPy wrap integer overflow; so does TF's add on the CPU.
    x = torch.tensor(np.array([127, -128, 100], np.int8))
    np.testing.assert_array_equal((x + torch.tensor(np.array([1, -1, 100], np.int8))).numpy(),
                                  np.array([-128, 127, -56], np.int8))
    np.testing.assert_array_equal((-x).numpy(), np.array([-127, -128, -100], np.int8))
    y = torch.tensor(np.array([32767], np.int16))
    assert int((y + torch.tensor(np.array([1], np.int16)))[0]) == -32768


def test_the_promotion_table_is_pytorchs():
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
             "float32", "float64"]
    ref = torch_reference.run(
        "names = " + repr(names) + "\n"
        "out['table'] = [[str(torch.promote_types(getattr(torch, a), getattr(torch, b)))[6:]\n"
        "                 for b in names] for a in names]\n"
        "out['scalar'] = [str((torch.ones(2, dtype=torch.int8) + 1).dtype)[6:],\n"
        "                 str((torch.ones(2, dtype=torch.int16) * 2.5).dtype)[6:],\n"
        "                 str((torch.ones(2, dtype=torch.int8) + torch.tensor(3)).dtype)[6:]]\n")
    ours = [[torch.promote_types(getattr(torch, a), getattr(torch, b)).name for b in names]
            for a in names]
    assert ours == ref["table"]
    assert [(torch.ones(2, dtype=torch.int8) + 1).dtype.name,
            (torch.ones(2, dtype=torch.int16) * 2.5).dtype.name,
            (torch.ones(2, dtype=torch.int8) + torch.tensor(3)).dtype.name] == ref["scalar"]
    # uint8 with int8: neither holds the other, both fit in int16
    mixed = torch.tensor(U8) + torch.tensor(A8)
    assert mixed.dtype == torch.int16
    np.testing.assert_array_equal(mixed.numpy(), U8.astype(np.int16) + A8.astype(np.int16))


def test_a_python_number_that_does_not_fit_is_refused():
    x = torch.tensor(A8)
    with pytest.raises(errors.InvalidArgumentError, match="does not fit in int8"):
        x + 300
    with pytest.raises(errors.InvalidArgumentError, match="does not fit in int16"):
        torch.tensor(A16) * 40000
    assert (x + 127).dtype == torch.int8  # in range: stays int8, wraps as PyTorch


REDUCTIONS = ["a.sum()", "a.sum(0)", "a.sum(1, keepdim=True)", "a.max()", "a.min(0).values",
              "a.argmax(1)", "a.argmin()", "a.cumsum(1)", "a.prod(1)",
              "a.sort(dim=1, stable=True).values",
              "a.sort(dim=0, descending=True, stable=True).indices",
              "a.topk(2, 1).values", "torch.unique(a)", "a.flip(0)", "a.t().contiguous()"]


@pytest.mark.parametrize("name", NARROW)
def test_reductions_sort_and_shape_ops_match_pytorch(name):
    a = A8 if name == "int8" else A16
    snippet = ("a = torch.from_numpy(a)\n" +
               "".join(f"out['{i}'] = ({e}).numpy()\n" for i, e in enumerate(REDUCTIONS)))
    ref = torch_reference.run(snippet, a=a)
    x = torch.tensor(a)
    for i, expression in enumerate(REDUCTIONS):
        ours = eval(expression, {"torch": torch, "a": x}).numpy()
        theirs = ref[str(i)]
        assert ours.dtype == theirs.dtype, (expression, ours.dtype, theirs.dtype)
        np.testing.assert_array_equal(ours, theirs, err_msg=expression)


def test_tensorflow_face_ops_match_tensorflow():
    for a, b in ((A8, B8), (A16, B16)):
        for fn in ("add", "subtract", "multiply", "maximum", "minimum", "equal", "less"):
            ours = getattr(tf.math, fn)(tf.constant(a), tf.constant(b))
            theirs = getattr(tf_real.math, fn)(tf_real.constant(a), tf_real.constant(b))
            assert ours.dtype.name == theirs.dtype.name, fn
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=fn)
        # TF's sum and product wrap in the input's dtype
        for fn in ("reduce_max", "reduce_min", "reduce_sum", "reduce_prod"):
            ours = getattr(tf.math, fn)(tf.constant(a), axis=1)
            theirs = getattr(tf_real.math, fn)(tf_real.constant(a), axis=1)
            assert ours.dtype.name == theirs.dtype.name, fn
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=fn)
        np.testing.assert_array_equal(tf.argmax(tf.constant(a), axis=1).numpy(),
                                      tf_real.argmax(tf_real.constant(a), axis=1).numpy())
        np.testing.assert_array_equal(tf.sort(tf.constant(a), axis=0).numpy(),
                                      tf_real.sort(tf_real.constant(a), axis=0).numpy())


def test_casts_truncate_and_saturate_as_tensorflow():
    floats = np.array([-3.7, -0.5, 0.5, 2.9, 100.2, -128.0, 127.0], np.float32)
    for name in NARROW:
        ours = tf.cast(tf.constant(floats), name)
        theirs = tf_real.cast(tf_real.constant(floats), name)
        assert ours.dtype.name == name
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    wide = np.array([-70000, -200, -1, 0, 130, 40000, 2 ** 31 - 1], np.int32)
    for name in NARROW:
        ours = tf.saturate_cast(tf.constant(wide), name)
        theirs = tf_real.dtypes.saturate_cast(tf_real.constant(wide), name)
        assert ours.dtype.name == name
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    # int8 -> int32 and back: exact both ways; int16 -> int8 wraps as NumPy's astype
    np.testing.assert_array_equal(tf.cast(tf.cast(tf.constant(A8), "int32"), "int8").numpy(), A8)
    np.testing.assert_array_equal(torch.tensor(A16).to(torch.int8).numpy(), A16.astype(np.int8))
    np.testing.assert_array_equal(torch.tensor(A16).to(torch.float32).numpy(),
                                  A16.astype(np.float32))


def test_convert_image_dtype_with_narrow_integers_matches_tensorflow():
    unit = RNG.uniform(0, 1, (3, 4, 1)).astype(np.float32)
    cases = [(U8, "int16"), (U8, "int8"), (np.abs(A16), "uint8"), (np.abs(A16), "int8"),
             (np.abs(A8), "float32"), (np.abs(A16), "float32"), (unit, "int16"), (unit, "int8")]
    for image, dtype in cases:
        for saturate in (False, True):
            ours = tf.image.convert_image_dtype(tf.constant(image), dtype, saturate=saturate)
            theirs = tf_real.image.convert_image_dtype(tf_real.constant(image), dtype,
                                                       saturate=saturate)
            assert ours.dtype.name == theirs.dtype.name, (image.dtype, dtype)
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6,
                                       err_msg=f"{image.dtype} -> {dtype}")


def test_keras_ops_sum_of_narrow_integers_is_keras():
    real_keras = pytest.importorskip("keras")
    import gpuaccel.keras as keras
    for a in (A8, A16):
        ours = keras.ops.sum(a)
        theirs = real_keras.ops.sum(real_keras.ops.convert_to_tensor(a))
        assert np.asarray(ours).dtype == np.asarray(theirs).dtype
        assert int(np.asarray(ours)) == int(np.asarray(theirs))


def test_torch_save_and_load_char_and_short_tensors_both_ways(tmp_path):
    ours_path = str(tmp_path / "ours.pt")
    torch.save({"c": torch.tensor(A8), "s": torch.tensor(A16)}, ours_path)
    ref = torch_reference.run(
        f"d = torch.load({ours_path!r})\n"
        "out['c'] = d['c'].numpy(); out['s'] = d['s'].numpy()\n"
        "out['dtypes'] = [str(d['c'].dtype), str(d['s'].dtype)]\n"
        f"torch.save({{'c': torch.from_numpy(a8), 's': torch.from_numpy(a16)[1:, ::2]}}, "
        f"{str(tmp_path / 'theirs.pt')!r})\n", a8=A8, a16=A16)
    assert ref["dtypes"] == ["torch.int8", "torch.int16"]
    np.testing.assert_array_equal(ref["c"], A8)
    np.testing.assert_array_equal(ref["s"], A16)
    loaded = torch.load(str(tmp_path / "theirs.pt"))
    assert loaded["c"].dtype == torch.int8 and loaded["s"].dtype == torch.int16
    np.testing.assert_array_equal(loaded["c"].numpy(), A8)
    np.testing.assert_array_equal(loaded["s"].numpy(), A16[1:, ::2])


def test_serialize_parse_and_decode_raw_match_tensorflow():
    for array in (A8, A16):
        ours = tf.io.serialize_tensor(tf.constant(array))
        theirs = tf_real.io.serialize_tensor(tf_real.constant(array)).numpy()
        assert bytes(ours) == theirs
        parsed = tf.io.parse_tensor(theirs, array.dtype.name)
        assert parsed.dtype.name == array.dtype.name
        np.testing.assert_array_equal(parsed.numpy(), array)
    raw = A16.tobytes()
    ours = tf.io.decode_raw(raw, tf.int16)
    theirs = tf_real.io.decode_raw(raw, tf_real.int16)
    assert ours.dtype.name == "int16"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_datasets_batch_narrow_integer_arrays_as_tensorflow():
    ours = list(tf.data.Dataset.from_tensor_slices((A8, A16)).batch(3))
    theirs = list(tf_real.data.Dataset.from_tensor_slices((A8, A16)).batch(3))
    assert len(ours) == len(theirs)
    for (o8, o16), (t8, t16) in zip(ours, theirs):
        assert o8.dtype.name == t8.dtype.name and o16.dtype.name == t16.dtype.name
        np.testing.assert_array_equal(o8.numpy(), t8.numpy())
        np.testing.assert_array_equal(o16.numpy(), t16.numpy())


def test_layer_kernels_refuse_narrow_integers_by_name():
    # A convolution of int8 would be a quantized kernel, which gpuaccel does not offer.
    x = torch.tensor(np.ones((1, 1, 4, 4), np.int8))
    with pytest.raises((errors.InvalidArgumentError, TypeError, RuntimeError), match="int8"):
        torch.nn.functional.conv2d(x, torch.tensor(np.ones((1, 1, 2, 2), np.int8)))
