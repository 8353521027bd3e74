"""The full-body QP: joint torques that realize the plan's instantaneous accelerations (Mordatch et al. 2010, Sec. 6,
Eqs. 29-30; the term definitions are slip-planning.md Sec. 4's, since the paper defers them to de Lasa et al.).

Variables x = [tau (nu), qdd (nv), lambda (16 per foot on the ground)]: each sole corner pushes along four
edges of a friction pyramid, lambda >= 0. The equation of motion M qdd + h = S^T tau + sum J^T V lambda is an
equality; every objective is a weighted least-squares task on x. The COM task acts on the contact forces
alone (Newton: m cdd = m g + sum V lambda), so no COM J-dot is needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from strider import quat
from strider.control.falls import tilt
from strider.control.frames import CharacterFrame
from strider.control.pd import quaternion_error
from strider.errors import UsageError
from strider.optimize.qp import QPSolver, TaskQP
from strider.sim.character import Character
from strider.sim.dynamics import Dynamics
from strider.sim.world import World

UP = np.array([0.0, 0.0, 1.0])
FREE_BOUND = 1e6   # stands for "unbounded" where a backend wants finite bounds
CORNERS_PER_FOOT = 4     # a box sole's corners (slip-planning.md Sec. 4)
EDGES_PER_CORNER = 4     # the friction pyramid's edges (same)


@dataclass(frozen=True)
class WholeBodyWeights:
    """Task weights: slip-planning.md Sec. 4's starting values, tuned on the walk (protocol 1) and then frozen.

    The COM task is in m/s^2 and the posture tasks in rad/s^2 over many joints: at the starting values (COM 1,
    angular momentum and head 0.5, rest 0.05) the posture tasks won, and the QP realized a tenth of the
    vertical COM acceleration the plan asked for. The walk kept its plans only with the COM task ten times
    stronger and the posture tasks 2.5 times weaker. The hip task is built but weighs 0: at its starting value
    the walk fell sooner (docs/slip.md, decision 6)."""

    contact: float = 10.0
    com: float = 10.0                # starting value 1; 100 in strider's configuration, with the torso task
    heading: float = 1.0
    swing_position: float = 1.0
    swing_rotation: float = 0.1
    hip: float = 0.0                 # starting value 0.5: Table 1's walk then fell at 3.7 s instead of 6.7 s
                                     # (same session, strider's configuration), so the term is off until tuned
    angular_momentum: float = 0.2    # starting value 0.5
    head: float = 0.2                # starting value 0.5
    rest: float = 0.02               # starting value 0.05
    torso: float = 0.0               # beyond the source: the torso upright and facing the heading, as the head is
                                     # (0: the head alone, as the source, whose neck can keep the head level over a
                                     # folded spine). 1 in strider's configuration, where it lets the COM task weigh
                                     # 100 (with the COM at 10 Table 1's walk fell sooner with it: docs/slip.md,
                                     # decision 6)
    # Beyond the source: once the torso tips, holding it up comes before following the plan's COM. From
    # rescue_from_deg of torso tilt to rescue_full_deg the torso and COM weights move linearly to rescue_torso and
    # rescue_com (inf: never, the source's). Pushed at the head, the upper body folded over the hips while the COM
    # task held the QP to the plan (docs/slip.md, "Why pushes at the head fell").
    rescue_from_deg: float = math.inf
    rescue_full_deg: float = 15.0
    rescue_torso: float = 50.0
    rescue_com: float = 10.0

    def __post_init__(self) -> None:
        if math.isfinite(self.rescue_from_deg) and not self.rescue_full_deg > self.rescue_from_deg >= 0.0:
            raise UsageError(f"the torso rescue needs 0 <= rescue_from_deg < rescue_full_deg, got "
                             f"{self.rescue_from_deg:g} and {self.rescue_full_deg:g}")

    def at_tilt(self, tilt_deg: float) -> WholeBodyWeights:
        """The weights for a torso tilted ``tilt_deg`` from vertical: these below the rescue's start."""
        if not tilt_deg > self.rescue_from_deg:
            return self
        share = min(1.0, (tilt_deg - self.rescue_from_deg) / (self.rescue_full_deg - self.rescue_from_deg))
        return replace(self, torso=self.torso + share * (self.rescue_torso - self.torso),
                       com=self.com + share * (self.rescue_com - self.com))


@dataclass(frozen=True)
class WholeBodyGains:
    """Feedback gains of the tasks (slip-planning.md Sec. 4 table)."""

    contact_kv: float = 20.0             # 1/s: a planted foot's residual velocity decays
    heading_kp: float = 100.0
    heading_kd: float = 20.0
    swing_rotation_kp: float = 100.0
    swing_rotation_kd: float = 20.0
    hip_kp: float = 100.0
    hip_kd: float = 20.0
    angular_momentum_k: float = 5.0      # 1/s
    head_kp: float = 100.0
    head_kd: float = 20.0
    torso_kp: float = 100.0              # strider: as the head's
    torso_kd: float = 20.0
    rest_kp: float = 100.0
    rest_kd: float = 20.0
    friction: float = 0.8                # mu of the pyramid, inside the simulation's mu = 1


@dataclass
class BodyTargets:
    """What the plan asks of the body at this instant."""

    com_accel: np.ndarray                    # (3,), feedback included
    heading: float                           # for the head, swing foot and heading tasks
    heading_rate: float = 0.0
    heading_accel: float = 0.0
    stance: tuple[str, ...] = ("left", "right")
    # side -> (sole-centre acceleration, yaw, the ground's normal the sole is to lie parallel to)
    swing: dict[str, tuple[np.ndarray, float, np.ndarray]] = field(default_factory=dict)


def _friction_pyramid(mu: float) -> np.ndarray:
    """(3, 4) unit edges n +- mu t1, n +- mu t2 of the pyramid about the vertical."""
    edges = np.array([[mu, 0, 1], [-mu, 0, 1], [0, mu, 1], [0, -mu, 1]], dtype=float).T
    return edges / np.linalg.norm(edges, axis=0)


def _skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


class WholeBodyQP:
    """Torques for one character from instantaneous targets, one QP per control step."""

    def __init__(self, world: World, character: Character, rest_leg: float,
                 weights: WholeBodyWeights = WholeBodyWeights(), gains: WholeBodyGains = WholeBodyGains(),
                 solver: QPSolver | None = None):
        self.world, self.character = world, character
        self.dynamics = Dynamics(world)
        self.weights, self.gains = weights, gains
        self.solver = solver or QPSolver()
        self.rest_leg = rest_leg
        self.moments = self.dynamics.actuator_moments()           # nu x nv (S^T's transpose)
        self.nu, self.nv = self.moments.shape
        self.torque_lower, self.torque_upper = (np.clip(b, -FREE_BOUND, FREE_BOUND)
                                                for b in self.dynamics.actuator_force_limits())
        self.pyramid = _friction_pyramid(gains.friction)
        roles = character.spec.roles
        self.root_name, self.head_name = roles.root, roles.head or roles.torso
        self.root_body, self.head_body = character.body(self.root_name), character.body(self.head_name)
        self.torso_name = roles.torso
        self.torso_body = character.body(self.torso_name)
        self.feet = {side: leg.foot for side, leg in roles.legs.items()}
        self.hips = {side: leg.hip for side, leg in roles.legs.items()}
        self.rest_pose = character.joint_coordinates()
        # Each hip's offset from the COM in the heading frame, as it stands now (the QP is made in the rest pose).
        frame = CharacterFrame.of(character.root_pose()[1], character.com_position())
        self.hip_offsets = {side: frame.to_local(character.joint_anchor(joint) - frame.origin)
                            for side, joint in self.hips.items()}
        self.gravity = np.array([0.0, 0.0, -world.scene.gravity])
        self.mass = character.mass
        self.previous: np.ndarray | None = None

    # --- pieces ----------------------------------------------------------------------------
    def _rest_error(self) -> tuple[np.ndarray, np.ndarray]:
        """Posture error toward the standing pose per internal DOF, and those DOFs' columns."""
        errors, dofs = [], []
        current = self.character.joint_coordinates()
        for name, joint in self.character.joints.items():
            if joint.kind == "ball":
                errors.append(quaternion_error(current[name], self.rest_pose[name]))
            else:
                errors.append(np.atleast_1d(self.rest_pose[name] - current[name]))
            dofs.append(joint.dof)
        return np.concatenate(errors), np.concatenate(dofs)

    def _upright_error(self, body: str, yaw: float, normal: np.ndarray = UP) -> np.ndarray:
        """World-frame rotation vector from the body's orientation to turned by ``yaw`` and tilted so its z axis
        is ``normal`` (upright on level ground)."""
        target = quat.about_z(yaw)
        if normal[0] != 0.0 or normal[1] != 0.0:
            target = quat.mul(quat.between_vectors(UP, normal), target)
        return quat.log(quat.mul(target, quat.conj(self.character.body_quat(body))))

    def _add_upright(self, qp, name: str, body: int, heading: float, kp: float, kd: float, weight: float,
                     qvel: np.ndarray, qdd: slice) -> None:
        """A task turning body ``name`` upright and onto ``heading`` (a PD on its rotation error)."""
        J = self.dynamics.rotation_jacobian(body)
        _, bias = self.dynamics.point_bias_acceleration(body, self.character.body_position(name))
        wanted = kp * self._upright_error(name, heading) - kd * (J @ qvel)
        qp.add(J, wanted - bias, weight, qdd)

    def torques(self, targets: BodyTargets) -> np.ndarray:
        """Solve for this step's torques; on a failed solve, the previous torques (or zero)."""
        dyn, ch, k = self.dynamics, self.character, self.gains
        w = self.weights
        if math.isfinite(w.rescue_from_deg):
            w = w.at_tilt(math.degrees(tilt(ch.body_up_floats(self.torso_name))))
        qvel = ch.qvel
        corners = {side: ch.sole_corners(self.feet[side]) for side in targets.stance}
        n_lambda = CORNERS_PER_FOOT * EDGES_PER_CORNER * len(targets.stance)
        size = self.nu + self.nv + n_lambda
        tau, qdd, lam = slice(0, self.nu), slice(self.nu, self.nu + self.nv), slice(self.nu + self.nv, size)
        qp = TaskQP(size)

        # Equation of motion: -S^T tau + M qdd - sum J^T V lambda = -h.
        contact_map = np.zeros((self.nv, n_lambda))
        force_map = np.zeros((3, n_lambda))
        moment_map = np.zeros((3, n_lambda))
        com = ch.com_position()
        column = 0
        for side in targets.stance:
            foot = self.feet[side]
            for point in corners[side]:
                J = dyn.point_jacobian(foot, point)
                edges = slice(column, column + EDGES_PER_CORNER)
                contact_map[:, edges] = J.T @ self.pyramid
                force_map[:, edges] = self.pyramid
                moment_map[:, edges] = _skew(point - com) @ self.pyramid
                column += EDGES_PER_CORNER
        h = dyn.bias_forces() - dyn.passive_forces()
        A_eq = np.hstack([-self.moments.T, dyn.mass_matrix(), -contact_map])

        # Planted feet do not accelerate (their residual velocity decays).
        for side in targets.stance:
            foot = self.feet[side]
            origin = ch.body_position(foot)
            J6 = np.vstack([dyn.point_jacobian(foot, origin), dyn.rotation_jacobian(foot)])
            bias = np.concatenate(dyn.point_bias_acceleration(foot, origin))
            residual = J6 @ qvel
            # The ground stops a foot moving into it. Decaying that motion too asked a landing foot (0.45 m/s
            # down) to accelerate upward, and it bounced off the ground: a second touchdown 40 ms later.
            residual[2] = max(residual[2], 0.0)
            qp.add(J6, -bias - k.contact_kv * residual, w.contact, qdd)

        # COM by Newton on the contact forces.
        qp.add(force_map / self.mass, targets.com_accel - self.gravity, w.com, lam)

        # Heading: the pelvis' yaw acceleration.
        Jr = dyn.rotation_jacobian(self.root_body)
        _, root_bias = dyn.point_bias_acceleration(self.root_body, ch.body_position(self.root_name))
        yaw_error = quat.wrap_angle(targets.heading - quat.yaw(ch.body_quat(self.root_name)))
        yaw_rate = float(Jr[2] @ qvel)
        yaw_accel = targets.heading_accel + k.heading_kp * yaw_error + k.heading_kd * (targets.heading_rate - yaw_rate)
        qp.add(Jr[2:3], [yaw_accel - root_bias[2]], w.heading, qdd)

        # Swing feet: the sole centre's acceleration, and the sole turned to the plan's yaw, parallel to the ground.
        for side, (accel, yaw, normal) in targets.swing.items():
            foot = self.feet[side]
            centre = ch.sole_corners(foot).mean(axis=0)
            Jp, Jf = dyn.point_jacobian(foot, centre), dyn.rotation_jacobian(foot)
            lin_bias, rot_bias = dyn.point_bias_acceleration(foot, centre)
            qp.add(Jp, accel - lin_bias, w.swing_position, qdd)
            omega = Jf @ qvel
            wanted = (k.swing_rotation_kp * self._upright_error(foot, yaw, normal) - k.swing_rotation_kd * omega)
            qp.add(Jf, wanted - rot_bias, w.swing_rotation, qdd)

        # Hips held at their standing offsets from the COM in the heading frame: both move with the COM, which
        # the contact forces alone accelerate (c'' = g + sum V lambda / m), so the task spans qdd and lambda.
        if w.hip > 0:
            com_velocity = ch.com_velocity()
            heading = CharacterFrame(targets.heading, com)
            for side, joint in self.hips.items():
                body = ch.joint(joint).body
                anchor = ch.joint_anchor(joint)
                J = dyn.point_jacobian(body, anchor)
                bias, _ = dyn.point_bias_acceleration(body, anchor)
                error = heading.to_local(anchor - com) - self.hip_offsets[side]
                rate = heading.to_local(J @ qvel - com_velocity)
                wanted = heading.to_world(-k.hip_kp * error - k.hip_kd * rate)
                qp.add(np.hstack([J, -force_map / self.mass]), wanted + self.gravity - bias, w.hip,
                       slice(self.nu, size))

        # Angular momentum about the COM damped through the contact forces' moment.
        L = dyn.momentum(self.root_body).angular
        scale = 1.0 / (self.mass * self.rest_leg)
        qp.add(moment_map * scale, -k.angular_momentum_k * L * scale, w.angular_momentum, lam)

        # Head upright, facing the heading; the torso too when its task weighs anything (off by default).
        self._add_upright(qp, self.head_name, self.head_body, targets.heading, k.head_kp, k.head_kd, w.head, qvel,
                          qdd)
        if w.torso > 0.0:
            self._add_upright(qp, self.torso_name, self.torso_body, targets.heading, k.torso_kp, k.torso_kd,
                              w.torso, qvel, qdd)

        # Rest pose on the joints.
        error, dofs = self._rest_error()
        rows = np.zeros((len(dofs), self.nv))
        rows[np.arange(len(dofs)), dofs] = 1.0
        qp.add(rows, k.rest_kp * error - k.rest_kd * qvel[dofs], w.rest, qdd)

        lower = np.concatenate([self.torque_lower, np.full(self.nv, -FREE_BOUND), np.zeros(n_lambda)])
        upper = np.concatenate([self.torque_upper, np.full(self.nv, FREE_BOUND), np.full(n_lambda, FREE_BOUND)])
        x = self.solver.solve(qp, A=A_eq, b=-h, lb=lower, ub=upper)
        if x is None:
            return self.previous.copy() if self.previous is not None else np.zeros(self.nu)
        self.previous = x[tau].copy()
        return self.previous.copy()
