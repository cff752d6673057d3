#!/usr/bin/env bash
# Configures (once) and builds one C++ benchmark target in a CMake build folder, and prints the
# binary's path: the benchmark scripts share this instead of each compiling sources by hand.
# Usage: benchmarks/build_target.sh <target> [build dir (build/bench)]
set -euo pipefail
cd "$(dirname "$0")/.."
target="$1"
build="${2:-build/bench}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  # oneDNN: PyPI's onednn-devel-cpu-gomp in ${PYTHON:-python3}'s environment (cmake/onednn.cmake).
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUACCEL_CUDA=OFF \
    -DGPUACCEL_BUILD_PYTHON=OFF -DGPUACCEL_BUILD_BENCHMARKS=ON \
    -DPython_EXECUTABLE="$(command -v "${PYTHON:-python3}")" >&2
fi
cmake --build "$build" --target "$target" >&2
echo "$build/benchmarks/$target"
