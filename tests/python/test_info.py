"""gpuaccel.version, gpuaccel.info (``python -m gpuaccel.info``) and gpuaccel.utils.smi(): the
versions agree with the libraries, the report names each problem with its fix, and the smi
table renders NVML's numbers (or says why there are none)."""
import json
import os
import re
import subprocess
import sys

import pytest

import gpuaccel
from gpuaccel import _C, config, info, utils, version
from runtime_fixtures import T4, reset_runtime


@pytest.fixture(autouse=True)
def fresh():
    reset_runtime()
    yield
    reset_runtime()


def test_versions():
    assert version.gpuaccel == gpuaccel.__version__
    status = _C.cuda_backend_status()
    if status["built"]:
        assert re.fullmatch(r"\d+\.\d+", version.cuda)
    else:
        assert version.cuda is None
    assert version.cudnn is None or (isinstance(version.cudnn, int) and version.cudnn > 0)
    assert re.fullmatch(r"\d+\.\d+\.\d+", version.onednn)
    assert version.onednn == _C.onednn_version()["version"]
    assert version.hip is None


def test_runtime_versions_come_from_the_loaded_backend():
    status = _C.cuda_backend_status()
    if not status["loaded"]:
        pytest.skip("the CUDA backend is not loaded here: " + status["reason"])
    rt = version.runtime()
    assert rt["cuda_runtime"] == version.cuda  # the runtime is linked into the backend
    assert rt["cudnn"] == version.cudnn        # loaded through the RPATH set at build time
    assert rt["cublas"] and rt["cublas"] > 10000


def test_cpu_info_is_reported():
    cpu = _C.cpu_info()
    assert cpu["logical_cpus"] >= 1 and 1 <= cpu["usable_cpus"] <= cpu["logical_cpus"]
    assert set(cpu["flags"]) >= {"avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile",
                                 "amx_bf16", "amx_int8"}
    text = info.report()
    assert cpu["model_name"] in text
    isa_line = next(line for line in text.splitlines() if line.strip().startswith("ISA"))
    assert ("AVX2" in isa_line) == cpu["flags"]["avx2"]
    assert ("AMX-BF16" in isa_line) == cpu["flags"]["amx_bf16"]


def test_report_has_every_section_and_does_not_start_the_runtime():
    text = info.report()
    for heading in ("Versions", "CPU", "Devices", "Problems"):
        assert f"\n{heading}" in text
    assert f"oneDNN              {version.onednn}" in text
    assert "/physical_device:CPU:0" in text
    assert not _C.is_initialized()  # so configuration is still possible afterwards
    assert "(this section failed" not in text


def test_no_driver_is_explained_in_tensorflows_words():
    status = _C.cuda_backend_status()
    if status["problem"] != "no_driver":
        pytest.skip(f"the CUDA problem here is {status['problem']!r}, not no_driver")
    found = info.problems()
    assert [p["kind"] for p in found] == ["no_driver"]
    assert "Could not find cuda drivers" in found[0]["explanation"]
    assert "Fix:" in found[0]["explanation"]
    assert "Could not find cuda drivers" in info.report()


def test_a_cudnn_older_than_the_build_is_a_warning_in_the_report(tmp_path):
    from test_library_backend import fake_library
    build_cudnn = _C.build_info()["cudnn"]
    if not build_cudnn:
        pytest.skip("built without cuDNN: nothing to compare the loaded one with")
    older = build_cudnn // 10000 * 10000  # x.0.0 of the build's major
    package_root = os.path.dirname(os.path.dirname(gpuaccel.__file__))
    env = dict(os.environ, GPUACCEL_CUDA_BACKEND=fake_library(), GPUACCEL_FAKE_CUDA="ok",
               GPUACCEL_FAKE_CUDA_CUDNN_VERSION=str(older), PYTHONPATH=os.pathsep.join(
                   [package_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    code = ("import json; from gpuaccel import info, cuda; "
            "print(json.dumps([cuda.device_count(), info.problems()]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    device_count, found = json.loads(out.stdout.strip().splitlines()[-1])
    assert device_count == 2  # a warning: the GPUs stay usable
    kinds = {p["kind"]: p["explanation"] for p in found}
    assert "cudnn_older_than_build" in kinds, found
    assert _C.cudnn_version_string(older) in kinds["cudnn_older_than_build"]
    assert _C.check_cudnn_runtime(build_cudnn, older) == kinds["cudnn_older_than_build"]
    assert _C.check_cudnn_runtime(build_cudnn, build_cudnn) == ""


def test_gpus_hidden_by_set_visible_devices_are_reported():
    reset_runtime([T4, dict(T4)])
    gpus = config.list_physical_devices("GPU")
    config.set_visible_devices(gpus[:1], "GPU")
    kinds = {p["kind"]: p["explanation"] for p in info.problems()}
    assert "simulated_gpus" in kinds
    assert "/physical_device:GPU:1" in kinds["hidden_by_set_visible_devices"]
    assert "/physical_device:GPU:0" not in kinds["hidden_by_set_visible_devices"]
    text = info.report()
    assert "/physical_device:GPU:1  Tesla T4, 15.0 GiB, compute capability 7.5, 40 SMs  " \
           "[hidden by set_visible_devices]" in text
    assert "/physical_device:GPU:0  Tesla T4" in text


def test_python_dash_m_gpuaccel_info_runs(tmp_path):
    # The child imports the same gpuaccel as this process, wherever the test runs from.
    package_root = os.path.dirname(os.path.dirname(gpuaccel.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [package_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-m", "gpuaccel.info"], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"gpuaccel {version.gpuaccel} environment report")
    assert "Problems" in out.stdout


def test_smi_without_nvml_says_why(capsys):
    report = _C.nvml_report()
    if report["available"]:
        pytest.skip("NVML is available here")
    text = utils.smi()
    assert capsys.readouterr().out.strip() == text
    assert text.startswith("No NVIDIA GPU to show: ")
    assert "libnvidia-ml.so.1" in text and "Fix:" in text


def test_smi_table_renders_nvml_numbers():
    gpu = {"index": 0, "name": "Tesla T4", "temperature_c": 45, "gpu_utilization_pct": 3,
           "memory_utilization_pct": 1, "memory_used_bytes": 1024 * 2**20,
           "memory_total_bytes": 15360 * 2**20, "power_draw_w": 27.4, "power_limit_w": 70.0,
           "error": ""}
    quiet = dict(gpu, index=1, temperature_c=None, power_draw_w=None, gpu_utilization_pct=None)
    report = {"available": True, "reason": "", "library": "libnvidia-ml.so.1",
              "driver_version": "550.54.15", "cuda_driver_version": 12040, "gpus": [gpu, quiet]}
    text = utils.format_smi(report)
    lines = text.splitlines()
    assert "Driver Version: 550.54.15" in lines[0] and "CUDA Version: 12.4" in lines[0]
    row0 = next(line for line in lines if "|   0 |" in line)
    for cell in ("Tesla T4", "45C", "27W / 70W", "1024MiB / 15360MiB", "3%"):
        assert cell in row0
    row1 = next(line for line in lines if "|   1 |" in line)
    assert "N/A / 70W" in row1 and row1.count("N/A") == 3
    assert len({len(line) for line in lines[1:]}) == 1  # every table line has the same width
    missing = utils.format_smi({"available": False, "reason": "why", "gpus": []})
    assert missing == "No NVIDIA GPU to show: why"


@pytest.mark.gpu
def test_smi_lists_the_real_gpu():
    text = utils.smi()
    assert gpuaccel.cuda.get_device_name(0)[:20] in text


def test_gpuaccel_max_cpu_isa_caps_our_onednn_and_flags_but_not_the_process():
    # SSE4.1 is below every x86-64 CPU we run on, so the cap bites on any of them. The child
    # reports oneDNN's own ISA line (ONEDNN_VERBOSE), our flags, the bf16 verdict the
    # mixed-precision policy gives, and a matmul checked against NumPy.
    package_root = os.path.dirname(os.path.dirname(gpuaccel.__file__))
    env = dict(os.environ, GPUACCEL_MAX_CPU_ISA="sse41", ONEDNN_VERBOSE="1",
               PYTHONPATH=os.pathsep.join([package_root] + [
                   p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("ONEDNN_MAX_CPU_ISA", None)
    env.pop("DNNL_MAX_CPU_ISA", None)
    child = (
        "import numpy as np, gpuaccel\n"
        "from gpuaccel import _C\n"
        "from gpuaccel.keras import mixed_precision\n"
        "a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)\n"
        "got = (gpuaccel.tensor(a) @ gpuaccel.tensor(a)).numpy()\n"
        "assert np.allclose(got, a @ a, rtol=1e-4, atol=1e-4)\n"
        "cpu = _C.cpu_info()\n"
        "print('FLAGS', sorted(k for k, v in cpu['flags'].items() if v))\n"
        "print('CAP', cpu['isa_cap_variable'], cpu['isa_cap'], cpu['isa_cap_recognized'])\n"
        "print('BF16', mixed_precision._cpu_truth()['bfloat16'])\n")
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    isa_lines = [line for line in out.stdout.splitlines() if ",info,cpu,isa:" in line]
    assert isa_lines and "SSE4.1" in isa_lines[0], isa_lines
    assert "FLAGS []" in out.stdout
    assert "CAP GPUACCEL_MAX_CPU_ISA sse41 True" in out.stdout
    assert "BF16 False" in out.stdout


def test_report_names_the_isa_ceiling_and_an_unknown_one(monkeypatch):
    monkeypatch.setenv("GPUACCEL_MAX_CPU_ISA", "AVX2")
    text = info.report()
    assert "GPUACCEL_MAX_CPU_ISA=AVX2: the flags above are capped at it" in text
    isa_line = next(line for line in text.splitlines() if line.startswith("  ISA "))
    assert "AVX-512F" not in isa_line and "AMX" not in isa_line
    monkeypatch.setenv("GPUACCEL_MAX_CPU_ISA", "AVX3")
    assert "ignored: GPUACCEL_MAX_CPU_ISA='AVX3' is not a oneDNN ISA name" in info.report()
