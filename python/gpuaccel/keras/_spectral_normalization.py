"""Keras's SpectralNormalization wrapper: in training, each call divides the wrapped layer's
kernel by its largest singular value (estimated by power iteration from the stored
``vector_u``) and stores the result, as Keras assigns it, before running the layer. Storing in
place reads and writes weights from Python, so this layer runs its Python call on every step
(it cannot be replayed from a trace; the warning of _python_layer.py says so once)."""
import numbers

import numpy as np

from .. import _C
from .._tensor import no_grad
from . import initializers
from ._input_spec import InputSpec
from ._wrapper import Wrapper

# keras.ops.normalize's default lower bound on the norm (backend.epsilon()).
_EPSILON = 1e-7


def _l2_normalized(x):
    """x / ||x|| over all entries, the inverse norm capped at 1 / epsilon (keras.ops.normalize
    with axis=None)."""
    inverse = _C.unary("rsqrt", _C.reduce("sum", _C.unary("square", x), None, True))
    return _C.binary("mul", x, _C.binary("minimum", inverse,
                                         _C.scalar_like(1.0 / _EPSILON, inverse)))


class SpectralNormalization(Wrapper):
    """``keras.layers.SpectralNormalization(layer, power_iterations=1)`` around a layer with a
    ``kernel`` (Dense, Conv*) or ``embeddings`` (Embedding). Weights in Keras's order: the
    kernel, ``vector_u`` (1, kernel.shape[-1], not trainable), then the layer's others."""

    def __init__(self, layer, power_iterations=1, **kwargs):
        super().__init__(layer, **kwargs)
        if isinstance(power_iterations, bool) or not isinstance(power_iterations,
                                                                numbers.Integral) \
                or power_iterations <= 0:
            raise ValueError("`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = int(power_iterations)

    def build(self, input_shape):
        if not self.layer.built:
            self.layer.build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        weights = self.layer._cpp.weights
        names = [name for name, _, _ in weights]
        kernel_name = next((n for n in ("kernel", "embeddings") if n in names), None)
        if kernel_name is None:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' "
                             "nor 'embeddings'")
        kernel_entry = weights[names.index(kernel_name)]
        self._keras_order = (f"{self.layer.name}/{kernel_name}", "vector_u")
        self._adopt_weights([kernel_entry])
        self.kernel = kernel_entry[1]
        self.vector_u = self.add_weight(
            shape=(1, self.kernel.shape[-1]), name="vector_u", trainable=False,
            initializer=initializers.TruncatedNormal(stddev=0.02))
        self._adopt_weights([w for w in weights if w[0] != kernel_name])

    @property
    def weights(self):
        # Keras lists the wrapper's own variables (the kernel it tracks, then vector_u) before
        # the wrapped layer's others; the C++ layer lists trainable ones first.
        order = self.__dict__.get("_keras_order", ())

        def position(variable):  # by the name below this layer ('dense/kernel', 'vector_u')
            name = variable.path[len(self.name) + 1:]
            return order.index(name) if name in order else len(order)
        return sorted(super().weights, key=position)

    def _normalized_weights(self):
        """Keras's normalized_weights: (new vector_u, kernel / sigma)."""
        columns = self.kernel.shape[-1]
        weights = _C.reshape(self.kernel, [-1, columns])
        vector_u = self.vector_u
        for _ in range(self.power_iterations):
            vector_v = _l2_normalized(_C.matmul(vector_u, _C.transpose(weights, 0, 1)))
            vector_u = _l2_normalized(_C.matmul(vector_v, weights))
        sigma = _C.matmul(_C.matmul(vector_v, weights), _C.transpose(vector_u, 0, 1))
        return vector_u, _C.reshape(_C.binary("div", weights, sigma), list(self.kernel.shape))

    def call(self, inputs, training=False):
        if training:
            with no_grad():
                if np.any(_C.detach(self.kernel).numpy() != 0):
                    vector_u, kernel = self._normalized_weights()
                    _C.copy_into(vector_u, self.vector_u)
                    _C.copy_into(kernel, self.kernel)
        return self.layer(inputs)

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def get_config(self):
        config = super().get_config()
        config["power_iterations"] = self.power_iterations
        return config
