"""Loads the CUDA 12 backend (libgpuaccel_cuda12.so) against the nvidia-*-cu12 wheels' libraries,
on a machine without a GPU: it must get as far as "no driver" -- the library and every CUDA 12
library it needs loaded, its factory answered, its CUDA runtime is 12.x -- and not fail on an
undefined symbol or a missing library. Without this, a CUDA 12 backend that links but does not
load would only be found on a student's Colab.

    python .ci/check_cuda12_backend.py LIBRARY SITE

LIBRARY: the libgpuaccel_cuda12.so to load; SITE: a folder laid out as site-packages holding the
nvidia-*-cu12 wheels' files (.ci/cuda12_build extracts them into build/pypi-cuda12/site). Runs
with any installed gpuaccel whose core has the same CudaLibrary interface version (the wheel's,
or the CI build's). Exit status 0 when the backend loaded and reported no driver.
"""
import os
import sys

from gpuaccel import _C

# A driver supporting CUDA 13 is pretended, so the loader's own "driver too old" check lets the
# library through and a failed dlopen is reported as such (with no driver at all, a failed load
# would be hidden behind "no driver"). The backend's calls then meet the real machine: no
# libcuda.so.1, so its runtime reports no driver.
PRETENDED_DRIVER_CUDA = 13000

library, site = sys.argv[1], sys.argv[2]
status = _C.probe_cuda_backend(os.path.abspath(library), wheel_roots=[os.path.abspath(site)],
                               driver_cuda_version=PRETENDED_DRIVER_CUDA)
print(f"== CUDA 12 backend load check: {library}")
print(f"   loaded={status['loaded']} problem={status['problem']} runtime={status['runtime_version']}"
      f" cublas={status['cublas_version']} cudnn={status['cudnn_version']}")
for copy in status["libraries"]:
    print(f"   {copy['soname']}: {copy['loaded_path'] or copy['error'] or 'not loaded'}")
failures = []
if not status["loaded"]:
    failures.append(f"the backend did not load ({status['problem']}): {status['detail']}")
if status["problem"] != "no_driver":
    failures.append(f"expected problem no_driver on this GPU-less machine, got {status['problem']}: "
                    f"{status['detail']}")
if not status["runtime_version"] or status["runtime_version"] // 1000 != 12:
    failures.append(f"expected a CUDA 12 runtime, the backend reports {status['runtime_version']}")
site_real = os.path.realpath(site)
for copy in status["libraries"]:
    path = copy["loaded_path"] or ""
    if copy["soname"].startswith(("libcudart", "libcublas", "libcudnn")) and \
            not os.path.realpath(path).startswith(site_real + os.sep):
        failures.append(f"{copy['soname']} was not loaded from the cu12 wheels under {site}: "
                        f"{path or copy['error'] or 'not loaded'}")
# Every CUDA library mapped into this process is a cu12 wheel's: none of this machine's own
# (CUDA 13) copies was pulled in behind the backend's back (cuDNN's sub-libraries, say).
with open("/proc/self/maps") as maps:
    mapped = {line.split()[-1] for line in maps if "/" in line}
for path in sorted(mapped):
    name = os.path.basename(path)
    if name.startswith(("libcudart", "libcublas", "libcudnn", "libnccl")) and \
            not os.path.realpath(path).startswith(site_real + os.sep):
        failures.append(f"{path} is mapped: a CUDA library from outside the cu12 wheels")
if failures:
    sys.exit("FAIL: " + "\n      ".join(failures))
print("== CUDA 12 backend load check: loaded against the cu12 wheels, reports no driver")
