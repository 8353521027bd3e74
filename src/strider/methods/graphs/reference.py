"""A motion-capture cycle cut into control fragments (Liu et al. 2015, Sec. 4, Fig. 2).

A cyclic DeepMimic clip becomes, on the ``deepmimic`` character at the 5 ms physics step:

* the open-loop PD targets m̂ of one cycle, one control row per physics step (a ball joint's three servos
  take log(q̂), a hinge its angle: control-graphs.md Sec. 4, "Ball-joint PD");
* the cycle cut into K equal fragments of about δt = 0.1 s;
* the reference state at the cycle's start, where a learning walk begins;
* for each fragment, the reference's readout at its end expressed in the facing frame at its start: what the
  SAMCON cost compares a simulated fragment with (the reference aligned to the simulation at the fragment's
  start, control-graphs.md Sec. 4, "Cost terms").

Everything is computed once from the clip; a learned controller keeps it (:mod:`.controller_file`), so a
shipped controller plays without the motion-capture files.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from strider import quat
from strider.characters import load_character
from strider.errors import UsageError
from strider.methods.graphs.features import Readout, read
from strider.methods.graphs.scoring import Summary, summarize
from strider.motion.clip import Clip
from strider.motion.deepmimic import deepmimic_motion, lowest_sole_heights
from strider.motion.foot_planting import plant_stance_feet
from strider.motion.retarget import foot_height_offset, stance_mask
from strider.sim import CharacterPlacement, Scene, World
from strider.sim.dynamics import Dynamics

CHARACTER = "deepmimic"
TIMESTEP = 0.005            # seed 002, Sec. 4 and 6: 5 ms steps
FRAGMENT_SECONDS = 0.1      # seed 002, Sec. 2 and 4: δt ≈ 0.1 s
STRIKE_HEIGHT = 0.01        # m: a clip's foot whose lowest sole corner is this close to its lowest touches down
STRIKE_SWING = 0.1          # s: ... after at least this long above that (shorter lifts are a rolling heel's flicker)


def graph_world() -> World:
    """A world of one deepmimic humanoid on flat ground at the 5 ms step."""
    return World(Scene((CharacterPlacement(load_character(CHARACTER)),), timestep=TIMESTEP))


@dataclass(frozen=True)
class Reference:
    """One cycle of a clip as control fragments on the deepmimic character."""

    name: str
    targets: np.ndarray           # (steps, nu) open-loop servo targets of one cycle
    joint_targets: dict           # joint name -> (steps, 4 | 1) the same targets as joint coordinates
    bounds: np.ndarray            # (K + 1,) fragment boundaries in steps, 0 ... steps
    start_state: np.ndarray       # the world's integration state at the cycle's start
    ends: tuple[Summary, ...]     # per fragment: the reference at its end, seen from its start's facing frame
    strike_feet: tuple[str, ...] = ()   # per fragment: the foot body whose strike ends it ("" none; () no reset)

    @property
    def fragments(self) -> int:
        return len(self.bounds) - 1

    @property
    def steps(self) -> int:
        return int(self.bounds[-1])

    def fragment_rows(self, k: int) -> slice:
        return slice(int(self.bounds[k]), int(self.bounds[k + 1]))

    def strike_foot(self, k: int) -> str | None:
        """The foot whose strike ends fragment k under phase reset, or None."""
        return (self.strike_feet[k] or None) if self.strike_feet else None


def fragment_bounds(steps: int, seconds: float = FRAGMENT_SECONDS, even: bool = False,
                    split: int | None = None) -> np.ndarray:
    """A cycle of ``steps`` physics steps cut into equal fragments of about ``seconds`` each (an even number
    of them with ``even``, so that each half cycle, one stride, has its own). With ``split`` (a step inside the
    cycle) a boundary falls there too: each of the two parts is cut into equal fragments of its own, as many
    in each with ``even``."""
    count = max(1, round(steps * TIMESTEP / seconds))
    if even and count % 2:
        count = 2 * max(1, round(steps * TIMESTEP / (2 * seconds)))
    if split is None:
        return np.round(np.linspace(0, steps, count + 1)).astype(int)
    if not 0 < split < steps:
        raise ValueError(f"a split must lie inside the cycle's {steps} steps, got {split}")
    first = count // 2 if even else min(count - 1, max(1, round(split * TIMESTEP / seconds)))
    first, second = max(1, first), max(1, count - first)
    return np.round(np.concatenate([np.linspace(0, split, first + 1),
                                    np.linspace(split, steps, second + 1)[1:]])).astype(int)


def foot_strikes(motion, first: int, steps: int) -> dict[str, list[int]]:
    """Per foot body, the steps of ``motion``'s cycle [first, first + steps) where that foot comes down: its lowest
    sole corner reaches within STRIKE_HEIGHT of the lowest it gets in the cycle after at least STRIKE_SWING above
    that. Each foot is measured against its own lowest: in a clip raised until its lowest sole touches, the
    other foot may stand a centimetre higher (the DeepMimic run's does). ``first`` is at least one cycle in, so
    a swing that began in the cycle before counts."""
    swing = round(STRIKE_SWING / TIMESTEP)
    out = {}
    for side, points in motion.sole_points().items():
        heights = points[first - steps:first + steps, :, 2].min(axis=1)
        down = heights < heights[steps:].min() + STRIKE_HEIGHT
        up_for = np.zeros(len(down), dtype=int)      # steps the foot has been up, up to and including each step
        for i in range(1, len(down)):
            up_for[i] = 0 if down[i] else up_for[i - 1] + 1
        out[motion.spec.roles.legs[side].foot] = [i - steps for i in range(steps, 2 * steps)
                                                  if down[i] and up_for[i - 1] >= swing]
    return out


def planted(motion):
    """The motion with its stance soles on the ground: each frame raised or lowered so the stance feet stand on
    z = 0, then each stance leg bent by IK so its sole stays there (what retargeting does to a BVH clip)."""
    stance = {side: stance_mask(points, motion.fps) for side, points in motion.sole_points().items()}
    offset = foot_height_offset(motion, stance)
    motion = motion.shifted(np.stack([np.zeros_like(offset), np.zeros_like(offset), offset], axis=1))
    return plant_stance_feet(motion, stance).motion


def build_reference(clip: Clip, world: World | None = None, fragment_seconds: float = FRAGMENT_SECONDS,
                    target_lead: float = 0.0, even: bool = False, close_loop: bool = False,
                    plant_feet: bool = False, phase_reset: bool = False) -> Reference:
    """The fragments of a cyclic clip, measured on the deepmimic character (its first character in ``world``).

    ``target_lead`` (s) makes the open-loop targets the clip's pose that much later: a PD servo lags its target
    by about kd/kp (0.1 s with the source's gains), which a lead of that size takes back. ``close_loop`` spreads
    the mismatch between the clip's last frame and its first over the cycle (:meth:`Clip.loop_closed`), so
    the reference neither jumps nor turns where one cycle meets the next.

    With ``phase_reset`` (walks and runs: each foot strikes once a cycle) the cycle starts at a foot strike and a
    fragment boundary falls on the other foot's, so each stride ends in a strike; the reference records which
    foot ends which fragment, and a runner ends those fragments when the foot comes down (control-graphs.md
    Sec. 4, "Phase reset").
    """
    if not clip.loop:
        raise UsageError(f"clip {clip.name!r} does not loop: the control-graph learner takes a cyclic clip "
                         "(walk, run, jog, dance_a, spinkick, backflip)")
    if close_loop:
        clip = clip.loop_closed()
    world = world or graph_world()
    character = world.character()
    missing = [j for j in character.joints if j not in clip.skeleton.names]
    if missing:
        raise UsageError(f"clip {clip.name!r} does not match the deepmimic character's joints: it has no "
                         f"{', '.join(missing)} (the learner takes DeepMimic humanoid clips)")
    dynamics = Dynamics(world)
    steps = round(clip.duration / TIMESTEP)
    if steps < 2:
        raise UsageError(f"clip {clip.name!r} is {clip.duration:.3f} s long: too short for one fragment")
    # Four cycles at the physics rate; one from the second on is used (from its first strike, with phase
    # reset), so velocities difference across its ends and the targets may lead it.
    looped = clip.looped(4)
    times = (np.arange(4 * steps + 1) * TIMESTEP) * (clip.duration / (steps * TIMESTEP))
    motion = deepmimic_motion(looped.resample(times, fps=1.0 / TIMESTEP), character.spec)
    if plant_feet:
        motion = planted(motion)
    else:
        # The clip's feet sink into the ground by a few centimetres: raise it until its lowest sole touches.
        motion = motion.shifted(np.array([0.0, 0.0, -lowest_sole_heights(motion)[steps:2 * steps].min()]))
    origin, split, strike_feet = steps, None, ()
    if phase_reset:
        strikes = foot_strikes(motion, steps, steps)
        if sorted(len(s) for s in strikes.values()) != [1, 1]:
            raise UsageError(f"clip {clip.name!r}: phase reset needs each foot to come down once a cycle (a walk or "
                             f"a run), but " + ", ".join(f"{f} does {len(s)} times" for f, s in strikes.items())
                             + "; learn it without phase reset")
        (first_foot, (first,)), (second_foot, (second,)) = sorted(strikes.items(), key=lambda f: f[1][0])
        origin, split = steps + first, second - first
    qpos = []
    for i in range(origin - 1, origin + steps + 2):
        motion.apply(world, i)
        qpos.append(world.data.qpos.copy())
    readouts: list[Readout] = []
    states: list[np.ndarray] = []
    for j in range(1, steps + 2):   # steps 0 ... steps of the cycle used
        motion.apply(world, origin - 1 + j)
        velocity = (dynamics.position_difference(qpos[j - 1], qpos[j + 1])) / (2 * TIMESTEP)
        world.data.qvel[:] = velocity
        world.forward()
        readouts.append(read(character, dynamics))
        states.append(world.integration_state())
    joint_targets = {}
    targets = np.zeros((steps, world.model.nu))
    lead = round(target_lead / TIMESTEP)
    if not 0 <= lead <= steps:
        raise UsageError(f"the target lead must lie between 0 and one cycle ({steps * TIMESTEP:.3f} s), "
                         f"got {target_lead} s")
    for name, joint in character.joints.items():
        coords = np.asarray(motion.coords[name][origin + lead:origin + steps + lead], dtype=float)
        if joint.kind == "ball":
            coords = quat.canonical(coords)
            targets[:, joint.servos] = quat.log(coords)
        else:
            targets[:, joint.servos] = coords
        joint_targets[name] = coords
    bounds = fragment_bounds(steps, fragment_seconds, even, split)
    ends = tuple(summarize(readouts[b1], readouts[b0].facing) for b0, b1 in pairwise(bounds))
    if phase_reset:
        strike_feet = tuple(second_foot if b == split else first_foot if b == steps else "" for b in bounds[1:])
    start = states[0].copy()
    start[0] = 0.0   # time starts at zero
    return Reference(clip.name, targets, joint_targets, bounds, start, ends, strike_feet)
