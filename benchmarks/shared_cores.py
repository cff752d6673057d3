"""The course CNN's step on 2 threads when other work shares the cores: gpuaccel (with its
default OpenMP wait policy, and with libgomp's own spinning policy as the "before") beside
Keras on TensorFlow, each measured idle and with a competing busy loop on every core, in one
invocation. Prints each slowdown (loaded / idle) and ours against Keras's.

    python benchmarks/shared_cores.py [--steps 60] [--rounds 2]

The load is one Python process per core spinning in a loop, started before each loaded run
and stopped after it. Runs alternate so drifts in the machine's speed hit every framework alike.
"""
import argparse
import multiprocessing
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_cnn import GPUACCEL, KERAS, run  # noqa: E402  (one definition of each workload)

CONFIGS = {
    "gpuaccel": (GPUACCEL, {}),
    # libgomp's own default: long spinning at barriers (what gpuaccel did before it chose).
    "gpuaccel (OMP_WAIT_POLICY=ACTIVE)": (GPUACCEL, {"OMP_WAIT_POLICY": "ACTIVE"}),
    "keras/tf": (KERAS, {}),
}


def _spin():
    while True:
        pass


def timed(name, steps, loaded):
    code, env = CONFIGS[name]
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    load = [multiprocessing.Process(target=_spin, daemon=True)
            for _ in range(os.cpu_count() if loaded else 0)]
    for p in load:
        p.start()
    try:
        result = run(code, sys.executable, steps)
    finally:
        for p in load:
            p.terminate()
            p.join()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if "error" in result:
        raise SystemExit(f"{name} failed: {result['error']}")
    return 1000 * result["seconds"] / result["steps"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60, help="batches per timed epoch")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    import gpuaccel
    flags = gpuaccel._C.cpu_info()["flags"]
    print(f"CPU: {os.cpu_count()} cores, flags: {', '.join(k for k, v in flags.items() if v)}")
    times = {(name, loaded): [] for name in CONFIGS for loaded in (False, True)}
    for _ in range(args.rounds):
        for loaded in (False, True):
            for name in CONFIGS:
                times[(name, loaded)].append(timed(name, args.steps, loaded))
    print(f"Course CNN, batch 64, float32, 2 threads, {args.steps} steps, median of "
          f"{args.rounds}; load: {os.cpu_count()} spinning processes")
    median = {key: statistics.median(v) for key, v in times.items()}
    keras_slowdown = median[("keras/tf", True)] / median[("keras/tf", False)]
    for name in CONFIGS:
        idle, busy = median[(name, False)], median[(name, True)]
        slowdown = busy / idle
        print(f"  {name:<34} idle {idle:7.1f} ms/step   loaded {busy:7.1f} ms/step   "
              f"slowdown {slowdown:5.2f}x   (vs keras's slowdown: {slowdown / keras_slowdown:.2f})")


if __name__ == "__main__":
    main()
