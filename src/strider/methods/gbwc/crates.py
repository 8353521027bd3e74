"""GBWC's crate skills (seed 000, Sec. 5.5.4; coros-walking.md, P3 (c) and (d)): lift a crate from a table and
walk away with it; push a heavy crate, then pull it back.

Each skill is a high-level behaviour over one :class:`~strider.methods.gbwc.controller.GBWC`, as in the source:
it only sets the walker's command, where its hands reach (arm IK), when the hands grip (spring-dampers to the
handles, :class:`strider.sim.Grip`) and what load it carries. Its stages:

* ``approach`` - walk towards the crate, slowing linearly with the remaining distance ("slow down when near the
  crate handles"), and stop;
* ``reach`` - once standing, move both hands onto the handles ("reach for the handles when within reach");
* ``grip`` - close both grips when each hand is within ``grip_gap`` of its handle;
* lifting: ``lift`` raises the hands to the carrying hold while the crate's mass comes into the COM and the
  gravity compensation (Sec. 5.5.4), stands ``lift_settle``, steps back ``back_off`` from the table, then
  ``turn`` about and ``carry`` it ``carry_distance``;
* pushing: ``push`` walks forwards until the crate has moved ``push_distance``, then ``pull`` walks backwards
  until it is back, with the inverted pendulum's alpha raised to ``push_alpha`` (Sec. 5.5.4: 0.2);
* ``done`` - stop and stand, still holding;
* ``out_of_reach`` - the hands did not get within ``grip_gap`` in three reach times: the task gives up.

The scene (:func:`crate_scene`) is part of the task: a crate on a table for lifting, a tall crate on the floor
for pushing, with handle points on its sides or its near face.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from strider.control.arm_reach import ArmGeometry
from strider.control.controller import LocomotionCommand
from strider.control.frames import CharacterFrame
from strider.control.leg_geometry import SIDE_SIGN, SIDES
from strider.errors import UsageError
from strider.methods.gbwc.carrying import CarriedLoad
from strider.methods.gbwc.controller import GBWC
from strider.methods.gbwc.params import GBWCParams
from strider.sim import Box, Character, CharacterPlacement, Grip, Prop, Scene, State, World

CRATE = "crate"
TABLE = "table"
POST_OVERLAP = 0.2          # the table's top reaches this share of the crate's half depth in front of its centre
TABLE_TOP_THICKNESS = 0.04  # m
TABLE_WIDTH_SHARE = 0.8     # the table's width as a share of the crate's, so the hands at its sides touch only it
TABLE_LEG_BEHIND = 0.3      # m: the table's leg stands this far behind the crate
TABLE_LEG_HALF = 0.05       # m: half its depth


@dataclass(frozen=True)
class CrateTask:
    """One crate skill and its numbers. Lengths in m, speeds in m/s, times in s, angles in rad."""

    kind: Literal["lift", "push"] = "lift"
    mass: float = 15.0                        # kg; seed 000, Sec. 5.5.4: lift 5-25 kg, push/pull 80 kg
    friction: float = 0.8                     # crate-floor (push: 0.2, Sec. 5.5.4)
    start_distance: float = 2.0               # from the character's start to the crate's near face
    table_height: float = 0.8                 # lift: the table's top (coros-walking.md P3 (d): "from 0.8 m")
    size: tuple[float, float, float] = (0.25, 0.3, 0.25)   # the crate's full size (x, y, z)
    handle_height: float = 0.05               # handles above the crate's centre (lift) / its base (push)
    hand_clearance: float = 0.05              # handle points stand off the crate's faces by the hand's radius
    stand_off: float = 0.36                   # lift: COM to crate centre when reaching; push: COM to near face
    approach_speed: float = 0.4
    approach_gain: float = 0.8                # 1/s: approach speed per m still to go
    approach_min_speed: float = 0.1
    stop_within: float = 0.05
    aim_until: float = 0.5                    # the approach heads for the crate until this close                 # stop walking this close to the stand-off distance
    reach_seconds: float = 1.0                # hands move onto the handles over this time
    reach_give_up: float = 3.0                # reach times without both hands at their handles: out of reach
    grip_gap: float = 0.05                    # a grip closes when the hand is this close to its handle
    grip_settle: float = 0.3                  # s the closed grips pull the hands in before the lift or push
    reach_bend: float = 0.45                  # body bend (Sec. 5.3.1's style parameter) while reaching down
    lift_seconds: float = 1.0
    lift_settle: float = 0.5                  # standing still with the crate lifted before stepping back
    back_off_speed: float = 0.3               # lifting: walk backwards from the table ...
    back_off: float = 0.5                     # ... until the crate is this far from where it lay
    turn_speed: float = 0.2                   # then turn about, walking slowly ...
    turned_within: float = 0.1                # ... until facing this close to the way back
    hold: tuple[float, float] = (0.3, -0.35)  # carrying: hands ahead of and below the shoulders
    carry_speed: float = 0.5
    carry_distance: float = 5.0               # coros-walking.md P3 (d): walk 5 m
    push_speed: float = 0.3
    push_distance: float = 2.0                # coros-walking.md P3 (c): 2 m
    push_alpha: float = 0.2                   # seed 000, Sec. 5.5.4: IPM alpha for pushing and pulling
    push_handle_spacing: float = 0.4          # push: between the handles on the near face (about the shoulders')
    push_hold: tuple[float, float] = (0.35, -0.3)
    # Beyond the source: pushing and pulling scale the arms' gains by this (1: the source's). The source's arm
    # gains (shoulder 15, elbow 5 Nm/rad, character-bipv3.md) fold under the ~160 N an 80 kg crate's friction
    # takes, and the crate does not move.
    push_arm_gain: float = 10.0
    push_bend: float = 0.3                    # body bend while pushing and pulling: leaning into the crate

    def __post_init__(self) -> None:
        if self.kind not in ("lift", "push"):
            raise UsageError(f"crate task kind must be 'lift' or 'push', got {self.kind!r}")
        if not (self.mass > 0 and math.isfinite(self.mass)):
            raise UsageError(f"crate mass must be a positive number of kg, got {self.mass}")
        if not self.friction > 0:
            raise UsageError(f"crate friction must be > 0, got {self.friction}")

    @staticmethod
    def lifting(mass: float) -> CrateTask:
        return CrateTask("lift", mass)

    @staticmethod
    def pushing(mass: float = 80.0, friction: float = 0.2) -> CrateTask:
        # 80 kg, mu 0.2: seed 000, Sec. 5.5.4. Tuned here: a crate tall enough that its near-face handles sit at
        # the hands' height, and the stand-off that puts them within the arms' reach.
        return CrateTask("push", mass, friction, size=(0.5, 0.6, 1.1), handle_height=1.05,
                         stand_off=0.42, approach_speed=0.4)

    def with_friction(self, friction: float) -> CrateTask:
        return dataclasses.replace(self, friction=friction)

    # --- the scene --------------------------------------------------------------------------------
    def crate_centre(self) -> np.ndarray:
        half = np.array(self.size) / 2
        base = self.table_height if self.kind == "lift" else 0.0
        return np.array([self.start_distance + half[0], 0.0, base + half[2]])

    def handles(self) -> dict[str, tuple[float, float, float]]:
        """Each hand's handle point in the crate's frame: on its sides (lift) or its near face (push)."""
        hx, hy, hz = (s / 2 for s in self.size)
        if self.kind == "lift":
            return {s: (0.0, SIDE_SIGN[s] * (hy + self.hand_clearance), self.handle_height) for s in SIDES}
        return {s: (-hx - self.hand_clearance, SIDE_SIGN[s] * self.push_handle_spacing / 2, self.handle_height - hz)
                for s in SIDES}


def crate_scene(task: CrateTask, placement: CharacterPlacement) -> Scene:
    """The task's world: the character at the origin facing +x, the crate ahead (on a table when lifting), and a
    grip from each hand to its handle."""
    centre = task.crate_centre()
    half = tuple(s / 2 for s in task.size)
    crate = Prop(CRATE, "box", half, task.mass, tuple(centre), friction=task.friction, own_friction=True)
    obstacles = ()
    if task.kind == "lift":
        # A table: a thin top reaching just under the crate's centre of mass, on a leg well behind it, so the
        # knees have room under the top as the feet step close to it.
        front, back = centre[0] - POST_OVERLAP * half[0], centre[0] + half[0] + TABLE_LEG_BEHIND
        top_half = ((back - front) / 2, half[1] * TABLE_WIDTH_SHARE, TABLE_TOP_THICKNESS / 2)
        leg_half = (TABLE_LEG_HALF, top_half[1], task.table_height / 2)
        obstacles = (Box(f"{TABLE}/top", ((front + back) / 2, 0.0, task.table_height - top_half[2]), top_half,
                         terrain=False),
                     Box(f"{TABLE}/leg", (back - TABLE_LEG_HALF, 0.0, task.table_height / 2), leg_half, terrain=False))
    arms = {side: ArmGeometry.of(placement.spec, side) for side in SIDES}
    grips = tuple(Grip(side, arms[side].lower_body, tuple(arms[side].hand.tolist()), CRATE, task.handles()[side],
                       character=placement.name) for side in SIDES)
    return Scene((placement,), obstacles=obstacles, props=(crate,), grips=grips)


class CrateSkill:
    """The behaviour: a controller (the runner's contract) driving a GBWC through the task's stages."""

    name = "gbwc-crate"
    capabilities = frozenset()

    def __init__(self, task: CrateTask, params: GBWCParams | None = None):
        self.task = task
        self.walker = GBWC(LocomotionCommand(speed=0.0, walking=False), params)
        self.control_period = self.walker.control_period
        self.command_range = self.walker.command_range
        self.stage = "approach"
        self.stage_times: dict[str, float] = {}
        self.done_time: float | None = None

    # --- the controller contract ------------------------------------------------------------------
    def reset(self, world: World, character: Character, start: State | str | None = None) -> None:
        self.world, self.character = world, character
        self.walker.reset(world, character, start)
        self._base_params = self.walker.params
        self._enter("approach", 0.0)
        self._crate_start = world.body_position(CRATE)
        self._reach_from: dict[str, np.ndarray] = {}
        self._hold_from: dict[str, np.ndarray] = {}

    def set_command(self, command) -> None:
        """The task sets the walker's commands itself."""

    def has_fallen(self) -> bool:
        return self.walker.has_fallen()

    def info(self) -> dict:
        return {**self.walker.info(), "task": self.stage, "crate_moved": self.crate_moved(),
                "grips": [self.world.grip_closed(s) for s in SIDES], "done_time": self.done_time}

    def crate_moved(self) -> float:
        """How far (m, horizontally) the crate is from where it started."""
        d = self.world.body_position(CRATE)[:2] - self._crate_start[:2]
        return float(math.hypot(*d))

    def control(self, t: float) -> None:
        getattr(self, f"_{self.stage}")(t)
        self.walker.control(t)

    # --- stages ----------------------------------------------------------------------------------
    def _enter(self, stage: str, t: float) -> None:
        self.stage = stage
        self.stage_times[stage] = t
        self._since = t

    def _command(self, **fields) -> None:
        command = dataclasses.replace(self.walker.command, **fields)
        if command != self.walker.command:
            self.walker.set_command(command)

    def _distance_to_goal(self) -> float:
        """Along +x: how far the COM still is from where it should stand to reach."""
        com = self.walker.com_position()
        crate = self.world.body_position(CRATE)
        if self.task.kind == "lift":
            return float(crate[0] - com[0] - self.task.stand_off)
        return float(crate[0] - self.task.size[0] / 2 - com[0] - self.task.stand_off)

    def _approach(self, t: float) -> None:
        task = self.task
        remaining = self._distance_to_goal()
        if remaining <= task.stop_within:
            self._command(walking=False, speed=0.0)
            if self.walker.mode == "standing":
                self._enter("reach", t)
                self._reach_from = {s: self.walker.hand_position(s) for s in SIDES}
                if task.kind == "lift":
                    self._bend(task.reach_bend)
            return
        speed = min(task.approach_speed, max(task.approach_min_speed, task.approach_gain * remaining))
        com, crate = self.walker.com_position(), self.world.body_position(CRATE)
        # Aim at the crate while it is far; close to it, the last steps keep their heading.
        heading = (math.atan2(crate[1] - com[1], crate[0] - com[0]) if remaining > task.aim_until
                   else self.walker.command.heading)
        self._command(walking=True, speed=speed, heading=heading)

    def _handles_world(self) -> dict[str, np.ndarray]:
        return {s: self.world.grip_points(s)[1] for s in SIDES}

    def _reach(self, t: float) -> None:
        u = min((t - self._since) / self.task.reach_seconds, 1.0)
        handles = self._handles_world()
        self.walker.reach({s: (1 - u) * self._reach_from[s] + u * handles[s] for s in SIDES})
        if all(self.world.grip_gap(s) <= self.task.grip_gap for s in SIDES):
            for s in SIDES:
                self.world.set_grip(s, True)
            self._enter("grip", t)
        elif t - self._since > self.task.reach_give_up * self.task.reach_seconds:
            self._enter("out_of_reach", t)

    def _grip(self, t: float) -> None:
        handles = self._handles_world()
        self.walker.reach(handles)
        if t - self._since < self.task.grip_settle:   # let the springs take up the slack
            return
        if self.task.kind == "lift":
            self._hold_from = handles
            self._enter("lift", t)
        else:
            self.walker.params = dataclasses.replace(
                self._base_params, ipm=dataclasses.replace(self._base_params.ipm, alpha=self.task.push_alpha))
            self._stiffen_arms(self.task.push_arm_gain)
            self._bend(self.task.push_bend)
            self._enter("push", t)

    def _hold_points(self, hold: tuple[float, float]) -> dict[str, np.ndarray]:
        """The hands' hold: ``hold`` (forward, up) from the shoulders' midpoint, the crate's half width apart."""
        ch, arms = self.character, self.walker.roles.arms
        mid = 0.5 * (ch.joint_anchor(arms["left"].shoulder) + ch.joint_anchor(arms["right"].shoulder))
        frame = CharacterFrame(self.walker.heading, mid)
        width = abs(self.task.handles()["left"][1])
        return {s: frame.to_world(np.array([hold[0], SIDE_SIGN[s] * width, hold[1]])) + mid for s in SIDES}

    def _lift(self, t: float) -> None:
        u = min((t - self._since) / self.task.lift_seconds, 1.0)
        hold = self._hold_points(self.task.hold)
        self.walker.reach({s: (1 - u) * self._hold_from[s] + u * hold[s] for s in SIDES})
        # The arms take the crate's weight from the table as they lift: the load counted in the COM and the
        # gravity compensation grows with it, so the COM the balance sees does not jump forward at the grip.
        self.walker.carry(CarriedLoad(CRATE, u * self.task.mass))
        # ... and the body straightens up.
        self._bend((1 - u) * self.task.reach_bend + u * self._base_params.style.body_bend)
        if u >= 1.0 and self.walker.command.walking is False and t - self._since >= self.task.lift_seconds + self.task.lift_settle:
            # Lifted, standing: step back from the table before turning about.
            self._command(walking=True, speed=-self.task.back_off_speed, heading=self.walker.heading)
        if u >= 1.0 and self.crate_moved() >= self.task.back_off:
            self._enter("turn", t)
            self._command(speed=self.task.turn_speed, heading=self.walker.heading + math.pi)
            self._turn_to = self.walker.command.heading

    def _turn(self, t: float) -> None:
        self.walker.reach(self._hold_points(self.task.hold))
        if abs(math.remainder(self.walker.heading - self._turn_to, 2 * math.pi)) < self.task.turned_within:
            self._enter("carry", t)
            self._carry_from = self.world.body_position(CRATE)[:2].copy()
            self._command(speed=self.task.carry_speed)

    def _carry(self, t: float) -> None:
        self.walker.reach(self._hold_points(self.task.hold))
        if math.hypot(*(self.world.body_position(CRATE)[:2] - self._carry_from)) >= self.task.carry_distance:
            self._finish(t)

    def _push(self, t: float) -> None:
        self.walker.reach(self._hold_points(self.task.push_hold))
        self._command(walking=True, speed=self.task.push_speed, heading=0.0)
        if self.crate_moved() >= self.task.push_distance:
            self._enter("pull", t)
            self._command(speed=-self.task.push_speed)

    def _pull(self, t: float) -> None:
        self.walker.reach(self._hold_points(self.task.push_hold))
        back = self.world.body_position(CRATE)[0] - self._crate_start[0]
        if back <= 0.0:
            self._finish(t)

    def _finish(self, t: float) -> None:
        self.done_time = t
        self._enter("done", t)
        self._command(walking=False, speed=0.0)

    def _done(self, t: float) -> None:
        self.walker.reach(self._hold_points(self.task.hold if self.task.kind == "lift" else self.task.push_hold))

    def _out_of_reach(self, t: float) -> None:
        self.walker.reach(self._handles_world())

    def _stiffen_arms(self, scale: float) -> None:
        """Scale the arms' servo gains (kd with the square root of the scale, keeping their damping ratio)."""
        ch = self.character
        for arm in self.walker.roles.arms.values():
            for joint in (arm.shoulder, arm.elbow):
                kp, kd = ch.servo_gains(joint)
                ch.set_servo_gains(joint, kp * scale, kd * math.sqrt(scale))

    def _bend(self, bend: float) -> None:
        p = self.walker.params
        self.walker.params = dataclasses.replace(p, style=dataclasses.replace(p.style, body_bend=bend))


def crate_scenario(task: CrateTask, spec, config: str = "default", seconds: float = 30.0):
    """A crate skill's episode for a runner: the task's scene around ``spec``, and the skill over a GBWC in its
    named configuration (``default``, ``thesis``, ...)."""
    from strider.runner.scenario import Scenario

    if not spec.roles.upper_body:
        raise UsageError(f"character {spec.name!r} has no arms: the crate skills need two")
    skill = CrateSkill(task, GBWCParams().configured(config))
    return Scenario(crate_scene(task, CharacterPlacement(spec)), skill, seconds)
