"""``keras.optimizers.legacy`` as Keras 3 has it: the names of TF-Keras 2's legacy optimizers
exist (so ``from keras.optimizers.legacy import Adam`` still imports), and creating any of them
raises Keras 3's ImportError, which says how to get Keras 2's. Code written for tf.keras 2 then
fails the way it fails under Keras 3, with the same advice.
"""

__all__ = ["Adagrad", "Adam", "Ftrl", "Optimizer", "RMSprop", "SGD"]


class LegacyOptimizerWarning:
    """What every ``keras.optimizers.legacy`` name is in Keras 3: a class whose construction
    raises ImportError."""

    def __init__(self, *args, **kwargs):
        raise ImportError(
            "`keras.optimizers.legacy` is not supported in Keras 3. When using `tf.keras`, to "
            "continue using a `tf.keras.optimizers.legacy` optimizer, you can install the "
            "`tf_keras` package (Keras 2) and set the environment variable "
            "`TF_USE_LEGACY_KERAS=True` to configure TensorFlow to use `tf_keras` when "
            "accessing `tf.keras`.")


Adagrad = Adam = Ftrl = Optimizer = RMSprop = SGD = LegacyOptimizerWarning
