"""The minimum-jerk quintic meets both ends' conditions and its derivatives agree with its position."""

from __future__ import annotations

import numpy as np
import pytest

from strider.control.min_jerk import min_jerk


@pytest.mark.parametrize("v0, a0", [((0.0, 0.0), (0.0, 0.0)), ((1.2, -0.4), (3.0, 9.0))])
def test_ends_and_derivatives(v0, a0):
    p0, p1, T = np.array([0.1, -0.2]), np.array([0.7, 0.05]), 0.45
    start = min_jerk(p0, v0, a0, p1, T, 0.0)
    end = min_jerk(p0, v0, a0, p1, T, T)
    assert np.allclose(start[0], p0) and np.allclose(start[1], v0) and np.allclose(start[2], a0)
    assert np.allclose(end[0], p1) and np.allclose(end[1], 0, atol=1e-12) and np.allclose(end[2], 0, atol=1e-9)
    h = 1e-6
    for t in (0.1, 0.3):
        before, after = min_jerk(p0, v0, a0, p1, T, t - h), min_jerk(p0, v0, a0, p1, T, t + h)
        mid = min_jerk(p0, v0, a0, p1, T, t)
        assert np.allclose((after[0] - before[0]) / (2 * h), mid[1], atol=1e-6)
        assert np.allclose((after[1] - before[1]) / (2 * h), mid[2], atol=1e-5)


def test_rest_to_rest_is_the_classic_profile_and_time_is_clamped():
    p, v, _ = min_jerk([0.0], [0.0], [0.0], [1.0], 1.0, 0.5)
    assert p[0] == pytest.approx(0.5) and v[0] == pytest.approx(1.875)     # 30 s^2 - 60 s^3 + 30 s^4 at s = 1/2
    assert min_jerk([0.0], [0.0], [0.0], [1.0], 1.0, 2.0)[0][0] == pytest.approx(1.0)
    assert min_jerk([0.0], [5.0], [0.0], [1.0], 0.0, 0.0)[0][0] == 1.0
