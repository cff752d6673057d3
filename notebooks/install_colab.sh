#!/usr/bin/env bash
# What every notebook's install cell runs when no release wheel is published (its WHEEL_SOURCE
# empty, or the wheel failed to install: docs/colab.md), on Colab or any Linux machine with Python
# and a C++ compiler: installs gpuaccel from this clone with pip, then prints its environment report.
# With an NVIDIA GPU and nvcc (Colab ships a CUDA 12 toolkit at /usr/local/cuda), the CUDA
# backend is compiled against that toolkit -- so it runs on Colab's driver, which may be older
# than CUDA 13 needs -- and only for the GPU that is there (a T4: sm_75), a few minutes instead
# of the five architectures of a release build. At run time its cuBLAS, cuDNN and NCCL come from
# the nvidia-* wheels PyTorch installs (or the system's); gpuaccel.cuda.diagnose() says which.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

pip_args=()
if command -v nvidia-smi >/dev/null 2>&1; then
  capability=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 || true)
  if [[ "$capability" =~ ^([0-9]+)\.([0-9]+)$ ]]; then
    pip_args+=(-C "cmake.define.GPUACCEL_CUDA_ARCHITECTURES=${BASH_REMATCH[1]}${BASH_REMATCH[2]}")
    echo "== gpuaccel install: GPU of compute capability $capability, CUDA backend for sm_${BASH_REMATCH[1]}${BASH_REMATCH[2]}"
  fi
fi

# cuDNN and NCCL from the nvidia-* wheels PyTorch installed, when they are there: at run time
# gpuaccel loads those wheels' libraries before the system's (docs/gpu.md), and cuDNN promises
# only that a build runs with the same or a newer minor release, so the backend is compiled
# against the copy it will load (and with NCCL, which Colab's toolkit lacks). pip builds in an
# isolated environment where CMake cannot import the wheels itself. They are namespace packages:
# their folder is __path__[0] (they have no __file__).
wheel_dir() {
  "$PYTHON" -c "import importlib; print(list(importlib.import_module('$1').__path__)[0])" 2>/dev/null || true
}
cudnn_wheel=$(wheel_dir nvidia.cudnn)
if [ -n "$cudnn_wheel" ] && [ -f "$cudnn_wheel/include/cudnn_version.h" ]; then
  pip_args+=(-C "cmake.define.GPUACCEL_CUDNN_ROOT=$cudnn_wheel")
fi
nccl_wheel=$(wheel_dir nvidia.nccl)
if [ -n "$nccl_wheel" ] && [ -f "$nccl_wheel/include/nccl.h" ]; then
  pip_args+=(-C "cmake.define.GPUACCEL_NCCL_ROOT=$nccl_wheel")
fi
if [ ${#pip_args[@]} -gt 0 ]; then echo "== gpuaccel install: pip options ${pip_args[*]}"; fi

# The course's Fashion-MNIST, read offline by gpuaccel.keras.datasets.fashion_mnist (Debian and
# Ubuntu package it). Optional: only 03_entrenamiento and the homework need it.
if [ ! -d /usr/share/datasets/fashion-mnist ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  apt-get install -y -qq dataset-fashion-mnist >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq dataset-fashion-mnist >/dev/null 2>&1; } ||
    echo "== gpuaccel install: dataset-fashion-mnist not installed (apt); the notebooks that train on it will say so"
fi

echo "== gpuaccel install: pip install (a few minutes: it compiles the C++ core and, with a GPU, the CUDA backend)"
"$PYTHON" -m pip install -q --disable-pip-version-check ".[notebooks]" "${pip_args[@]}"
(cd /tmp && "$PYTHON" -m gpuaccel.info)
