"""``keras.layers.RandAugment``: ``num_ops`` rounds, each applying one of eleven augmentation
layers (shear, translation, rotation, brightness, colour degeneration, contrast, sharpness,
posterization, solarization, auto-contrast, equalization) chosen at random for the batch.

As Keras's, every round computes all eleven candidates and keeps the chosen one (a 0/1
blend), so the traced call replays without reading the choice back to the host; the
transformation is Keras's: {"transforms": {layer name: its transformation}, "layer_idxes"}.
"""
from .. import _C
from . import _random_draws
from ._augmentation_layers import (AutoContrast, RandomBrightness, RandomContrast,
                                   Solarization, _ImageAugmentation, _as_float_tensor, _blend,
                                   _factor_pair)
from ._color_augmentation_layers import (Equalization, RandomColorDegeneration,
                                         RandomPosterization, RandomSharpness)
from ._geometric_augmentation_layers import RandomRotation, RandomShear, RandomTranslation


class RandAugment(_ImageAugmentation):
    """``keras.layers.RandAugment(value_range=(0, 255), num_ops=2, factor=0.5,
    interpolation='bilinear')``."""
    _AUGMENT_LAYERS = ("random_shear", "random_translation", "random_rotation",
                       "random_brightness", "random_color_degeneration", "random_contrast",
                       "random_sharpness", "random_posterization", "solarization",
                       "auto_contrast", "equalization")

    def __init__(self, value_range=(0, 255), num_ops=2, factor=0.5, interpolation="bilinear",
                 seed=None, data_format=None, **kwargs):
        self.value_range, self.num_ops = value_range, num_ops
        self.factor = _factor_pair(factor, (0, 1))
        self.interpolation = interpolation
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        factor, options = self.factor, {"seed": seed, "data_format": data_format}
        colour = {"value_range": value_range, **options}
        self._layers = {
            "random_shear": RandomShear(factor, factor, interpolation=interpolation, **options),
            "random_translation": RandomTranslation(factor, factor,
                                                    interpolation=interpolation, **options),
            "random_rotation": RandomRotation(factor, interpolation=interpolation, **options),
            "random_brightness": RandomBrightness(factor, **colour),
            "random_color_degeneration": RandomColorDegeneration(factor, **colour),
            "random_contrast": RandomContrast(factor, **colour),
            "random_sharpness": RandomSharpness(factor, **colour),
            "random_posterization": RandomPosterization(max(1, int(8 * factor[1])), **colour),
            "solarization": Solarization(factor, factor, **colour),
            "auto_contrast": AutoContrast(value_range, data_format=data_format),
            "equalization": Equalization(value_range, data_format=data_format),
        }

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        choices = _C.cast(_C.cast(_random_draws.uniform(
            [self.num_ops], images, 0.0, float(len(self._AUGMENT_LAYERS))), "int32"), "float32")
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
                chosen = _C.cast(_C.binary("equal", choice, _C.scalar_like(float(index), choice)),
                                 images._dtype_name)
                candidate = self._layers[name].transform_images(
                    images, transformation["transforms"][name], training=True)
                images = _blend(chosen, candidate, images)
        return images

    def _layer_config(self):
        return {**super()._layer_config(), "value_range": self.value_range,
                "num_ops": self.num_ops, "factor": self.factor,
                "interpolation": self.interpolation}
