"""Walking a task by its policy (Coros 2010, Sec. 4.5): at every foot strike, the task parameter from the
world's goal, the policy's command for the next step, until success, a fall or the time limit."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from strider import quat
from strider.methods.tlc.policy import Policy, PolicyRunner
from strider.methods.tlc.stepper import TaskStepper
from strider.methods.tlc.tasks import Task

POLICY_DIR = Path(__file__).parent / "data" / "policies"


def shipped_policy(task: Task) -> Policy:
    """The policy shipped for ``task`` (remade by 'strider tlc explore' then 'strider tlc solve')."""
    from strider.errors import UsageError

    path = POLICY_DIR / f"{task.name}.policy.npz"
    if not path.is_file():
        shipped = sorted(p.name.split(".")[0] for p in POLICY_DIR.glob("*.policy.npz"))
        raise UsageError(f"no policy ships for task {task.name} (shipped: {', '.join(shipped) or 'none'}); "
                         "make one with 'strider tlc explore' and 'strider tlc solve', then pass --policy")
    return Policy.load(path)


@dataclass(frozen=True)
class TaskStrike:
    time: float          # s since the task began
    w: float             # the task parameter at the strike (stance-left frame)
    forward_speed: float
    facing: float        # rad, world: the pelvis's yaw
    action: tuple[float, float, float]   # the command taken from it (V_d, turn, T)


@dataclass(frozen=True)
class TaskRun:
    task: str
    goal: float
    succeeded: bool
    fell: bool
    time_to_success: float | None
    final_w: float
    strikes: list[TaskStrike] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"task": self.task, "goal": self.goal, "succeeded": self.succeeded, "fell": self.fell,
                "time_to_success": self.time_to_success, "final_w": self.final_w,
                "strikes": [s.__dict__ | {"action": list(s.action)} for s in self.strikes]}


def task_parameter(task: Task, stepper: TaskStepper, goal_point: np.ndarray, goal_heading: float) -> float:
    """w at the stepper's last strike, in the stance-left frame."""
    strike = stepper.last
    if task.kind == "goal-distance":
        d = goal_point[:2] - strike.com[:2]
        return float(d[0] * np.cos(strike.heading) + d[1] * np.sin(strike.heading))
    w = quat.wrap_angle(goal_heading - strike.heading)
    return -w if strike.stance == "right" else w


def body_faces_goal(task: Task, strike, goal_heading: float) -> bool:
    """A heading task is judged on the body too: at the strike that ends a turn GBWC's character frame already
    faces the new heading, while the pelvis still lags it by up to a few tenths of a radian."""
    return task.kind != "heading" or abs(quat.wrap_angle(goal_heading - strike.facing)) <= task.success.within


def walk_task(policy: Policy, task: Task, goal: float, seconds: float, *, seed: int = 0,
              video: str | None = None, stop_on_success: bool = True) -> TaskRun:
    """Walk ``task`` to ``goal`` (m ahead for a goal distance, rad left of the facing for a heading) for at most
    ``seconds`` after the walk-in, choosing every step by ``policy``."""
    stepper = TaskStepper(policy.character, seed=seed, video=video)
    try:
        runner = PolicyRunner(policy, task)
        first = stepper.last
        facing = np.array([np.cos(first.heading), np.sin(first.heading), 0.0])
        goal_point = first.com + goal * facing
        goal_heading = quat.wrap_angle(first.heading + goal)
        strikes: list[TaskStrike] = []
        succeeded_at = None
        w = task_parameter(task, stepper, goal_point, goal_heading)
        while stepper.time - first.time < seconds:
            speed = float(task.forward_speed(stepper.last.state)[0])
            if (succeeded_at is None and task.succeeded(np.array([w]), np.array([speed]))[0]
                    and body_faces_goal(task, stepper.last, goal_heading)):
                succeeded_at = stepper.time - first.time
                if stop_on_success:
                    break
            action = runner.act(stepper.last.state, w)
            strikes.append(TaskStrike(stepper.time - first.time, w, speed, stepper.last.facing,
                                      (action.speed, action.turn, action.period)))
            if stepper.step(action).fell:
                return TaskRun(task.name, goal, False, True, None, w, strikes)
            w = task_parameter(task, stepper, goal_point, goal_heading)
        return TaskRun(task.name, goal, succeeded_at is not None, False, succeeded_at, w, strikes)
    finally:
        stepper.close()
