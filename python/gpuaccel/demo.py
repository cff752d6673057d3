"""``python -m gpuaccel.demo``: the first thing to run after installing.

Prints the device report (versions, CPU features, GPUs or why there are none) and runs a small
float32 matmul on every logical device, checked against a float64 reference. Exits non-zero
when a result is wrong, so set-up scripts can rely on it.
"""
import sys

from . import _C, config, info
from ._placement import device


def run_matmul_on_every_device(n=256):
    """Returns one result dict per logical device (see ``_C.matmul_self_check``)."""
    results = []
    for logical in config.list_logical_devices():
        with device(logical.name):
            _C.matmul_self_check(n)  # warm-up: the first call pays library set-up (JIT, handles)
            results.append(_C.matmul_self_check(n))
    return results


def main(argv=None):
    print(info.report())
    print()
    print("Matmul self-check (float32, 256 x 256, against a float64 reference):")
    failed = False
    for r in run_matmul_on_every_device():
        ok = r["max_abs_error"] <= r["tolerance"]
        failed |= not ok
        print(f"  {r['device']:<46} {r['gflops']:8.2f} GFLOP/s   max |error| "
              f"{r['max_abs_error']:.2e}   {'OK' if ok else 'WRONG'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
