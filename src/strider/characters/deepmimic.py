"""The DeepMimic humanoid as a strider character: ``humanoid3d_character.txt`` converted to a character file.

DeepMimic describes its humanoid (Peng et al. 2018) as joints with attachments and bodies with shapes, Y up,
x forward, z to the right; every joint frame is aligned with its parent's in the zero pose. The conversion
(control-graphs.md Sec. 4) turns every vector to strider's Z up, x forward, y left, (x, y, z) -> (x, -z, y),
puts each body's frame at its centre of mass with the inertia of its shape at uniform density (as DeepMimic
computes it), and keeps the body and joint names, so DeepMimic clips map onto the joints by name. The two
wrists are fixed joints: each hand is merged into its forearm. Ball-joint limits become a cone of the largest
per-axis limit; gains are set (a) of seed 002, Sec. 6 (k_p = 500, k_d = 50 on every joint), with no torque
limits (control-graphs.md Sec. 4, "Torque limits").

``python -m strider.characters.deepmimic PATH`` prints the character file; the shipped
``data/deepmimic.yaml`` is its output for the DeepMimic release's file, and a test keeps the two equal.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

GAINS = {"kp": 500, "kd": 50, "limit": "none"}   # seed 002, Sec. 6, gains (a); no limits (control-graphs.md Sec. 4)
FRICTION = 0.9                                    # control-graphs.md Sec. 4, "Contact"
SIDES = {"left": "left_", "right": "right_"}
BALL, HINGE, FIXED = "spherical", "revolute", "fixed"
DECIMALS = 6


def z_up(v) -> np.ndarray:
    """A DeepMimic vector (Y up, z right) in strider axes (Z up, y left)."""
    x, y, z = (float(c) for c in v)
    return np.array([x, -z, y])


def _shape_inertia(shape: str, mass: float, size: np.ndarray) -> np.ndarray:
    """Principal inertias (DeepMimic axes) of a uniform solid: sphere (diameter), box (edge lengths) or capsule
    (diameter, cylinder height; its axis along y)."""
    if shape == "sphere":
        r = size[0] / 2
        return np.full(3, 0.4 * mass * r * r)
    if shape == "box":
        a, b, c = size
        return mass / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    r, h = size[0] / 2, size[1]
    cylinder, ball = math.pi * r * r * h, 4 / 3 * math.pi * r ** 3
    mc, ms = mass * cylinder / (cylinder + ball), mass * ball / (cylinder + ball)
    axial = mc * r * r / 2 + ms * 0.4 * r * r
    across = mc * (r * r / 4 + h * h / 12) + ms * (0.4 * r * r + h * h / 4 + 3 * h * r / 8)
    return np.array([across, axial, across])


def _geom(shape: str, centre: np.ndarray, size: np.ndarray) -> dict:
    """A strider geom (Z-up body frame, relative to the body's centre of mass)."""
    if shape == "sphere":
        return {"sphere": _round(centre), "radius": _round(size[0] / 2)}
    if shape == "box":
        half = np.abs(z_up(size)) / 2
        return {"box": [_round(centre - half), _round(centre + half)]}
    axis = np.array([0.0, 0.0, size[1] / 2])   # DeepMimic's capsule axis, y, is z here
    return {"capsule": [_round(centre + axis), _round(centre - axis)], "radius": _round(size[0] / 2)}


def _round(v):
    if np.ndim(v) == 0:
        return round(float(v), DECIMALS) + 0.0
    return [round(float(c), DECIMALS) + 0.0 for c in v]


def convert(path: str | Path) -> dict:
    """The character file (as a mapping ready for YAML) of a DeepMimic ``*_character.txt``."""
    data = json.loads(Path(path).read_text())
    joints = {j["ID"]: j for j in data["Skeleton"]["Joints"]}
    shapes = {b["ID"]: b for b in data["BodyDefs"]}
    # A fixed joint's body joins its parent's: (mass, centre in the owner's joint frame, inertia about its own
    # centre in DeepMimic axes, geoms as (shape, centre, size)).
    parts: dict[int, list] = {i: [] for i in joints}
    owner = {}
    for i, j in sorted(joints.items()):
        owner[i] = owner[j["Parent"]] if j["Type"] == FIXED else i
        offset = np.zeros(3)
        k = i
        while joints[k]["Type"] == FIXED:   # where this body's joint sits in its owner's joint frame
            offset += [joints[k]["AttachX"], joints[k]["AttachY"], joints[k]["AttachZ"]]
            k = joints[k]["Parent"]
        b = shapes[i]
        size = np.array([b["Param0"], b["Param1"], b["Param2"]], dtype=float)
        centre = offset + [b["AttachX"], b["AttachY"], b["AttachZ"]]
        parts[owner[i]].append((float(b["Mass"]), centre, _shape_inertia(b["Shape"], b["Mass"], size), b["Shape"], size))
    com = {i: sum(m * c for m, c, *_ in p) / sum(m for m, *_ in p) for i, p in parts.items() if p}
    bodies = []
    for i, j in sorted(joints.items()):
        if owner[i] != i:
            continue
        mass = sum(m for m, *_ in parts[i])
        # Parallel axes: the parts share principal axes and lie on one line (the hands below their forearms).
        inertia = sum(I + m * (np.sum((c - com[i]) ** 2) - (c - com[i]) ** 2) for m, c, I, *_ in parts[i])
        body = {"name": j["Name"]}
        if j["Parent"] >= 0:
            body["parent"] = joints[j["Parent"]]["Name"]
        body.update(mass=_round(mass), inertia=_round(np.abs(z_up(inertia))),
                    geoms=[_geom(shape, z_up(c - com[i]), size) for _, c, _, shape, size in parts[i]])
        if j["Parent"] >= 0:
            parent = j["Parent"]
            attach = np.array([j["AttachX"], j["AttachY"], j["AttachZ"]])
            joint = {"name": j["Name"], "anchor_parent": _round(z_up(attach - com[parent])),
                     "anchor_child": _round(z_up(-com[i])), "gains": "all"}
            if j["Type"] == BALL:
                cone = max(abs(j[f"Lim{e}{a}"]) for e in ("Low", "High") for a in range(3))
                joint.update(type="ball", cone=_round(cone))
            else:   # revolute: about DeepMimic's local z, which is -y here
                joint.update(type="hinge", axis=[0.0, -1.0, 0.0], range=[j["LimLow0"], j["LimHigh0"]])
            body["joint"] = joint
        bodies.append(body)
    names = {j["Name"] for i, j in joints.items() if owner[i] == i}
    legs = {side: {"hip": f"{p}hip", "knee": f"{p}knee", "ankle": f"{p}ankle", "upper": f"{p}hip",
                   "lower": f"{p}knee", "foot": f"{p}ankle"} for side, p in SIDES.items()}
    arms = {side: {"shoulder": f"{p}shoulder", "elbow": f"{p}elbow"} for side, p in SIDES.items()}
    mirror = {n: "right_" + n[len("left_"):] for n in sorted(names) if n.startswith("left_")}
    return {"name": "deepmimic", "source": "DeepMimic humanoid3d_character.txt, the character of Liu et al. 2015 as DeepMimic ships it",
            "friction": FRICTION, "actuation": "position", "gains": {"all": dict(GAINS)},
            "root_gains": dict(GAINS), "bodies": bodies,
            "roles": {"root": "root", "torso": "chest", "head": "neck", "spine": ["chest"], "neck": "neck",
                      "legs": legs, "arms": arms},
            "mirror": mirror}


HEADER = """\
# "deepmimic": the DeepMimic humanoid (Peng et al. 2018), 45 kg, 34 DOF (6 root + 8 ball joints + 4 hinges),
# the character of the control-graph family (control-graphs.md Sec. 4). Written by
#   python -m strider.characters.deepmimic humanoid3d_character.txt
# from the DeepMimic release's character file (shared/mocap/deepmimic/); do not edit by hand. Z up, body
# frames at each body's centre of mass, names kept so DeepMimic clips map onto the joints by name; the hands
# are merged into the forearms (fixed wrists). Gains: seed 002, Sec. 6, set (a); no torque limits.
"""


def dump(character: dict) -> str:
    import yaml

    return HEADER + yaml.safe_dump(character, sort_keys=False, default_flow_style=None, width=120)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m strider.characters.deepmimic PATH/humanoid3d_character.txt", file=sys.stderr)
        return 2
    sys.stdout.write(dump(convert(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
