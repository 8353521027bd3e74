"""Walking a task by its policy (Coros 2010, Sec. 4.5): at every foot strike, the task parameter from the
world's goal, the policy's command for the next step, until success, a fall or the time limit."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from strider import quat
from strider.methods.tlc.policy import Policy, PolicyRunner
from strider.methods.tlc.stepper import StepAction, TaskStepper
from strider.methods.tlc.tasks import BallHits, Task
from strider.runner.throws import Throw

POLICY_DIR = Path(__file__).parent / "data" / "policies"


def shipped_policy(task: Task) -> Policy:
    """The policy shipped for ``task`` and its configuration (remade by 'strider tlc explore' then
    'strider tlc solve')."""
    from strider.errors import UsageError

    path = POLICY_DIR / task.file_name("policy")
    if not path.is_file():
        shipped = sorted(p.name.split(".")[0] for p in POLICY_DIR.glob("*.policy.npz"))
        raise UsageError(f"no policy ships for task {task.name} with {task.config} thresholds (shipped: "
                         f"{', '.join(shipped) or 'none'}); "
                         "make one with 'strider tlc explore' and 'strider tlc solve', then pass --policy")
    return Policy.load(path)


Parameter = float | list[float]     # a task parameter as results hold it: a number, or D numbers


@dataclass(frozen=True)
class TaskStrike:
    time: float          # s since the task began
    w: Parameter         # the task parameter at the strike (stance-left frame)
    forward_speed: float
    facing: float        # rad, world: the pelvis's yaw
    action: tuple[float, float, float]   # the command taken from it (V_d, turn, T)


@dataclass(frozen=True)
class TaskRun:
    task: str
    goal: Parameter
    succeeded: bool
    fell: bool
    time_to_success: float | None
    final_w: Parameter
    strikes: list[TaskStrike] = field(default_factory=list)
    sim_seconds: float = 0.0     # simulated, the walk-in included
    hit_steps: int = 0           # steps during which a thrown ball touched the character

    @property
    def final_distance(self) -> float:
        """|final w|: m or rad from the goal."""
        return float(np.linalg.norm(np.atleast_1d(self.final_w)))

    def as_dict(self) -> dict:
        return {"task": self.task, "goal": self.goal, "succeeded": self.succeeded, "fell": self.fell,
                "time_to_success": self.time_to_success, "final_w": self.final_w, "hit_steps": self.hit_steps,
                "strikes": [s.__dict__ | {"action": list(s.action)} for s in self.strikes]}


@dataclass(frozen=True)
class WorldGoal:
    """Where a task's goal lies in the world: a point (goal distance, goal point) or a heading."""

    point: np.ndarray
    heading: float

    @staticmethod
    def ahead_of(task: Task, strike, goal: np.ndarray) -> WorldGoal:
        """``goal`` given in the frame of ``strike`` (m forward[, m left], or rad left)."""
        forward = np.array([np.cos(strike.heading), np.sin(strike.heading), 0.0])
        left = np.array([-forward[1], forward[0], 0.0])
        offset = goal[0] * forward + (goal[1] * left if task.kind == "goal-point" else 0.0)
        heading = quat.wrap_angle(strike.heading + goal[0]) if task.kind == "heading" else strike.heading
        return WorldGoal(strike.com + offset, heading)


def task_parameter(task: Task, stepper: TaskStepper, goal: WorldGoal) -> np.ndarray:
    """w at the stepper's last strike, in the stance-left frame: (D,)."""
    strike = stepper.last
    mirror = -1.0 if strike.stance == "right" else 1.0
    if task.kind == "heading":
        return np.array([mirror * quat.wrap_angle(goal.heading - strike.heading)])
    if not task.has_goal:
        return np.zeros(0)
    d = goal.point[:2] - strike.com[:2]
    c, s = np.cos(strike.heading), np.sin(strike.heading)
    forward, left = d[0] * c + d[1] * s, -d[0] * s + d[1] * c
    return np.array([forward]) if task.kind == "goal-distance" else np.array([forward, mirror * left])


def _plain(w: np.ndarray) -> Parameter:
    return float(w[0]) if len(w) == 1 else [float(x) for x in w]


@dataclass(frozen=True)
class TimedThrow:
    """A ball thrown during the step that starts at the ``strike``-th strike of the task (0: the first), its
    ``throw.time`` s after that strike."""

    strike: int
    throw: Throw


def body_faces_goal(task: Task, strike, goal_heading: float) -> bool:
    """A heading task is judged on the body too: at the strike that ends a turn GBWC's character frame already
    faces the new heading, while the pelvis still lags it by up to a few tenths of a radian."""
    return task.kind != "heading" or abs(quat.wrap_angle(goal_heading - strike.facing)) <= task.success.within


def balls_every(mass: float, every: int, strikes: int, seed: int, like: BallHits) -> tuple[TimedThrow, ...]:
    """A ball of ``mass`` kg thrown in every ``every``-th step of ``strikes`` (from the ``every``-th), each
    from a random direction at a random moment of its step (seeded), shaped and aimed as ``like``'s."""
    rng = np.random.default_rng(seed)
    return tuple(TimedThrow(k, like.random_throw(rng, mass)) for k in range(every, strikes, every))


def check_task_walk(policy: Policy, task: Task, goal, seconds: float, seed: int,
                    flags: dict[str, str] | None = None) -> np.ndarray:
    """``goal`` as :func:`walk_task` reads it, or one clear error: a policy solved for another task, a goal of the
    wrong size, not finite or outside the range the policy was solved over (a task without one takes none), a
    time that is not a positive number, a negative seed. Values are named as ``flags`` maps them (the command
    line's ``--goal``), else by argument."""
    from strider.errors import UsageError

    name = (flags or {}).get
    if policy.task != task.name:
        raise UsageError(f"a policy for task {policy.task}, not {task.name}")
    if isinstance(seconds, bool) or not (isinstance(seconds, (int, float)) and np.isfinite(seconds) and seconds > 0):
        raise UsageError(f"{name('seconds', 'seconds')} must be a time > 0 s, got {seconds!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise UsageError(f"{name('seed', 'seed')} must be a whole number >= 0, got {seed!r}")
    said = name("goal", "goal")
    try:
        given = np.zeros(0) if goal is None else np.atleast_1d(np.asarray(goal, dtype=float)).ravel()
    except (TypeError, ValueError):
        raise UsageError(f"{said} takes numbers, got {goal!r}") from None
    if not task.has_goal:
        if given.size:
            raise UsageError(f"{task.name} has no goal (it keeps walking steadily); drop {said}")
        return given
    if given.shape != (task.dimensions,):
        raise UsageError(f"{said} takes {task.dimensions} number(s) for {task.name}, got {given.size}")
    low, high = task.parameter_range
    if not all(np.isfinite(g) and low <= g <= high for g in given):
        raise UsageError(f"{said} must lie in [{low:.4g}, {high:.4g}] for {task.name} (the policy's task "
                         f"parameter range), got {' '.join(f'{g:g}' for g in given)}")
    return given


def walk_task(policy: Policy, task: Task, goal, seconds: float, *, seed: int = 0,
              video: str | None = None, stop_on_success: bool = True, throws: tuple[TimedThrow, ...] = (),
              fixed_action: StepAction | None = None, hooks: tuple = ()) -> TaskRun:
    """Walk ``task`` to ``goal`` for at most ``seconds`` after the walk-in, choosing every step by ``policy``
    (or taking ``fixed_action`` every step: the plain walk to set beside a policy). ``goal`` is in the frame of
    the walk-in's last strike: m ahead for a goal distance, rad to the left for a heading, (m ahead, m to the
    left) for a goal point, nothing for a steady walk, which runs the whole time and succeeds if it does not
    fall. ``throws`` are thrown at the character on the way; ``hooks`` watch the episode (see
    :mod:`strider.runner.hooks`). Impossible values are refused before anything is simulated
    (:func:`check_task_walk`)."""
    goal = check_task_walk(policy, task, goal, seconds, seed)
    masses = sorted({t.throw.mass for t in throws})
    balls = tuple(next(t.throw for t in throws if t.throw.mass == m) for m in masses)
    stepper = TaskStepper(policy.character, seed=seed, video=video, balls=balls, hooks=hooks)
    try:
        runner = PolicyRunner(policy, task)
        first = stepper.last
        world_goal = WorldGoal.ahead_of(task, first, goal) if task.has_goal else WorldGoal(first.com, first.heading)
        strikes: list[TaskStrike] = []
        succeeded_at, hit_steps = None, 0
        w = task_parameter(task, stepper, world_goal)
        while stepper.time - first.time < seconds:
            speed = float(task.forward_speed(stepper.last.state)[0])
            if (task.has_goal and succeeded_at is None
                    and task.succeeded(w[None] if task.dimensions > 1 else w, np.array([speed]))[0]
                    and body_faces_goal(task, stepper.last, world_goal.heading)):
                succeeded_at = stepper.time - first.time
                if stop_on_success:
                    break
            action = fixed_action or runner.act(stepper.last.state, w if task.dimensions != 1 else w[0])
            strikes.append(TaskStrike(stepper.time - first.time, _plain(w), speed, stepper.last.facing,
                                      (action.speed, action.turn, action.period)))
            now = next((t.throw for t in throws if t.strike == len(strikes) - 1), None)
            outcome = stepper.step(action, now, masses.index(now.mass) if now is not None else 0)
            hit_steps += outcome.hit
            if outcome.fell:
                return TaskRun(task.name, _plain(goal), False, True, None, _plain(w), strikes, stepper.time,
                               hit_steps)
            w = task_parameter(task, stepper, world_goal)
        done = succeeded_at is not None or not task.has_goal
        return TaskRun(task.name, _plain(goal), done, False, succeeded_at, _plain(w), strikes, stepper.time,
                       hit_steps)
    finally:
        stepper.close()
