"""Finite-horizon, time-varying linear-quadratic regulation of a discrete system.

For x_{k+1} = A_k x_k + B_k u_k and the cost Σ_k (x_kᵀ Q x_k + u_kᵀ R u_k) + x_Nᵀ Q_end x_N, the optimal
feedback is u_k = -K_k x_k with K from the backward Riccati recursion

    K_k = (R + B_kᵀ P_{k+1} B_k)⁻¹ B_kᵀ P_{k+1} A_k,    P_k = Q + A_kᵀ P_{k+1} (A_k - B_k K_k),    P_N = Q_end.

A tracker applies it to deviations from a reference: u = u_ref + K (x_ref - x).
"""

from __future__ import annotations

import numpy as np


def time_varying_lqr(A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray, Q_end: np.ndarray) -> np.ndarray:
    """Gains K (N, nu, nx) for A (N, nx, nx), B (N, nx, nu) and constant weights; Q, R, Q_end are matrices."""
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.ndim != 3 or B.ndim != 3 or A.shape[0] != B.shape[0] or A.shape[1] != A.shape[2] or B.shape[1] != A.shape[1]:
        raise ValueError(f"A must be (N, nx, nx) and B (N, nx, nu) with the same N and nx; got {A.shape}, {B.shape}")
    steps, _, nu = B.shape
    K = np.zeros((steps, nu, A.shape[1]))
    P = np.array(Q_end, dtype=float)
    for k in range(steps - 1, -1, -1):
        a, b = A[k], B[k]
        PB = P @ b
        K[k] = np.linalg.solve(R + b.T @ PB, PB.T @ a)
        P = Q + a.T @ P @ (a - b @ K[k])
        P = 0.5 * (P + P.T)     # rounding would otherwise let P drift off symmetric over a long horizon
    return K
