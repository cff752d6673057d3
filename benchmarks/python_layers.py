"""What a model of Python-defined keras.layers.Layer subclasses costs per training step against
the same model of built-in layers (issue 28's target: <= 1.15x). The Python layers run the same
op as the built-in Dense (the fused linear op, `_C.linear`), so the difference is what running a
traced call() costs: the per-signature trace lookup and the replay of the recorded ops
(cpp/nn/traced_layer.h), not different arithmetic.

    python benchmarks/python_layers.py [--steps 300] [--repeats 5] [--batch 64]

MLP 784 -> 256 relu -> 128 relu -> 10, Adam, sparse categorical crossentropy from logits. In one
process, both models are compiled and warmed up, then timed alternately: --steps direct
`_C.Trainer.train_step` calls on one prepared batch (the C++ step) per round, and one fit epoch
of --steps batches; the fastest of --repeats rounds is kept for each. Prints the CPU's
instruction sets and the load average, since a shared machine moves these numbers."""
import argparse
import os
import sys
import textwrap

from _bench_context import cpu_line, load_line, run_workload

BODY = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    from gpuaccel import _C, keras
    from gpuaccel.keras._data_adapter import adapt
    steps, repeats, batch = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])

    class PyDense(keras.layers.Layer):
        def __init__(self, units, activation="linear", **kwargs):
            super().__init__(**kwargs)
            self.units, self.activation = units, activation
        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units),
                                          initializer="glorot_uniform", name="kernel")
            self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")
        def call(self, inputs):
            return _C.linear(inputs, self.kernel, self.bias, self.activation)

    def mlp(dense):
        model = keras.Sequential([keras.Input((784,)), dense(256, activation="relu"),
                                  dense(128, activation="relu"), dense(10)])
        model.compile(optimizer="adam",
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch * steps, 784)).astype(np.float32)
    y = rng.integers(0, 10, len(x))
    models = {"builtin": mlp(keras.layers.Dense), "python": mlp(PyDense)}
    models["python"].set_weights(models["builtin"].get_weights())
    prepared = {}
    for name, model in models.items():
        model.fit(x[:batch * 4], y[:batch * 4], batch_size=batch, verbose=0)
        xb, yb = next(iter(adapt(x[:batch], y[:batch], batch, False, None, "fit").batches(
            shuffle=False, rng=np.random.default_rng(0))))
        prepared[name] = (model._trainer_for("fit"), xb, yb)
    step = {name: [] for name in models}
    fit = {name: [] for name in models}
    for _ in range(repeats):
        for name, model in models.items():
            trainer, xb, yb = prepared[name]
            start = time.perf_counter()
            for _ in range(steps):
                trainer.train_step(xb, yb)
            trainer.results()  # waits for the device (a no-op wait on the CPU)
            step[name].append((time.perf_counter() - start) / steps)
            start = time.perf_counter()
            model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
            fit[name].append((time.perf_counter() - start) / steps)
    calls = [layer._cpp.python_calls for layer in models["python"].layers]
    print("RESULT " + json.dumps({
        "step_us": {n: 1e6 * min(v) for n, v in step.items()},
        "fit_us": {n: 1e6 * min(v) for n, v in fit.items()},
        "python_calls": calls}))
""")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    print(cpu_line())
    print(f"before: {load_line()}")
    print(f"MLP 784-256-128-10, batch {args.batch}, Adam, best of {args.repeats} x {args.steps} "
          "steps, built-in Dense vs a Python Layer subclass running the same fused op:")
    for threads in (1, 2):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        r = run_workload([sys.executable, "-c", BODY, str(args.steps), str(args.repeats),
                          str(args.batch)], env)
        if "error" in r:
            print(f"  {threads} thread(s): failed: {r['error']}")
            continue
        step, fit = r["step_us"], r["fit_us"]
        print(f"  {threads} thread(s): train_step built-in {step['builtin']:8.1f} us   python "
              f"{step['python']:8.1f} us   ratio {step['python'] / step['builtin']:.3f} "
              f"(target <= 1.15)")
        print(f"  {threads} thread(s): fit step   built-in {fit['builtin']:8.1f} us   python "
              f"{fit['python']:8.1f} us   ratio {fit['python'] / fit['builtin']:.3f}")
        print(f"  Python call() ran {r['python_calls']} times per layer (once per signature)")
    print(f"after: {load_line()}")


if __name__ == "__main__":
    main()
