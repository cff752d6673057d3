"""The device check's first look at the machine (.ci/device_check): is a GPU usable, and is what
runs the kit's own code? A check that silently used another gpuaccel, another backend or the
system's CUDA toolkit would vouch for code it never ran, so this fails, with the reason, unless
gpuaccel, its CUDA backend and oneDNN come from the installed kit (SITE) and every CUDA library
the backend loaded comes from an nvidia-* wheel (the image's, as on Colab), never a toolkit.

    python .ci/device_report.py gate SITE     one line: the GPUs gpuaccel sees, or "no GPU: why"
    python .ci/device_report.py report SITE   diagnose(), the libraries loaded, the checks
"""
import os
import sys


def _under(path, folder):
    """Whether `path` lies in `folder`, through links of folders (a build's stage/ may link its
    files to the sources, so the file itself is not resolved)."""
    path = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    return path.startswith(os.path.realpath(folder) + os.sep)


def gate(site):
    """Exit status 0 when gpuaccel (from SITE) sees a CUDA GPU; else 1, saying "no GPU"."""
    import gpuaccel
    from gpuaccel import _C, cuda
    if not _under(gpuaccel.__file__, site):
        print(f"FAIL: not the kit's gpuaccel: imported from {gpuaccel.__file__}, not {site}")
        return 1
    if not cuda.is_available():
        reason = _C.gpu_unavailable_reason() or _C.cuda_backend_status()["reason"] or "none is visible"
        print(f"FAIL: no GPU: {reason}")
        return 1
    names = [cuda.get_device_name(i) for i in range(cuda.device_count())]
    print(f"GPU: {cuda.device_count()} visible to gpuaccel: {', '.join(names)}")
    return 0


def _mapped_libraries():
    """The shared objects this process mapped that the check is about, by file."""
    keep = ("libcuda", "libcudart", "libcublas", "libcudnn", "libnccl", "libnvrtc",
            "libnvJitLink", "libdnnl", "libgomp", "libgpuaccel")
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if path.startswith("/") and os.path.basename(path).startswith(keep):
                found.add(path)
    return sorted(found)


def report(site):
    import numpy as np

    import gpuaccel
    from gpuaccel import _C, cuda
    problems = []
    print(f"gpuaccel {gpuaccel.__version__} from {os.path.dirname(gpuaccel.__file__)}")
    cuda.diagnose()
    if not cuda.is_available():
        problems.append("no GPU: " + (_C.gpu_unavailable_reason() or "none is visible"))
    else:
        for i in range(cuda.device_count()):
            print(f"GPU {i}: {cuda.get_device_name(i)}, compute capability "
                  f"{cuda.get_device_capability(i)}")
        # One op on the GPU so cuBLAS(Lt) and the backend's kernels are really loaded.
        x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096
        with gpuaccel.device("/GPU:0"):
            y = gpuaccel.matmul(gpuaccel.constant(x), gpuaccel.constant(x)).numpy()
        if not np.allclose(y, x @ x, rtol=1e-4, atol=1e-4):
            problems.append("a 64x64 matmul on GPU:0 differs from NumPy's")
    status = _C.cuda_backend_status()
    backend = status["library_path"]
    print(f"CUDA backend: {backend} (loaded: {status['loaded']})")
    if not status["loaded"] or not _under(backend, site):
        problems.append(f"the CUDA backend {backend or '(none)'} is not the kit's (under {site})")
    libraries = status["libraries"]
    if not libraries:
        problems.append("the backend reports no CUDA library it loaded")
    for lib in libraries:
        loaded = lib["loaded_path"] or "not loaded"
        print(f"  {lib['soname']}: {loaded} (version {lib['version']})"
              + (f" ERROR {lib['error']}" if lib["error"] else ""))
        if lib["error"] or "/nvidia/" not in os.path.realpath(loaded):
            problems.append(f"{lib['soname']} loaded from {loaded}, not an nvidia-* wheel")
    print("mapped by this process:")
    for path in _mapped_libraries():
        name = os.path.basename(path)
        real = os.path.realpath(path)
        print(f"  {path}" + (f" -> {real}" if real != path else ""))
        if name.startswith(("libgpuaccel", "libdnnl", "libgomp")):
            if not _under(path, site):
                problems.append(f"{name} mapped from {path}, not the kit's {site}")
        elif name.startswith(("libcuda.so", "libcudadebugger.so")):
            pass  # the driver's: always the machine's
        elif "/nvidia/" not in real:
            problems.append(f"{name} mapped from {path}, not an nvidia-* wheel")
    for problem in problems:
        print("FAIL:", problem)
    print("report:", "FAIL" if problems else "PASS")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("gate", "report"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit({"gate": gate, "report": report}[sys.argv[1]](sys.argv[2]))
