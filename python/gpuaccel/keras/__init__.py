"""``gpuaccel.keras``: Keras 3's names over the C++ layers, models and training loop.

Course code written for ``tensorflow.keras`` / ``keras`` runs with its import changed::

    from gpuaccel import keras
    model = keras.Sequential([keras.layers.Dense(10)])
"""
