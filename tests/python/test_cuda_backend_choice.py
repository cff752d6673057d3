"""The loader's choice among installed CUDA backends reaches Python and the report: with the
CUDA backend built, cuda_backend_status() says which file was chosen and why, lists every other
candidate file (libgpuaccel_cuda12.so beside a CUDA 13 build) with why it was not, and
gpuaccel.cuda.diagnose() prints both (cpp/core/cuda_loader/cuda_backend_choice.h; the rules themselves are
GoogleTests in tests/cpp/cuda_backend_choice_test.cc)."""
import io

import gpuaccel
from gpuaccel import _C


def test_status_and_report_carry_the_backend_choice():
    status = _C.cuda_backend_status()
    build_cuda = _C.build_info()["cuda"]
    if not status["built"]:
        assert status["backend_choice"] == "" and status["refused_backends"] == []
        return
    if status["path_from_env"]:  # GPUACCEL_CUDA_BACKEND names the file: nothing was chosen
        assert status["backend_choice"] == ""
        return
    assert status["backend_choice"], status
    assert status["library_path"].endswith(("/libgpuaccel_cuda.so", "/libgpuaccel_cuda12.so"))
    if not build_cuda.startswith("12."):
        assert any(r.startswith("libgpuaccel_cuda12.so: ") for r in status["refused_backends"]) \
            or status["library_path"].endswith("/libgpuaccel_cuda12.so"), status
    text = gpuaccel.cuda.diagnose(file=io.StringIO())
    assert f"backend chosen      {status['backend_choice']}" in text
    for refused in status["refused_backends"]:
        assert f"backend not chosen  {refused}" in text
