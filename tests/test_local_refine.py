"""optimize.local.refine: bounded L-BFGS-B on a batched cost with forward differences taken in one call."""

import numpy as np

from strider.optimize.local import refine

TOLERANCE = 1e-4   # L-BFGS-B with forward differences of 1e-6 reaches a smooth minimum to about this


def _bowl(centre):
    calls = []

    def cost(xs):
        calls.append(len(xs))
        return np.sum((xs - centre) ** 2, axis=1) + 0.5 * (xs[:, 0] - centre[0]) * (xs[:, 1] - centre[1])
    return cost, calls


def test_refine_finds_an_interior_minimum_and_counts_every_candidate():
    centre = np.array([0.3, 0.6, 0.5])
    cost, calls = _bowl(centre)
    out = refine(cost, np.array([0.9, 0.1, 0.2]), 0.0, 1.0, iterations=50, step=1e-6)
    assert np.allclose(out.x, centre, atol=TOLERANCE)
    assert out.evaluations == sum(calls)
    assert all(n in (1, 4) for n in calls)     # the start alone, then a point with its three nudges


def test_refine_stays_in_the_box_and_never_returns_worse_than_its_start():
    centre = np.array([1.5, -0.5])             # outside the box: the best is the corner (1, 0)
    cost, _ = _bowl(centre)
    out = refine(cost, np.array([0.99999, 0.5]), 0.0, 1.0, iterations=50, step=1e-6)
    assert np.all(out.x >= 0.0) and np.all(out.x <= 1.0)
    assert np.allclose(out.x, [1.0, 0.0], atol=TOLERANCE)
    start = np.array([1.0, 0.0])
    held = refine(cost, start, 0.0, 1.0, iterations=50)
    assert held.cost <= float(cost(start[None])[0])


def test_no_iterations_returns_the_start_scored():
    cost, _ = _bowl(np.zeros(2))
    out = refine(cost, np.array([0.5, 0.5]), 0.0, 1.0, iterations=0)
    assert np.array_equal(out.x, [0.5, 0.5]) and out.evaluations == 1
