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
from strider.sim import CharacterPlacement, Scene, World
from strider.sim.dynamics import Dynamics

CHARACTER = "deepmimic"
TIMESTEP = 0.005            # seed 002, Sec. 4 and 6: 5 ms steps
FRAGMENT_SECONDS = 0.1      # seed 002, Sec. 2 and 4: δt ≈ 0.1 s


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

    @property
    def fragments(self) -> int:
        return len(self.bounds) - 1

    @property
    def steps(self) -> int:
        return int(self.bounds[-1])

    def fragment_rows(self, k: int) -> slice:
        return slice(int(self.bounds[k]), int(self.bounds[k + 1]))


def fragment_bounds(steps: int, seconds: float = FRAGMENT_SECONDS, even: bool = False) -> np.ndarray:
    """A cycle of ``steps`` physics steps cut into equal fragments of about ``seconds`` each (an even number
    of them with ``even``, so that each half cycle, one stride, has its own)."""
    count = max(1, round(steps * TIMESTEP / seconds))
    if even and count % 2:
        count = 2 * max(1, round(steps * TIMESTEP / (2 * seconds)))
    return np.round(np.linspace(0, steps, count + 1)).astype(int)


def build_reference(clip: Clip, world: World | None = None, fragment_seconds: float = FRAGMENT_SECONDS,
                    target_lead: float = 0.0, even: bool = False) -> Reference:
    """The fragments of a cyclic clip, measured on the deepmimic character (its first character in ``world``).

    ``target_lead`` (s) makes the open-loop targets the clip's pose that much later: a PD servo lags its target
    by about kd/kp (0.1 s with the source's gains), which a lead of that size takes back.
    """
    if not clip.loop:
        raise UsageError(f"clip {clip.name!r} does not loop: the control-graph learner takes a cyclic clip "
                         "(walk, run, jog, dance_a, spinkick, backflip)")
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
    # Three cycles at the physics rate; the middle one is used, so velocities difference across its ends.
    looped = clip.looped(3)
    times = (np.arange(3 * steps + 1) * TIMESTEP) * (clip.duration / (steps * TIMESTEP))
    motion = deepmimic_motion(looped.resample(times, fps=1.0 / TIMESTEP), character.spec)
    # The clip's feet sink into the ground by a few centimetres: raise it until its lowest sole touches.
    motion = motion.shifted(np.array([0.0, 0.0, -lowest_sole_heights(motion)[steps:2 * steps].min()]))
    qpos = []
    for i in range(steps - 1, 2 * steps + 2):
        motion.apply(world, i)
        qpos.append(world.data.qpos.copy())
    readouts: list[Readout] = []
    states: list[np.ndarray] = []
    for j in range(1, steps + 2):   # steps 0 ... steps of the middle cycle
        motion.apply(world, steps - 1 + j)
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
        coords = np.asarray(motion.coords[name][steps + lead:2 * steps + lead], dtype=float)
        if joint.kind == "ball":
            coords = quat.canonical(coords)
            targets[:, joint.servos] = quat.log(coords)
        else:
            targets[:, joint.servos] = coords
        joint_targets[name] = coords
    bounds = fragment_bounds(steps, fragment_seconds, even)
    ends = tuple(summarize(readouts[b1], readouts[b0].facing) for b0, b1 in pairwise(bounds))
    start = states[0].copy()
    start[0] = 0.0   # time starts at zero
    return Reference(clip.name, targets, joint_targets, bounds, start, ends)
