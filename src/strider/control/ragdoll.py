"""Falling to a ragdoll (seed 003, Sec. 4.2; torres-skills.md E13 and Decision 10).

The fall detector watches the torso-to-head vector: once it leaves a cone of
``max_angle`` about world up, the character is falling and control stops. The
ragdoll is latched: every servo's gains go to zero (so ``ctrl`` no longer
produces force), ``ctrl`` is cleared and the controller's joint torques in
``qfrc_applied`` are zeroed. Passive joint damping stays as the model has it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.sim import Character

FALL_CONE = 1.0   # rad, the torso angle limit (seed 003, Table 4.1)


@dataclass(frozen=True)
class FallCone:
    max_angle: float = FALL_CONE

    def angle(self, torso: np.ndarray, head: np.ndarray) -> float:
        """Angle between the torso-to-head vector and world up (E13)."""
        v = np.asarray(head, dtype=float) - np.asarray(torso, dtype=float)
        n = float(np.linalg.norm(v))
        return float(np.arccos(np.clip(v[2] / n, -1.0, 1.0))) if n > 1e-12 else 0.0

    def left(self, character: Character) -> bool:
        """True when the character's torso-to-head vector is outside the cone (Decision 10: torso COM, head COM)."""
        roles = character.spec.roles
        return self.angle(character.body_position(roles.torso), character.body_position(roles.head)) > self.max_angle


def go_limp(character: Character) -> None:
    """Switch every actuator of ``character`` off: zero servo gains, zero ``ctrl``, zero applied joint torques."""
    character.switch_off()
