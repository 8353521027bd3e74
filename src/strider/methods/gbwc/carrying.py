"""GBWC's hands (seed 000, Sec. 5.5.4): reaching with the arms by IK, and carrying a load held in them.

Reaching: while :attr:`GBWC.hand_targets` names a point for each hand, the arms leave the style's swing and
track the IK of :mod:`strider.control.arm_reach`, with the elbows pointing along :attr:`GBWC.elbow_bend`
(character frame: back, out, down). Carrying: once the hands hold a load of mass m (:meth:`carry`), "the crate
mass is incorporated into the computations for the overall COM position and velocity" and "into the gravity
compensation by adding a compensation force corresponding to half the weight of the box to each hand"
(Sec. 5.5.4): the COM every rule of the controller sees is the body's and the load's together, the weight the
strike and unloading tests compare with includes it, and each hand's m g / 2 is mapped by J^T to the joints
between the hand and the pelvis.

A part of :class:`strider.methods.gbwc.controller.GBWC`, which holds the state these methods share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.control.arm_reach import ArmGeometry, arm_reach_targets, hand_point_world
from strider.control.frames import CharacterFrame
from strider.control.leg_geometry import SIDE_SIGN, SIDES

# Character frame, for the left arm (y mirrored for the right): elbows back, out and down, clear of the body.
# Tuned here; the source gives no elbow direction.
DEFAULT_ELBOW_BEND = (-0.3, 0.4, -1.0)


@dataclass(frozen=True)
class CarriedLoad:
    """A load held in both hands: its body in the world and its mass (kg)."""

    body: str
    mass: float


class Carrying:
    """The hands part of GBWC (see the module docstring)."""

    def _setup_hands(self) -> None:
        self.hand_targets: dict[str, np.ndarray] | None = None
        self.elbow_bend = DEFAULT_ELBOW_BEND
        self.load: CarriedLoad | None = None
        self.mass = self.character.mass
        self._arms = ({s: ArmGeometry.of(self.spec, s) for s in SIDES} if set(self.roles.arms) == set(SIDES)
                      else {})
        # Per arm, resolved once: the DOFs from the pelvis to the hand (Jacobian columns) and their torque slots.
        self._arm_dofs = {s: np.concatenate([self.character.joints[j].dof for j in self._arm_chain(s)])
                          for s in self._arms}
        self._arm_dof_slots = {s: np.array([self._dof_slot[int(d)] for d in dofs]) for s, dofs in self._arm_dofs.items()}

    def _arm_chain(self, side: str) -> list[str]:
        """The joints from the pelvis to the hand: the spine, the shoulder and the elbow."""
        arm = self.roles.arms[side]
        return [*self.roles.spine, arm.shoulder, arm.elbow]

    def reach(self, targets: dict[str, np.ndarray] | None) -> None:
        """Put each hand on a world point (None: back to the style's arm swing)."""
        if targets is not None and not self._arms:
            raise ValueError(f"character {self.spec.name!r} has no arms to reach with")
        self.hand_targets = None if targets is None else {s: np.asarray(p, dtype=float) for s, p in targets.items()}

    def carry(self, load: CarriedLoad | None) -> None:
        """Hold ``load`` in both hands from now on (None: put it down)."""
        self.load = load
        self.mass = self.character.mass + (load.mass if load is not None else 0.0)
        self.weight = self.mass * self.gravity

    def hand_position(self, side: str) -> np.ndarray:
        arm = self._arms[side]
        ch = self.character
        return hand_point_world(arm, ch.body_position(arm.lower_body), ch.body_quat(arm.lower_body))

    def com_position(self) -> np.ndarray:
        """The COM every rule of the controller sees: the body's, with the load it carries."""
        com = self.character.com_position()
        if self.load is None:
            return com
        return (self.character.mass * com + self.load.mass * self.world.body_position(self.load.body)) / self.mass

    def _com_state(self) -> tuple[np.ndarray, np.ndarray]:
        """The COM and its velocity of the body, and of the load it carries."""
        ch = self.character
        if self.load is None:
            return ch.com_position(), ch.com_velocity()
        vel = ch.com_velocity()
        com = self.com_position()
        vel = (ch.mass * vel + self.load.mass * self.world.body_velocity(self.load.body)) / self.mass
        return com, vel

    def _arm_reach_targets(self, frame: CharacterFrame, targets: dict, hinges: dict) -> None:
        ch = self.character
        torso_q = ch.body_quat(self.roles.torso)
        for side, point in self.hand_targets.items():
            arm = self.roles.arms[side]
            bx, by, bz = self.elbow_bend
            bend = frame.to_world(np.array([bx, by * SIDE_SIGN[side], bz]))
            shoulder_q, elbow = arm_reach_targets(self._arms[side], ch.joint_anchor(arm.shoulder), point, bend, torso_q)
            targets[arm.shoulder] = tuple(shoulder_q.tolist())
            hinges[arm.elbow] = elbow

    def _load_compensation(self, torques: np.ndarray) -> None:
        """Half the load's weight held up at each hand: tau += J_hand^T (0, 0, m g / 2) over the arm's chain."""
        lift = np.array([0.0, 0.0, 0.5 * self.load.mass * self.gravity])
        ch = self.character
        for side, slots in self._arm_dof_slots.items():
            arm = self._arms[side]
            jac = ch.point_jacobian(arm.lower_body, self.hand_position(side))
            torques[slots] += jac[:, self._arm_dofs[side]].T @ lift
