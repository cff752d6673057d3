#!/usr/bin/env bash
# Builds benchmarks/onednn_ops_bench.cc with g++ straight from the oneDNN CPU backend sources
# and the two core files they need (no CMake target) and runs it twice: on one OpenMP thread
# (the ratios that stay meaningful when other work shares the cores: no thread ever waits at a
# barrier for a descheduled sibling) and on all threads (absolute speed; noisy on a busy box).
# Usage: benchmarks/onednn_ops.sh [matmul size (4096)] [matmul rounds (3)] [conv rounds (30)]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${TMPDIR:-/tmp}/gpuaccel_onednn_ops_bench"
g++ -std=c++17 -O2 -DNDEBUG -fopenmp -Icpp -o "$out" benchmarks/onednn_ops_bench.cc \
  cpp/backends/cpu/onednn_context.cc cpp/backends/cpu/onednn_matmul.cc \
  cpp/backends/cpu/onednn_conv.cc cpp/backends/cpu/onednn_pool.cc \
  cpp/backends/cpu/onednn_softmax.cc cpp/backends/cpu/onednn_norm.cc \
  cpp/core/dtype.cc cpp/core/errors.cc -ldnnl -lpthread
echo "== uptime: $(uptime)"
OMP_NUM_THREADS=1 "$out" "$@"
echo "== uptime: $(uptime)"
"$out" "$@"
