"""The CUDA backend's libraries from PyPI's nvidia-* wheels, seen from Python without a GPU:
wheel folders of both layouts are found (cu12's nvidia/<lib>/lib, CUDA 13's nvidia/cu13/lib),
the backend's needed libraries are read from its ELF headers, a probe reports where it looked,
the report says which copy (wheel or system) each library is, and the driver/runtime rule.
The loading itself is tested in tests/cpp/cuda_wheel_libraries_test.cc (a fake NCCL)."""
import pathlib

import pytest

from gpuaccel import _C, info
from test_library_backend import fake_library


def _touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not a library")
    return str(path)


def test_wheel_folders_of_both_layouts_are_found_in_root_order(tmp_path):
    cu12 = _touch(tmp_path / "a" / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9")
    cu13 = _touch(tmp_path / "b" / "nvidia" / "cu13" / "lib" / "libcublas.so.13")
    other = _touch(tmp_path / "b" / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9")
    roots = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert _C.find_in_nvidia_wheels(roots, "libcudnn.so.9") == cu12
    assert _C.find_in_nvidia_wheels(roots[::-1], "libcudnn.so.9") == other
    assert _C.find_in_nvidia_wheels(roots, "libcublas.so.13") == cu13
    assert _C.find_in_nvidia_wheels(roots, "libcublas.so.12") == ""


def test_needed_libraries_come_from_the_elf_headers(tmp_path):
    assert "libc.so.6" in _C.elf_needed_libraries(fake_library())
    with pytest.raises(Exception, match="not a 64-bit ELF"):
        _C.elf_needed_libraries(_touch(tmp_path / "x.so"))


def test_a_probe_reports_the_wheel_roots_it_searched(tmp_path):
    status = _C.probe_cuda_backend(fake_library(), wheel_roots=[str(tmp_path)])
    assert status["loaded"], status["reason"]
    assert status["wheel_roots"] == [str(tmp_path)]
    assert status["libraries"] == []  # the fake links no CUDA library
    # Without explicit roots the package's own site-packages folder comes first.
    default = _C.probe_cuda_backend(fake_library())
    package_parent = str(pathlib.Path(_C.__file__).resolve().parent.parent)
    assert default["wheel_roots"][0] == package_parent


def _lib(soname, wheel="", loaded="", error="", version=None):
    return {"soname": soname, "wheel_path": wheel, "loaded_path": loaded, "preloaded": bool(wheel),
            "error": error, "version": version}


def test_the_report_says_which_copy_of_each_library_is_loaded():
    wheel = "/sp/nvidia/cublas/lib/libcublas.so.12"
    lines = info._cuda_library_lines({"libraries": [
        _lib("libcublas.so.12", wheel=wheel, loaded=wheel),
        _lib("libcudnn.so.9", loaded="/usr/lib/x86_64-linux-gnu/libcudnn.so.9"),
        _lib("libnccl.so.2", wheel="/sp/nvidia/nccl/lib/libnccl.so.2",
             loaded="/opt/torch/lib/libnccl.so.2", version=22703),
        _lib("libcublasLt.so.12", wheel="/sp/bad.so", error="invalid ELF header"),
    ]})
    assert len(lines) == 4
    assert wheel in lines[0] and "(nvidia-* wheel)" in lines[0]
    assert "(system)" in lines[1]
    assert "loaded before gpuaccel looked" in lines[2] and "22703" in lines[2]
    assert "not loaded" in lines[3] and "invalid ELF header" in lines[3]


@pytest.mark.parametrize("driver, runtime, ok", [
    (12040, 12060, True),    # CUDA minor-version compatibility
    (12080, 13000, False),   # a CUDA 12 driver (Colab) cannot run a CUDA 13 runtime
    (13000, 12060, True),
    (0, 13000, True),        # unknown driver: nothing to say
])
def test_driver_and_runtime_majors(driver, runtime, ok):
    assert _C.driver_supports_runtime(driver, runtime) is ok


def test_driver_too_old_names_the_driver_to_install():
    assert _C.minimum_driver_for_cuda(12060) == "525.60.13"
    assert _C.minimum_driver_for_cuda(13000) == "580.65.06"
