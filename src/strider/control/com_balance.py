"""Standing balance by a virtual force on the centre of mass (seed 003, Sec. 4.1, E7; Decisions 7 and 8).

The source prints F = Kp(Xd - x) - Kd(Xd - x)', whose derivative term pushes
the wrong way. torres-skills.md, Decision 7 fixes it as a mass-scaled PD,
F = M [kp (Xd - x) - kd x'], horizontal only, with Xd above the middle of the
ankles. The force is produced through each supporting leg by tau = J_V^T F
(:mod:`strider.control.virtual_force`), half of it per leg.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class COMBalanceParams:
    kp: float = 50.0      # 1/s^2, times total mass (seed 003, Table 4.1; torres-skills.md Decision 7)
    kd: float = 10.0      # 1/s, times total mass (same source; zeta ~ 0.71)
    limit: float = 400.0  # N; beyond this the feet cannot hold the ankle torques it implies
    # Beyond the source: a foot carrying less than its share of the weight is pressed down with this
    # fraction of that share per unit of missing load (0 = off; tuned here, see plant_force).
    plant: float = 0.0


def com_balance_force(mass: float, com: np.ndarray, com_velocity: np.ndarray, target: np.ndarray,
                      params: COMBalanceParams = COMBalanceParams()) -> np.ndarray:
    """Horizontal world force pulling the COM over ``target`` (only x and y of the inputs are used)."""
    error = np.asarray(target, dtype=float)[:2] - np.asarray(com, dtype=float)[:2]
    f = mass * (params.kp * error - params.kd * np.asarray(com_velocity, dtype=float)[:2])
    norm = float(np.linalg.norm(f))
    if norm > params.limit:
        f *= params.limit / norm
    return np.array([f[0], f[1], 0.0])


def plant_force(load: float, share: float, gain: float) -> float:
    """Downward force (N, >= 0) that presses a foot carrying ``load`` (N) of its ``share`` (N) back down.

    A side push tips the body onto one foot; with the pelvis held upright, the
    other foot then hovers just above the ground, and the COM force, split over
    both legs, pulls on a leg that has nothing to push against. Pressing that
    foot down, gain * share * (missing fraction of its share), lengthens the leg
    until it carries its share again, which turns the body back over both feet.
    """
    if gain <= 0.0 or share <= 0.0:
        return 0.0
    return gain * max(0.0, share - max(load, 0.0))
