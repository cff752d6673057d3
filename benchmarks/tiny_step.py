"""Microseconds per training step of a model with almost nothing to compute (Keras
`Dense(1)` on 8 features, batch 64, SGD, MSE): what autograd, the op frontends, the optimizer
and the Python loop cost per step (issue 17's target: fit step <= 50 us).

    python benchmarks/tiny_step.py [--steps 2000] [--repeats 5]

Each thread count runs in its own subprocess (OMP_NUM_THREADS=1 and 2); per run it times
`fit` over --steps batches and the same number of direct `_C.Trainer.train_step` calls on one
prepared batch (the C++ step plus the binding, no data pipeline, no callbacks), alternating,
and keeps the fastest of --repeats. The difference between the two is the Python loop. Prints
the CPU's instruction sets and the load average, since a shared machine moves these numbers."""
import argparse
import os
import sys
import textwrap

from _bench_context import cpu_line, load_line, run_workload

BODY = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    from gpuaccel import keras
    from gpuaccel.keras._data_adapter import adapt
    steps, repeats = int(sys.argv[1]), int(sys.argv[2])
    x = np.random.default_rng(0).normal(size=(64 * steps, 8)).astype(np.float32)
    y = np.zeros((len(x), 1), np.float32)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x[:640], y[:640], batch_size=64, verbose=0)
    trainer = model._trainer_for("fit")
    xb, yb = next(iter(adapt(x[:64], y[:64], 64, False, None, "fit").batches(
        shuffle=False, rng=np.random.default_rng(0))))
    fit, direct = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        model.fit(x, y, batch_size=64, epochs=1, verbose=0)
        fit.append((time.perf_counter() - start) / steps)
        start = time.perf_counter()
        for _ in range(steps):
            trainer.train_step(xb, yb)
        direct.append((time.perf_counter() - start) / steps)
    print("RESULT " + json.dumps({"fit_us": 1e6 * min(fit), "step_us": 1e6 * min(direct)}))
""")


def run(threads, steps, repeats):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    return run_workload([sys.executable, "-c", BODY, str(steps), str(repeats)], env)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(cpu_line())
    print(f"before: {load_line()}")
    print(f"Tiny Dense(1) model, batch 64, SGD, best of {args.repeats} x {args.steps} steps:")
    for threads in (1, 2):
        r = run(threads, args.steps, args.repeats)
        if "error" in r:
            print(f"  {threads} thread(s): failed: {r['error']}")
            continue
        print(f"  {threads} thread(s): fit step {r['fit_us']:6.1f} us (target <= 50)   "
              f"train_step alone {r['step_us']:6.1f} us   Python loop "
              f"{r['fit_us'] - r['step_us']:+6.1f} us")
    print(f"after: {load_line()}")


if __name__ == "__main__":
    main()
