"""Deriving characters from a spec: uniform scaling and per-segment edits.

Both keep the spec's ``reference_mass`` so that
:meth:`CharacterSpec.with_gains_for_mass` can rescale the PD gains to the new mass
afterwards (seed 000, Sec. 5.4: "kp x M'/M"), which is the only retuning the
source allows between characters.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from strider.characters.spec import BodySpec, CharacterSpec, GeomSpec, JointSpec, SegmentEdit
from strider.errors import UsageError


def _scaled_vec(v: tuple[float, float, float], s: float) -> tuple[float, float, float]:
    return tuple(float(x) * s for x in v)  # type: ignore[return-value]


def _scaled_geom(g: GeomSpec, length: float, radius: float) -> GeomSpec:
    return replace(g, start=_scaled_vec(g.start, length), end=_scaled_vec(g.end, length), radius=g.radius * radius)


def scale_uniform(spec: CharacterSpec, factor: float) -> CharacterSpec:
    """Scale every length by ``factor``; masses by factor^3 and inertias by factor^5 (constant density)."""
    if not np.isfinite(factor) or not (0.2 <= factor <= 5.0):
        raise UsageError(f"--scale must be between 0.2 and 5, got {factor}")
    if factor == 1.0:
        return spec
    bodies = []
    for b in spec.bodies:
        joint = b.joint
        if joint is not None:
            joint = replace(joint, anchor_parent=_scaled_vec(joint.anchor_parent, factor),
                            anchor_child=_scaled_vec(joint.anchor_child, factor))
        bodies.append(replace(
            b, mass=b.mass * factor**3, inertia=_scaled_vec(b.inertia, factor**5),
            geoms=tuple(_scaled_geom(g, factor, factor) for g in b.geoms), joint=joint))
    # The sole's contact patch grows with the feet, and its spin resistance per newton with it.
    return replace(spec, name=f"{spec.name}x{factor:g}", bodies=tuple(bodies),
                   sole_torsional_friction=spec.sole_torsional_friction * factor)


def edit_segments(spec: CharacterSpec, edits: dict[str, SegmentEdit]) -> CharacterSpec:
    """Stretch and reweigh named segments.

    A length factor stretches the body's own geometry and joint anchors (shape
    radii stay), and moves where its children attach. A mass factor scales mass
    and inertia; the inertia also grows with the square of the length factor.
    """
    names = {b.name for b in spec.bodies}
    for name in edits:
        if name not in names:
            raise UsageError(f"segment edit names unknown body {name!r}")
    bodies = []
    for b in spec.bodies:
        edit = edits.get(b.name, SegmentEdit())
        joint: JointSpec | None = b.joint
        if joint is not None:
            parent_edit = edits.get(b.parent or "", SegmentEdit())
            joint = replace(joint, anchor_parent=_scaled_vec(joint.anchor_parent, parent_edit.length),
                            anchor_child=_scaled_vec(joint.anchor_child, edit.length))
        body: BodySpec = replace(
            b, mass=b.mass * edit.mass, inertia=_scaled_vec(b.inertia, edit.mass * edit.length**2),
            geoms=tuple(_scaled_geom(g, edit.length, 1.0) for g in b.geoms), joint=joint)
        bodies.append(body)
    return replace(spec, bodies=tuple(bodies))
