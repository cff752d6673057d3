"""Keras 3's composite augmentation layers over eleven others (shear, translation, rotation,
brightness, colour degeneration, contrast, sharpness, posterization, solarization,
auto-contrast, equalization): ``RandAugment`` (``num_ops`` rounds, each applying one of them
chosen at random for the batch) and ``AugMix`` (chains of random ones, mixed with Dirichlet
weights and then with the original by a Beta weight).

Every random choice computes all the candidates and keeps the chosen one (a 0/1 blend), as
Keras's RandAugment does, so a traced call replays without reading a choice back to the host.
RandAugment's transformation is Keras's; AugMix's is its own (Keras's chooses its chains'
layers with Python's ``random`` outside the transformation's tensors), and its
``transform_images`` also takes Keras's, to compare.
"""
from .. import _C
from . import _random_draws
from ._augmentation_layers import (AutoContrast, RandomBrightness, RandomContrast,
                                   Solarization, _ImageAugmentation, _as_float_tensor, _blend,
                                   _clip, _factor_pair)
from ._color_augmentation_layers import (Equalization, RandomColorDegeneration,
                                         RandomPosterization, RandomSharpness)
from ._geometric_augmentation_layers import RandomRotation, RandomShear, RandomTranslation

_ALL_LAYERS = ("random_shear", "random_translation", "random_rotation", "random_brightness",
               "random_color_degeneration", "random_contrast", "random_sharpness",
               "random_posterization", "solarization", "auto_contrast", "equalization")


def candidate_layers(names, factor, value_range, interpolation, seed, data_format):
    """The augmentation layers ``names`` (of _ALL_LAYERS), each built from the composite's
    factor pair as Keras builds them."""
    options = {"seed": seed, "data_format": data_format}
    colour = {"value_range": value_range, **options}
    makers = {
        "random_shear": lambda: RandomShear(factor, factor, interpolation=interpolation,
                                            **options),
        "random_translation": lambda: RandomTranslation(factor, factor,
                                                        interpolation=interpolation, **options),
        "random_rotation": lambda: RandomRotation(factor, interpolation=interpolation,
                                                  **options),
        "random_brightness": lambda: RandomBrightness(factor, **colour),
        "random_color_degeneration": lambda: RandomColorDegeneration(factor, **colour),
        "random_contrast": lambda: RandomContrast(factor, **colour),
        "random_sharpness": lambda: RandomSharpness(factor, **colour),
        "random_posterization": lambda: RandomPosterization(max(1, int(8 * factor[1])),
                                                            **colour),
        "solarization": lambda: Solarization(factor, factor, **colour),
        "auto_contrast": lambda: AutoContrast(value_range, data_format=data_format),
        "equalization": lambda: Equalization(value_range, data_format=data_format),
    }
    return {name: makers[name]() for name in names}


def _choice_draws(shape, count, like):
    """Integers in [0, count) as float32, uniformly."""
    return _C.cast(_C.cast(_random_draws.uniform(shape, like, 0.0, float(count)), "int32"),
                   "float32")


def _keep_chosen(choice, index, candidate, current):
    chosen = _C.cast(_C.binary("equal", choice, _C.scalar_like(float(index), choice)),
                     current._dtype_name)
    return _blend(chosen, candidate, current)


class RandAugment(_ImageAugmentation):
    """``keras.layers.RandAugment(value_range=(0, 255), num_ops=2, factor=0.5,
    interpolation='bilinear')``."""
    _AUGMENT_LAYERS = _ALL_LAYERS

    def __init__(self, value_range=(0, 255), num_ops=2, factor=0.5, interpolation="bilinear",
                 seed=None, data_format=None, **kwargs):
        self.value_range, self.num_ops = value_range, num_ops
        self.factor = _factor_pair(factor, (0, 1))
        self.interpolation = interpolation
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._layers = candidate_layers(self._AUGMENT_LAYERS, self.factor, value_range,
                                        interpolation, seed, data_format)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        choices = _choice_draws([self.num_ops], len(self._AUGMENT_LAYERS), images)
        return {"transforms": {name: self._layers[name].get_random_transformation(images)
                               for name in self._AUGMENT_LAYERS},
                "layer_idxes": choices}

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training or transformation is None:
            return images
        choices = _as_float_tensor(transformation["layer_idxes"], images)
        for round_ in range(self.num_ops):
            choice = _C.select(choices, 0, round_)
            for index, name in enumerate(self._AUGMENT_LAYERS):
                candidate = self._layers[name].transform_images(
                    images, transformation["transforms"][name], training=True)
                images = _keep_chosen(choice, index, candidate, images)
        return images

    def _layer_config(self):
        return {**super()._layer_config(), "value_range": self.value_range,
                "num_ops": self.num_ops, "factor": self.factor,
                "interpolation": self.interpolation}


class AugMix(_ImageAugmentation):
    """``keras.layers.AugMix(value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3,
    alpha=1.0, all_ops=True)``: ``num_chains`` chains of ``chain_depth`` steps, each step one
    of the layers (or none) drawn at random, mixed with Dirichlet(alpha) weights; the result
    mixed with the images by a Beta(alpha, alpha) weight and clipped to ``value_range``.
    Without ``all_ops`` the colour layers (brightness, degeneration, contrast, sharpness) are
    left out."""

    def __init__(self, value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3,
                 alpha=1.0, all_ops=True, interpolation="bilinear", seed=None,
                 data_format=None, **kwargs):
        self.value_range, self.num_chains, self.chain_depth = value_range, num_chains, chain_depth
        self.factor = _factor_pair(factor, (0, 1))
        self.alpha, self.all_ops, self.interpolation = alpha, all_ops, interpolation
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._names = tuple(name for name in _ALL_LAYERS if all_ops or name not in (
            "random_brightness", "random_color_degeneration", "random_contrast",
            "random_sharpness"))
        self._layers = candidate_layers(self._names, self.factor, value_range, interpolation,
                                        seed, data_format)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        chains = _random_draws.gamma([self.num_chains], images, self.alpha)
        alpha = _C.tensor_full([], float(self.alpha), "float32", images._device_name)
        weight = _C.reshape(_random_draws.symmetric_beta_quantiles(
            _random_draws.uniform([1], images), alpha), [])
        return {"chain_mixing_weights": _C.binary("div", chains, _C.reduce(
                    "sum", chains, [0], True)),
                "weight_sample": weight,
                # len(names) stands for a step that applies no layer
                "layer_choices": _choice_draws([self.num_chains, self.chain_depth],
                                               len(self._names) + 1, images),
                "chain_transforms": [[{name: layer.get_random_transformation(images)
                                       for name, layer in self._layers.items()}
                                      for _ in range(self.chain_depth)]
                                     for _ in range(self.num_chains)]}

    def _chain(self, images, steps, choices, chain):
        """One chain on ``images``: our steps (every candidate, the drawn one kept) or Keras's
        (a list of {"layer_name", "transformation"})."""
        if choices is None:
            for step in steps:
                images = self._layers[step["layer_name"]].transform_images(
                    images, step["transformation"])
            return images
        for depth, candidates in enumerate(steps):
            choice = _C.select(_C.select(choices, 0, chain), 0, depth)
            for index, name in enumerate(self._names):
                candidate = self._layers[name].transform_images(images, candidates[name])
                images = _keep_chosen(choice, index, candidate, images)
        return images

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training or transformation is None:
            return images
        weights = _as_float_tensor(transformation["chain_mixing_weights"], images)
        choices = transformation.get("layer_choices")
        choices = None if choices is None else _as_float_tensor(choices, images)
        mixed = None
        for chain, steps in enumerate(transformation["chain_transforms"]):
            term = _C.binary("mul", self._chain(images, steps, choices, chain),
                             _C.select(weights, 0, chain))
            mixed = term if mixed is None else _C.binary("add", mixed, term)
        kept = _as_float_tensor(transformation["weight_sample"], images)
        return _clip(_blend(kept, images, mixed), *self.value_range)

    def _layer_config(self):
        return {**super()._layer_config(), "value_range": self.value_range,
                "num_chains": self.num_chains, "chain_depth": self.chain_depth,
                "factor": self.factor, "alpha": self.alpha, "all_ops": self.all_ops,
                "interpolation": self.interpolation}
