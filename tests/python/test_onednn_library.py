"""Which oneDNN the extension runs on: PyPI's oneDNN 3.x, never the system's libdnnl.so.2.

Why: the build takes oneDNN from the onednn-devel-cpu-gomp wheel (cmake/onednn.cmake) and the
extension finds libdnnl.so.3 through its RPATH; a machine that also has Debian's libdnnl-dev
(oneDNN 2.6, /usr/lib) must not end up linking or loading that one. Checked twice: what the
dynamic linker resolves for the extension file (ldd), and what a fresh interpreter that imports
gpuaccel has mapped (/proc/self/maps), in a subprocess so that no other test's imports
(TensorFlow bundles its own oneDNN) are counted.
"""
import json
import os
import re
import subprocess
import sys

import gpuaccel
from gpuaccel import _C

# Folders the system's package manager owns (/lib is /usr/lib on merged-/usr systems);
# /usr/local/lib, where a root `pip install` puts the wheel's library, is not one of them.
SYSTEM_LIBRARY_DIRS = ("/usr/lib/", "/lib/", "/usr/lib64/", "/lib64/")

MAPPED_DNNL = r"""
import json, gpuaccel
paths = set()
with open("/proc/self/maps") as maps:
    for line in maps:
        fields = line.split()
        if len(fields) >= 6 and "libdnnl" in fields[5].rsplit("/", 1)[-1]:
            paths.add(fields[5])
print(json.dumps(sorted(paths)))
"""


def _soname_major(path):
    """3 for libdnnl.so.3, libdnnl.so.3.2 or auditwheel's libdnnl-1a2b3c4d.so.3.2."""
    m = re.search(r"libdnnl[^/]*\.so\.(\d+)", path)
    assert m, f"not a versioned libdnnl file name: {path}"
    return int(m.group(1))


def _assert_pypi_onednn(path):
    real = os.path.realpath(path)
    assert _soname_major(path) >= 3, f"extension uses oneDNN 2.x: {path}"
    assert not real.startswith(SYSTEM_LIBRARY_DIRS), (
        f"extension uses the system's oneDNN {real} (from {path}), not the PyPI wheel's")


def test_the_runtime_version_is_3x():
    major = int(gpuaccel.version.onednn.split(".")[0])
    assert major >= 3, gpuaccel.version.onednn


def test_ldd_resolves_libdnnl_outside_the_system_folders():
    out = subprocess.run(["ldd", _C.__file__], capture_output=True, text=True, check=True).stdout
    resolved = [line.split("=>", 1)[1].split("(")[0].strip()
                for line in out.splitlines() if "libdnnl" in line and "=>" in line]
    assert len(resolved) == 1, f"expected one libdnnl in ldd's output:\n{out}"
    assert resolved[0] != "not found", f"libdnnl is not found from {_C.__file__}:\n{out}"
    _assert_pypi_onednn(resolved[0])


def test_a_fresh_interpreter_maps_exactly_one_libdnnl_and_it_is_pypis():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", MAPPED_DNNL], capture_output=True, text=True,
                         check=True, env=env, cwd="/").stdout
    paths = json.loads(out.strip().splitlines()[-1])
    assert len(paths) == 1, f"expected exactly one libdnnl mapped, got {paths}"
    _assert_pypi_onednn(paths[0])


def test_the_check_rejects_the_system_library():
    # The guard itself: Debian's file names and folders fail it.
    for path in ("/usr/lib/x86_64-linux-gnu/libdnnl.so.2", "/lib/x86_64-linux-gnu/libdnnl.so.3"):
        try:
            _assert_pypi_onednn(path)
        except AssertionError:
            continue
        raise AssertionError(f"{path} passed the check")
