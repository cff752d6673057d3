#!/usr/bin/env bash
# Builds benchmarks/allocator_bench.cc with g++ straight from the few core sources it needs (no
# CMake target, nothing else compiled) and runs it. Usage: benchmarks/allocator.sh [g++ flags]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${TMPDIR:-/tmp}/gpuaccel_allocator_bench"
g++ -std=c++17 -O2 -DNDEBUG -Icpp "$@" -o "$out" benchmarks/allocator_bench.cc \
  cpp/memory/pool_allocator.cc cpp/memory/host_sub_allocator.cc cpp/memory/memory_stats.cc \
  cpp/memory/oom_message.cc cpp/memory/allocation_observer.cc cpp/core/errors.cc -lpthread
"$out"
