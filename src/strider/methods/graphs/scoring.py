"""The SAMCON cost of a fragment's end state (Liu et al. 2015, Eq. 20) and the fall test of a sample.

E = w_p E_p + w_r E_r + w_e E_e + w_b E_b + w_c E_c + w_v E_v + w_L E_L + w_a E_a, each term an unsquared
norm at the fragment's end, against the reference aligned at the fragment's start (control-graphs.md Sec. 4,
"Cost terms"): the simulation and the reference are each read in their own facing frame at the fragment's
start, so what counts is how the fragment moved the body, not where the walk has drifted to.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from strider import quat
from strider.control.frames import CharacterFrame
from strider.methods.graphs.features import Readout

JOINT_WEIGHTS = {"chest": 0.5, "neck": 0.3, "right_hip": 0.5, "right_knee": 0.3, "right_ankle": 0.2,
                 "right_shoulder": 0.3, "right_elbow": 0.2, "left_hip": 0.5, "left_knee": 0.3,
                 "left_ankle": 0.2, "left_shoulder": 0.3, "left_elbow": 0.2}
"""w_j of E_p: DeepMimic's DiffWeight of each joint (humanoid3d_character.txt; control-graphs.md Sec. 4)."""

BALL_JOINTS = ("chest", "neck", "right_hip", "right_ankle", "right_shoulder", "left_hip", "left_ankle",
               "left_shoulder")
HINGE_JOINTS = ("right_knee", "right_elbow", "left_knee", "left_elbow")
_BALL_WEIGHTS = np.array([JOINT_WEIGHTS[n] for n in BALL_JOINTS])
_HINGE_WEIGHTS = np.array([JOINT_WEIGHTS[n] for n in HINGE_JOINTS])

FALL_HEIGHT_ERROR = 0.3   # m, root height off the reference's: a fall (control-graphs.md Sec. 4, SAMCON details)


@dataclass(frozen=True)
class CostWeights:
    """w_p, w_r, w_e, w_b, w_c, w_v, w_L, w_a of Eq. 20 (seed 002, Sec. 5.3; "insensitive within 10x")."""

    pose: float = 4.0
    root: float = 4.0
    effectors: float = 10.0
    balance: float = 1.0
    com: float = 3.0
    com_velocity: float = 0.1
    momentum: float = 0.03
    action: float = 0.5


DEFAULT_WEIGHTS = CostWeights()


@dataclass(frozen=True)
class Summary:
    """A readout at a fragment's end, seen from the facing frame at the fragment's start."""

    root_quat: np.ndarray
    root_height: float
    com: np.ndarray
    com_velocity: np.ndarray
    momentum: np.ndarray
    balance: np.ndarray        # (2, 2): horizontal COM-minus-foot of each foot
    heights: np.ndarray        # effector heights
    balls: np.ndarray          # (8, 4) BALL_JOINTS' quaternions
    hinges: np.ndarray         # (4,) HINGE_JOINTS' angles


def summarize(end: Readout, start: CharacterFrame) -> Summary:
    balance = np.array([start.to_local(end.com - foot)[:2] for foot in end.feet])
    return Summary(start.orientation_to_local(end.root_quat), float(end.root_pos[2]), start.point_to_local(end.com),
                   start.to_local(end.com_velocity), start.to_local(end.angular_momentum), balance,
                   end.effectors[:, 2].copy(),
                   np.array([end.joints[n] for n in BALL_JOINTS]),
                   np.array([end.joints[n][0] for n in HINGE_JOINTS]))


def turned(end: Summary, angle: float) -> Summary:
    """A fragment's end as it would be had the body turned steadily about the up axis by ``angle`` (rad) more over
    the fragment, as :meth:`Clip.turning` turns a clip: the end pose turned by the whole angle (its orientation,
    velocity, momentum and the COM's offsets from the feet), the COM's travel by half of it (a path bent at a
    steady rate turns its chord by half its turn). Joint angles and heights do not change. The momentum the turn
    itself adds (the body's vertical inertia times the turn rate: up to 1.6 N m s on the DeepMimic walk turned 90
    degrees a cycle) is left out.
    """
    whole, half = quat.about_z(angle), quat.about_z(0.5 * angle)
    cos, sin = np.cos(angle), np.sin(angle)
    planar = np.array([[cos, -sin], [sin, cos]])
    return replace(end, root_quat=quat.mul(whole, end.root_quat), com=quat.rotate(half, end.com),
                   com_velocity=quat.rotate(whole, end.com_velocity), momentum=quat.rotate(whole, end.momentum),
                   balance=end.balance @ planar.T)


def mean_quaternion(q: np.ndarray) -> np.ndarray:
    """The mean rotation of quaternions (n, ..., 4): each turned into the first's hemisphere, summed, normalized
    (control-graphs.md Sec. 4, "Refinement averaging")."""
    aligned = np.where((q * q[:1]).sum(axis=-1, keepdims=True) < 0, -q, q)
    return quat.normalize(aligned.sum(axis=0))


def mean_summary(summaries: list[Summary]) -> Summary:
    """The average of fragment ends: quantities by their mean, rotations by :func:`mean_quaternion`."""
    def stacked(name: str) -> np.ndarray:
        return np.array([getattr(s, name) for s in summaries])

    return Summary(mean_quaternion(stacked("root_quat")), float(stacked("root_height").mean()),
                   stacked("com").mean(axis=0), stacked("com_velocity").mean(axis=0), stacked("momentum").mean(axis=0),
                   stacked("balance").mean(axis=0), stacked("heights").mean(axis=0), mean_quaternion(stacked("balls")),
                   stacked("hinges").mean(axis=0))


def pose_error(a: Summary, b: Summary) -> float:
    """Σ_j w_j · angle between the two poses' joint j (ball joints by quaternion, hinges by angle)."""
    return float(_BALL_WEIGHTS @ quat.angle_between(a.balls, b.balls) + _HINGE_WEIGHTS @ np.abs(a.hinges - b.hinges))


def cost(sim: Summary, ref: Summary, action_norm: float, w: CostWeights) -> float:
    """E of Eq. 20 for one sample."""
    terms = (w.pose * pose_error(sim, ref),
             w.root * float(quat.angle_between(sim.root_quat, ref.root_quat)),
             w.effectors * float(np.abs(sim.heights - ref.heights).sum()),
             w.balance * float(np.linalg.norm(sim.balance - ref.balance, axis=1).sum()),
             w.com * float(np.linalg.norm(sim.com - ref.com)),
             w.com_velocity * float(np.linalg.norm(sim.com_velocity - ref.com_velocity)),
             w.momentum * float(np.linalg.norm(sim.momentum - ref.momentum)),
             w.action * action_norm)
    return float(sum(terms))


def fell(sim: Summary, ref: Summary, stray_contact: bool) -> bool:
    """A sample has fallen: a body touches the ground that the reference keeps off it (``stray_contact``: for a
    walk, anything but the feet), or the root is 0.3 m off height."""
    return stray_contact or abs(sim.root_height - ref.root_height) > FALL_HEIGHT_ERROR
