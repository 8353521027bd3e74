"""The registry's factory for the phase-indexed tracker: a shipped or saved rectified motion, fitted and bound to its
FRI policy. It sits above the VI tables (:mod:`strider.methods.tracking.fri_value`, which drives the controller to
sample its transitions) and the controller, so the imports run one way: factory, then fri_value, then controller."""

from __future__ import annotations

from strider.characters import load_character
from strider.control.controller import LocomotionCommand
from strider.methods.tracking.constraints import fit_constraints
from strider.methods.tracking.controller import FriPolicy, PhaseTrackingController, TrackParams, parse_config
from strider.methods.tracking.fri_value import policy_table
from strider.methods.tracking.planar_model import PlanarModel
from strider.methods.tracking.track_file import load_track, resolve_track


def build(command: LocomotionCommand, style: str, config: str = "default") -> PhaseTrackingController:
    """The registry's factory: ``style`` names a shipped rectified motion or a .track file; its constraints are
    fitted here (a fraction of a second); ``config`` picks the FRI policy and settings (:func:`parse_config`)."""
    policy, changes = parse_config(config)
    track = resolve_track(style)
    rectified, character = load_track(track)
    constraints = fit_constraints(PlanarModel.from_spec(load_character(character)), rectified)
    kind, _, path = policy.partition(":")
    table = policy_table(constraints, track, path or None) if kind == "vi" else None
    return PhaseTrackingController(constraints, TrackParams(policy=FriPolicy(kind=kind), **changes), table)
