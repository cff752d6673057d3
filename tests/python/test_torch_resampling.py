"""F.interpolate (and upsample, upsample_nearest, upsample_bilinear), F.affine_grid and
F.grid_sample against PyTorch (torch_reference): values and the gradients of the input, the
grid and theta, for each mode and align_corners setting, and the errors PyTorch raises."""
import numpy as np
import pytest

import gpuaccel.torch as torch
import gpuaccel.torch.nn.functional as F
import torch_reference
from torch_reference import Case

rng = np.random.default_rng(7)
X1 = rng.standard_normal((2, 3, 5)).astype(np.float32)
X2 = rng.standard_normal((2, 2, 4, 5)).astype(np.float32)
X3 = rng.standard_normal((1, 2, 3, 4, 3)).astype(np.float32)
THETA = (np.array([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.2]],
                   [[1.2, 0.1, -0.3], [-0.1, 0.8, 0.25]]], np.float32))
THETA3 = np.array([[[0.9, 0.1, 0.0, 0.1], [0.0, 1.1, -0.1, 0.0], [0.1, 0.0, 0.8, -0.2]]],
                  np.float32)
# Seeded sample points inside and outside [-1, 1] (none of them falls on a pixel centre, where
# the bilinear weights' gradient jumps and the two frameworks could pick different sides).
GRID = rng.uniform(-1.25, 1.25, (2, 3, 4, 2)).astype(np.float32)
GRID3 = rng.uniform(-1.2, 1.2, (1, 2, 3, 2, 3)).astype(np.float32)

CASES = []
for align in (False, True):
    CASES += [
        Case(f"linear_{align}", None, f"F.interpolate(x, scale_factor=2.5, mode='linear', "
             f"align_corners={align})", {"x": X1}, grad=["x"]),
        Case(f"bilinear_up_{align}", None, f"F.interpolate(x, size=(7, 9), mode='bilinear', "
             f"align_corners={align})", {"x": X2}, grad=["x"]),
        Case(f"bilinear_down_{align}", None, f"F.interpolate(x, size=(3, 2), mode='bilinear', "
             f"align_corners={align})", {"x": X2}, grad=["x"]),
        Case(f"bicubic_{align}", None, f"F.interpolate(x, scale_factor=(1.5, 2), mode='bicubic', "
             f"align_corners={align})", {"x": X2}, grad=["x"], atol=1e-5),
        Case(f"trilinear_{align}", None, f"F.interpolate(x, size=(4, 6, 2), mode='trilinear', "
             f"align_corners={align})", {"x": X3}, grad=["x"]),
        Case(f"affine_grid_{align}", None,
             f"F.affine_grid(t, (2, 3, 4, 5), align_corners={align})", {"t": THETA}, grad=["t"]),
        Case(f"affine_grid3d_{align}", None, f"F.affine_grid(t, (1, 2, 3, 4, 2), "
             f"align_corners={align})", {"t": THETA3}, grad=["t"]),
        Case(f"stn_{align}", None, f"F.grid_sample(x, F.affine_grid(t, (2, 2, 3, 4), "
             f"align_corners={align}), align_corners={align})",
             {"x": X2, "t": THETA}, grad=["x", "t"], atol=1e-5),
    ]
    for padding in ("zeros", "border"):
        CASES += [
            Case(f"sample_bilinear_{padding}_{align}", None,
                 f"F.grid_sample(x, g, mode='bilinear', "
                 f"padding_mode='{padding}', align_corners={align})",
                 {"x": X2, "g": GRID}, grad=["x", "g"], atol=1e-5),
            Case(f"sample_nearest_{padding}_{align}", None, f"F.grid_sample(x, g, mode='nearest', "
                 f"padding_mode='{padding}', align_corners={align})",
                 {"x": X2, "g": GRID}, grad=["x"]),
            Case(f"sample3d_{padding}_{align}", None,
                 f"F.grid_sample(x, g, padding_mode='{padding}', "
                 f"align_corners={align})", {"x": X3, "g": GRID3}, grad=["x", "g"],
                 atol=1e-5),
        ]
CASES += [
    Case("nearest_1d", None, "F.interpolate(x, scale_factor=1.7)", {"x": X1}, grad=["x"]),
    Case("nearest_2d_size", None, "F.interpolate(x, size=(7, 3), mode='nearest')", {"x": X2},
         grad=["x"]),
    Case("nearest_3d", None, "F.interpolate(x, scale_factor=2)", {"x": X3}),
    Case("nearest_exact", None, "F.interpolate(x, size=(7, 3), mode='nearest-exact')",
         {"x": X2}),
    Case("area", None, "F.interpolate(x, size=(3, 2), mode='area')", {"x": X2}, grad=["x"]),
    Case("upsample", None, "F.upsample(x, scale_factor=2, mode='bilinear', align_corners=False)",
         {"x": X2}),
    Case("upsample_nearest", None, "F.upsample_nearest(x, size=(8, 10))", {"x": X2}),
    Case("upsample_bilinear", None, "F.upsample_bilinear(x, scale_factor=2)", {"x": X2},
         grad=["x"]),
    Case("upsample_size", None, "F.upsample(x, size=(3, 7), mode='nearest')", {"x": X2}),
    Case("upsample_nearest_scale", None, "F.upsample_nearest(x, scale_factor=3)", {"x": X1}),
    Case("upsample_bilinear_size", None, "F.upsample_bilinear(x, size=(5, 4))", {"x": X2}),
    Case("module_upsample", None,
         "torch.nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)(x)",
         {"x": X2}, grad=["x"]),
    Case("module_nearest", None, "torch.nn.UpsamplingNearest2d(size=(6, 7))(x)", {"x": X2}),
    Case("module_bilinear", None, "torch.nn.UpsamplingBilinear2d(scale_factor=2)(x)",
         {"x": X2}, grad=["x"]),
    Case("err_both", None, "F.interpolate(x, size=4, scale_factor=2)", {"x": X1},
         raises=ValueError),
    Case("err_none", None, "F.interpolate(x)", {"x": X1}, raises=ValueError),
    Case("err_align_nearest", None, "F.interpolate(x, scale_factor=2, align_corners=True)",
         {"x": X1}, raises=ValueError),
    Case("err_rank", None, "F.interpolate(x, scale_factor=2, mode='bilinear')", {"x": X1},
         raises=NotImplementedError),
    Case("err_size", None, "F.affine_grid(t, (2, 3, 4))", {"t": THETA},
         raises=NotImplementedError),
    Case("err_theta", None, "F.affine_grid(t, (2, 3, 4, 5, 6))", {"t": THETA},
         raises=ValueError),
    Case("err_batch", None, "F.affine_grid(t, (3, 3, 4, 5))", {"t": THETA},
         raises=RuntimeError),
    Case("err_mode", None, "F.grid_sample(x, g, mode='cubic')", {"x": X2, "g": GRID},
         raises=ValueError),
]


@pytest.fixture(scope="module")
def torch_results():
    return torch_reference.run_cases(CASES)


@pytest.mark.filterwarnings("ignore:Default grid_sample and affine_grid")
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_matches_pytorch(case, torch_results):
    torch_reference.check_case(case, torch_results[case.id])


def test_errors_read_as_pytorchs():
    x = torch.tensor(X1)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=4, scale_factor=2)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D"):
        F.interpolate(x, scale_factor=2, mode="bilinear")
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or "
                                         "'reflection', but got: 'wrap'"):
        F.grid_sample(torch.tensor(X2), torch.tensor(GRID), padding_mode="wrap",
                      align_corners=False)


def test_align_corners_none_warns_as_pytorch_and_means_false():
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        implicit = F.affine_grid(torch.tensor(THETA), (2, 3, 4, 5))
    explicit = F.affine_grid(torch.tensor(THETA), (2, 3, 4, 5), align_corners=False)
    np.testing.assert_array_equal(implicit.numpy(), explicit.numpy())


def test_grid_sample_of_a_large_image_and_an_infinite_pixel_match_pytorch():
    """A 300 x 300 image sampled at 300 x 300 points (the (N, output points, input points)
    matrix this used to build would be 8.1e9 floats), and an infinite pixel next to sample
    points whose other neighbours fall outside the image: zeros padding leaves them finite."""
    big = rng.standard_normal((1, 2, 300, 300)).astype(np.float32)
    points = rng.uniform(-1.1, 1.1, (1, 300, 300, 2)).astype(np.float32)
    corner = rng.standard_normal((1, 1, 3, 3)).astype(np.float32)
    corner[0, 0, 0, 0] = np.inf
    outside = np.array([[[[-1.2, 0.3], [0.3, -1.2], [0.0, 0.0]]]], np.float32)  # (1, 1, 3, 2)
    theirs = torch_reference.run(
        "import torch.nn.functional as F\n"
        "out['big'] = F.grid_sample(torch.from_numpy(big), torch.from_numpy(points), "
        "align_corners=False).numpy()\n"
        "out['edge'] = F.grid_sample(torch.from_numpy(corner), torch.from_numpy(outside), "
        "align_corners=True).numpy()\n", big=big, points=points, corner=corner, outside=outside)
    ours = F.grid_sample(torch.tensor(big), torch.tensor(points), align_corners=False)
    # a float32 source position near 300 carries ~3e-5 of rounding, which the bilinear weights
    # pass on times a pixel difference (|x| < 5 here): the two frameworks round apart by that
    np.testing.assert_allclose(ours.numpy(), theirs["big"], rtol=0, atol=300 * 2.0**-23 * 2 * 10)
    edge = F.grid_sample(torch.tensor(corner), torch.tensor(outside), align_corners=True)
    np.testing.assert_allclose(edge.numpy(), theirs["edge"], rtol=1e-6, atol=1e-6)
    assert np.isfinite(edge.numpy()[0, 0, 0, 2])
