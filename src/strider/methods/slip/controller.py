"""The SLIP preview controller: reduce, replan when due, then one whole-body QP per control step (Mordatch et al.
2010, Sec. 3 and 6).

Every control step (250 Hz):

1. the contact memory reads the feet's loads; a change, debounced, is a contact event;
2. a plan is made when due: at the start, every ``replan_every`` steps if that is set, and at contact events if
   ``replan_on_contact``. Each replan warm-starts from the last plan shifted by the time since;
3. the plan is read at t_r, the time since it was made: its COM acceleration plus PD feedback toward its COM
   path (which matters only when plans are made rarely), its heading and heading acceleration;
4. feet that are down and that the plan keeps down are the QP's stance feet; every other foot swings. The foot
   the plan lands next follows a swing path aimed at the plan's foothold and touchdown time; a foot in the air
   that the plan does not land has its velocity damped toward the COM's;
5. the QP's torques go to the motors.

A plan, target or torque that is not finite stops the episode with :class:`PlanDiverged`.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np

from strider import quat
from strider.control.controller import CommandRange, HeadingTarget, LocomotionCommand, begin_from
from strider.control.falls import FallCriteria, FallJudge
from strider.errors import ControlDiverged, UsageError
from strider.methods.slip.flights import MIN_FLIGHT_SECONDS, FlightLog
from strider.methods.slip.objectives import ConstraintWeights, GaitGoals, Projectile
from strider.methods.slip.planner import Plan, Planner, PlannerParams, shift
from strider.methods.slip.reduce import ContactMemory, ReduceParams, body_geometry, reduce
from strider.methods.slip.schedule import STANCE_PHASES, Terrain, other, sole_normal, terrain_of
from strider.methods.slip.swing import SwingParams, SwingPath
from strider.methods.slip.wbc import UP, BodyTargets, WholeBodyGains, WholeBodyQP, WholeBodyWeights
from strider.sim import Character, State, World

CONTROL_PERIOD = 0.004   # s: 250 Hz (Mordatch et al. 2010, Sec. 7)
# The foot each phase lifts, if any: in single support the other foot swings (A is the plan's stance foot, B the
# one it lands). In a planned flight a foot still down keeps its contact: the QP then asks it for no force,
# so it leaves the ground when the body does, and a body that has not taken off is not dropped.
_PLAN_LIFTS = (None, "B", None, None, "A", None)
BALL_AIRBORNE_HEIGHT = 0.02   # m above resting on the ground
BALL_MOVING_SPEED = 0.5       # m/s


class PlanDiverged(ControlDiverged):
    """A plan, a QP target or a torque came out not finite: the episode stops here, its state kept."""


@dataclass(frozen=True)
class ReplanRule:
    """When to plan again (Mordatch et al. 2010, Sec. 7 and Fig. 6 test 1 to 100 steps, with and without
    contact events)."""

    every: int = 0               # control steps between plans; 0: no timer
    on_contact: bool = True      # plan again when a foot lands or lifts off

    def __post_init__(self):
        if self.every < 0 or (self.every == 0 and not self.on_contact):
            raise ValueError("a replan rule needs a positive interval, contact events, or both")


@dataclass(frozen=True)
class TrackingGains:
    """The QP targets' feedback toward the plan (slip-planning.md Sec. 4 table)."""

    com_kp: float = 1000.0      # reduced-rate COM gain (Mordatch et al. 2010, Sec. 7)
    com_kd: float = 63.0        # critically damped with com_kp
    swing_kp: float = 400.0
    swing_kd: float = 40.0
    airborne_kd: float = 20.0   # a foot in the air the plan does not land moves with the COM


@dataclass(frozen=True)
class SlipParams:
    goals: GaitGoals = field(default_factory=GaitGoals)
    replan: ReplanRule = field(default_factory=ReplanRule)
    planner: PlannerParams = field(default_factory=PlannerParams)
    constraints: ConstraintWeights = field(default_factory=ConstraintWeights)
    tracking: TrackingGains = field(default_factory=TrackingGains)
    weights: WholeBodyWeights = field(default_factory=WholeBodyWeights)
    gains: WholeBodyGains = field(default_factory=WholeBodyGains)
    swing: SwingParams = field(default_factory=SwingParams)
    reduce: ReduceParams = field(default_factory=ReduceParams)
    falls: FallCriteria = field(default_factory=FallCriteria)
    settle_gains: tuple[float, float] = (100.0, 20.0)   # COM PD while settling, 1/s^2 and 1/s
    touchdown_depth: float = 0.02   # m: a swing foot aims this far below the ground, so it lands instead of hovering
    late_touchdown: float = math.inf   # beyond the source: s past the planned touchdown with the foot still up
                                       # before a replan (with contact events; inf: never)
    ramp_seconds: float = 0.0       # beyond the source: the step length grows from 0 over this long (0: at once)
    settle_seconds: float = 1.0     # the standing start comes to rest under the QP alone before t = 0
    sees_projectiles: bool = True   # the planner keeps clear of the scene's flying balls (Eq. 31); False: it
                                    # plans as if there were none (the dodge benchmark's control case)
    crouch: float = 0.6             # rad of knee bend in the standing pose (hips and ankles take half each, so
                                    # the pelvis stays upright and the soles flat). The reduced model's rest leg is
                                    # measured in this pose; straight-kneed, the leg could not lengthen and the QP
                                    # could not lower the COM (the knee is singular there)

    def configured(self, config: str) -> SlipParams:
        """These parameters in a named configuration: ``default`` (strider's best) turns on every addition beyond
        the source, ``source`` none of them."""
        if config == "source":
            return self
        if config != "default":
            raise UsageError(f"unknown SLIP configuration {config!r} (expected {' or '.join(CONFIGS)})")
        return dataclasses.replace(self, goals=configured_goals(self.goals, config),
                                   replan=ReplanRule(**DEFAULT_ADDITIONS["replan"]),
                                   planner=dataclasses.replace(self.planner, **DEFAULT_ADDITIONS["planner"]),
                                   constraints=dataclasses.replace(self.constraints,
                                                                   **DEFAULT_ADDITIONS["constraints"]),
                                   reduce=dataclasses.replace(self.reduce, **DEFAULT_ADDITIONS["reduce"]),
                                   weights=dataclasses.replace(self.weights, **DEFAULT_ADDITIONS["weights"]),
                                   **DEFAULT_ADDITIONS["controller"])


CONFIGS = ("default", "source")
# What strider's best configuration adds to the source, by where it goes (each one is a named switch above).
DEFAULT_ADDITIONS = {
    "goals": {"flight_accel": True, "w_drift": 10.0, "heading_each_step": True},
    # Goal weights multiplied: with Table 1's heading weight of 1 a 12 s walk turned 24 degrees off its heading,
    # with 10 it kept within 3. A gait that ignores its heading (weight 0: standing to dodge) still ignores it.
    "goal_scales": {"w_heading": 10.0},
    "replan": {"every": 10, "on_contact": True},           # one of Fig. 6's intervals, with contact events
    # A plan held near the last one: without it, plans remade 40 ms apart asked for opposite accelerations, and
    # protocol 1's walk fell in all 5 planner seeds (5.3-17.5 s); at 30, 4 of 5 walked its 20 s (one fell at 16.2 s).
    "planner": {"max_evaluations": 1000, "refine_iterations": 30, "continuity_weight": 30.0},
    "controller": {"late_touchdown": 0.05, "ramp_seconds": 2.0},
    "reduce": {"landing_hold": 0.2},
    # The QP answered 0.30 of the forward COM acceleration the plans asked, the rest-pose task taking the rest;
    # a COM task 10 times stronger alone fell in 3 of 3 12 s walks, and with the torso held upright too it walked
    # protocol 1's 20 s with all 5 planner seeds, in longer steps (docs/slip.md, "Why the walk's steps come short").
    "weights": {"com": 100.0, "torso": 1.0,
                # Pushed at the head the upper body folded over the hips, the spine's and stance hip's motors at
                # their limits, while the COM task at 100 held the QP to the plan: 3 of protocol 3's 12 walking
                # pushes survived; with the torso's weight raised to 50 and the COM's lowered to 10 as the torso
                # tips from 5 to 15 degrees, 8 (docs/slip.md, "Why pushes at the head fell").
                "rescue_from_deg": 5.0},
    # At the spec's 0.01 m^2 the ball's sigmoid is flat inside the clearance (a ball missing the COM by 0.25 m costs
    # 0.0015 less of its 1000 than one through it), so once the body lags a dodging plan every candidate pays the
    # same and the planner has no slope to follow: it stood still, and 5 of protocol 5's 10 throws hit
    # (docs/slip.md, "Why the dodge was hit").
    "constraints": {"projectile_scale": 0.1},
}


def configured_goals(goals: GaitGoals, config: str) -> GaitGoals:
    """A gait's goals in a named configuration (see :meth:`SlipParams.configured`)."""
    if config == "source":
        return goals
    scaled = {name: factor * getattr(goals, name) for name, factor in DEFAULT_ADDITIONS["goal_scales"].items()}
    return dataclasses.replace(goals, **DEFAULT_ADDITIONS["goals"], **scaled)


def check_config(config: str) -> None:
    SlipParams().configured(config)


COMMAND_RANGE = CommandRange(speed=(0.0, 3.0), lateral_speed=(0.0, 0.0), max_turn_rate=math.inf,
                             note="the gait's step length and duration set the speed")


@dataclass
class SlipStats:
    plans: int = 0
    evaluations: int = 0
    plan_seconds: float = 0.0      # wall time spent planning (for speed reports; the trajectory never reads it)
    contact_events: int = 0
    touchdowns: list[tuple[float, str, tuple[float, float, float]]] = field(default_factory=list)
    liftoffs: list[tuple[float, str]] = field(default_factory=list)
    flights: FlightLog = field(default_factory=FlightLog)   # every flight and its apex rise (reports only)


class SlipController:
    """The controller protocol's SLIP preview planner with a whole-body QP, on a torque-actuated biped."""

    name = "slip"
    capabilities: frozenset[str] = frozenset()

    def __init__(self, params: SlipParams | None = None, command: LocomotionCommand | None = None,
                 terrain: Terrain | None = None):
        self.params = params or SlipParams()
        self.command = command or LocomotionCommand()
        self.given_terrain = terrain      # None: the scene's own ground, read at each reset
        self.terrain = terrain or Terrain()
        self.control_period = CONTROL_PERIOD
        self.command_range = COMMAND_RANGE
        self.balls: tuple[tuple[str, float], ...] = ()   # the scene's loose balls (name, radius), read at reset
        self.flying: tuple[str, ...] = ()

    # --- the controller protocol ------------------------------------------------------------------
    def reset(self, world: World, character: Character, start: State | str | None = None) -> None:
        """Bind to ``character`` and begin from ``start`` (the controller contract): None crouches the standing
        pose by ``crouch`` with the soles kept on the ground; ``AS_IS`` takes it over as it is. The QP's rest pose
        is the pose it begins in."""
        place = begin_from(world, start)
        world.forward()
        self.world, self.character = world, character
        p = self.params
        self.terrain = self.given_terrain or terrain_of(world.scene)
        self.balls = tuple((prop.name, prop.size[0]) for prop in world.scene.props
                           if prop.shape == "sphere" and p.sees_projectiles)
        self.flying = ()
        if place and p.crouch:
            self._crouch(p.crouch)
        # The QP's rest leg scales only its angular-momentum term; the planner's constants wait for the settled pose.
        self.qp = WholeBodyQP(world, character, body_geometry(character, p.reduce).rest_leg, p.weights, p.gains)
        self.memory = ContactMemory(p.reduce)
        self.feet = {side: leg.foot for side, leg in character.spec.roles.legs.items()}
        heading = self.command.heading
        self.target_heading = HeadingTarget(quat.yaw(character.root_pose()[1]) if heading is None else heading)
        self._fall_judge = FallJudge(world, character, p.falls)
        self.plan: Plan | None = None
        self.plan_time = 0.0
        self.ticks_since_plan = 0
        self.landed_since_plan = False
        self.swing_paths: dict[str, SwingPath] = {}
        self.landing_normal = UP       # the ground's normal at the planned foothold, which the landing sole matches
        self.stats = SlipStats()
        self.fallen = False
        self.settle_seconds = p.settle_seconds
        self._stand_target: np.ndarray | None = None
        self._last_t: float | None = None
        self._clock_offset = 0.0

    def _crouch(self, knee: float) -> None:
        ch, legs = self.character, self.character.spec.roles.legs
        lowest = min(float(ch.sole_corners(leg.foot)[:, 2].min()) for leg in legs.values())
        slot = {int(d): i for i, d in enumerate(ch.internal_dofs)}
        axes = ch.dof_axes()

        def pitch(joint: str, angle: float) -> np.ndarray:
            """Coordinates turning ``joint`` by ``angle`` about the world's y (its axis closest to it)."""
            along_y = axes[[slot[int(d)] for d in ch.joints[joint].dof], 1]
            coordinates = np.zeros(len(along_y))
            axis = int(np.argmax(np.abs(along_y)))
            coordinates[axis] = angle * np.sign(along_y[axis])
            return coordinates

        joints = {}
        for leg in legs.values():
            joints[leg.hip] = quat.about_y(-knee / 2)
            joints[leg.knee] = pitch(leg.knee, knee)
            joints[leg.ankle] = pitch(leg.ankle, -knee / 2)
        position, orientation = ch.root_pose()
        ch.set_pose(position, orientation, joints)
        self.world.forward()
        drop = min(float(ch.sole_corners(leg.foot)[:, 2].min()) for leg in legs.values()) - lowest
        ch.set_pose(position - np.array([0.0, 0.0, drop]), orientation, {})
        self.world.forward()

    def settle(self, t: float) -> None:
        """The optional start of the controller contract: the QP alone holds the COM over the middle of the feet."""
        ch = self.character
        if self._stand_target is None:
            feet = np.array([self._sole_centre(side) for side in self.feet])
            com = ch.com_position()
            self._stand_target = np.array([feet[:, 0].mean(), feet[:, 1].mean(), com[2]])
        k = self.params.settle_gains
        accel = k[0] * (self._stand_target - ch.com_position()) - k[1] * ch.com_velocity()
        ch.motor_torques[:] = self.qp.torques(BodyTargets(com_accel=accel, heading=self.target_heading.value))

    def _begin(self, t: float) -> None:
        """After settling: the reduced model's constants from the standing pose, and the last touchdown now."""
        p = self.params
        self.geometry = body_geometry(self.character, p.reduce)
        self.planner = Planner(self.geometry, p.goals, p.planner, constraints=p.constraints, terrain=self.terrain)
        self.memory = ContactMemory(p.reduce)
        self.memory.touchdown_time = self.started = t
        self.memory.touchdown_com = tuple(float(v) for v in self.character.com_position())

    def set_command(self, command: LocomotionCommand) -> None:
        self.command = command
        self.target_heading.follow(command)

    def change_gait(self, goals: GaitGoals) -> None:
        """Go on under another gait's goals (a walk-to-run transition, say): the next plan aims at them, warm-started
        from the plan under way, as any replan is."""
        self.params = dataclasses.replace(self.params, goals=goals)
        if self.plan is not None:
            self.planner.goals = goals

    def has_fallen(self) -> bool:
        return self.fallen

    def info(self) -> dict:
        qp = self.qp.solver.stats
        flights = self.stats.flights.lasting(MIN_FLIGHT_SECONDS, self.control_period)
        return {"steps": len(self.stats.touchdowns), "plans": self.stats.plans,
                "evaluations": self.stats.evaluations, "qp_fallbacks": qp.fallbacks, "qp_failures": qp.failures,
                "target_heading": self.target_heading.value, "flights": len(flights),
                "highest_flight_rise": max((f.rise for f in flights), default=None)}

    def control(self, t: float) -> None:
        t = self._continuous(t)
        if self.plan is None:
            self._begin(t)
        if not self.fallen and self._fall_judge():
            self.fallen = True
        heading_goal = self.target_heading.advance(self.command, self.control_period)
        changed = self.memory.update(self.character, t, self.world.scene.gravity, self._held(t))
        for side in changed:
            self._record_event(t, side)
        self.stats.flights.observe(t, not any(self.memory.down.values()), float(self.character.com_position()[2]))
        flying = self._flying_balls()
        if self._replan_due(changed) or flying != self.flying:
            self.flying = flying
            self._replan(t, heading_goal)
        else:
            self.ticks_since_plan += 1
        targets = self._targets(t)
        torques = self.qp.torques(targets)
        if not np.all(np.isfinite(torques)):
            raise PlanDiverged(f"the whole-body QP gave non-finite torques at t = {t:.3f} s")
        self.character.motor_torques[:] = torques

    def _continuous(self, t: float) -> float:
        """``t`` on the controller's own clock. Plans, touchdowns and swing paths are timed by differences of
        ``t``, and a runner's clock starts again at 0 when a walk before the episode ends (or when an episode
        branches from a settled one): each such jump is taken out, so that one control step is one period."""
        if self._last_t is not None:
            expected = self._last_t + self.control_period
            if abs(t + self._clock_offset - expected) > 0.5 * self.control_period:
                self._clock_offset = expected - t
        self._last_t = t + self._clock_offset
        return self._last_t

    # --- planning ---------------------------------------------------------------------------------
    def _record_event(self, t: float, side: str) -> None:
        self.stats.contact_events += 1
        if self.memory.down[side]:
            self.stats.touchdowns.append((t, side, self.memory.touchdown_com))
            self.landed_since_plan = True
            self.swing_paths.pop(side, None)
        else:
            self.stats.liftoffs.append((t, side))

    def _replan_due(self, changed: list[str]) -> bool:
        rule = self.params.replan
        if self.plan is None:
            return True
        if rule.on_contact and changed:
            return True
        t_r = (self.ticks_since_plan + 1) * self.control_period
        if t_r >= float(self.plan.rollout.preview.total[0]):
            return True          # the plan has run out
        landing = other(self.plan.start.stance_side)
        if (rule.on_contact and not self.memory.down[landing]
                and t_r >= float(self.plan.rollout.touchdown_time[0]) + self.params.late_touchdown):
            return True          # the foot should have landed: plan from the state as it is
        return rule.every > 0 and self.ticks_since_plan + 1 >= rule.every

    def _flying_balls(self) -> tuple[str, ...]:
        """The scene's balls now in the air and moving: the projectiles the planner keeps clear of (a thrown
        ball appearing is an event that calls for a plan)."""
        world = self.world
        return tuple(name for name, radius in self.balls
                     if world.body_position(name)[2] > radius + BALL_AIRBORNE_HEIGHT
                     and np.linalg.norm(world.body_velocity(name)) > BALL_MOVING_SPEED)

    def _projectiles(self) -> tuple[Projectile, ...]:
        world = self.world
        return tuple(Projectile(tuple(world.body_position(name)), tuple(world.body_velocity(name)))
                     for name in self.flying)

    def _replan(self, t: float, heading_goal: float) -> None:
        start = reduce(self.character, self.memory, self.geometry, t)
        warm = None
        if self.plan is not None:
            warm = shift(self.plan.x, t - self.plan_time, self.geometry, start.start_phase,
                         stepped=self.landed_since_plan or start.stance_side != self.plan.start.stance_side,
                         bounds=self.planner.bounds)
        goals = self.params.goals
        if self.params.ramp_seconds > 0:
            share = min(1.0, (t - self.started) / self.params.ramp_seconds)
            self.planner.goals = dataclasses.replace(goals, step_length=share * goals.step_length)
        began = time.perf_counter()
        plan = self.planner.plan(start, heading_goal, warm, self._projectiles())
        self.stats.plan_seconds += time.perf_counter() - began
        if not (np.all(np.isfinite(plan.x)) and math.isfinite(plan.cost)):
            raise PlanDiverged(f"the planner's schedule is not finite at t = {t:.3f} s")
        self.plan, self.plan_time = plan, t
        self.ticks_since_plan = 0
        self.landed_since_plan = False
        self.stats.plans += 1
        self.stats.evaluations += plan.evaluations
        self._aim_swing(t)

    def _aim_swing(self, t: float) -> None:
        """Point the landing foot's swing path, if it has one yet, at the plan's foothold and touchdown time (a
        foot still down gets its path when the plan lifts it)."""
        plan = self.plan
        path = self.swing_paths.get(other(plan.start.stance_side))
        if path is None:
            return
        target = plan.rollout.swing_target[0].copy()
        self.landing_normal = sole_normal(self.terrain, self.geometry.sole, target[:2],
                                          float(plan.rollout.swing_yaw[0]))
        target[2] -= self.params.touchdown_depth
        path.aim(t, target, self.plan_time + float(plan.rollout.touchdown_time[0]))

    # --- this step's targets ----------------------------------------------------------------------
    def _sole_centre(self, side: str) -> np.ndarray:
        return self.character.sole_corners(self.feet[side]).mean(axis=0)

    def _phase(self, t: float) -> int:
        """The plan's phase at ``t`` (its last phase once it has run out)."""
        preview = self.plan.rollout.preview
        return int(preview.phase_index(np.array([[min(t - self.plan_time, preview.total[0])]]))[0, 0])

    def _roles(self) -> dict[str, str]:
        """Each side's role in the plan under way: A stands, B lands next."""
        side_a = self.plan.start.stance_side
        return {side_a: "A", other(side_a): "B"}

    def _held(self, t: float) -> tuple[str, ...]:
        """The feet the plan under way keeps down now (none before the first plan)."""
        if self.plan is None:
            return ()
        role, lifted = self._roles(), _PLAN_LIFTS[self._phase(t)]
        return tuple(side for side in ("left", "right") if role[side] != lifted)

    def _targets(self, t: float) -> BodyTargets:
        plan, ch, k = self.plan, self.character, self.params.tracking
        t_r = t - self.plan_time
        preview = plan.rollout.preview
        points = preview.at(np.array([[t_r]]))
        phase = self._phase(t)
        role, lifted = self._roles(), _PLAN_LIFTS[phase]
        com_ref, vel_ref, acc_ref = points.com[0, 0], points.com_velocity[0, 0], points.com_accel[0, 0]
        heading, heading_rate = float(points.heading[0, 0]), float(points.heading_rate[0, 0])
        heading_accel = (float(plan.rollout.decoded.heading_accel[0, STANCE_PHASES.index(phase)])
                         if phase in STANCE_PHASES else 0.0)
        com_accel = acc_ref + k.com_kp * (com_ref - ch.com_position()) + k.com_kd * (vel_ref - ch.com_velocity())
        if not (np.all(np.isfinite(com_accel)) and math.isfinite(heading)):
            raise PlanDiverged(f"the plan's COM target is not finite at t = {t:.3f} s")

        stance = tuple(s for s in ("left", "right") if self.memory.down[s] and role[s] != lifted)
        swing = {}
        for side in ("left", "right"):
            if side in stance:
                continue
            landing = role[side] == "B"
            swing[side] = (self._swing_accel(side, t, landing), heading, self.landing_normal if landing else UP)
        return BodyTargets(com_accel=com_accel, heading=heading, heading_rate=heading_rate,
                           heading_accel=heading_accel, stance=stance, swing=swing)

    def _swing_accel(self, side: str, t: float, landing: bool) -> np.ndarray:
        ch, k = self.character, self.params.tracking
        foot = self.feet[side]
        centre = self._sole_centre(side)
        velocity = ch.body_velocity(foot)       # the sole turns little in swing: the body's velocity stands in
        path = self.swing_paths.get(side)
        if path is None:
            path = self.swing_paths[side] = SwingPath(t, centre, self.params.swing, self.terrain.heights,
                                                      self.geometry.sole.half_length)
            if landing:
                self._aim_swing(t)
        if not landing:
            return k.airborne_kd * (ch.com_velocity() - velocity)
        ref = path.at(t)
        return ref.acceleration + k.swing_kp * (ref.position - centre) + k.swing_kd * (ref.velocity - velocity)


def build(command: LocomotionCommand, style: str, config: str = "default") -> SlipController:
    """The registry's factory: a gait by name or file, in a named configuration (``default`` or ``source``).
    A walking command's speed sets the step length (speed x the gait's step duration); a standing command
    takes the ``stand`` gait unless its style is a gait in place (``dodge``)."""
    from strider.methods.slip.gait import load_gait

    goals = load_gait(style)
    if not command.walking and goals.step_length != 0:
        goals = load_gait("stand")
    if command.walking and command.speed != 0:
        goals = dataclasses.replace(goals, step_length=abs(command.speed) * goals.step_duration)
    return SlipController(SlipParams(goals=goals).configured(config), command)
