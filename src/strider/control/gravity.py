"""Gravity compensation by Jacobian-transpose forces (seed 000, Sec. 5.3.4).

Each link i gets a virtual force F_i = -m_i g at its centre of mass, mapped to
the joints between the pelvis and link i by tau = J_i^T F_i. Summed over links,
the torque on a joint is the moment of the weight of everything it carries:
tau_j = a_j . ((c_j - p_j) x (M_j g_up)), with a_j the joint axis, p_j its
anchor, and c_j, M_j the centre of mass and mass of the subtree it moves.
The source leaves the stance leg uncompensated; the caller masks its joints.
"""

from __future__ import annotations

import numpy as np


def gravity_compensation(axes: np.ndarray, anchors: np.ndarray, subtree_com: np.ndarray,
                         subtree_mass: np.ndarray, gravity: float = 9.81) -> np.ndarray:
    """Per-DOF torques holding every subtree up against gravity (rows aligned with ``axes``)."""
    return lifting_torques(axes, anchors, subtree_com, lifting_forces(subtree_mass, gravity))


def lifting_forces(subtree_mass: np.ndarray, gravity: float = 9.81) -> np.ndarray:
    """The upward forces M_j g_up, one row per DOF; constant for a character, so a controller keeps them."""
    lift = np.zeros((len(subtree_mass), 3))
    lift[:, 2] = subtree_mass * gravity
    return lift


def lifting_torques(axes: np.ndarray, anchors: np.ndarray, subtree_com: np.ndarray, lift: np.ndarray) -> np.ndarray:
    """tau_j = a_j . ((c_j - p_j) x lift_j), with ``lift`` from :func:`lifting_forces`.

    The lifts are vertical, so the cross product's terms with their zero x and y
    components are left out: the value of the full formula, in a third of the time.
    """
    arm = subtree_com - anchors
    up = lift[:, 2]
    return axes[:, 0] * (arm[:, 1] * up) - axes[:, 1] * (arm[:, 0] * up)
