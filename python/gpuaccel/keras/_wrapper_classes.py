"""Keras's many thin classes around one function (``keras.losses.Huber`` around ``huber``,
``keras.metrics.LogCoshError`` around ``log_cosh``) made by one factory, so each is a line of
the table in ``losses.py``/``metrics.py`` rather than a dozen copies of the same ``__init__``."""

# The arguments a wrapper's base class takes itself; every other argument goes to the function.
_BASE_ARGUMENTS = ("reduction", "name", "dtype")


def wrapper_class(class_name, base, fn, doc, module, signature):
    """A subclass of ``base`` (LossFunctionWrapper or MeanMetricWrapper) computing ``fn``, whose
    constructor takes ``signature`` ({argument: default} in Keras's order) by position or
    keyword. The function's options are also attributes (``Huber().delta``)."""
    order = list(signature)

    def __init__(self, *args, **kwargs):
        if len(args) > len(order):
            raise TypeError(f"{class_name}() takes at most {len(order)} positional arguments "
                            f"({order}), got {len(args)}")
        given = dict(zip(order, args))
        wrong = sorted(set(kwargs) - set(order)) or sorted(set(kwargs) & set(given))
        if wrong:
            raise TypeError(f"{class_name}() got unexpected keyword arguments {wrong}; it takes "
                            f"{order}")
        values = {**signature, **given, **kwargs}
        options = {k: v for k, v in values.items() if k not in _BASE_ARGUMENTS}
        for key, value in options.items():
            setattr(self, key, value)
        base.__init__(self, fn, **{k: v for k, v in values.items() if k in _BASE_ARGUMENTS},
                      **options)

    return type(class_name, (base,), {"__init__": __init__, "__doc__": doc,
                                      "__module__": module})
