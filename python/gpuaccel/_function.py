"""``tf.function``: accepted as a decorator and kept eager.

TensorFlow traces a decorated Python function into a graph; gpuaccel runs every op eagerly (its
training loop already runs each step in C++), so the decorated function is the function itself:
Python side effects (``print``, list appends) happen on every call, not only while tracing, and
``tf.print`` equals ``print``. docs/compatibility.md says so.
"""
import functools

__all__ = ["function", "print_"]

_IGNORED = ("input_signature", "autograph", "jit_compile", "reduce_retracing",
            "experimental_implements", "experimental_autograph_options",
            "experimental_attributes", "experimental_relax_shapes", "experimental_compile",
            "experimental_follow_type_hints", "name")


def function(func=None, **options):
    """``@tf.function`` / ``@tf.function(jit_compile=True)`` / ``tf.function(fn)``: returns a
    function that runs ``func`` eagerly (the options are accepted and have no effect)."""
    unknown = sorted(set(options) - set(_IGNORED))
    if unknown:
        raise TypeError(f"function() got unexpected keyword arguments {unknown}")
    if func is None:
        return lambda f: function(f, **options)
    if not callable(func):
        raise TypeError(f"tf.function expects a callable, got {type(func).__name__}")

    @functools.wraps(func)
    def eager(*args, **kwargs):
        return func(*args, **kwargs)

    eager.python_function = func
    return eager


def print_(*inputs, output_stream=None, sep=" ", end="\n", summarize=None, name=None):
    """``tf.print``: prints tensors by value (eager, so this is Python's print)."""
    import sys
    print(*inputs, sep=sep, end=end, file=output_stream or sys.stderr)
