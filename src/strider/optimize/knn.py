"""Nearest-neighbour regression tools: principal components, a two-stage weighted k-NN query (seed 000,
Sec. 3.4) and a local linear fit, on SciPy's KD-tree and NumPy's linear algebra.

The two-stage query first takes the K examples nearest a query point in a
(weighted) input space, then, of those, the k whose second coordinates (an
action) lie nearest a query action, and blends their outputs with weights
w_i = 1 / (d_i + alpha |a_i - a|), normalized.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPSILON = 1e-9   # keeps a weight finite when a query lands on an example


@dataclass(frozen=True)
class Components:
    """The leading principal components of a data set: x ~ mean + code @ axes."""

    mean: np.ndarray
    axes: np.ndarray          # (n_components, dim), orthonormal rows
    explained: np.ndarray     # share of the variance each component carries

    def encode(self, x: np.ndarray) -> np.ndarray:
        return (np.asarray(x) - self.mean) @ self.axes.T

    def decode(self, code: np.ndarray) -> np.ndarray:
        return self.mean + np.asarray(code) @ self.axes


def principal_components(data: np.ndarray, count: int) -> Components:
    data = np.asarray(data, dtype=float)
    mean = data.mean(axis=0)
    _, singular, vt = np.linalg.svd(data - mean, full_matrices=False)
    variance = singular ** 2
    # A component's sign is arbitrary: fix it (largest entry positive) so the same data give the same codes.
    axes = vt[:count] * np.sign(vt[:count][np.arange(count), np.abs(vt[:count]).argmax(axis=1)])[:, None]
    return Components(mean, axes, variance[:count] / variance.sum())


class TwoStageKNN:
    """Examples (x_i, a_i) -> outputs y_i; queries (x, a) -> the blend of the k best of the K nearest x."""

    def __init__(self, inputs: np.ndarray, actions: np.ndarray, input_weights: np.ndarray, first: int, second: int,
                 alpha: float):
        from scipy.spatial import cKDTree

        self.scale = np.sqrt(np.asarray(input_weights, dtype=float))
        self.tree = cKDTree(np.asarray(inputs, dtype=float) * self.scale)
        self.actions = np.asarray(actions, dtype=float)
        self.first, self.second, self.alpha = min(first, len(self.actions)), second, alpha

    def near(self, x: np.ndarray, exclude: int | None = None, count: int | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
        """Indices and distances of the K (or ``count``) examples nearest ``x`` (leaving out example
        ``exclude``)."""
        count = self.first if count is None else min(count, len(self.actions) - (exclude is not None))
        extra = 1 if exclude is not None else 0
        dist, idx = self.tree.query(np.asarray(x, dtype=float) * self.scale, k=count + extra)
        dist, idx = np.atleast_1d(dist), np.atleast_1d(idx)
        if exclude is not None:
            keep = idx != exclude
            dist, idx = dist[keep][:count], idx[keep][:count]
        return idx, dist

    def weights(self, near: tuple[np.ndarray, np.ndarray], action: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of the K near examples, the k nearest ``action``, and their normalized weights."""
        idx, w = self.weights_many(near, np.asarray(action, dtype=float)[None, :])
        return idx[0], w[0]

    def weights_many(self, near: tuple[np.ndarray, np.ndarray], actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`weights` for many query actions (m, dim) at once: indices and weights, each (m, k)."""
        idx, dist = near
        gap = np.linalg.norm(self.actions[idx][None, :, :] - np.asarray(actions, dtype=float)[:, None, :], axis=2)
        order = np.argsort(gap, axis=1, kind="stable")[:, :self.second]
        w = 1.0 / (dist[order] + self.alpha * np.take_along_axis(gap, order, axis=1) + EPSILON)
        return idx[order], w / w.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class LinearFit:
    """y ~ value + (x - centre) @ slope, fitted to a neighbourhood."""

    centre: np.ndarray
    value: np.ndarray
    slope: np.ndarray         # (dim, outputs)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.value + (np.asarray(x) - self.centre) @ self.slope


def local_linear(inputs: np.ndarray, outputs: np.ndarray, weights: np.ndarray, centre: np.ndarray,
                 ridge: float) -> LinearFit:
    """Weighted least squares of ``outputs`` (n, o) on ``inputs`` (n, dim) around ``centre``, the slopes damped by
    ``ridge`` (the offset is not), solved with NumPy's linear algebra."""
    x = np.asarray(inputs, dtype=float) - centre
    design = np.hstack([np.ones((len(x), 1)), x])
    w = np.asarray(weights, dtype=float)[:, None]
    normal = design.T @ (w * design)
    normal[1:, 1:] += ridge * np.eye(x.shape[1])
    coef = np.linalg.solve(normal, design.T @ (w * np.asarray(outputs, dtype=float)))
    return LinearFit(np.asarray(centre, dtype=float), coef[0], coef[1:])
