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

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np

from strider import quat
from strider.characters import load_character
from strider.errors import UsageError
from strider.methods.graphs.features import Readout, read
from strider.methods.graphs.scoring import Summary, summarize, turned
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
END_HOLD = 1.0              # s: a one-pass clip's last frame held (control-graphs.md Sec. 4, "Clips": stand)
REST_DISTANCE = 0.08        # m: a clip's body this close to the ground rests on it (strider's decision: the
                            # get-up clips' lying bodies sit 5-8 cm above it on the deepmimic character)
CONTACT_WINDOW = 0.1        # s: a body may touch the ground where the clip's does within this (control-graphs.md
                            # Sec. 4, "SAMCON details")
_LEGS = tuple(f"{side}_{joint}" for side in ("right", "left") for joint in ("hip", "knee", "ankle"))
GAIN_SETS: dict[str, dict[str, tuple[float, float]]] = {
    "a": {},   # seed 002, Sec. 6, set (a): kp 500, kd 50 on every joint, the character file's own
    "b": {"chest": (2000.0, 100.0), **{leg: (1000.0, 50.0) for leg in _LEGS}},   # seed 002, Sec. 6, set (b):
    # waist 2000/100, legs 1000/50 (control-graphs.md Sec. 4: legs = hips, knees, ankles), the rest as in (a)
}
"""The source's two PD gain sets (joint -> kp, kd); Table II gives each skill one."""


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
    ground_bodies: tuple[tuple[str, ...], ...] = ()   # per fragment: bodies besides the feet the clip rests on
                                                      # (() for a cyclic clip: the feet alone)
    cyclic: bool = True           # False: the clip plays once (a get-up, a kick), its last frame held at the end
    gains: str = "a"              # the PD gain set it plays with (GAIN_SETS; seed 002, Table II)

    def __post_init__(self) -> None:
        check_gain_set(self.gains)

    @property
    def fragments(self) -> int:
        return len(self.bounds) - 1

    @property
    def steps(self) -> int:
        return int(self.bounds[-1])

    def fragment_rows(self, k: int) -> slice:
        return slice(int(self.bounds[k]), int(self.bounds[k + 1]))

    def resting_bodies(self, k: int) -> tuple[str, ...]:
        """The bodies other than the feet that may touch the ground in fragment k without a fall: those the clip
        itself rests on within CONTACT_WINDOW of it (none in a file written before they were recorded)."""
        return self.ground_bodies[k] if self.ground_bodies else ()

    def turning(self, yaw_per_cycle: float) -> Reference:
        """The cycle turning steadily about the up axis, ``yaw_per_cycle`` rad more each cycle, as a walk on an arc
        (:meth:`Clip.turning` bends a clip so): the same servo targets, and each fragment's end turned by its share
        of the yaw (:func:`~strider.methods.graphs.scoring.turned`). Worked out from the stored ends, so a shipped
        skill turns without its motion-capture clip."""
        if not self.cyclic:
            raise UsageError(f"reference {self.name!r} plays once; only a cycle (a walk, a run) can be turned")
        rate = yaw_per_cycle / self.steps
        return replace(self, name=f"{self.name}_turning{np.degrees(yaw_per_cycle):+.0f}",
                       ends=tuple(turned(end, rate * float(b1 - b0))
                                  for end, (b0, b1) in zip(self.ends, pairwise(self.bounds))))

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


def check_gain_set(name: str) -> None:
    if name not in GAIN_SETS:
        raise UsageError(f"gain set must be one of {', '.join(GAIN_SETS)} (seed 002, Sec. 6), got {name!r}")


def build_reference(clip: Clip, world: World | None = None, fragment_seconds: float = FRAGMENT_SECONDS,
                    target_lead: float = 0.0, even: bool = False, close_loop: bool = False,
                    plant_feet: bool = False, phase_reset: bool = False, end_hold: float = END_HOLD,
                    gains: str = "a") -> Reference:
    """The fragments of a clip, measured on the deepmimic character (its first character in ``world``).

    A cyclic clip becomes one cycle. A clip that does not loop (a get-up, a kick) becomes one pass through it with
    its last frame held ``end_hold`` s longer (the source's stand after a get-up), raised so that its last frame
    stands on the ground; ``close_loop``, ``even`` and ``phase_reset``, which are about cycles, do not apply to it.
    A one-pass reference records, per fragment, which bodies besides the feet the clip rests on the ground with
    (within REST_DISTANCE, CONTACT_WINDOW either side of the fragment): touching the ground with those is no
    fall. A cyclic clip records them too, its legs left out: at REST_DISTANCE a walk's shins, which end a few
    centimetres above the soles, would count as resting, and a knee on the ground would be no fall. So a walk or a
    run rests on its feet alone (no resting bodies are recorded), and a cartwheel on its hands where it puts them
    down.

    ``target_lead`` (s) makes the open-loop targets the clip's pose that much later: a PD servo lags its target
    by about kd/kp (0.1 s with the source's gains), which a lead of that size takes back. ``close_loop`` spreads
    the mismatch between the clip's last frame and its first over the cycle (:meth:`Clip.loop_closed`), so
    the reference neither jumps nor turns where one cycle meets the next.

    With ``phase_reset`` (walks and runs: each foot strikes once a cycle) the cycle starts at a foot strike and a
    fragment boundary falls on the other foot's, so each stride ends in a strike; the reference records which
    foot ends which fragment, and a runner ends those fragments when the foot comes down (control-graphs.md
    Sec. 4, "Phase reset").

    ``gains`` names the PD gain set the fragments play with (GAIN_SETS): the measurements here are kinematic, so
    it is recorded, not used.
    """
    check_gain_set(gains)
    if clip.loop and close_loop:
        clip = clip.loop_closed()
    world = world or graph_world()
    character = world.character()
    missing = [j for j in character.joints if j not in clip.skeleton.names]
    if missing:
        raise UsageError(f"clip {clip.name!r} does not match the deepmimic character's joints: it has no "
                         f"{', '.join(missing)} (the learner takes DeepMimic humanoid clips)")
    dynamics = Dynamics(world)
    if not end_hold >= 0:
        raise UsageError(f"the end hold must be 0 s or more, got {end_hold}")
    steps = round((clip.duration + (0.0 if clip.loop else end_hold)) / TIMESTEP)
    if steps < 2:
        raise UsageError(f"clip {clip.name!r} is {clip.duration:.3f} s long: too short for one fragment")
    lead = round(target_lead / TIMESTEP)
    if not 0 <= lead <= steps:
        raise UsageError(f"the target lead must lie between 0 and one {'cycle' if clip.loop else 'pass'} "
                         f"({steps * TIMESTEP:.3f} s), got {target_lead} s")
    window = round(CONTACT_WINDOW / TIMESTEP)
    if clip.loop:
        # Four cycles at the physics rate; one from the second on is used (from its first strike, with phase
        # reset), so velocities difference across its ends and the targets may lead it.
        looped = clip.looped(4)
        times = (np.arange(4 * steps + 1) * TIMESTEP) * (clip.duration / (steps * TIMESTEP))
        motion = deepmimic_motion(looped.resample(times, fps=1.0 / TIMESTEP), character.spec)
        standing = slice(steps, 2 * steps)
        origin = steps
    else:
        # One pass, from ``window`` steps before its start to ``window`` after its end: times outside the clip
        # repeat its first or its last frame (the hold).
        origin = window
        times = (np.arange(steps + lead + 2 * window + 2) - origin) * TIMESTEP
        motion = deepmimic_motion(clip.resample(times, fps=1.0 / TIMESTEP), character.spec)
        standing = slice(origin + steps - max(1, round(end_hold / TIMESTEP)), origin + steps + 1)
        even = phase_reset = False
    if plant_feet:
        motion = planted(motion)
    else:
        # The clip's feet sink into the ground by a few centimetres: raise it until its lowest sole touches
        # (a one-pass clip where it ends, standing).
        motion = motion.shifted(np.array([0.0, 0.0, -lowest_sole_heights(motion)[standing].min()]))
    split, strike_feet = None, ()
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
    resting = resting_bodies(world, motion, range(origin - window, origin + steps + window + 1))
    if clip.loop:
        # A cycle's legs never rest on the ground (a shin near it is a knee about to touch); its arms may, as a
        # cartwheel's hands do.
        legs = {body for leg in character.spec.roles.legs.values() for body in (leg.upper, leg.lower)}
        resting = [bodies - legs for bodies in resting]
    ground_bodies = tuple(tuple(sorted(set().union(*resting[b0:b1 + 2 * window + 1]), key=character.body))
                          for b0, b1 in pairwise(bounds))
    if clip.loop and not any(ground_bodies):
        ground_bodies = ()   # on its feet alone: a walk, a run
    return Reference(clip.name, targets, joint_targets, bounds, start, ends, strike_feet, ground_bodies, clip.loop,
                     gains)


def resting_bodies(world: World, motion, frames: range) -> list[set[str]]:
    """Per frame of ``motion``, the character's bodies other than the feet within REST_DISTANCE of the ground."""
    character = world.character()
    foot_ids = set(character.foot_bodies.tolist())
    feet = {name for name, i in character.body_ids.items() if i in foot_ids}
    out = []
    for i in frames:
        motion.apply(world, i)
        out.append(set(character.bodies_near_terrain(REST_DISTANCE)) - feet)
    return out


def joined(references: Sequence[Reference], name: str) -> tuple[Reference, tuple[int, ...]]:
    """The fragments of several references as one table (the source's control graph: every skill's fragments,
    indexed together, so that one SAMCON walk can pass from a skill into another and roll back across the
    transition), and the index of each reference's first fragment in it. It starts in the first's start state."""
    if not references:
        raise UsageError("joining references needs at least one")
    if len({r.gains for r in references}) > 1:
        raise UsageError(f"joined references play with one gain set; these have {[r.gains for r in references]}")
    offsets = tuple(int(k) for k in np.cumsum([0] + [r.fragments for r in references[:-1]]))
    steps = np.cumsum([0] + [r.steps for r in references[:-1]])
    bounds = np.concatenate([references[0].bounds[:1]] + [r.bounds[1:] + s for r, s in zip(references, steps)])
    resets = any(r.strike_feet for r in references)
    return Reference(
        name, np.concatenate([r.targets for r in references]),
        {j: np.concatenate([r.joint_targets[j] for r in references]) for j in references[0].joint_targets},
        bounds, references[0].start_state, tuple(e for r in references for e in r.ends),
        tuple(f for r in references for f in (r.strike_feet or ("",) * r.fragments)) if resets else (),
        tuple(b for r in references for b in (r.ground_bodies or ((),) * r.fragments)), False,
        references[0].gains), offsets
