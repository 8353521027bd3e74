"""``Clip``: a time-sampled motion of a skeleton, and the operations on it.

A clip holds, per frame, every joint's local rotation (a unit quaternion,
w x y z, relative to its parent) and local translation (the rest offset,
unless the file animates it; for the root, its position in the world). That
is enough for any BVH file, DeepMimic clip or simulated character, and it is
the interface tracking controllers consume (see ``specs/control-graphs.md``
and ``specs/phase-tracking.md``).

Operations return new clips: sampling at any time (slerp for rotations,
linear for translations), finite-difference velocities, forward kinematics,
mirroring through a left/right map, time scaling, cropping, looping with
accumulated root motion, blending two clips, and conversion between axis
conventions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from strider import quat
from strider.motion.axes import STRIDER_AXES, Axes, axis_vector
from strider.motion.skeleton import Skeleton

UNIT_TOLERANCE = 1e-12
"""Quaternions whose norms are this close to 1 are kept as they are (renormalizing would change the last bits)."""
LOOP_POSE_TOLERANCE = 0.15
"""Largest joint-rotation difference (rad) between a clip's first and last frames for it to count as cyclic."""


@dataclass(frozen=True)
class Velocities:
    """Finite-difference velocities per frame: local translation (units/s) and angular (rad/s, parent frame)."""

    linear: np.ndarray    # (T, J, 3)
    angular: np.ndarray   # (T, J, 3)

    @property
    def root_linear(self) -> np.ndarray:
        return self.linear[:, 0]


@dataclass(frozen=True, eq=False)
class Clip:
    skeleton: Skeleton
    fps: float
    rotations: np.ndarray      # (T, J, 4) local unit quaternions
    positions: np.ndarray      # (T, J, 3) local translations; [:, 0] is the root's world position
    loop: bool = False
    axes: Axes = STRIDER_AXES
    name: str = ""

    def __post_init__(self) -> None:
        r = np.asarray(self.rotations, dtype=float)
        p = np.asarray(self.positions, dtype=float)
        j = len(self.skeleton)
        if r.ndim != 3 or r.shape[1:] != (j, 4) or p.shape != r.shape[:2] + (3,):
            raise ValueError(f"rotations must be (T, {j}, 4) and positions (T, {j}, 3), got {r.shape} and {p.shape}")
        if r.shape[0] == 0:
            raise ValueError("a clip needs at least one frame")
        if not (np.isfinite(self.fps) and self.fps > 0):
            raise ValueError(f"fps must be positive, got {self.fps}")
        norms = np.linalg.norm(r, axis=-1, keepdims=True)
        # Leave unit quaternions bit for bit as given, so that saving and loading is exact.
        object.__setattr__(self, "rotations", r if np.abs(norms - 1.0).max() < UNIT_TOLERANCE else r / norms)
        object.__setattr__(self, "positions", p)

    @classmethod
    def from_root(cls, skeleton: Skeleton, fps: float, root_pos: np.ndarray, rotations: np.ndarray,
                  **kwargs) -> Clip:
        """A clip whose only animated translation is the root's."""
        root_pos = np.asarray(root_pos, dtype=float)
        positions = np.broadcast_to(skeleton.offsets, (len(root_pos), len(skeleton), 3)).copy()
        positions[:, 0] = root_pos
        return cls(skeleton, fps, rotations, positions, **kwargs)

    # --- basic facts --------------------------------------------------------------------
    @property
    def n_frames(self) -> int:
        return int(self.rotations.shape[0])

    @property
    def duration(self) -> float:
        """Time from the first frame to the last, s."""
        return (self.n_frames - 1) / self.fps

    @property
    def times(self) -> np.ndarray:
        return np.arange(self.n_frames) / self.fps

    @property
    def root_pos(self) -> np.ndarray:
        return self.positions[:, 0]

    @property
    def root_rot(self) -> np.ndarray:
        return self.rotations[:, 0]

    def looks_cyclic(self, tolerance: float = LOOP_POSE_TOLERANCE) -> bool:
        """True when the last frame repeats the first pose (root height and joint rotations; not root travel)."""
        if self.n_frames < 3:
            return False
        up = axis_vector(self.axes.up)
        joint_diff = quat.angle_between(self.rotations[0, 1:], self.rotations[-1, 1:]) if len(self.skeleton) > 1 \
            else np.zeros(1)
        height = abs((self.root_pos[0] - self.root_pos[-1]) @ up)
        scale = max(float(np.linalg.norm(self.skeleton.offsets, axis=1).sum()), 1e-9)
        return bool(joint_diff.max() < tolerance and height < 0.02 * scale)

    # --- sampling ----------------------------------------------------------------------------
    def resample(self, times: np.ndarray, fps: float | None = None) -> Clip:
        """Frames at arbitrary times (s): slerp between neighbouring rotations, lerp between translations.

        Times outside the clip are clamped to its ends.
        """
        t = np.clip(np.asarray(times, dtype=float) * self.fps, 0.0, self.n_frames - 1)
        i0 = np.floor(t).astype(int)
        i1 = np.minimum(i0 + 1, self.n_frames - 1)
        u = (t - i0)[:, None]
        rotations = quat.slerp(self.rotations[i0], self.rotations[i1], u)
        positions = self.positions[i0] + u[..., None] * (self.positions[i1] - self.positions[i0])
        new_fps = fps if fps is not None else (1.0 / np.diff(times).mean() if len(times) > 1 else self.fps)
        return replace(self, fps=float(new_fps), rotations=rotations, positions=positions)

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(local translations (J, 3), local rotations (J, 4)) at time t, s."""
        one = self.resample(np.array([t]), fps=self.fps)
        return one.positions[0], one.rotations[0]

    def at_fps(self, fps: float) -> Clip:
        """The same motion sampled at another frame rate (the last frame falls on or before the end)."""
        n = int(np.floor(self.duration * fps + 1e-9)) + 1
        return self.resample(np.arange(n) / fps, fps=fps)

    # --- derived quantities ---------------------------------------------------------------
    def velocities(self) -> Velocities:
        """Central differences inside the clip, one-sided at its ends."""
        dt = 1.0 / self.fps
        if self.n_frames == 1:
            zeros = np.zeros_like(self.positions)
            return Velocities(zeros, zeros.copy())
        linear = np.gradient(self.positions, dt, axis=0)
        q = self.rotations
        prev = np.concatenate([q[:1], q[:-1]])
        nxt = np.concatenate([q[1:], q[-1:]])
        span = np.full(self.n_frames, 2.0 * dt)
        span[0] = span[-1] = dt
        # q(t + h) q(t - h)^-1 is the rotation over the span, expressed in the parent's frame.
        angular = quat.log(quat.mul(nxt, quat.conj(prev))) / span[:, None, None]
        return Velocities(linear, angular)

    def world(self) -> tuple[np.ndarray, np.ndarray]:
        """Forward kinematics: world positions (T, J, 3) and world rotations (T, J, 4) of every joint."""
        parents = self.skeleton.parents
        pos = np.empty_like(self.positions)
        quats = np.empty_like(self.rotations)
        pos[:, 0] = self.positions[:, 0]
        quats[:, 0] = self.rotations[:, 0]
        for j in range(1, len(parents)):
            p = parents[j]
            pos[:, j] = pos[:, p] + quat.rotate(quats[:, p], self.positions[:, j])
            quats[:, j] = quat.mul(quats[:, p], self.rotations[:, j])
        return pos, quats

    def world_positions(self) -> np.ndarray:
        return self.world()[0]

    # --- edits -----------------------------------------------------------------------------
    def cropped(self, start: float = 0.0, end: float | None = None) -> Clip:
        """The frames from ``start`` to ``end`` (s, inclusive, rounded to frames); a crop never loops."""
        first = round(max(start, 0.0) * self.fps)
        last = self.n_frames - 1 if end is None else round(min(end, self.duration) * self.fps)
        if not 0 <= first <= last < self.n_frames:
            raise ValueError(f"crop {start}..{end} s is outside the clip's 0..{self.duration:.3f} s")
        return replace(self, rotations=self.rotations[first:last + 1], positions=self.positions[first:last + 1],
                       loop=False)

    def time_scaled(self, factor: float) -> Clip:
        """The motion played ``factor`` times as long (2: half speed), at the same frame rate."""
        if not (np.isfinite(factor) and factor > 0):
            raise ValueError(f"time factor must be positive, got {factor}")
        n = int(np.floor(self.duration * factor * self.fps + 1e-9)) + 1
        scaled = self.resample(np.arange(n) / self.fps / factor, fps=self.fps)
        return scaled

    def transformed(self, matrix: np.ndarray, scale: float = 1.0, axes: Axes | None = None) -> Clip:
        """The clip expressed in a rotated (and scaled) coordinate system.

        Every joint frame is conjugated by ``matrix``, so the rest pose keeps identity rotations.
        """
        matrix = np.asarray(matrix, dtype=float)
        q = quat.from_matrix(matrix)
        rotations = quat.mul(quat.mul(q, self.rotations), quat.conj(q))
        positions = scale * self.positions @ matrix.T
        return replace(self, skeleton=self.skeleton.transformed(matrix, scale), rotations=rotations,
                       positions=positions, axes=axes if axes is not None else self.axes)

    def to_axes(self, axes: Axes) -> Clip:
        """The clip in another axis convention and unit (e.g. strider's: z up, x forward, metres)."""
        matrix = axes.to_strider().T @ self.axes.to_strider()
        return self.transformed(matrix, self.axes.unit / axes.unit, axes)

    def to_strider(self) -> Clip:
        return self.to_axes(STRIDER_AXES)

    def mirrored(self, pairs: Mapping[str, str]) -> Clip:
        """The motion reflected through the sagittal plane, left and right joints swapped by ``pairs``.

        ``pairs`` maps a joint name to its counterpart (both directions, as a character's
        ``mirror`` map does); joints it does not name are on the midline. The skeleton's
        offsets are mirrored and swapped too, so the result is exact for asymmetric rigs.
        """
        sk = self.skeleton
        swap = np.array([sk.index(pairs[n]) if n in pairs and pairs[n] in sk.names else i
                         for i, n in enumerate(sk.names)])
        lateral = self.axes.left
        reflect = np.eye(3) - 2.0 * np.outer(lateral, lateral)
        offsets = sk.offsets[swap] @ reflect.T
        positions = self.positions[:, swap] @ reflect.T
        # A reflection R -> M R M flips the rotation axis as a pseudo-vector: v -> -M v.
        q = self.rotations[:, swap]
        rotations = np.concatenate([q[..., :1], -(q[..., 1:] @ reflect.T)], axis=-1)
        return replace(self, skeleton=sk.with_offsets(offsets), rotations=rotations, positions=positions)

    def heading_frames(self) -> tuple[np.ndarray, np.ndarray]:
        """Per frame: the root's yaw about the up axis (rad) and its horizontal position (3-vectors)."""
        up, fwd = axis_vector(self.axes.up), axis_vector(self.axes.forward)
        left = self.axes.left
        facing = quat.rotate(self.root_rot, fwd)
        yaw = np.arctan2(facing @ left, facing @ fwd)
        horizontal = self.root_pos - np.outer(self.root_pos @ up, up)
        return yaw, horizontal

    def moved(self, yaw: float, shift: np.ndarray) -> Clip:
        """The clip turned by ``yaw`` about the up axis through the origin, then shifted horizontally."""
        up = axis_vector(self.axes.up)
        q = quat.from_axis_angle(up, yaw)
        root_rot = quat.mul(q, self.root_rot)
        root_pos = quat.rotate(q, self.root_pos) + np.asarray(shift, dtype=float)
        rotations = self.rotations.copy()
        positions = self.positions.copy()
        rotations[:, 0] = root_rot
        positions[:, 0] = root_pos
        return replace(self, rotations=rotations, positions=positions)

    def turning(self, yaw_per_cycle: float) -> Clip:
        """The clip turning steadily about the up axis: ``yaw_per_cycle`` rad more by its end than at its start,
        growing linearly with time. Each frame's root is turned by its share of the yaw, and its path is bent to
        match: every step of the root's horizontal travel turns with the heading at that moment, so the feet move
        as the body does (a walk becomes a walk on an arc)."""
        up = axis_vector(self.axes.up)
        share = yaw_per_cycle * (self.times / self.duration if self.duration > 0 else np.zeros(self.n_frames))
        root_rot = quat.mul(quat.from_axis_angle(up, share), self.root_rot)
        travel = np.diff(self.root_pos, axis=0)
        rise = np.outer(travel @ up, up)
        middle = 0.5 * (share[1:] + share[:-1])   # each step turned by the heading halfway through it
        turned = quat.rotate(quat.from_axis_angle(up, middle), travel - rise) + rise
        root_pos = self.root_pos[0] + np.concatenate([np.zeros((1, 3)), np.cumsum(turned, axis=0)])
        rotations, positions = self.rotations.copy(), self.positions.copy()
        rotations[:, 0], positions[:, 0] = root_rot, root_pos
        return replace(self, rotations=rotations, positions=positions)

    def seam_mismatch(self) -> np.ndarray:
        """Per joint, the angle (rad) between the last frame's rotation and the first's: what a cyclic clip's
        seam jumps by when its last frame is taken as the first of the next cycle (the root's includes its turn)."""
        return quat.angle_between(self.rotations[0], self.rotations[-1])

    def loop_closed(self) -> Clip:
        """The cycle with its seam closed: each joint's rotation mismatch between the last frame and the first
        (the root's too, turn included) is spread over the cycle, growing linearly from none at the first frame
        to all of it at the last, so that the last frame repeats the first pose and a looped walk neither jumps
        nor turns at its seams. Root translations are kept, so the cycle travels as far as before.

        Motion-capture cycles are seldom closed: the DeepMimic walk's last frame is turned 6.9 degrees from
        its first and its right shoulder is 28 degrees off.
        """
        if self.n_frames < 2:
            raise ValueError("a clip needs two frames or more to close its loop")
        # q'(t) = exp(u log(q0 qT^-1)) q(t), u = t / T: the correction is in the parent's frame (the world's for
        # the root), identity at the first frame, and q0 qT^-1 qT = q0 at the last.
        mismatch = quat.log(quat.canonical(quat.mul(self.rotations[0], quat.conj(self.rotations[-1]))))
        u = np.linspace(0.0, 1.0, self.n_frames)[:, None, None]
        rotations = quat.mul(quat.exp(u * mismatch[None]), self.rotations)
        rotations[-1] = self.rotations[0]
        return replace(self, rotations=rotations)

    def looped(self, cycles: int) -> Clip:
        """A cyclic clip played ``cycles`` times, each cycle starting where the last one ended.

        The last frame of a cycle is the first of the next (DeepMimic's "wrap"
        convention), so the root's travel and turn over one cycle accumulate.
        """
        if cycles < 1:
            raise ValueError(f"cycles must be >= 1, got {cycles}")
        if self.n_frames < 2:
            raise ValueError("a clip needs two frames or more to loop")
        yaw, horizontal = self.heading_frames()
        parts = [self]
        for _ in range(1, cycles):
            last_yaw, last_h = (v[-1] for v in parts[-1].heading_frames())
            # Turn the next cycle about its own start so that its first frame lands on the previous last frame.
            nxt = self.moved(0.0, -horizontal[0]).moved(last_yaw - yaw[0], last_h)
            parts.append(replace(nxt, rotations=nxt.rotations[1:], positions=nxt.positions[1:]))
        rotations = np.concatenate([p.rotations for p in parts])
        positions = np.concatenate([p.positions for p in parts])
        return replace(self, rotations=rotations, positions=positions, loop=False)


def blend(first: Clip, second: Clip, at: float, window: float, align: bool = True) -> Clip:
    """Play ``first`` until ``at`` s, cross-fade to ``second`` over ``window`` s, then play the rest of ``second``.

    ``second`` starts (its time 0) at ``at``. With ``align``, it is first turned
    and shifted so that at its start its root faces and stands where ``first``'s
    root is at ``at``; the cross-fade weight follows a smoothstep, so velocities
    do not jump. Both clips need the same skeleton; the result has ``first``'s
    frame rate.
    """
    if not first.skeleton.same_structure(second.skeleton):
        raise ValueError("blending needs two clips of the same skeleton")
    if not (0.0 <= at <= first.duration) or window < 0:
        raise ValueError(f"blend at {at} s over {window} s must start within the first clip (0..{first.duration:.3f} s)")
    fps = first.fps
    if align:
        yaw_a, h_a = first.heading_frames()
        yaw_b, h_b = second.heading_frames()
        a_yaw = np.interp(at, first.times, np.unwrap(yaw_a))
        a_h = np.array([np.interp(at, first.times, h_a[:, k]) for k in range(3)])
        second = second.moved(0.0, -h_b[0]).moved(a_yaw - yaw_b[0], a_h)
    end = at + second.duration
    times = np.arange(int(np.floor(end * fps + 1e-9)) + 1) / fps
    a = first.resample(times, fps=fps)
    b = second.resample(times - at, fps=fps)
    u = np.clip((times - at) / window, 0.0, 1.0) if window > 0 else (times >= at).astype(float)
    w = u * u * (3.0 - 2.0 * u)
    rotations = quat.slerp(a.rotations, b.rotations, np.broadcast_to(w[:, None], a.rotations.shape[:2]))
    positions = a.positions + w[:, None, None] * (b.positions - a.positions)
    return replace(first, fps=fps, rotations=rotations, positions=positions, loop=False)
