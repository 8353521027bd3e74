"""Locomotion controllers by name, so the CLI, the API and the benchmarks can pick one with ``--controller``.

Each entry builds a fresh controller from a :class:`LocomotionCommand` and a
style name (or style file) that the controller's own package understands.
Method packages are imported lazily, so listing names stays cheap and one
method's import cost is not paid by another's run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from strider.control.controller import CommandRange, Controller, LocomotionCommand
from strider.errors import UsageError

RECOVERY_STEP = "recovery_step"
"""Capability: ``reset(world, character, start=AS_IS)`` takes the character as it is, mid-motion, and
``recovery_step()`` starts a balance-recovering step at once (a skill hands a push over to such a controller)."""
CAPABILITIES = (RECOVERY_STEP,)


@dataclass(frozen=True)
class ControllerEntry:
    """Where a controller family lives: ``module:function`` building it from (command, style)."""

    factory: str
    default_style: str
    summary: str
    walks: bool = True   # False: it can only stand (``strider walk`` and walking plans need another)
    actuation: tuple[str, ...] = ("position", "spd")   # the character actuation modes it can drive
    capabilities: frozenset[str] = frozenset()         # optional parts of the contract it has (CAPABILITIES)
    ankles: tuple[str, ...] = ("hinge", "universal")   # ankle joint kinds it can drive (it tilts feet about axes)
    configs: str = ""   # module:function checking a configuration name (``--config``); empty: only "default"
    bodies: tuple[str, ...] = ("humanoid",)   # "humanoid": free-rooted 3-D humanoids; "planar": planar walkers

    def require(self, name: str, capability: str) -> None:
        """Refuse a use of this controller that needs a capability it does not have."""
        if capability not in self.capabilities:
            have = [n for n, e in CONTROLLERS.items() if capability in e.capabilities]
            raise UsageError(f"controller {name!r} has no {capability} (controllers that do: {', '.join(have)})")

    def check_character(self, name: str, spec) -> None:
        """Refuse a character this controller cannot drive, before anything runs: a joint actuation it does not
        set, or a body it does not have (the walking controllers pose a free-rooted humanoid's upper body)."""
        if spec.actuation not in self.actuation:
            raise UsageError(f"controller {name!r} sets servo targets, so it needs {' or '.join(self.actuation)} "
                             f"actuation; the character uses {spec.actuation!r}")
        if spec.root == "planar":
            if "planar" not in self.bodies:
                raise UsageError(f"controller {name!r} drives 3-D humanoids with a head, neck and arms; "
                                 f"character {spec.name!r} is planar")
        else:
            if "humanoid" not in self.bodies:
                raise UsageError(f"controller {name!r} drives planar walkers such as planar14; character "
                                 f"{spec.name!r} is not planar")
            if not spec.roles.upper_body:
                raise UsageError(f"controller {name!r} drives 3-D humanoids with a head, neck and arms; "
                                 f"character {spec.name!r} is without a head, neck and arms")
        # A planar walker's feet are tilted too: point feet (no ankle) are refused like a 3-D humanoid's.
        for leg in spec.roles.legs.values():
            kind = spec.body(leg.foot).joint.kind if leg.ankle is not None else "none"
            if kind not in self.ankles:
                raise UsageError(f"controller {name!r} needs {' or '.join(self.ankles)} ankles; character "
                                 f"{spec.name!r} has {kind} ankles")

    def check_config(self, name: str, config: str) -> None:
        """Refuse an unknown configuration before anything runs."""
        if self.configs:
            _resolve(self.configs)(config)
        elif config != "default":
            raise UsageError(f"controller {name!r} has one configuration, 'default'; got --config {config!r}")

    def build(self, command: LocomotionCommand, style: str | None, config: str = "default") -> Controller:
        factory: Callable[..., Controller] = _resolve(self.factory)
        style = self.default_style if style is None else style
        return factory(command, style, config) if self.configs else factory(command, style)


def _resolve(target: str) -> Callable:
    module_name, function_name = target.split(":")
    return getattr(importlib.import_module(module_name), function_name)


CONTROLLERS: dict[str, ControllerEntry] = {
    "gbwc": ControllerEntry("strider.methods.gbwc.controller:build", "default",
                            "Generalized Biped Walking Control (Coros 2010, Ch. 5)",
                            capabilities=frozenset({RECOVERY_STEP}),
                            configs="strider.methods.gbwc.params:parse_config"),
    "simbicon": ControllerEntry("strider.methods.simbicon.controller:build", "walk",
                                "SIMBICON: FSM, swing-hip balance feedback, stance-hip root torque (Coros 2010, Sec. 2.4)",
                                bodies=("humanoid", "planar")),
    "slip": ControllerEntry("strider.methods.slip.controller:build", "walk",
                            "SLIP preview planning with a whole-body QP (Mordatch et al. 2010)",
                            actuation=("torque",), configs="strider.methods.slip.controller:check_config"),
    "track": ControllerEntry("strider.methods.tracking.factory:build", "cmu-walk",
                             "phase-indexed tracking of rectified motion capture, planar (Abe 2012)",
                             actuation=("torque",), bodies=("planar",), ankles=("hinge", "none"),
                             configs="strider.methods.tracking.controller:check_config"),
    "balance": ControllerEntry("strider.methods.skills.controller:build", "stand",
                               "standing balance by a COM virtual force, falling to a ragdoll (Torres 2012, Ch. 4)",
                               walks=False),
}

DEFAULT_CONTROLLER = "gbwc"
DEFAULT_STAND_CONTROLLER = "balance"   # ``strider stand`` with neither a plan nor a gait style


def default_controller(action: str, has_script: bool, has_style: bool = False) -> str:
    """What runs when no controller is named.

    ``stand`` balances in place (Torres 2012) unless a plan (which may make the
    character walk) or a gait style asks for the walking controller.
    """
    plain = action == "stand" and not has_script and not has_style
    return DEFAULT_STAND_CONTROLLER if plain else DEFAULT_CONTROLLER


def available_controllers() -> tuple[str, ...]:
    return tuple(CONTROLLERS)


def controller_entry(name: str) -> ControllerEntry:
    try:
        return CONTROLLERS[name]
    except KeyError:
        raise UsageError(f"unknown controller {name!r} (available: {', '.join(CONTROLLERS)})") from None


def make_controller(name: str, command: LocomotionCommand, style: str | None = None,
                    config: str = "default") -> Controller:
    """A fresh controller called ``name`` for ``command``; ``style`` None takes the family's default."""
    entry = controller_entry(name)
    entry.check_config(name, config)
    return entry.build(command, style, config)


def locomotion_scenario(controller: str, command: LocomotionCommand, spec, *, style: str | None = None,
                        ground=None, seconds: float = 10.0, pushes: tuple = (), script: tuple = (),
                        settle_seconds: float = 0.0, seed: int = 0, timestep: float | None = None,
                        config: str = "default", props: tuple = ()):
    """The one assembly of a locomotion episode, for the CLI, the Python API and every benchmark: the controller
    called ``controller`` (checked against the character ``spec`` first) following ``command`` in its ``style``,
    driving that character on ``ground`` (a :class:`~strider.sim.Terrain` or a :class:`~strider.courses.Course`;
    None: flat), with the pushes and plan given, in the controller's configuration ``config``; a
    :class:`~strider.runner.Scenario` ready for a runner. ``props`` are loose bodies added to the scene (thrown
    balls, :func:`strider.runner.throws.ball_props`)."""
    from strider.courses import Course
    from strider.runner.scenario import Scenario
    from strider.sim.scene import DEFAULT_TIMESTEP, CharacterPlacement, Scene, Terrain

    entry = controller_entry(controller)
    entry.check_character(controller, spec)
    entry.check_config(controller, config)
    course = ground if isinstance(ground, Course) else None
    terrain = Terrain() if course is not None or ground is None else ground
    scene = Scene((CharacterPlacement(spec),), terrain=terrain, course=course, props=tuple(props),
                  timestep=DEFAULT_TIMESTEP if timestep is None else timestep)
    built = entry.build(command, style, config)
    check_commands(controller, built.command_range, command, script)
    return Scenario(scene, built, seconds, pushes=tuple(pushes), script=tuple(script),
                    settle_seconds=settle_seconds, seed=seed)


def check_commands(name: str, supported: CommandRange, command: LocomotionCommand, script=()) -> None:
    """Refuse, before anything runs, a command (or one a plan changes to) outside what the controller follows."""
    problem = supported.problem(command, name)
    for change in sorted(script, key=lambda c: c.t):
        if problem is not None:
            break
        command = change.applied_to(command)
        problem = supported.problem(command, name)
        if problem is not None:
            problem = f"the plan's change at {change.t:g} s: {problem}"
    if problem is not None:
        raise UsageError(problem)
