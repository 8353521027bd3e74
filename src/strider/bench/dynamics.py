"""``strider bench dynamics``: what each dynamics accessor costs per call, beside one bare physics step.

Every accessor is called with preallocated output arrays where it takes them, as a controller calling it
every step would. Each round times every accessor and a run of bare steps back to back, so the ratio to a
step is measured under the same load; the figures are the medians over rounds.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import Protocol
from strider.characters import load_character
from strider.sim import CharacterPlacement, Scene, World
from strider.sim.dynamics import Dynamics


def accessors(world: World) -> dict[str, Callable[[], object]]:
    """One call of each accessor on the world's character, by the name the report shows."""
    dyn = Dynamics(world)
    character = world.character()
    nv = dyn.nv
    foot_name = character.spec.roles.legs["left"].foot
    foot, root = character.body(foot_name), character.root_body
    point = character.body_position(foot_name)
    square, row3, vec = np.zeros((nv, nv)), np.zeros((3, nv)), np.zeros(nv)
    rhs = np.random.default_rng(0).normal(size=nv)
    qacc = dyn.accelerations()
    return {
        "mass matrix (dense)": lambda: dyn.mass_matrix(square),
        "M^-1 b (engine factorization)": lambda: dyn.solve_mass(rhs, vec),
        "M v": lambda: dyn.mass_times(rhs, vec),
        "bias forces": lambda: dyn.bias_forces(vec),
        "passive forces": lambda: dyn.passive_forces(vec),
        "point Jacobian": lambda: dyn.point_jacobian(foot, point, row3),
        "rotation Jacobian": lambda: dyn.rotation_jacobian(foot, row3),
        "body COM Jacobian": lambda: dyn.body_com_jacobian(foot, row3),
        "whole-body COM Jacobian": lambda: dyn.subtree_com_jacobian(root, row3),
        "point J-dot": lambda: dyn.point_jacobian_dot(foot, point),
        "point J-dot q-dot": lambda: dyn.point_bias_acceleration(foot, point),
        "whole-body COM J-dot q-dot": lambda: dyn.subtree_com_bias_acceleration(root),
        "centroidal momentum": lambda: dyn.momentum(root),
        "angular momentum matrix": lambda: dyn.angular_momentum_matrix(root, row3),
        "contact list (world-frame forces)": dyn.contacts,
        "contact forces per body": dyn.body_contact_forces,
        "contact J^T f": lambda: dyn.contact_generalized_forces(vec),
        "inverse dynamics": lambda: dyn.inverse(qacc, vec),
    }


def _per_call(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def measure(protocol: Protocol) -> dict:
    p = protocol.params
    world = World(Scene((CharacterPlacement(load_character(protocol.character)),)))
    world.step(round(p.settle_seconds / world.timestep))
    calls = accessors(world)
    start_state = world.snapshot()
    per_round: dict[str, list[float]] = {name: [] for name in calls}
    step_times: list[float] = []
    for _ in range(p.rounds):
        world.restore(start_state)
        begin = time.perf_counter()
        world.step(p.calls)    # no timed forces: one mj_step call of p.calls steps, bare MuJoCo
        step_times.append((time.perf_counter() - begin) / p.calls)
        world.restore(start_state)
        for name, fn in calls.items():
            per_round[name].append(_per_call(fn, p.calls))
    step = statistics.median(step_times)
    return {"step_seconds": step, "contacts": len(Dynamics(world).contacts()), "nv": world.character().nv,
            "accessors": {name: {"seconds": statistics.median(t),
                                 "step_ratio": statistics.median(a / s for a, s in zip(t, step_times))}
                          for name, t in per_round.items()}}


def run(protocol: Protocol, progress: bool = True) -> BenchOutput:
    figures = measure(protocol)
    rows = [Row(f"one physics step of {protocol.character} ({figures['nv']} DOF, {figures['contacts']} contacts)",
                f"{1e6 * figures['step_seconds']:.1f} us")]
    rows += [Row(name, f"{1e6 * f['seconds']:.2f} us ({f['step_ratio']:.2f} steps)")
             for name, f in figures["accessors"].items()]
    summary = {"timings": figures}
    notes = [("Each figure is the median over rounds; the ratio to a step is taken within each round, so it holds "
              "on a busy machine where the absolute times do not.")]
    return BenchOutput("dynamics", protocol.character, protocol.as_dict(), [], summary, rows, notes=notes)
