"""gpuaccel.bench.matmul (the course's CPU vs GPU benchmark) and the model-size rule of thumb."""
import pytest

import gpuaccel
from gpuaccel.utils import estimate_max_params


def test_bench_matmul_reports_cpu_and_says_why_no_gpu(capsys):
    r = gpuaccel.bench.matmul(size=64, repeats=2)
    assert r["size"] == 64 and r["cpu_seconds"] > 0 and r["cpu_gflops"] > 0
    out = capsys.readouterr().out
    assert "CPU:" in out and "GPU:" in out
    if not gpuaccel.cuda.is_available():
        assert r["gpu_seconds"] is None and r["speedup"] is None
        assert "GPU: none" in out


@pytest.mark.gpu
def test_bench_matmul_on_gpu_reports_speedup():
    r = gpuaccel.bench.matmul(size=512, repeats=2, verbose=False)
    assert r["gpu_seconds"] > 0
    assert r["speedup"] == pytest.approx(r["cpu_seconds"] / r["gpu_seconds"])


def test_bench_rejects_bad_sizes():
    with pytest.raises(ValueError):
        gpuaccel.bench.matmul(size=0)


def test_two_bytes_per_parameter_in_float16():
    assert estimate_max_params(16 * 10**9, "float16") == 8 * 10**9
    assert estimate_max_params(16 * 10**9, "float32") == 4 * 10**9


def test_training_counts_gradients_optimizer_state_and_master_weights():
    # float16 weights (2) + f32 gradient (4) + Adam's two f32 moments (8) + f32 master (4) = 18
    assert estimate_max_params(18 * 1000, "float16", training=True, optimizer="adam") == 1000
    # float32 with plain SGD: weights (4) + gradient (4)
    assert estimate_max_params(8 * 1000, "float32", training=True, optimizer="sgd") == 1000
    assert estimate_max_params(2000, "float16", activation_fraction=0.5) == 500


@pytest.mark.parametrize("kwargs", [dict(memory_bytes=0), dict(memory_bytes=10, dtype="float64"),
                                    dict(memory_bytes=10, training=True, optimizer="lion"),
                                    dict(memory_bytes=10, activation_fraction=1.0)])
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        estimate_max_params(**kwargs)


def test_default_memory_needs_a_gpu():
    if gpuaccel.cuda.is_available():
        assert estimate_max_params() > 0
    else:
        with pytest.raises(ValueError, match="no GPU"):
            estimate_max_params()
