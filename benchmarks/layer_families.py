"""One training step per keras.layers family, gpuaccel against Keras on the same cores (issue 30,
part 4: new layers must go through the C++ step and stay fast). Each family is a small model
built from that family's layers; both frameworks build it from the same source text, and the
time of one `train_on_batch` (forward, backward, Adam update) is compared.

    python benchmarks/layer_families.py [--steps 30] [--repeats 3] [--batch 32]
                                        [--families convolution,recurrent] [--threads 2]

Each framework runs in its own fresh process with the same thread count (OMP_NUM_THREADS for
gpuaccel; TensorFlow's intra-op threads for Keras, inter-op 1). A family whose layers one of
the two does not have is reported as such, not timed. Prints the CPU's instruction sets and the
load average, since a shared machine moves these numbers; the ratio is ours / Keras's."""
import argparse
import os
import sys
import textwrap

from _bench_context import cpu_line, load_line, run_workload

# family -> (input shape, integer inputs?, the layers between Input and the Dense(8) head, as
# source text over `L` = the framework's keras.layers). Functional where a layer takes two
# inputs (attention).
FAMILIES = {
    "core": ((64,), False, "x = L.Dense(128, activation='relu')(x); x = L.Dense(64)(x)"),
    "convolution": ((16, 16, 8), False,
                    "x = L.Conv2D(16, 3, padding='same', activation='relu')(x); "
                    "x = L.Conv2D(16, 3)(x); x = L.GlobalAveragePooling2D()(x)"),
    "transposed convolution": ((8, 8, 8), False,
                               "x = L.Conv2DTranspose(8, 3, strides=2, padding='same')(x); "
                               "x = L.GlobalAveragePooling2D()(x)"),
    "volume convolution": ((8, 12, 12, 4), False,
                           "x = L.Conv3D(8, 3, padding='same', activation='relu')(x); "
                           "x = L.Conv3DTranspose(4, 2, strides=2)(x); "
                           "x = L.GlobalAveragePooling3D()(x)"),
    "depthwise and separable convolution": ((16, 16, 8), False,
                                            "x = L.DepthwiseConv2D(3, padding='same')(x); "
                                            "x = L.SeparableConv2D(16, 3)(x); "
                                            "x = L.GlobalAveragePooling2D()(x)"),
    "pooling": ((16, 16, 8), False,
                "x = L.MaxPooling2D(2)(x); x = L.AveragePooling2D(2)(x); "
                "x = L.GlobalMaxPooling2D()(x)"),
    "normalization": ((16, 16, 8), False,
                      "x = L.BatchNormalization()(x); x = L.LayerNormalization()(x); "
                      "x = L.GroupNormalization(4)(x); x = L.GlobalAveragePooling2D()(x)"),
    "regularization and reshaping": ((16, 16, 8), False,
                                     "x = L.Dropout(0.2)(x); x = L.SpatialDropout2D(0.2)(x); "
                                     "x = L.ZeroPadding2D(1)(x); x = L.Cropping2D(1)(x); "
                                     "x = L.Flatten()(x)"),
    "merging": ((64,), False,
                "a = L.Dense(32)(x); b = L.Dense(32)(x); "
                "x = L.Concatenate()([L.Add()([a, b]), L.Multiply()([a, b])])"),
    "embedding": ((20,), True, "x = L.Embedding(100, 16)(x); x = L.GlobalAveragePooling1D()(x)"),
    # A text model's vocabulary: the cost the row-gather kernels took off the vocabulary size.
    "embedding (20000 words)": ((100,), True,
                                "x = L.Embedding(20000, 64)(x); x = L.GlobalAveragePooling1D()(x)"),
    "attention": ((20, 16), False,
                  "x = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x); "
                  "x = L.GlobalAveragePooling1D()(x)"),
    "recurrent": ((20, 16), False, "x = L.LSTM(32, return_sequences=True)(x); x = L.GRU(32)(x)"),
    # The same layers with their time loop unrolled (gpuaccel: the per-step trace the fused RNN
    # op replaces; Keras: its static unroll), so one invocation compares the two paths.
    "recurrent unrolled": ((20, 16), False,
                           "x = L.LSTM(32, return_sequences=True, unroll=True)(x); "
                           "x = L.GRU(32, unroll=True)(x)"),
    "convolutional recurrent": ((4, 8, 8, 2), False,
                                "x = L.ConvLSTM2D(8, 3, padding='same')(x); "
                                "x = L.GlobalAveragePooling2D()(x)"),
}

BODY = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    framework, families, steps, repeats, batch = sys.argv[1], json.loads(sys.argv[2]), \\
        int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    if framework == "keras":
        import tensorflow as tf
        threads = int(os.environ["OMP_NUM_THREADS"])
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        import keras
    else:
        from gpuaccel import keras
    L = keras.layers
    rng = np.random.default_rng(0)
    results = {}
    for name, (shape, integer, source) in families.items():
        try:
            inputs = x = keras.Input(tuple(shape), dtype="int32" if integer else "float32")
            exec(source)
            model = keras.Model(inputs, L.Dense(8)(x))
            model.compile(optimizer="adam", loss="mse")
        except (AttributeError, NotImplementedError) as error:
            results[name] = {"unavailable": f"{type(error).__name__}: {error}"[:160]}
            continue
        xb = (rng.integers(0, 100, (batch, *shape)).astype(np.int32) if integer
              else rng.normal(size=(batch, *shape)).astype(np.float32))
        yb = rng.normal(size=(batch, 8)).astype(np.float32)
        for _ in range(3):
            model.train_on_batch(xb, yb)
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(steps):
                loss = model.train_on_batch(xb, yb)
            float(np.asarray(loss).ravel()[0])  # the step's result is on the host: it finished
            best = min(best, (time.perf_counter() - start) / steps)
        results[name] = {"ms": 1e3 * best}
    print("RESULT " + json.dumps(results))
""")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", default="2")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help=f"comma-separated, of: {', '.join(FAMILIES)}")
    args = parser.parse_args()
    chosen = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = [f for f in chosen if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {unknown}; choose from {list(FAMILIES)}")
    import json
    families = json.dumps({f: FAMILIES[f] for f in chosen})
    env = dict(os.environ, OMP_NUM_THREADS=args.threads, TF_CPP_MIN_LOG_LEVEL="2")
    print(cpu_line())
    import gpuaccel
    print(f"gpuaccel: {os.path.dirname(gpuaccel.__file__)}")
    print(f"before: {load_line()}")
    print(f"one train_on_batch (Adam, MSE), batch {args.batch}, best of {args.repeats} x "
          f"{args.steps} steps, {args.threads} thread(s); ratio = gpuaccel / Keras:")
    runs = {framework: run_workload([sys.executable, "-c", BODY, framework, families,
                                     str(args.steps), str(args.repeats), str(args.batch)], env)
            for framework in ("gpuaccel", "keras")}
    for framework, result in runs.items():
        if "error" in result:
            print(f"  {framework}: failed: {result['error']}")
            return
    for family in chosen:
        ours, theirs = runs["gpuaccel"][family], runs["keras"][family]
        if "ms" in ours and "ms" in theirs:
            print(f"  {family:38s} gpuaccel {ours['ms']:8.3f} ms   keras {theirs['ms']:8.3f} ms"
                  f"   ratio {ours['ms'] / theirs['ms']:.2f}")
        else:
            missing = ours.get("unavailable") or theirs.get("unavailable")
            who = "gpuaccel" if "unavailable" in ours else "keras"
            print(f"  {family:38s} not in {who}: {missing}")
    print(f"after: {load_line()}")


if __name__ == "__main__":
    main()
