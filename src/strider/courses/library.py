"""Reading course files into :class:`~strider.courses.course.Course` objects.

A course file lists pieces laid along +x, each a one-key mapping (lengths and heights in m, angles in degrees):

``flat: {length}``, ``slope: {length, degrees}``, ``step_up: {height}``, ``step_down: {height}``,
``drop: {height}``, ``stairs: {count, rise, tread}`` (a negative rise goes down), ``gap: {width, depth}``,
``stones: {count, length, gap, width, height, depth, jitter: {length, gap, height, lateral}, seed}``,
``bar: {length, height, thickness}`` (a flat run with a bar across its middle), ``crate: {length, size, mass}``
(a flat run with a loose box on its middle), ``heightfield: {length, height, seed}`` (random smooth bumps).

A bad file gives one line naming the file, the field and the problem.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from strider.courses.course import Block, Course, Crate, HeightField, Region
from strider.datafile import Fields, load_yaml, resolve_data_file, shipped_names

DATA_DIR = Path(__file__).parent / "data"
PIECES = ("flat", "slope", "step_up", "step_down", "drop", "stairs", "gap", "stones", "bar", "crate", "heightfield")
SLAB = 1.0                 # m: how far below its lowest surface the course's floor lies when it has no gap
RAMP_THICKNESS = 1.0       # m: a slope is a box this thick, its top face the ramp
HEIGHTFIELD_CELL = 0.025   # m: grid spacing of a height field (a quarter of its narrowest bump's radius)
BUMP_RADIUS = (0.1, 0.3)   # m: range of a bump's Gaussian radius (about a foot long)
BUMP_DENSITY = 4.0         # bumps per square metre
MAX_ANGLE = 45.0           # degrees: the steepest slope a course may have
CONTINUOUS = ("flat", "slope", "bar", "crate", "heightfield")   # pieces whose surface starts where the last ended


def available_courses() -> list[str]:
    return shipped_names(DATA_DIR)


def load_course(name_or_path: str | Path) -> Course:
    """A shipped course by name, or a course file by path."""
    path = resolve_data_file(name_or_path, DATA_DIR, "course")
    return parse_course(Fields(load_yaml(path), str(path) if path.parent != DATA_DIR else f"courses/{path.name}"))


class _Layout:
    """Lays pieces along +x, closing a support region wherever the surface jumps."""

    def __init__(self, start: float, half_width: float):
        self.x, self.z, self.w = start, 0.0, half_width
        self.profile: list[tuple[float, float]] = [(start, 0.0)]
        self.regions: list[Region] = []
        self.flats: list[tuple[float, float, float]] = []        # (x0, x1, z) of level support boxes
        self.ramps: list[tuple[float, float, float, float]] = []  # (x0, x1, z0, z1)
        self.pits: list[tuple[float, float, float, float, float]] = []   # (x0, x1, y0, y1, bottom)
        self.stones: list[tuple[float, float, float, float, float]] = []  # (x0, x1, y0, y1, top)
        self.bars: list[tuple[float, float, float, float]] = []   # (x0, x1, bottom, top)
        self.crates: list[Crate] = []
        self.fields: list[HeightField] = []

    def close(self) -> None:
        if len(self.profile) > 1 and self.profile[-1][0] > self.profile[0][0]:
            self.regions.append(Region(self.profile[0][0], self.profile[-1][0], -self.w, self.w,
                                       tuple(self.profile)))
        self.profile = [(self.x, self.z)]

    def flat(self, length: float) -> None:
        self.flats.append((self.x, self.x + length, self.z))
        self.x += length
        self.profile.append((self.x, self.z))

    def ramp(self, length: float, rise: float) -> None:
        self.ramps.append((self.x, self.x + length, self.z, self.z + rise))
        self.x += length
        self.z += rise
        self.profile.append((self.x, self.z))

    def jump(self, dz: float) -> None:
        self.close()
        self.z += dz
        self.profile = [(self.x, self.z)]


def parse_course(f: Fields) -> Course:
    f.reject_unknown({"name", "description", "start", "half_width", "friction", "pieces"})
    half_width = f.number("half_width", 3.0, positive=True)
    lay = _Layout(f.number("start", -2.0), half_width)
    pieces = f.items("pieces")
    if not pieces:
        raise f.error("pieces", "a course needs at least one piece")
    kinds = []
    for piece in pieces:
        if not isinstance(piece.data, dict) or len(piece.data) != 1:
            raise piece.error("", f"a piece is one of {', '.join(PIECES)} with its numbers, e.g. flat: {{length: 3}}")
        kind = next(iter(piece.data))
        if kind not in PIECES:
            raise piece.error(kind, f"unknown piece (known: {', '.join(PIECES)})")
        kinds.append(kind)
        _PIECE[kind](lay, piece.mapping(kind))
    for i, kind in enumerate(kinds):
        # A ramp is a tilted box: its end faces lean, so level ground must hide them on both sides.
        if kind == "slope" and not (0 < i < len(kinds) - 1 and kinds[i - 1] in CONTINUOUS
                                    and kinds[i + 1] in CONTINUOUS):
            raise pieces[i].error("slope", f"a slope needs a continuous piece ({', '.join(CONTINUOUS)}) on both "
                                           "sides")
    lay.close()
    if not lay.regions:
        raise f.error("pieces", "a course needs some ground to stand on")
    lowest = min(min(z for _, z in r.profile) for r in lay.regions)
    bottoms = [p[4] for p in lay.pits]
    floor = min(bottoms) if bottoms else lowest - SLAB
    return Course(name=f.string("name"), description=f.string("description", ""), start=lay.regions[0].x0,
                  end=lay.x, half_width=half_width, floor=floor, friction=f.number("friction", 0.8, positive=True),
                  regions=tuple(lay.regions), blocks=tuple(_blocks(lay, floor)), crates=tuple(lay.crates),
                  heightfields=tuple(lay.fields),
                  obstacles=tuple(Region(x0, x1, -half_width, half_width, ((x0, top), (x1, top)))
                                  for x0, x1, _, top in lay.bars))


def _blocks(lay: _Layout, floor: float) -> list[Block]:
    w = lay.w
    out = [Block(f"course/flat{i}", ((x0 + x1) / 2, 0.0, (z + floor) / 2), ((x1 - x0) / 2, w, (z - floor) / 2))
           for i, (x0, x1, z) in enumerate(lay.flats) if z > floor]
    for i, (x0, x1, z0, z1) in enumerate(lay.ramps):
        pitch = math.atan2(z1 - z0, x1 - x0)
        normal = np.array([-math.sin(pitch), 0.0, math.cos(pitch)])
        centre = np.array([(x0 + x1) / 2, 0.0, (z0 + z1) / 2]) - normal * RAMP_THICKNESS / 2
        out.append(Block(f"course/ramp{i}", tuple(centre), (math.hypot(x1 - x0, z1 - z0) / 2, w, RAMP_THICKNESS / 2),
                         pitch))
    out += [Block(f"course/stone{i}", ((x0 + x1) / 2, (y0 + y1) / 2, (top + floor) / 2),
                  ((x1 - x0) / 2, (y1 - y0) / 2, (top - floor) / 2)) for i, (x0, x1, y0, y1, top) in enumerate(lay.stones)]
    out += [Block(f"course/pit{i}", ((x0 + x1) / 2, (y0 + y1) / 2, (bottom + floor) / 2),
                  ((x1 - x0) / 2, (y1 - y0) / 2, (bottom - floor) / 2), support=False)
            for i, (x0, x1, y0, y1, bottom) in enumerate(lay.pits) if bottom > floor]
    out += [Block(f"course/bar{i}", ((x0 + x1) / 2, 0.0, (bottom + top) / 2), ((x1 - x0) / 2, w, (top - bottom) / 2),
                  support=False) for i, (x0, x1, bottom, top) in enumerate(lay.bars)]
    return out


def _flat(lay: _Layout, f: Fields) -> None:
    f.reject_unknown({"length"})
    lay.flat(f.number("length", positive=True))


def _slope(lay: _Layout, f: Fields) -> None:
    f.reject_unknown({"length", "degrees"})
    length = f.number("length", positive=True)
    degrees = f.number("degrees", min=-MAX_ANGLE, max=MAX_ANGLE)
    lay.ramp(length, length * math.tan(math.radians(degrees)))


def _step(sign: float):
    def piece(lay: _Layout, f: Fields) -> None:
        f.reject_unknown({"height"})
        lay.jump(sign * f.number("height", positive=True))
    return piece


def _stairs(lay: _Layout, f: Fields) -> None:
    f.reject_unknown({"count", "rise", "tread"})
    count = f.whole("count")
    rise, tread = f.number("rise"), f.number("tread", positive=True)
    if rise == 0:
        raise f.error("rise", "a stair's rise must not be 0 (negative: stairs down)")
    for _ in range(count):
        lay.jump(rise)
        lay.flat(tread)


def _gap(lay: _Layout, f: Fields) -> None:
    f.reject_unknown({"width", "depth"})
    width, depth = f.number("width", positive=True), f.number("depth", positive=True)
    lay.close()
    lay.pits.append((lay.x, lay.x + width, -lay.w, lay.w, lay.z - depth))
    lay.x += width
    lay.profile = [(lay.x, lay.z)]


def _stones(lay: _Layout, f: Fields) -> None:
    f.reject_unknown({"count", "length", "gap", "width", "height", "depth", "jitter", "seed"})
    count = f.whole("count")
    length, gap, width = f.number("length", positive=True), f.number("gap", positive=True), f.number("width", positive=True)
    height, depth = f.number("height", 0.0), f.number("depth", 1.0, positive=True)
    jitter = f.mapping("jitter", None)
    jitter.reject_unknown({"length", "gap", "height", "lateral"})
    spread = {k: jitter.number(k, 0.0, min=0.0) for k in ("length", "gap", "height", "lateral")}
    rng = np.random.default_rng(f.whole("seed", 0, min=0))
    lay.close()
    x0, bottom = lay.x, lay.z - depth
    for _ in range(count):
        g = gap + rng.uniform(-1, 1) * spread["gap"]
        n = max(0.05, length + rng.uniform(-1, 1) * spread["length"])
        top = lay.z + height + rng.uniform(-1, 1) * spread["height"]
        y = rng.uniform(-1, 1) * spread["lateral"]
        lay.x += max(g, 0.0)
        lay.stones.append((lay.x, lay.x + n, y - width / 2, y + width / 2, top))
        lay.regions.append(Region(lay.x, lay.x + n, y - width / 2, y + width / 2, ((lay.x, top), (lay.x + n, top))))
        lay.x += n
    lay.x += gap
    lay.pits.append((x0, lay.x, -lay.w, lay.w, bottom))
    lay.profile = [(lay.x, lay.z)]


def _bar(lay: _Layout, f: Fields) -> None:
    f.reject_unknown({"length", "height", "thickness"})
    length, height, thickness = (f.number(k, positive=True) for k in ("length", "height", "thickness"))
    if thickness >= length:
        raise f.error("thickness", f"a bar ({thickness} m) must be thinner than its run ({length} m)")
    mid = lay.x + length / 2
    lay.bars.append((mid - thickness / 2, mid + thickness / 2, lay.z, lay.z + height))
    lay.flat(length)


def _crate(lay: _Layout, f: Fields) -> None:
    f.reject_unknown({"length", "size", "mass"})
    length, mass = f.number("length", positive=True), f.number("mass", positive=True)
    size = f.vector("size", 3)
    if min(size) <= 0:
        raise f.error("size", f"a crate's sizes must be > 0, got {list(size)}")
    half = tuple(s / 2 for s in size)
    lay.crates.append(Crate(f"course/crate{len(lay.crates)}", (lay.x + length / 2, 0.0, lay.z + half[2]), half, mass))
    lay.flat(length)


def _heightfield(lay: _Layout, f: Fields) -> None:
    f.reject_unknown({"length", "height", "seed"})
    length, height = f.number("length", positive=True), f.number("height", positive=True, max=0.5)
    grid = bump_grid(length, lay.w, height, f.whole("seed", 0, min=0))
    lay.fields.append(HeightField(lay.x, length, lay.w, lay.z, grid))
    lay.flat(length)


def bump_grid(length: float, half_width: float, height: float, seed: int) -> np.ndarray:
    """Random smooth bumps: the maximum of Gaussians (peaks up to ``height``) that keep clear of the field's
    edges, so it meets the level ground around it without a step. Rows along y, columns along x."""
    rng = np.random.default_rng(seed)
    ncol = round(length / HEIGHTFIELD_CELL) + 1
    nrow = round(2 * half_width / HEIGHTFIELD_CELL) + 1
    xs, ys = np.linspace(0.0, length, ncol), np.linspace(-half_width, half_width, nrow)
    grid = np.zeros((nrow, ncol))
    for _ in range(round(BUMP_DENSITY * length * 2 * half_width)):
        sigma = rng.uniform(*BUMP_RADIUS)
        reach = 3 * sigma
        cx, cy = rng.uniform(reach, length - reach), rng.uniform(-half_width + reach, half_width - reach)
        peak = rng.uniform(0.0, height)
        c0, c1 = np.searchsorted(xs, [cx - reach, cx + reach])
        r0, r1 = np.searchsorted(ys, [cy - reach, cy + reach])
        bump = peak * np.exp(-((ys[r0:r1] - cy)[:, None] ** 2 + (xs[c0:c1] - cx)[None, :] ** 2) / (2 * sigma ** 2))
        np.maximum(grid[r0:r1, c0:c1], bump, out=grid[r0:r1, c0:c1])
    return grid


_PIECE = {"flat": _flat, "slope": _slope, "step_up": _step(1.0), "step_down": _step(-1.0), "drop": _step(-1.0),
          "stairs": _stairs, "gap": _gap, "stones": _stones, "bar": _bar, "crate": _crate,
          "heightfield": _heightfield}
