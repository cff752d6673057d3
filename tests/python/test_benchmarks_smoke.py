"""Every Python benchmark runs once on a tiny size, so none of them rots (the C++ ones are
smoke-run by CTest, label benchmark_smoke). Nothing here looks at a time: only that each script
finishes and prints the comparison it exists for."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runtime_fixtures import package_environment

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

# script, tiny arguments, a line fragment its report must contain
RUNS = [
    ("train_cnn.py", ["--steps", "2", "--peers", "keras"], "ours/this ="),
    ("ops.py", ["--quick"], "course CNN convolutions"),
    ("mixed_precision.py", ["--steps", "1", "--batch", "8", "--models", "mlp"], "speedup"),
    ("profiler_overhead.py", ["--steps", "3", "--repeats", "1", "--peers=", "--data", "random"],
     "gpuaccel profiler on:"),
    ("shared_cores.py", ["--steps", "1", "--rounds", "1"], "vs keras's slowdown"),
    # Without a GPU only its CPU epoch runs; the GPU parts say why they are skipped.
    ("gpu_train.py", ["--steps", "2", "--cpu-steps", "2", "--calls", "2"], "CPU epoch"),
    ("distribute.py", ["--steps", "2", "--repeats", "1"], "MultiWorker, 2 processes x 1 thread, overlapped"),
    ("tiny_step.py", ["--steps", "20", "--repeats", "1"], "train_step alone"),
    ("multi_output_step.py", ["--steps", "2", "--repeats", "1"], "host read per step (before)"),
    ("python_layers.py", ["--steps", "2", "--repeats", "1", "--batch", "8"], "once per signature"),
    ("step_ops.py", ["--steps", "2", "--rounds", "1", "--threads", "1,2"], "conv2d_forward"),
    ("depthwise_conv.py", ["--steps", "1", "--repeats", "1", "--batch", "4"],
     "thread(s): gpuaccel"),
    ("layer_families.py", ["--steps", "1", "--repeats", "1", "--families", "core,attention"],
     "ms   ratio"),
    ("fused_rnn.py", ["--quick", "--steps", "1", "--repeats", "1"], "ms   unrolled"),
]


@pytest.mark.parametrize("script,args,expected", RUNS, ids=[r[0] for r in RUNS])
def test_benchmark_runs_on_a_tiny_size(script, args, expected, tmp_path):
    result = subprocess.run([sys.executable, str(BENCHMARKS / script), *args],
                            env=package_environment(), cwd=tmp_path, capture_output=True,
                            text=True, timeout=600)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report[-3000:]
    assert expected in result.stdout, report[-3000:]
    assert "failed" not in result.stdout, report[-3000:]


# Scripts that drive the C++ benchmark binaries, smoke-run by CTest instead (benchmarks/CMakeLists.txt).
CTEST_RUNS = {"compare_onednn_builds.py"}
# Scripts that need a release wheel, smoke-run by the CI script that builds it.
CI_SCRIPT_RUNS = {"install_time.py": Path(__file__).resolve().parents[2] / ".ci" / "release_wheels"}


def test_every_benchmark_script_is_smoke_run():
    scripts = {p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_")}
    assert scripts == {r[0] for r in RUNS} | CTEST_RUNS | set(CI_SCRIPT_RUNS), \
        "add the new benchmark to RUNS"
    for script, ci_script in CI_SCRIPT_RUNS.items():
        assert f"benchmarks/{script}" in ci_script.read_text(), f"{ci_script} no longer runs {script}"


def test_gpu_train_configures_pytorch_like_for_like_and_as_shipped():
    """gpu_train.py's PyTorch peer (no PyTorch or GPU here): its setup code, run against a
    stand-in `torch`, turns on cudnn.benchmark in both modes, turns TF32 off and picks
    channels_last only like for like, and leaves PyTorch's TF32 defaults alone otherwise."""
    import importlib.util
    import json
    import types

    spec = importlib.util.spec_from_file_location("gpu_train", BENCHMARKS / "gpu_train.py")
    gpu_train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_train)
    assert [mode for mode, _ in gpu_train.TORCH_MODES] == ["like", "default"]
    for mode, tf32, layout in (("like", False, "channels_last"), ("default", True, "contiguous_format")):
        flags = types.SimpleNamespace
        torch = types.ModuleType("torch")
        torch.channels_last, torch.contiguous_format = "channels_last", "contiguous_format"
        # PyTorch's shipped values: TF32 convolutions on, TF32 matmuls off, benchmark off.
        torch.backends = flags(cudnn=flags(benchmark=False, allow_tf32=True),
                               cuda=flags(matmul=flags(allow_tf32=False)))
        sys.modules["torch"] = torch
        try:
            scope = {"cfg": json.loads(json.dumps({"torch_mode": mode}))}
            exec(gpu_train.TORCH_SETUP, scope)
        finally:
            del sys.modules["torch"]
        assert torch.backends.cudnn.benchmark is True
        assert torch.backends.cudnn.allow_tf32 is tf32
        assert torch.backends.cuda.matmul.allow_tf32 is False
        assert scope["FORMAT"] == layout
