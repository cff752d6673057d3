"""``tf.saved_model.SaveOptions`` and ``LoadOptions``: they take TensorFlow's arguments, so pasted
code runs, and refuse with a ValueError the settings gpuaccel cannot honour (function aliases,
which name tf.functions gpuaccel does not make; TensorFlow's experimental image format, whose
graph file the writer does not read back; loading without the weights). The rest of
SaveOptions goes to TensorFlow, which writes the SavedModel (keras/_saved_model_writer.py)."""


class _Options:
    __slots__ = ()

    def _keep(self, arguments):
        for name in self.__slots__:
            setattr(self, name, arguments[name])

    def __repr__(self):
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({values})"


class SaveOptions(_Options):
    __slots__ = ("namespace_whitelist", "save_debug_info", "function_aliases",
                 "experimental_debug_stripper", "experimental_io_device",
                 "experimental_variable_policy", "experimental_custom_gradients",
                 "experimental_image_format", "experimental_skip_saver",
                 "experimental_sharding_callback", "extra_tags")

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_debug_stripper=False, experimental_io_device=None,
                 experimental_variable_policy=None, experimental_custom_gradients=True,
                 experimental_image_format=False, experimental_skip_saver=False,
                 experimental_sharding_callback=None, extra_tags=None):
        if function_aliases:
            raise ValueError("SaveOptions(function_aliases=...) names TensorFlow functions, "
                             "which gpuaccel does not create: leave it out (the SavedModel "
                             "gets the signatures TensorFlow writes for a Keras model)")
        if experimental_image_format:
            raise ValueError("SaveOptions(experimental_image_format=True) writes the graph in "
                             "a format gpuaccel does not read back; leave it out")
        self._keep(locals())

    def to_tensorflow(self, tf):
        """The same options as TensorFlow's ``tf.saved_model.SaveOptions``."""
        return tf.saved_model.SaveOptions(**{name: getattr(self, name) for name in self.__slots__})


class LoadOptions(_Options):
    __slots__ = ("allow_partial_checkpoint", "experimental_io_device",
                 "experimental_skip_checkpoint", "experimental_variable_policy",
                 "experimental_load_function_aliases")

    def __init__(self, allow_partial_checkpoint=False, experimental_io_device=None,
                 experimental_skip_checkpoint=False, experimental_variable_policy=None,
                 experimental_load_function_aliases=False):
        if experimental_skip_checkpoint:
            raise ValueError("LoadOptions(experimental_skip_checkpoint=True): gpuaccel loads a "
                             "SavedModel with its weights (its .keras archive holds them); "
                             "leave it out")
        if experimental_load_function_aliases:
            raise ValueError("LoadOptions(experimental_load_function_aliases=True): gpuaccel's "
                             "SavedModels carry no TensorFlow function aliases; leave it out")
        self._keep(locals())
