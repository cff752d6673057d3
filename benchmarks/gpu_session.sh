#!/usr/bin/env bash
# The GPU round of a session that has a device machine (docs/gpu.md, "A session with a GPU", with
# the call-by-call plan): builds gpuaccel with its CUDA backend on the bare device machine, runs
# the GPU GoogleTests and the gpu-marked pytest tests, the GPU benchmark and a profile of the
# course CNN's fit, and leaves every log under $OUT (the device tool brings back at most 8
# files; this writes session.log, nvidia-smi.txt, build.log, build_gpu.tgz, gtest_gpu.log,
# pytest_gpu.log, gpu_train.txt, profile.txt).
#
#   here, once (a machine with apt and internet):  bash benchmarks/gpu_session.sh fetch
#   on the device machine, carry [".gpu_session"]:  bash benchmarks/gpu_session.sh build, then
#                                                   test, then bench and profile (one call each)
#
# The device machine has CUDA 13 (nvcc), cuDNN and NCCL (PyTorch's nvidia-cudnn-cu13 and
# nvidia-nccl-cu13 wheels), pybind11, numpy, pytest, CMake and ninja, but no internet and no
# oneDNN or GoogleTest: `fetch` downloads oneDNN 3.2's PyPI wheels (the build's own oneDNN,
# cmake/onednn.cmake; 39 MB) into .gpu_session/wheels and GoogleTest's Debian package into
# .gpu_session/debs (ignored by git, carried by the tool), and the device side installs them
# into a private prefix (never into /). Phases (`all` runs the first four in one call, which
# is not expected to fit in 10 minutes):
#   build    configure and build build/gpu (sm_90; GPUACCEL_CUDA_ARCHITECTURES overrides;
#            GPUACCEL_SESSION_GTEST=OFF leaves out the GoogleTest binary, about half the build)
#   test     the GPU GoogleTests and `pytest -m gpu` (modules needing TensorFlow cannot be
#            collected there; they are listed, not fatal)
#   bench    benchmarks/gpu_train.py (PYTHONUNBUFFERED; also copied to $OUT)
#   profile  two epochs of the course CNN with gpuaccel's profiler on steps 20-30, analyzed
#   all      build, test, bench, profile
#   shell C  the command C (one argument) in build/gpu with the session's environment and
#            PYTHONPATH set, e.g. shell 'CUDA_LAUNCH_BLOCKING=1 ctest -R CudaOps.Matmul'
# The machine goes back about 30 s after a call, so a later call usually finds it bare: `build`
# therefore also leaves build_gpu.tgz in $OUT (the stage, the test binary and CTest's files, a
# few MB). Copied into .gpu_session/ and carried, it lets test/bench/profile run on a fresh
# machine without building again (docs/gpu.md, "A session with a GPU", has the call plan).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
REPO=$PWD
OUT=${OUT:-$REPO/build/gpu_session_out}
SESSION=$REPO/.gpu_session
PREFIX=${GPUACCEL_SESSION_PREFIX:-/tmp/gpuaccel_session_prefix}
BUILD=${GPUACCEL_SESSION_BUILD:-$REPO/build/gpu}
PYTHON=${PYTHON:-python3}
DEBS="libgtest-dev"
ONEDNN_WHEELS="onednn-devel-cpu-gomp==2023.2.0 onednn-cpu-gomp==2023.2.0"  # as pyproject.toml pins
mkdir -p "$OUT"

log() { echo "== gpu_session: $*" | tee -a "$OUT/session.log"; }

# The folder of an installed nvidia-* wheel package (nvidia.cudnn, nvidia.nccl), or nothing.
# These wheels ship no __init__.py (nvidia-cudnn-cu12 9.10 and nvidia-cudnn-cu13 9.19 checked),
# so the package is a namespace package whose __file__ is None; its __path__ names the folder.
wheel_dir() {
  "$PYTHON" -c 'import importlib, sys; print(list(importlib.import_module(sys.argv[1]).__path__)[0])' "$1" 2>/dev/null
}

fetch() {
  mkdir -p "$SESSION/debs"
  (cd "$SESSION/debs" && apt-get download $DEBS) || { echo "apt-get download failed"; exit 1; }
  "$PYTHON" -m pip download -q --no-deps -d "$SESSION/wheels" $ONEDNN_WHEELS \
    || { echo "pip download of oneDNN failed"; exit 1; }
  ls -la "$SESSION/debs" "$SESSION/wheels"
}

# The carried packages, unpacked into $PREFIX; the CUDA compiler and cuDNN of the machine.
prepare() {
  if [ ! -d "$SESSION/debs" ] || [ ! -d "$SESSION/wheels" ]; then
    echo "no $SESSION/debs: run 'bash benchmarks/gpu_session.sh fetch' where apt works, and carry .gpu_session"
    exit 1
  fi
  mkdir -p "$PREFIX"
  for deb in "$SESSION"/debs/*.deb; do
    if command -v dpkg >/dev/null; then dpkg -x "$deb" "$PREFIX"
    else (cd "$PREFIX" && ar p "$deb" data.tar.xz | tar xJ); fi
  done
  LIBDIR=$PREFIX/usr/lib/x86_64-linux-gnu
  ONEDNN_CONFIG=$PREFIX/onednn/lib/cmake/dnnl
  # Once per machine (a second install would touch the headers and rebuild everything).
  # --ignore-installed: pip otherwise skips wheels the Python environment already has, and the
  # prefix stays empty.
  if [ ! -f "$ONEDNN_CONFIG/dnnl-config.cmake" ]; then
    "$PYTHON" -m pip install -q --no-deps --no-index --ignore-installed --prefix "$PREFIX/onednn" \
      "$SESSION"/wheels/*.whl || { echo "installing the carried oneDNN wheels failed"; exit 1; }
  fi
  [ -f "$ONEDNN_CONFIG/dnnl-config.cmake" ] \
    || { echo "the carried oneDNN wheels left no $ONEDNN_CONFIG/dnnl-config.cmake"; exit 1; }
  export LD_LIBRARY_PATH=$PREFIX/onednn/lib:$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PATH=$PATH:/usr/local/cuda/bin
  NVCC=$(command -v nvcc) || { echo "no nvcc on this machine"; exit 1; }
  # cuDNN from the nvidia-cudnn wheel: headers and libcudnn.so.9, but no unversioned libcudnn.so
  # for the linker, so a private folder gets one.
  CUDNN_WHEEL=${CUDNN_ROOT:-$(wheel_dir nvidia.cudnn)}
  CUDNN=""
  if [ -n "$CUDNN_WHEEL" ] && [ -d "$CUDNN_WHEEL/lib" ]; then
    CUDNN=$PREFIX/cudnn
    mkdir -p "$CUDNN/lib"
    ln -sfn "$CUDNN_WHEEL/include" "$CUDNN/include"
    for lib in "$CUDNN_WHEEL"/lib/libcudnn*.so.*; do ln -sf "$lib" "$CUDNN/lib/"; done
    ln -sf "$CUDNN_WHEEL/lib/libcudnn.so.9" "$CUDNN/lib/libcudnn.so"
    export LD_LIBRARY_PATH=$CUDNN_WHEEL/lib:$LD_LIBRARY_PATH
  fi
  # NCCL's headers from the nvidia-nccl wheel when there is one (PyTorch's); else the toolkit's.
  NCCL=${NCCL_ROOT:-$(wheel_dir nvidia.nccl)}
  [ -n "$NCCL" ] && [ ! -f "$NCCL/include/nccl.h" ] && NCCL=""
  log "nvcc $NVCC ($("$NVCC" --version | tail -1)); cuDNN ${CUDNN_WHEEL:-not found}; NCCL ${NCCL:-from the toolkit if any}; python $("$PYTHON" --version)"
  nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 || true
}

build() {
  log "configure and build $BUILD"
  local start=$SECONDS
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGPUACCEL_CUDA=ON -DGPUACCEL_CUDA_ARCHITECTURES="${GPUACCEL_CUDA_ARCHITECTURES:-90}" \
    -DGPUACCEL_BUILD_TESTS="${GPUACCEL_SESSION_GTEST:-ON}" -DCMAKE_CUDA_COMPILER="$NVCC" \
    -DCMAKE_PREFIX_PATH="$PREFIX/usr" -Ddnnl_DIR="$ONEDNN_CONFIG" -DGTest_DIR="$LIBDIR/cmake/GTest" \
    ${CUDNN:+-DGPUACCEL_CUDNN_ROOT="$CUDNN"} ${NCCL:+-DGPUACCEL_NCCL_ROOT="$NCCL"} \
    -DPython_EXECUTABLE="$(command -v "$PYTHON")" \
    -Dpybind11_DIR="$("$PYTHON" -m pybind11 --cmakedir)" >"$OUT/build.log" 2>&1 \
    || { tail -40 "$OUT/build.log"; exit 1; }
  # A backend without cuDNN has no convolution, pooling or batch norm: every GPU test and the
  # benchmark would fail, so stop here instead of spending the session's device time on it.
  if ! grep -m1 'CUDA backend ON' "$OUT/build.log" | grep -qE 'cuDNN [0-9]+'; then
    log "configured WITHOUT cuDNN ($(grep -m1 'CUDA backend ON' "$OUT/build.log")); cuDNN wheel: ${CUDNN_WHEEL:-not found}"
    [ "${GPUACCEL_SESSION_ALLOW_NO_CUDNN:-0}" = 1 ] || exit 1
  fi
  cmake --build "$BUILD" -j"$(nproc)" >>"$OUT/build.log" 2>&1 || { grep -m20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
  log "built in $((SECONDS - start)) s; $(grep -m1 -E 'CUDA backend ON' "$OUT/build.log" | sed 's/^-- //')"
  grep -E 'built without (NCCL|it)' "$OUT/build.log" | sed 's/^-- /== gpu_session: /' | tee -a "$OUT/session.log" || true
  pack
}

# What test/bench/profile need from build/gpu, for a later call on a fresh machine: the staged
# package (with libgpuaccel_cuda.so), the GoogleTest binary, the fake libraries and CTest's
# files (absolute paths: the repository sits at the same place on every device machine).
pack() {
  local rel=${BUILD#"$REPO"/}
  (cd "$REPO" && tar czf "$OUT/build_gpu.tgz" --exclude='*.o' --exclude='*.a' --exclude='CMakeFiles' \
     --exclude='*.ninja' --exclude='.ninja_*' --exclude='_deps' "$rel") \
    || { log "packing $BUILD failed"; rm -f "$OUT/build_gpu.tgz"; return; }
  local bytes
  bytes=$(stat -c %s "$OUT/build_gpu.tgz")
  if [ "$bytes" -gt $((15 * 1024 * 1024)) ]; then
    log "build_gpu.tgz is $bytes bytes, over what comes back from \$OUT: not kept"
    rm -f "$OUT/build_gpu.tgz"
  else
    log "build_gpu.tgz: $bytes bytes (copy it into .gpu_session/ to skip the build in a later call)"
  fi
}

# test/bench/profile on a machine where build/gpu is gone: unpack the carried build_gpu.tgz.
need_build() {
  [ -d "$BUILD/stage/gpuaccel" ] && return
  if [ -f "$SESSION/build_gpu.tgz" ]; then
    log "no $BUILD here: unpacking the carried .gpu_session/build_gpu.tgz"
    (cd "$REPO" && tar xzf "$SESSION/build_gpu.tgz") || { log "unpacking failed"; exit 1; }
  else
    log "no $BUILD and no .gpu_session/build_gpu.tgz: run the build phase first"; exit 1
  fi
}

stage_env() {
  need_build
  export PYTHONPATH=$BUILD/stage
  "$PYTHON" -c 'import gpuaccel as g; print("gpuaccel sees", g.cuda.device_count(), "GPU(s):", g.cuda.get_device_name(0)); g.cuda.diagnose()' \
    2>&1 | tee -a "$OUT/session.log" || exit 1
}

tests() {
  stage_env
  if [ ! -x "$BUILD/gpuaccel_tests" ]; then
    log "no GoogleTest binary (built with GPUACCEL_SESSION_GTEST=OFF): GPU GoogleTests skipped"
  else
    log "GPU GoogleTests"
    # Through CTest, one process per test as in CI: in one process the CUDA-wheel tests leave
    # their fake libnccl.so.2 loaded (and fail themselves after other tests loaded the real
    # libraries), so a later NcclOnGpu test would open the fake instead of NCCL.
    (cd "$BUILD" && ctest -R 'Cuda|Gpu|GPU' --output-on-failure --timeout 300) >"$OUT/gtest_gpu.log" 2>&1
    log "gtest exit $?: $(grep -E 'tests passed|tests failed' "$OUT/gtest_gpu.log" | tr '\n' ' ')"
  fi
  log "pytest -m gpu"
  # --timeout needs the pytest-timeout plugin, which the device machine may lack (pytest would
  # then refuse the option and run nothing).
  local timeout_arg=""
  "$PYTHON" -c 'import pytest_timeout' 2>/dev/null && timeout_arg="--timeout=300"
  (cd /tmp && "$PYTHON" -m pytest "$REPO/tests/python" -m gpu -q -p no:cacheprovider \
     --rootdir="$REPO" --continue-on-collection-errors $timeout_arg >"$OUT/pytest_gpu.log" 2>&1)
  log "pytest exit $?: $(tail -1 "$OUT/pytest_gpu.log")"
}

bench() {
  stage_env
  log "benchmarks/gpu_train.py"
  (cd /tmp && PYTHONUNBUFFERED=1 "$PYTHON" "$REPO/benchmarks/gpu_train.py" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/gpu_train.txt")
}

profile() {
  stage_env
  log "profile of the course CNN's fit on GPU:0 (steps 20-30)"
  (cd /tmp && "$PYTHON" - /tmp/gpuaccel_profile >"$OUT/profile.txt" 2>&1 <<'EOF'
import sys
import numpy as np
import gpuaccel as ga
from gpuaccel import keras
L = keras.layers
rng = np.random.default_rng(0)
x = rng.random((64 * 100, 28, 28, 1), dtype=np.float32)
y = rng.integers(0, 10, len(x)).astype(np.int64)
with ga.device("/GPU:0"):
    model = keras.Sequential([keras.Input((28, 28, 1)), L.Conv2D(32, 3, activation="relu"),
        L.MaxPooling2D(2), L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(2),
        L.Conv2D(64, 3, activation="relu"), L.Flatten(), L.Dense(64, activation="relu"), L.Dense(10)])
    model.compile(optimizer="adam", metrics=["accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=64, epochs=2, verbose=0,
              callbacks=[keras.callbacks.TensorBoard(sys.argv[1], profile_batch=(20, 30))])
ga.profiler.analyze(sys.argv[1])
EOF
  )
  log "profile exit $?"; tail -30 "$OUT/profile.txt"
}

case "${1:-all}" in
  fetch) fetch ;;
  build) prepare; build ;;
  test) prepare; tests ;;
  bench) prepare; bench ;;
  profile) prepare; profile ;;
  all) prepare; build; tests; bench; profile ;;
  shell) prepare; stage_env; log "shell: ${2:?the command to run}"
         (cd "$BUILD" && bash -c "$2") 2>&1 | tee -a "$OUT/session.log" ;;
  *) echo "usage: $0 fetch|build|test|bench|profile|all|shell COMMAND"; exit 2 ;;
esac
