"""The GPU runs of features whose CPU tests compare with TensorFlow, Keras or PyTorch.

The device image has none of those frameworks (.ci/device_check), so a test module that
imports one at its top cannot be collected there and its gpu tests would never run; these
gpu tests live here, beside no framework import, and compare the GPU with gpuaccel's CPU (which
the other modules compare with the frameworks) or with NumPy. test_device_check.py keeps every
gpu test in a module the device image can import.

- float64 (test_float64.py): cuBLASLt's 64F GEMM, double element-wise kernels, sort, softmax
  gradient;
- int8/int16 (test_int8_int16.py): copies, the int32-widened arithmetic, reductions, sort;
- grouped convolutions (test_grouped_conv.py): cuDNN's group count against oneDNN.
"""
import numpy as np
import pytest

import gpuaccel as ga
import gpuaccel.torch as torch
from gpuaccel.keras import layers as L
from numeric_asserts import close, npy
from runtime_fixtures import fresh_runtime  # noqa: F401 (a fixture)

RNG = np.random.default_rng(64)
A8, B8 = (RNG.integers(-128, 128, (4, 6)).astype(np.int8) for _ in range(2))
A16, B16 = (RNG.integers(-32768, 32768, (4, 6)).astype(np.int16) for _ in range(2))


def f64(array):
    return torch.tensor(array, dtype=torch.float64)


@pytest.mark.gpu
@pytest.mark.usefixtures("fresh_runtime")
def test_float64_kernels_on_a_real_gpu():
    a, b = RNG.standard_normal((64, 48)), RNG.standard_normal((48, 40))
    x, y = f64(a).to("cuda"), f64(b).to("cuda")
    np.testing.assert_allclose((x @ y).cpu().numpy(), a @ b, rtol=1e-12, atol=1e-12)  # cuBLASLt 64F
    bias = RNG.standard_normal(40)
    out = torch.nn.functional.linear(x, y.t(), f64(bias).to("cuda"))
    np.testing.assert_allclose(out.cpu().numpy(), a @ b + bias, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(torch.tanh(x).cpu().numpy(), np.tanh(a), rtol=1e-14, atol=0)
    np.testing.assert_allclose(x.sum(dim=0).cpu().numpy(), a.sum(axis=0), rtol=1e-12)
    values = np.array([3.0, np.nan, -0.0, 1e-300, -1e300, 1.0 + 2.0 ** -52, 1.0])
    got = torch.sort(f64(values).to("cuda"))
    np.testing.assert_array_equal(got.values.cpu().numpy(), np.sort(values, kind="stable"))
    t = f64(a).to("cuda")
    t.requires_grad = True
    torch.softmax(t, dim=1).pow(2).sum().backward()
    assert t.grad.dtype == torch.float64
    assert np.isfinite(t.grad.cpu().numpy()).all()


@pytest.mark.gpu
def test_narrow_integers_on_the_gpu_match_the_cpu():
    for a, b in ((A8, B8), (A16, B16)):
        cpu_a, cpu_b = torch.tensor(a), torch.tensor(b)
        gpu_a, gpu_b = cpu_a.to("cuda"), cpu_b.to("cuda")
        for expression in ("a + b", "a * b", "a & b", "a >> 1", "a.max(1).values", "a.sum(0)",
                           "a.argmax(1)", "a.sort(dim=1, stable=True).values", "a.to(torch.float32)",
                           "(a.to(torch.float32) * 0.5).to(a.dtype)"):
            on_cpu = eval(expression, {"torch": torch, "a": cpu_a, "b": cpu_b})
            on_gpu = eval(expression, {"torch": torch, "a": gpu_a, "b": gpu_b})
            assert on_gpu.dtype == on_cpu.dtype, expression
            np.testing.assert_array_equal(on_gpu.cpu().numpy(), on_cpu.numpy(),
                                          err_msg=expression)


@pytest.mark.gpu
def test_grouped_layers_on_a_gpu_match_the_cpu():
    """cuDNN's grouped convolutions (cudnnSetConvolutionGroupCount) against oneDNN's: the same
    model of Conv2D(groups=2), DepthwiseConv2D (multiplier 1 and 2) and SeparableConv2D, same
    weights, forward and gradients of every weight, on /GPU:0 and /CPU:0."""
    x = np.random.default_rng(21).standard_normal((4, 9, 8, 4)).astype(np.float32)

    def model(device):
        with ga.device(device):
            return ga.keras.Sequential([
                ga.keras.Input((9, 8, 4)), L.Conv2D(6, 3, groups=2, padding="same"),
                L.DepthwiseConv2D(3, strides=2, padding="same"),
                L.DepthwiseConv2D(3, depth_multiplier=2, padding="same", activation="relu"),
                L.SeparableConv2D(5, 2, dilation_rate=2), L.Flatten(), L.Dense(1)])

    results = {}
    for device in ("/CPU:0", "/GPU:0"):
        m = model(device)
        if device == "/GPU:0":
            m.set_weights(results["/CPU:0"][2])
        with ga.device(device):
            with ga.GradientTape() as tape:
                y = m(ga.tensor(x))
                total = ga.reduce_sum(y * y)
            grads = tape.gradient(total, m.trainable_weights)
        results[device] = (npy(y), [g.numpy() for g in grads], m.get_weights())
    cpu, gpu = results["/CPU:0"], results["/GPU:0"]
    close(gpu[0], cpu[0], rel=1e-4)
    for g, c in zip(gpu[1], cpu[1]):
        close(g, c, rel=1e-3)
