"""gpuaccel.Tensor from Python: creation (dtypes, shapes, device scopes), NumPy interop (round
trips for every dtype, zero-copy from_numpy, the buffer protocol), views sharing storage,
basic indexing against NumPy, __setitem__, shape ops, repr, casts, errors, and the
counter-based random generator checked against a NumPy Philox-4x32-10 written here."""
import numpy as np
import pytest

import gpuaccel
from runtime_fixtures import fresh_runtime  # noqa: F401

ml_dtypes = pytest.importorskip("ml_dtypes")

NUMPY_OF = {
    "float32": np.float32,
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "bool": np.bool_,
}
ALL_DTYPES = list(NUMPY_OF)


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "uint8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    if dtype in ("int32", "int64"):
        return rng.integers(-1000, 1000, shape).astype(NUMPY_OF[dtype])
    return rng.standard_normal(shape).astype(np.float32).astype(NUMPY_OF[dtype])


# ---------------------------------------------------------------------------------------------
# creation

def test_tensor_from_lists_and_python_scalars():
    t = gpuaccel.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3)
    assert t.dtype == gpuaccel.float32
    assert t.ndim == 2
    assert t.numel() == 6
    np.testing.assert_array_equal(t.numpy(), np.array([[1, 2, 3], [4, 5, 6]], np.float32))
    s = gpuaccel.tensor(2.5)
    assert s.shape == ()
    assert s.item() == 2.5
    i = gpuaccel.tensor([1, 2, 3])
    assert i.dtype == gpuaccel.int64
    b = gpuaccel.tensor([True, False])
    assert b.dtype == gpuaccel.bool
    np.testing.assert_array_equal(b.numpy(), [True, False])


def test_float64_becomes_float32_copy():
    a = np.linspace(-1, 1, 7)  # float64
    t = gpuaccel.tensor(a)
    assert t.dtype == gpuaccel.float32
    np.testing.assert_array_equal(t.numpy(), a.astype(np.float32))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tensor_with_explicit_dtype_converts(dtype):
    data = [[0, 1, 2], [3, 4, 5]]
    t = gpuaccel.tensor(data, dtype=dtype)
    assert t.dtype == gpuaccel.as_dtype(dtype)
    out = t.numpy()
    assert out.dtype == NUMPY_OF[dtype]
    np.testing.assert_array_equal(out, np.array(data).astype(NUMPY_OF[dtype]))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int64", "uint8"])
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (2, 0, 3), (2, 3, 4, 5)])
def test_zeros_ones_full(dtype, shape):
    z = gpuaccel.zeros(*shape, dtype=dtype)
    o = gpuaccel.ones(shape, dtype=dtype)
    f = gpuaccel.full(shape, 7, dtype=dtype)
    for t, value in ((z, 0), (o, 1), (f, 7)):
        assert t.shape == shape
        assert t.dtype == gpuaccel.as_dtype(dtype)
        np.testing.assert_array_equal(t.numpy(), np.full(shape, value, NUMPY_OF[dtype]))


def test_full_infers_dtype_from_fill_value():
    assert gpuaccel.full((2,), 1.5).dtype == gpuaccel.float32
    assert gpuaccel.full((2,), 3).dtype == gpuaccel.int64
    assert gpuaccel.full((2,), True).dtype == gpuaccel.bool
    np.testing.assert_array_equal(gpuaccel.full(3, -2.5).numpy(), [-2.5, -2.5, -2.5])


def test_zeros_like_ones_like_keep_shape_and_dtype():
    t = gpuaccel.tensor(sample("int32", (3, 4)))
    z = gpuaccel.zeros_like(t)
    o = gpuaccel.ones_like(t, dtype="float16")
    assert z.shape == (3, 4) and z.dtype == gpuaccel.int32
    assert o.shape == (3, 4) and o.dtype == gpuaccel.float16
    np.testing.assert_array_equal(z.numpy(), np.zeros((3, 4), np.int32))
    np.testing.assert_array_equal(o.numpy(), np.ones((3, 4), np.float16))


@pytest.mark.parametrize("args", [(5,), (2, 9), (1, 10, 3), (0, 1, 0.25), (-3, 3, 0.5), (5, 0, -1),
                                  (10, 2), (0.5, 3.5)])
def test_arange_matches_numpy(args):
    t = gpuaccel.arange(*args)
    expected = np.arange(*args)
    assert t.shape == expected.shape
    if all(isinstance(a, int) for a in args):
        assert t.dtype == gpuaccel.int64
    else:
        assert t.dtype == gpuaccel.float32
    np.testing.assert_allclose(t.numpy(), expected, rtol=0, atol=1e-6)


def test_arange_with_dtype_and_bad_step():
    np.testing.assert_array_equal(gpuaccel.arange(4, dtype="float16").numpy(),
                                  np.arange(4, dtype=np.float16))
    with pytest.raises(ValueError):
        gpuaccel.arange(0, 5, 0)


def test_creation_rejects_bad_shapes_and_dtypes():
    with pytest.raises((ValueError, TypeError)):
        gpuaccel.zeros(2, -3)
    with pytest.raises(TypeError):
        gpuaccel.zeros(2.5, 3)
    with pytest.raises((ValueError, TypeError)):
        gpuaccel.zeros(2, dtype="float128")
    with pytest.raises((ValueError, TypeError)):
        gpuaccel.tensor([1, 2], dtype="complex64")
    with pytest.raises((ValueError, TypeError)):
        gpuaccel.tensor(np.array([1 + 2j]))
    with pytest.raises((ValueError, TypeError)):
        gpuaccel.tensor([[1, 2], [3]])  # ragged
    with pytest.raises(ValueError):
        gpuaccel.randn(3, dtype="int32")


def test_default_device_is_cpu0():
    t = gpuaccel.zeros(2)
    assert t._device_type == "CPU"
    assert t._device_index == 0
    assert "CPU:0" in t._device_name


def split_cpu():
    config = gpuaccel.config
    config.set_logical_device_configuration(
        config.list_physical_devices("CPU")[0],
        [config.LogicalDeviceConfiguration(), config.LogicalDeviceConfiguration()])


def test_creation_follows_device_scope(fresh_runtime):
    split_cpu()
    with gpuaccel.device("/CPU:1"):
        made = [gpuaccel.zeros(2, 2), gpuaccel.ones(3), gpuaccel.full((2,), 4.0),
                gpuaccel.arange(4), gpuaccel.rand(3), gpuaccel.randn(3),
                gpuaccel.tensor([1.0, 2.0]), gpuaccel.random.normal((2,)),
                gpuaccel.random.uniform((2,))]
        with gpuaccel.device("/CPU:0"):
            inner = gpuaccel.zeros(2)
    for t in made:
        assert t._device_type == "CPU" and t._device_index == 1, t._device_name
        assert t._device_name.endswith("CPU:1")
    assert inner._device_index == 0
    assert gpuaccel.zeros(1)._device_index == 0
    # An explicit device argument beats the scope.
    with gpuaccel.device("/CPU:1"):
        assert gpuaccel.zeros(2, device="/CPU:0")._device_index == 0
    # Ops run where their inputs are, and the repr names the non-default device.
    with gpuaccel.device("/CPU:1"):
        a = gpuaccel.tensor([1.0, 2.0])
    b = a * 2 + a
    assert b._device_index == 1
    np.testing.assert_array_equal(b.numpy(), [3.0, 6.0])
    assert "CPU:1" in repr(b)


def test_to_and_cpu_move_between_logical_cpus(fresh_runtime):
    split_cpu()
    a = gpuaccel.tensor(sample("float32", (3, 4)))
    b = a.to("/CPU:1")
    assert b._device_index == 1
    assert not b._shares_storage_with(a)
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    c = b.cpu()
    assert c._device_index == 0
    np.testing.assert_array_equal(c.numpy(), a.numpy())
    # A strided view moves with its values, not its storage.
    d = a.T.to("/CPU:1")
    np.testing.assert_array_equal(d.numpy(), a.numpy().T)
    # Mixing devices in one op is an error naming both.
    with pytest.raises(ValueError, match="same device"):
        a + b


# ---------------------------------------------------------------------------------------------
# NumPy interop

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (2, 3, 4)])
def test_numpy_round_trip_every_dtype(dtype, shape):
    a = sample(dtype, shape, seed=len(shape))
    for make in (gpuaccel.tensor, gpuaccel.from_numpy):
        t = make(np.array(a))
        assert t.dtype == gpuaccel.as_dtype(dtype)
        assert t.shape == shape
        out = t.numpy()
        assert out.dtype == a.dtype
        assert out.shape == shape
        np.testing.assert_array_equal(out, a)
        np.testing.assert_array_equal(np.asarray(t), a)
        assert np.array(t).dtype == a.dtype


def test_numpy_of_non_contiguous_and_offset_views():
    a = sample("float32", (6, 8))
    t = gpuaccel.tensor(a)
    for view, ref in ((t.T, a.T), (t[1:5, 2::3], a[1:5, 2::3]), (t[3], a[3]),
                      (t.permute(1, 0)[::2], a.T[::2])):
        np.testing.assert_array_equal(view.numpy(), ref)
        np.testing.assert_array_equal(view.contiguous().numpy(), ref)


def test_numpy_shares_the_cpu_tensors_memory():
    # PyTorch's documented t.numpy() (test_tutorial_gaps.py compares with torch itself)
    t = gpuaccel.tensor([1.0, 2.0, 3.0])
    out = t.numpy()
    out[0] = 100
    assert t.numpy()[0] == 100.0
    assert out.ctypes.data == t.data_ptr()


def test_from_numpy_is_zero_copy_both_ways():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = gpuaccel.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data
    a[1, 2] = -5.0
    assert t.numpy()[1, 2] == -5.0
    t[0, 0] = 42.0
    assert a[0, 0] == 42.0
    # Views of the tensor see the array's writes too.
    row = t[2]
    a[2, 3] = 99.0
    assert row.numpy()[3] == 99.0


def test_from_numpy_keeps_the_array_alive():
    import gc
    a = np.arange(1000, dtype=np.int32)
    t = gpuaccel.from_numpy(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), np.arange(1000, dtype=np.int32))


def test_from_numpy_rejects_what_it_cannot_share():
    with pytest.raises(TypeError):
        gpuaccel.from_numpy([1, 2, 3])
    with pytest.raises(gpuaccel.errors.InvalidArgumentError, match="uint16"):
        gpuaccel.from_numpy(np.zeros(3, np.uint16))  # a dtype gpuaccel lacks
    with pytest.raises(ValueError, match="negative"):
        gpuaccel.from_numpy(np.zeros((3, 4), np.float32)[::-1])


def test_tensor_copies_unlike_from_numpy():
    a = np.ones(4, np.float32)
    t = gpuaccel.tensor(a)
    a[0] = 5
    assert t.numpy()[0] == 1.0


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "uint8", "bool"])
def test_buffer_protocol(dtype):
    a = sample(dtype, (4, 5))
    t = gpuaccel.tensor(a)
    m = memoryview(t)
    assert m.shape == (4, 5)
    assert m.itemsize == np.dtype(NUMPY_OF[dtype]).itemsize
    out = np.asarray(m)
    assert out.dtype == a.dtype
    np.testing.assert_array_equal(out, a)
    # A transposed view exposes its strides, not a copy.
    tv = t.T
    np.testing.assert_array_equal(np.asarray(memoryview(tv)), a.T)
    # The buffer aliases the tensor's memory.
    if dtype == "float32":
        out2 = np.asarray(memoryview(t))
        t[0, 0] = 123.0
        assert out2[0, 0] == 123.0


def test_buffer_protocol_refuses_bfloat16_with_a_reason():
    t = gpuaccel.tensor([1.0, 2.0], dtype="bfloat16")
    with pytest.raises(BufferError) as info:
        memoryview(t)
    # pybind11 raises "Error getting buffer" from our reason; the reason is in the chain.
    chain = [info.value, info.value.__cause__, info.value.__context__]
    assert any(e is not None and "bfloat16" in str(e) and "numpy()" in str(e) for e in chain)


def test_array_dunder_with_dtype():
    t = gpuaccel.tensor([1.5, 2.5])
    out = np.asarray(t, dtype=np.float64)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [1.5, 2.5])


# ---------------------------------------------------------------------------------------------
# views and indexing

def test_views_share_storage_and_copies_do_not():
    t = gpuaccel.tensor(sample("float32", (4, 6)))
    views = [t[1], t[:, 2:5], t[::2, ::3], t.T, t.transpose(0, 1), t.permute(1, 0),
             t.reshape(6, 4), t.view(-1), t.flatten(), t.unsqueeze(0), t[None], t[...],
             t.reshape(1, 4, 6).squeeze(0), t.detach()]
    for v in views:
        assert v._shares_storage_with(t)
    for c in (t.clone(), t.T.contiguous(), t + 0, gpuaccel.tensor(t)):
        assert not c._shares_storage_with(t)
    # contiguous() of a contiguous tensor is the tensor itself (no copy).
    assert t.contiguous()._shares_storage_with(t)
    # A write through a view is seen by the base and vice versa.
    v = t[1:3, ::2]
    v[0, 1] = 77.0
    assert t.numpy()[1, 2] == 77.0
    t[2, 4] = -1.0
    assert v.numpy()[1, 2] == -1.0


INDEXES = [
    (0,), (-1,), (3,), (slice(None),), (slice(1, 4),), (slice(None, None, 2),),
    (slice(-3, None),), (slice(None, -2),), (slice(1, None, 3),), (slice(10, 20),),
    (slice(4, 2),), (slice(-100, 100),),
    (1, 2), (-2, -1), (slice(None), 0), (slice(None), slice(1, None, 2)),
    (Ellipsis,), (Ellipsis, 1), (0, Ellipsis), (Ellipsis, slice(None, None, 3)),
    (None,), (None, 0), (slice(None), None, 1), (1, None, slice(2, 5), None),
    (Ellipsis, None), (None, Ellipsis, None), (0, 1, 2), (-1, -1, -1), (slice(0, 1), 1, Ellipsis),
    (np.int64(2),), (slice(2, 3), slice(None, None, 4), slice(1, None, 2)),
]


@pytest.mark.parametrize("index", INDEXES, ids=[repr(i) for i in INDEXES])
def test_getitem_matches_numpy(index):
    a = sample("float32", (5, 6, 7), seed=3)
    t = gpuaccel.tensor(a)
    got = t[index]
    expected = a[index]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)
    assert got._shares_storage_with(t)


def test_getitem_on_random_slices_matches_numpy():
    rng = np.random.default_rng(11)
    a = sample("float32", (7, 5, 6), seed=4)
    t = gpuaccel.tensor(a)
    for _ in range(200):
        index = []
        for size in a.shape[: rng.integers(1, 4)]:
            kind = rng.integers(0, 3)
            if kind == 0:
                index.append(int(rng.integers(-size, size)))
            else:
                start = int(rng.integers(-size - 2, size + 2))
                stop = int(rng.integers(-size - 2, size + 2))
                step = int(rng.integers(1, 4))
                index.append(slice(start if rng.random() < 0.8 else None,
                                   stop if rng.random() < 0.8 else None, step))
        index = tuple(index)
        got = t[index]
        assert got.shape == a[index].shape, index
        np.testing.assert_array_equal(got.numpy(), a[index], err_msg=repr(index))
        # Chained indexing of a view.
        if got.ndim >= 1 and got.shape[0] > 1:
            np.testing.assert_array_equal(got[1:].numpy(), a[index][1:])


def test_index_errors():
    t = gpuaccel.zeros(3, 4)
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[-4]
    with pytest.raises(IndexError):
        t[0, 4]
    with pytest.raises(IndexError):
        t[0, 0, 0]
    with pytest.raises(IndexError):
        gpuaccel.tensor(1.0)[0]
    with pytest.raises(TypeError):
        t["a"]
    with pytest.raises(TypeError):
        t[1.5]
    with pytest.raises(ValueError, match="step"):
        t[::-1]
    with pytest.raises(ValueError):
        t[::0]


def test_len_and_iteration_protocol():
    t = gpuaccel.tensor(sample("float32", (3, 2)))
    assert len(t) == 3
    with pytest.raises(TypeError):
        len(gpuaccel.tensor(1.0))


def test_setitem_matches_numpy():
    rng = np.random.default_rng(5)
    a = sample("float32", (4, 5, 6), seed=6)
    t = gpuaccel.tensor(a)
    ops = [
        ((1,), 3.0),
        ((slice(None), 2), -1.5),
        ((slice(0, 2), slice(1, None, 2), 0), np.float32(9.0)),
        ((Ellipsis, 5), rng.standard_normal((4, 5)).astype(np.float32)),
        ((2, slice(None), slice(None, None, 3)), rng.standard_normal((5, 2)).astype(np.float32)),
        ((slice(None), slice(None), slice(None)), rng.standard_normal((6,)).astype(np.float32)),  # broadcast
        ((-1, -1, -1), 1e3),
    ]
    for index, value in ops:
        t[index] = value
        a[index] = value
        np.testing.assert_array_equal(t.numpy(), a)
    # A tensor value, including a broadcast one.
    t[0] = gpuaccel.tensor(np.full((1, 6), 2.0, np.float32))
    a[0] = 2.0
    np.testing.assert_array_equal(t.numpy(), a)
    # Integer tensors.
    i = gpuaccel.tensor(np.arange(10, dtype=np.int32))
    i[2:8:2] = 0
    expected = np.arange(10, dtype=np.int32)
    expected[2:8:2] = 0
    np.testing.assert_array_equal(i.numpy(), expected)


def test_setitem_shape_mismatch_is_an_error():
    t = gpuaccel.zeros(3, 4)
    with pytest.raises(ValueError):
        t[0] = gpuaccel.ones(3)
    with pytest.raises(IndexError):
        t[5] = 1.0


# ---------------------------------------------------------------------------------------------
# shape ops

def test_reshape_view_flatten():
    a = sample("float32", (2, 3, 4))
    t = gpuaccel.tensor(a)
    for shape in [(24,), (4, 6), (2, 12), (1, 24), (2, 3, 2, 2), ()] [:-1]:
        np.testing.assert_array_equal(t.reshape(*shape).numpy(), a.reshape(shape))
        np.testing.assert_array_equal(t.reshape(shape).numpy(), a.reshape(shape))
        np.testing.assert_array_equal(t.view(list(shape)).numpy(), a.reshape(shape))
    for shape in [(-1,), (4, -1), (-1, 2, 3), (2, -1, 4)]:
        got = t.reshape(*shape)
        assert got.shape == a.reshape(shape).shape
        np.testing.assert_array_equal(got.numpy(), a.reshape(shape))
    np.testing.assert_array_equal(t.flatten().numpy(), a.ravel())
    one = gpuaccel.tensor([5.0])
    assert one.reshape().shape == ()
    assert one.reshape(()).item() == 5.0
    # Reshaping a non-contiguous view copies (values still in row-major order of the view).
    np.testing.assert_array_equal(t.permute(2, 0, 1).reshape(4, 6).numpy(),
                                  a.transpose(2, 0, 1).reshape(4, 6))
    np.testing.assert_array_equal(t.T.flatten().numpy(), a.T.ravel())


def test_reshape_errors_name_the_shapes():
    t = gpuaccel.zeros(2, 3)
    with pytest.raises(ValueError, match=r"\[2, 3\]|\(2, ?3\)"):
        t.reshape(4, 2)
    with pytest.raises(ValueError, match="-1"):
        t.reshape(-1, -1)
    with pytest.raises(ValueError):
        t.reshape(4, -1)
    with pytest.raises(ValueError):
        t.reshape(-2, 3)


def test_permute_transpose_T():
    a = sample("float32", (2, 3, 4, 5))
    t = gpuaccel.tensor(a)
    for perm in [(0, 1, 2, 3), (3, 2, 1, 0), (1, 0, 3, 2), (2, 0, 3, 1), (-1, 0, 1, 2)]:
        got = t.permute(*perm)
        assert got.shape == a.transpose(perm).shape
        np.testing.assert_array_equal(got.numpy(), a.transpose(perm))
        np.testing.assert_array_equal(t.permute(list(perm)).numpy(), a.transpose(perm))
    np.testing.assert_array_equal(t.transpose(1, 3).numpy(), np.swapaxes(a, 1, 3))
    np.testing.assert_array_equal(t.transpose().numpy(), np.swapaxes(a, -2, -1))
    np.testing.assert_array_equal(t.T.numpy(), a.T)
    assert not t.T.is_contiguous()
    assert t.T.contiguous().is_contiguous()
    with pytest.raises(ValueError):
        t.permute(0, 1, 2)
    with pytest.raises(ValueError):
        t.permute(0, 0, 1, 2)
    with pytest.raises(ValueError):
        t.transpose(0, 4)


def test_unsqueeze_squeeze():
    a = sample("float32", (3, 1, 4))
    t = gpuaccel.tensor(a)
    assert t.unsqueeze(0).shape == (1, 3, 1, 4)
    assert t.unsqueeze(-1).shape == (3, 1, 4, 1)
    assert t.unsqueeze(3).shape == (3, 1, 4, 1)
    assert t.squeeze().shape == (3, 4)
    assert t.squeeze(1).shape == (3, 4)
    assert t.squeeze(-2).shape == (3, 4)
    np.testing.assert_array_equal(t.squeeze().numpy(), a.squeeze())
    assert t.squeeze(0).shape == (3, 1, 4)  # torch: an axis whose size is not 1 stays
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.squeeze(3)
    with pytest.raises(ValueError, match="more than once"):
        t.squeeze((1, -2))


# ---------------------------------------------------------------------------------------------
# casts, repr, scalars

@pytest.mark.parametrize("src", ["float32", "float16", "bfloat16", "int32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("dst", ["float32", "float16", "bfloat16", "int32", "int64"])
def test_to_dtype_matches_numpy_astype(src, dst):
    a = sample(src, (4, 6), seed=9)
    if src in ("float32", "float16", "bfloat16") and dst in ("int32", "int64"):
        a = (a.astype(np.float32) * 10).astype(NUMPY_OF[src])
    t = gpuaccel.tensor(a)
    got = t.to(dst)
    assert got.dtype == gpuaccel.as_dtype(dst)
    expected = a.astype(np.float32).astype(NUMPY_OF[dst]) if src == "bfloat16" else a.astype(NUMPY_OF[dst])
    np.testing.assert_array_equal(got.numpy(), expected)
    # And on a transposed view.
    np.testing.assert_array_equal(t.T.to(dst).numpy(), expected.T)


def test_to_float16_spellings():
    a = np.array([0.1, 1.0 / 3, 65504.0, -2.5e-5], np.float32)
    t = gpuaccel.tensor(a)
    for spelling in ("float16", gpuaccel.float16, np.float16):
        h = t.to(spelling)
        assert h.dtype == gpuaccel.float16
        np.testing.assert_array_equal(h.numpy(), a.astype(np.float16))
    assert t.to(dtype="float16").dtype == gpuaccel.float16
    assert t.half().dtype == gpuaccel.float16
    assert t.half().float().dtype == gpuaccel.float32
    assert t.bfloat16().dtype == gpuaccel.bfloat16
    np.testing.assert_array_equal(t.bfloat16().numpy(), a.astype(ml_dtypes.bfloat16))
    assert t.to("float32") is t or t.to("float32")._shares_storage_with(t)


def test_to_cuda_without_gpu_is_a_runtime_error_with_a_reason():
    if gpuaccel.cuda.is_available():
        pytest.skip("a GPU is available")
    t = gpuaccel.zeros(3)
    for call in (lambda: t.to("cuda"), lambda: t.cuda(), lambda: t.to("/GPU:0"),
                 lambda: t.to("cuda:0")):
        with pytest.raises(RuntimeError) as info:
            call()
        message = str(info.value)
        assert "cuda" in message.lower() or "gpu" in message.lower()
        assert "(" in message and len(message) > 40  # says why


def test_to_bad_dtype_or_device():
    t = gpuaccel.zeros(2)
    with pytest.raises((ValueError, TypeError)):
        t.to("float128")
    with pytest.raises(ValueError):
        t.to(device="/XPU:0")


def test_repr_is_readable():
    t = gpuaccel.tensor([[1.0, 2.5], [-3.0, 4.0]])
    r = repr(t)
    assert r.startswith("tensor(")
    assert "2.5" in r and "-3." in r
    assert "dtype=float32" in r
    assert str(t) == r
    h = repr(gpuaccel.tensor([1.0, 2.0], dtype="bfloat16"))
    assert "dtype=bfloat16" in h and "1." in h and "2." in h
    i = repr(gpuaccel.tensor([7, 8], dtype="int32"))
    assert "7" in i and "8" in i and "int32" in i
    g = gpuaccel.tensor([1.0], requires_grad=True)
    assert "requires_grad=True" in repr(g)
    assert "grad_fn=" in repr(g * 2)
    assert "tensor(" in repr(gpuaccel.zeros(0, 3))


def test_item_and_python_conversions():
    assert gpuaccel.tensor([[3.5]]).item() == 3.5
    assert float(gpuaccel.tensor(2.0)) == 2.0
    assert int(gpuaccel.tensor(7, dtype="int32")) == 7
    assert bool(gpuaccel.tensor(True)) is True
    assert gpuaccel.tensor([1, 2]).tolist() == [1, 2]
    with pytest.raises(ValueError):
        gpuaccel.tensor([1.0, 2.0]).item()


def test_shape_dtype_device_attributes():
    t = gpuaccel.zeros(2, 3, dtype="float16")
    assert t.shape == (2, 3)
    assert t.size() == (2, 3) and t.size(1) == 3
    assert t.dim() == 2
    assert t.dtype == gpuaccel.float16 == "float16"
    assert str(t.device).lower().startswith("cpu") or "CPU" in str(t.device)
    assert t.is_contiguous()
    assert t._strides() == [3, 1]


# ---------------------------------------------------------------------------------------------
# random: a NumPy Philox-4x32-10 reference of the documented element mapping

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF


def philox_words(seed, blocks):
    """Philox-4x32-10 of counters {b, 0, 0, 0} for b in `blocks` under key {lo(seed), hi(seed)}."""
    blocks = np.asarray(blocks, np.uint64)
    c0 = (blocks & MASK).astype(np.uint64)
    c1 = (blocks >> np.uint64(32)).astype(np.uint64)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0, k1 = seed & MASK, (seed >> 32) & MASK
    for r in range(10):
        if r:
            k0 = (k0 + W0) & MASK
            k1 = (k1 + W1) & MASK
        p0 = c0 * np.uint64(M0)
        p1 = c2 * np.uint64(M1)
        hi0, lo0 = p0 >> np.uint64(32), p0 & np.uint64(MASK)
        hi1, lo1 = p1 >> np.uint64(32), p1 & np.uint64(MASK)
        c0, c1, c2, c3 = (hi1 ^ c1 ^ np.uint64(k0)), lo1, (hi0 ^ c3 ^ np.uint64(k1)), lo0
    return np.stack([c0, c1, c2, c3], axis=-1).astype(np.uint64)


def reference_uniform(seed, first, count, bits=24):
    j = np.arange(first, first + count, dtype=np.uint64)
    words = philox_words(seed, j >> np.uint64(2))
    w = words[np.arange(count), (j & np.uint64(3)).astype(np.int64)]
    return (w >> np.uint64(32 - bits)).astype(np.float64) * 2.0 ** -bits


def reference_normal(seed, first, count):
    j = np.arange(first, first + count, dtype=np.uint64)
    words = philox_words(seed, j >> np.uint64(2))
    pair = (j & np.uint64(2)).astype(np.int64)
    w1 = words[np.arange(count), pair]
    w2 = words[np.arange(count), pair + 1]
    u1 = ((w1 >> np.uint64(8)) + np.uint64(1)).astype(np.float64) / 16777216.0
    u2 = (w2 >> np.uint64(8)).astype(np.float64) / 16777216.0
    r = np.sqrt(-2.0 * np.log(u1))
    sine = (j & np.uint64(1)).astype(bool)
    return np.where(sine, r * np.sin(2 * np.pi * u2), r * np.cos(2 * np.pi * u2))


def test_philox_reference_matches_published_vector():
    # Random123's known-answer test for philox4x32_10: counter = key = 0.
    # (philox_words takes counter {b,0,0,0}; b = 0 and seed = 0 is that case.)
    words = philox_words(0, [0])[0]
    assert [int(w) for w in words] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


def test_set_seed_reproduces():
    gpuaccel.random.set_seed(1234)
    a = gpuaccel.randn(100).numpy()
    b = gpuaccel.rand(3, 7).numpy()
    gpuaccel.random.set_seed(1234)
    np.testing.assert_array_equal(gpuaccel.randn(100).numpy(), a)
    np.testing.assert_array_equal(gpuaccel.rand(3, 7).numpy(), b)
    gpuaccel.manual_seed(1235)
    assert not np.array_equal(gpuaccel.randn(100).numpy(), a)
    # Consecutive calls differ.
    gpuaccel.random.set_seed(1)
    assert not np.array_equal(gpuaccel.rand(50).numpy(), gpuaccel.rand(50).numpy())
    with pytest.raises(ValueError):
        gpuaccel.random.set_seed(-1)


@pytest.mark.parametrize("seed", [0, 42, 2**40 + 17])
def test_uniform_matches_reference_philox(seed):
    gpuaccel.random.set_seed(seed)
    t = gpuaccel.rand(5, 13)
    np.testing.assert_array_equal(t.numpy().ravel().astype(np.float64),
                                  reference_uniform(seed, 0, 65))


@pytest.mark.parametrize("seed", [0, 7, 2**33 + 5])
def test_normal_matches_reference_philox(seed):
    gpuaccel.random.set_seed(seed)
    t = gpuaccel.randn(3, 41)
    np.testing.assert_allclose(t.numpy().ravel(), reference_normal(seed, 0, 123),
                               rtol=1e-5, atol=1e-5)


def test_counter_rule_reservations_round_up_to_blocks_of_four():
    # Each call reserves numel counters rounded up to a multiple of 4, starting after the last.
    seed = 99
    gpuaccel.random.set_seed(seed)
    at_once = gpuaccel.rand(64).numpy()
    np.testing.assert_array_equal(at_once.astype(np.float64), reference_uniform(seed, 0, 64))
    gpuaccel.random.set_seed(seed)
    a = gpuaccel.rand(5).numpy()        # counters 0..4, reserves 8
    b = gpuaccel.rand(2, 3).numpy()     # counters 8..13, reserves 8
    c = gpuaccel.rand(4).numpy()        # counters 16..19
    np.testing.assert_array_equal(a, at_once[0:5])
    np.testing.assert_array_equal(b.ravel(), at_once[8:14])
    np.testing.assert_array_equal(c, at_once[16:20])
    # The same shape generated at once equals the first numel of a longer run.
    gpuaccel.random.set_seed(seed)
    np.testing.assert_array_equal(gpuaccel.rand(4, 4).numpy().ravel(), at_once[:16])
    # A multi-threaded large tensor agrees element for element with the reference.
    gpuaccel.random.set_seed(seed)
    big = gpuaccel.rand(100003).numpy()
    np.testing.assert_array_equal(big.astype(np.float64), reference_uniform(seed, 0, 100003))


def test_uniform_range_and_dtypes():
    gpuaccel.random.set_seed(3)
    for dtype, bits in (("float32", 24), ("float16", 11), ("bfloat16", 8)):
        t = gpuaccel.rand(20000, dtype=dtype)
        assert t.dtype == gpuaccel.as_dtype(dtype)
        v = t.numpy().astype(np.float64)
        assert v.min() >= 0.0 and v.max() < 1.0
        assert abs(v.mean() - 0.5) < 0.01
    gpuaccel.random.set_seed(4)
    u = gpuaccel.random.uniform((50000,), minval=-2.0, maxval=3.0).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0
    assert abs(u.mean() - 0.5) < 0.05
    assert abs(u.std() - 5 / np.sqrt(12)) < 0.05
    with pytest.raises(ValueError):
        gpuaccel.random.uniform((2,), minval=1.0, maxval=1.0)


def test_normal_mean_and_std():
    gpuaccel.random.set_seed(5)
    n = gpuaccel.randn(200000).numpy().astype(np.float64)
    assert abs(n.mean()) < 0.01
    assert abs(n.std() - 1.0) < 0.01
    x = gpuaccel.random.normal((200000,), mean=3.0, stddev=0.5).numpy().astype(np.float64)
    assert x.shape == (200000,)
    assert abs(x.mean() - 3.0) < 0.01
    assert abs(x.std() - 0.5) < 0.01
    assert np.all(np.isfinite(x))
    with pytest.raises(ValueError):
        gpuaccel.random.normal((2,), seed=1)


def test_random_numbers_are_the_same_on_another_logical_device(fresh_runtime):
    split_cpu()
    gpuaccel.random.set_seed(77)
    a = gpuaccel.randn(37).numpy()
    gpuaccel.random.set_seed(77)
    with gpuaccel.device("/CPU:1"):
        b = gpuaccel.randn(37)
    assert b._device_index == 1
    np.testing.assert_array_equal(b.numpy(), a)


def test_creation_edge_cases():
    e = gpuaccel.tensor([])
    assert e.shape == (0,) and e.dtype == gpuaccel.float32
    assert gpuaccel.tensor(np.float64(2.5)).dtype == gpuaccel.float32
    assert gpuaccel.tensor(3.7, dtype="int32").item() == 3  # truncates, as astype
    with pytest.raises(ValueError):
        gpuaccel.tensor(2 ** 70)  # no integer type holds it
    assert np.isnan(gpuaccel.full((2,), float("nan")).numpy()).all()
    np.testing.assert_array_equal(gpuaccel.tensor(np.zeros((2, 0), np.float32)).sum(axis=1).numpy(), [0, 0])
    with pytest.raises(ValueError, match="one-element"):
        bool(gpuaccel.tensor([1.0, 2.0]))
    # Large tensors print summarized, with their dtype.
    r = repr(gpuaccel.arange(5000.0))
    assert "..." in r and "dtype=float32" in r and len(r) < 400


# ---- issue 18: sizes, axes and assignment that used to crash or write wrong values ----
# Each snippet runs in an isolated worker: a regression would crash that process, not pytest.
from crash_isolation import isolated  # noqa: E402,F401 -- the module-scoped worker fixture


@pytest.mark.parametrize("snippet", [
    "gpuaccel.ones(2**31, 2**31)",             # 2^62 float32 elements: 2^64 bytes
    "gpuaccel.zeros(2**62, 4)",                # 2^64 elements: numel() wrapped to 0
    "gpuaccel.zeros(2**40, 2**40, 2**40)",
    "gpuaccel.zeros(0, 2**62, 2**62)",         # empty, but its strides would overflow
    "gpuaccel.arange(0, 2**62)",               # int64: 2^65 bytes
    "gpuaccel.full((2**33, 2**31), 1.0)",
    "gpuaccel.randn(2**32, 2**32)",
])
def test_sizes_that_overflow_64_bits_are_invalid_arguments(isolated, snippet):
    outcome = isolated.run(f"import gpuaccel\nresult = {snippet}")
    assert outcome.raised("InvalidArgumentError"), (snippet, outcome)
    assert "too large" in outcome.message or "more than 2^63" in outcome.message, outcome.message


def test_an_out_of_memory_request_never_reads_as_a_negative_size(isolated):
    # 2^61 float32 elements = 2^63 bytes: the largest request; it fits int64 but no machine.
    outcome = isolated.run("import gpuaccel\nresult = gpuaccel.zeros(2**61 - 1, dtype=gpuaccel.float32)")
    assert outcome.raised("ResourceExhaustedError"), outcome
    first_line = outcome.message.splitlines()[0]
    assert "OOM when allocating 9223372036854775804 bytes" in first_line, first_line
    assert "-" not in first_line.split("bytes")[0]


@pytest.mark.parametrize("snippet", [
    "gpuaccel.tensor(3.).transpose(0, 0)",
    "gpuaccel.tensor(3.).permute(0)",
    "gpuaccel.tensor(3.).squeeze(0)",
    "gpuaccel.tensor(3.).sum(axis=0)",
    "gpuaccel.tensor(3.)[0]",
])
def test_a_0d_tensor_has_no_axes(isolated, snippet):
    outcome = isolated.run(f"import gpuaccel\nresult = {snippet}")
    assert outcome.error_type in ("InvalidArgumentError", "IndexError"), (snippet, outcome)
    assert "rank 0" in outcome.message or "dimension 0" in outcome.message, outcome.message


def test_item_assignment_requires_the_value_to_broadcast_to_the_target():
    x = gpuaccel.zeros(3)
    with pytest.raises(gpuaccel.errors.InvalidArgumentError, match=r"shape \(3,\) into .*\(\)"):
        x[0] = np.array([1., 2., 3.])
    with pytest.raises(ValueError):
        x[1:] = [1., 2., 3.]
    np.testing.assert_array_equal(x.numpy(), [0, 0, 0])
    x[1:] = np.array([[5.]])[0]     # (1,) broadcasts to (2,)
    x[0] = 7
    np.testing.assert_array_equal(x.numpy(), [7, 5, 5])


def test_item_assignment_refuses_numbers_the_dtype_cannot_hold():
    x = gpuaccel.zeros(2, dtype=gpuaccel.int32)
    x[0] = 2.75  # truncated toward zero, as NumPy and torch do
    assert x.tolist() == [2, 0]
    for bad in (float("nan"), float("inf"), 2**40):
        with pytest.raises(gpuaccel.errors.InvalidArgumentError, match="does not fit in int32"):
            x[1] = bad
    assert x.tolist() == [2, 0]


def test_shape_and_seed_arguments_give_typed_errors():
    with pytest.raises(TypeError, match="shape entries must be integers"):
        gpuaccel.zeros(2.5)
    with pytest.raises(ValueError, match=rf"shape \({2**70},\) entry 0 must be in "
                                         rf"\[-2\*\*63, 2\*\*63 - 1\], got {2**70}"):
        gpuaccel.zeros(2**70)
    with pytest.raises(gpuaccel.errors.InvalidArgumentError, match="negative dimension -1"):
        gpuaccel.zeros(2, -1)
    with pytest.raises(ValueError, match=r"seed must be in \[0, 2\*\*64 - 1\]"):
        gpuaccel.random.set_seed(2**70)
    with pytest.raises(TypeError, match="seed must be an int"):
        gpuaccel.random.set_seed("1")


def test_full_with_an_integer_dtype_is_exact_and_range_checked():
    assert gpuaccel.full((2,), 2**62 + 1, dtype="int64").tolist() == [2**62 + 1] * 2
    with pytest.raises(gpuaccel.errors.InvalidArgumentError, match="300 does not fit in uint8"):
        gpuaccel.full((2,), 300, dtype="uint8")
