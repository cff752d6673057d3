"""Comparisons shared by test modules that compare layers across devices and frameworks."""
import numpy as np


def npy(t):
    """An output that requires grad as NumPy (detached first, as torch asks)."""
    return t.detach().numpy()


def close(got, want, rel=1e-5):
    """Equal to within ``rel`` of the largest magnitude of ``want`` (an absolute bound, so
    entries near zero are held to the scale of the whole result, not their own)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(float(np.abs(want).max()), 1e-6)
    np.testing.assert_allclose(got, want, rtol=0, atol=rel * scale)
