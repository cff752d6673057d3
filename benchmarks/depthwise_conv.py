"""Training-step time of a model of DepthwiseConv2D layers, gpuaccel against Keras 3 on
TensorFlow (issue 30: the depthwise convolution as one grouped conv2d op instead of one conv2d
per input channel).

    python benchmarks/depthwise_conv.py [--steps 50] [--repeats 3] [--batch 64]

Model: Input (32, 32, 32) -> DepthwiseConv2D(3, 'same', relu) -> DepthwiseConv2D(3, 'same',
depth_multiplier=2, relu) -> GlobalAveragePooling2D -> Dense(10); SGD, sparse categorical
crossentropy from logits. Each framework and thread count runs in its own process
(OMP_NUM_THREADS, and TensorFlow's intra-op threads, set to it): one warm-up epoch, then
--repeats epochs of --steps batches, the fastest kept, as milliseconds per fit step. Prints the
CPU's instruction sets and the load average, since a shared machine moves these numbers."""
import argparse
import os
import sys
import textwrap

from _bench_context import cpu_line, load_line, run_workload

BODY = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    framework, steps, repeats, batch, threads = sys.argv[1], *map(int, sys.argv[2:6])
    if framework == "keras":
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        import keras
    else:
        from gpuaccel import keras
    L = keras.layers
    model = keras.Sequential([
        keras.Input((32, 32, 32)),
        L.DepthwiseConv2D(3, padding="same", activation="relu"),
        L.DepthwiseConv2D(3, padding="same", depth_multiplier=2, activation="relu"),
        L.GlobalAveragePooling2D(), L.Dense(10)])
    model.compile(optimizer="sgd",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch * steps, 32, 32, 32)).astype(np.float32)
    y = rng.integers(0, 10, len(x))
    model.fit(x, y, batch_size=batch, epochs=1, verbose=0)  # warm-up (traces, primitives)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
        times.append((time.perf_counter() - start) / steps)
    print("RESULT " + json.dumps({"step_ms": 1e3 * min(times)}))
""")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    print(cpu_line())
    print(f"before: {load_line()}")
    print(f"DepthwiseConv2D x2 on (32, 32, 32), batch {args.batch}, SGD, best of "
          f"{args.repeats} epochs of {args.steps} steps, ms per fit step:")
    for threads in (1, 2):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), TF_CPP_MIN_LOG_LEVEL="2")
        times = {}
        for framework in ("gpuaccel", "keras"):
            r = run_workload([sys.executable, "-c", BODY, framework, str(args.steps),
                              str(args.repeats), str(args.batch), str(threads)], env)
            times[framework] = r.get("step_ms")
            if "error" in r:
                print(f"  {threads} thread(s) {framework}: failed: {r['error']}")
        if None not in times.values():
            print(f"  {threads} thread(s): gpuaccel {times['gpuaccel']:7.2f} ms   Keras/TF "
                  f"{times['keras']:7.2f} ms   ratio {times['gpuaccel'] / times['keras']:.2f}")
    print(f"after: {load_line()}")


if __name__ == "__main__":
    main()
