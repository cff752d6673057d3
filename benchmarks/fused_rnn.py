"""The fused recurrent op against the unrolled trace it replaces (issue 30), op by op: one
Keras LSTM or GRU layer's forward and backward (GradientTape, gradients of the input and every
weight), once on the fused op (`_C.fused_rnn`: oneDNN's RNN primitives on the CPU) and once with
`unroll=True` (the per-step trace), same weights, same process, alternating.

    PYTHONPATH=build/dev/stage python benchmarks/fused_rnn.py [--threads 1] [--repeats 5]
                                                              [--quick: the two small shapes]

Prints the CPU's instruction sets and the load average (a shared machine moves these numbers);
the ratio is unrolled / fused. Set the thread count before gpuaccel starts: it runs each
configuration in a fresh process."""
import argparse
import json
import os
import sys
import textwrap

from _bench_context import cpu_line, load_line, run_workload

# (layer, batch, time, features, units)
SHAPES = [("LSTM", 32, 20, 16, 32), ("GRU", 32, 20, 16, 32),
          ("LSTM", 64, 50, 32, 128), ("GRU", 64, 50, 32, 128)]

BODY = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import gpuaccel as ga
    from gpuaccel.keras import layers as L
    shapes, repeats, steps = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(0)
    results = []
    for name, batch, time_steps, features, units in shapes:
        x = ga.tensor(rng.normal(size=(batch, time_steps, features)).astype(np.float32))
        layers = {unroll: getattr(L, name)(units, return_sequences=True, unroll=unroll)
                  for unroll in (False, True)}
        for layer in layers.values():
            layer.build((None, time_steps, features))
        layers[True].set_weights(layers[False].get_weights())
        def step(layer):
            with ga.GradientTape() as tape:
                tape.watch(x)
                loss = ga.reduce_sum(layer(x))
            grads = tape.gradient(loss, [x] + list(layer.trainable_weights))
            grads[0].numpy()  # on the host: the step finished
        best = {}
        for unroll, layer in layers.items():
            for _ in range(3):
                step(layer)
            best[unroll] = float("inf")
        for _ in range(repeats):
            for unroll, layer in layers.items():
                start = time.perf_counter()
                for _ in range(steps):
                    step(layer)
                best[unroll] = min(best[unroll], (time.perf_counter() - start) / steps)
        results.append({"shape": [name, batch, time_steps, features, units],
                        "fused_ms": 1e3 * best[False], "unrolled_ms": 1e3 * best[True]})
    print("RESULT " + json.dumps(results))
""")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", default="1")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="only the two small shapes")
    args = parser.parse_args()
    shapes = SHAPES[:2] if args.quick else SHAPES
    env = dict(os.environ, OMP_NUM_THREADS=args.threads)
    print(cpu_line())
    print(f"before: {load_line()}")
    print(f"one layer's forward + backward (GradientTape), best of {args.repeats} x {args.steps}, "
          f"{args.threads} thread(s); ratio = unrolled / fused:")
    result = run_workload([sys.executable, "-c", BODY, json.dumps(shapes), str(args.repeats),
                           str(args.steps)], env)
    if isinstance(result, dict) and "error" in result:
        print(f"  failed: {result['error']}")
        return
    for row in result:
        name, batch, time_steps, features, units = row["shape"]
        print(f"  {name:4s} batch {batch:3d} time {time_steps:3d} features {features:3d} "
              f"units {units:3d}: fused {row['fused_ms']:8.3f} ms   unrolled "
              f"{row['unrolled_ms']:8.3f} ms   ratio {row['unrolled_ms'] / row['fused_ms']:.1f}")
    print(f"after: {load_line()}")


if __name__ == "__main__":
    main()
