"""Jacobian-transpose virtual forces (seed 000, Sec. 5.3.3; Pratt et al. virtual model control).

A force F wished for at a point is produced by joint torques tau = J^T F, where
J maps joint velocities to that point's velocity. For a force on the centre of
mass delivered through a supporting leg, J is the COM Jacobian relative to the
planted foot: J_V = J_com - J_foot(at the COM) (coros-walking.md, Sec. 4).
"""

from __future__ import annotations

import numpy as np


def jacobian_transpose(jacobian: np.ndarray, force: np.ndarray, dofs: np.ndarray) -> np.ndarray:
    """Torques on ``dofs`` realising ``force`` at the point whose Jacobian (3 x nv) is given."""
    return jacobian[:, dofs].T @ np.asarray(force, dtype=float)


def com_relative_to_foot(com_jacobian: np.ndarray, foot_point_jacobian: np.ndarray) -> np.ndarray:
    """J_V: how joint motion moves the COM when the foot is the fixed base."""
    return com_jacobian - foot_point_jacobian
