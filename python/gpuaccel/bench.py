"""The course's CPU-vs-GPU benchmark as one call: ``gpuaccel.bench.matmul(size=5000)``.

Times ``a @ b`` for two ``size x size`` float32 matrices on the CPU and, where there is one, on
the GPU (with ``synchronize`` so GPU time is real time, not launch time), after a warm-up run,
and prints both and the speedup. Returns the numbers so a notebook can plot them."""
import time

from . import _C, cuda
from ._placement import device
from ._tensor import randn


def _time_matmul(device_name, size, repeats, dtype):
    with device(device_name):
        a = randn(size, size, dtype=dtype)
        b = randn(size, size, dtype=dtype)
    (a @ b).numel()  # warm-up: library set-up, primitive creation, pool growth
    if device_name.startswith("cuda"):
        cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        c = a @ b
        if device_name.startswith("cuda"):
            cuda.synchronize()
        best = min(best, time.perf_counter() - start)
        del c
    return best


def matmul(size=5000, repeats=3, dtype="float32", verbose=True):
    """Best-of-``repeats`` seconds for ``size x size`` matmul on CPU and GPU, and the speedup."""
    if size < 1 or repeats < 1:
        raise ValueError("size and repeats must be positive")
    result = {"size": size, "dtype": str(dtype), "cpu_seconds": _time_matmul("cpu", size, repeats, dtype),
              "gpu_seconds": None, "speedup": None}
    flops = 2.0 * size ** 3
    result["cpu_gflops"] = flops / result["cpu_seconds"] / 1e9
    if cuda.is_available():
        result["gpu_seconds"] = _time_matmul("cuda", size, repeats, dtype)
        result["gpu_gflops"] = flops / result["gpu_seconds"] / 1e9
        result["speedup"] = result["cpu_seconds"] / result["gpu_seconds"]
    if verbose:
        print(f"matmul {size}x{size} {dtype}")
        print(f"  CPU: {result['cpu_seconds']:.4f} s ({result['cpu_gflops']:.1f} GFLOP/s)")
        if result["gpu_seconds"] is None:
            print(f"  GPU: none ({_C.gpu_unavailable_reason() or 'no visible GPU'})")
        else:
            print(f"  GPU: {result['gpu_seconds']:.4f} s ({result['gpu_gflops']:.1f} GFLOP/s)")
            print(f"  speedup: {result['speedup']:.1f}x")
    return result
