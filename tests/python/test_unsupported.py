"""Names of TensorFlow/PyTorch that gpuaccel lacks raise an AttributeError saying they are not
supported yet and what to use instead (so hasattr/getattr with a default keep working), on every
face module; and names we have are not caught by that hook."""
import pytest

import gpuaccel
import gpuaccel.nn.functional as F
from gpuaccel import keras


@pytest.mark.parametrize("module,name,hint", [
    (gpuaccel, "complex64", "float32"), (gpuaccel, "distributions", "probability"),
    (gpuaccel, "some_future_op", None), (gpuaccel.math, "lgamma", "lgamma kernel"),
    (gpuaccel.nn, "Linear", "keras.layers.Dense"), (F, "fold", "reshaping unfold"),
    (gpuaccel.random, "learned_unigram_candidate_sampler", None),
    (gpuaccel.linalg, "eig", "eigh"),
    (gpuaccel.image, "decode_webp", "PIL.Image.open"),
    (keras, "applications", "keras.layers"), (gpuaccel.data, "Iterator", "iter(dataset)"),
    (keras.layers, "RandomElasticTransform", None), (keras.optimizers, "Muon", "AdamW")])
def test_missing_names_raise_attribute_error_with_advice(module, name, hint):
    with pytest.raises(AttributeError, match="is not supported by gpuaccel yet") as info:
        getattr(module, name)
    assert "docs/compatibility.md" in str(info.value)
    if hint:
        assert hint in str(info.value)
    assert not hasattr(module, name)
    assert getattr(module, name, "default") == "default"


def test_dunder_lookups_stay_plain_and_present_names_work():
    assert not hasattr(gpuaccel, "__wrapped__")
    for name in ("sigmoid", "transpose", "reshape", "cast", "expand_dims", "function", "cat",
                 "eye", "allclose", "rand_like", "float", "einsum", "gather", "one_hot"):
        assert callable(getattr(gpuaccel, name)) or name == "float"
