"""Versions, as ``torch.version``: what this gpuaccel was built with.

``cuda`` is the CUDA toolkit the CUDA backend was compiled with ('13.0'), or None when gpuaccel
was built without it; ``cudnn`` the cuDNN it was compiled against as an int (91900 = 9.19.0), or
None; ``onednn`` the oneDNN library in use ('3.2.0'). What is loaded at run time (CUDA runtime,
driver, cuDNN) is in ``runtime()`` and in ``python -m gpuaccel.info``.
"""
from . import _C

_build = _C.build_info()

gpuaccel = _build["gpuaccel"]
__version__ = gpuaccel
cuda = _build["cuda"]
cudnn = _build["cudnn"]
onednn = _C.onednn_version()["version"]
hip = None  # torch.version.hip: course code checks it to tell ROCm builds apart
VERSION = gpuaccel  # tf.version.VERSION: TF tutorials print it

__all__ = ["gpuaccel", "cuda", "cudnn", "onednn", "hip", "VERSION", "runtime"]


def runtime():
    """Versions as loaded now (loads the CUDA backend if it was built). Unknown ones are None.

    Keys: ``cuda_runtime`` and ``cuda_driver`` ('12.4'), ``cudnn`` and ``cublas`` (ints in
    their libraries' encoding), ``onednn`` ('3.2.0').
    """
    status = _C.cuda_backend_status()

    def cuda_text(v):
        return _C.cuda_version_string(v) if v else None

    return {
        "cuda_runtime": cuda_text(status["runtime_version"]),
        "cuda_driver": cuda_text(status["driver_version"]),
        "cudnn": status["cudnn_version"],
        "cublas": status["cublas_version"],
        "onednn": onednn,
    }
