"""BVH (Biovision Hierarchy) files: a vectorized reader and a writer.

The reader accepts any channel order, per-joint channel sets (0 to 6 channels,
position channels on any joint), ``End Site`` blocks, Y-up or Z-up skeletons
and any length unit: the clip keeps the file's own numbers, and its
:class:`~strider.motion.axes.Axes` (given, or guessed from the skeleton) say how
to convert them. Rotation channels are intrinsic Euler angles in degrees,
applied in the order listed (``Zrotation Yrotation Xrotation`` is
Rz · Ry · Rx); position channels give the joint's translation from its parent
directly, the ``OFFSET`` being its rest value.

Every problem in a file raises one :class:`MotionFormatError` naming the file,
the line and the problem.
"""

from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from strider import quat
from strider.motion.axes import Axes
from strider.motion.clip import Clip
from strider.motion.errors import MotionFormatError
from strider.motion.skeleton import Skeleton

CHANNEL_NAMES = {f"{a}{kind}".lower(): f"{a}{kind}" for a in "XYZ" for kind in ("position", "rotation")}
MAX_CHANNELS = 6
NUMBER_FORMAT = "%.10g"
"""Ten significant digits: degrees to 1e-7 and metres (or CMU units) to 1e-8 at the sizes motion files hold,
so a read-write-read round trip stays within 1e-6 rad and 1e-6 m."""
SITE_SUFFIX = "_End"
LOOP_MARKER = ".loop"   # a file name ending in it holds a looping clip (BVH has no flag for it)


@dataclass
class _Joint:
    name: str
    parent: int
    offset: np.ndarray
    channels: tuple[str, ...] = ()
    site: bool = False
    line: int = 0
    children: list[int] = field(default_factory=list)


class _Tokens:
    """Whitespace-separated tokens of the hierarchy, each with its line number."""

    def __init__(self, lines: list[str], source: str):
        self.source = source
        self.items: list[tuple[str, int]] = [(tok, n + 1) for n, line in enumerate(lines) for tok in line.split()]
        self.end_line = len(lines) + 1
        self.i = 0

    def error(self, problem: str, line: int | None = None) -> MotionFormatError:
        if line is None:
            line = self.items[self.i][1] if self.i < len(self.items) else self.end_line
        return MotionFormatError(self.source, problem, line=line)

    def peek(self) -> tuple[str, int] | None:
        return self.items[self.i] if self.i < len(self.items) else None

    def next(self, what: str) -> tuple[str, int]:
        if self.i >= len(self.items):
            raise self.error(f"file ends where {what} was expected (truncated?)")
        tok = self.items[self.i]
        self.i += 1
        return tok

    def expect(self, word: str) -> int:
        tok, line = self.next(f"'{word}'")
        if tok != word:
            raise self.error(f"expected '{word}', found {tok!r}", line)
        return line

    def rest_of_line(self, line: int) -> list[str]:
        out = []
        while self.i < len(self.items) and self.items[self.i][1] == line and self.items[self.i][0] != "{":
            out.append(self.items[self.i][0])
            self.i += 1
        return out

    def number(self, what: str) -> float:
        tok, line = self.next(what)
        try:
            value = float(tok)
        except ValueError:
            raise self.error(f"{what} must be a number, found {tok!r}", line) from None
        if not np.isfinite(value):
            raise self.error(f"{what} must be finite, found {tok!r}", line)
        return value


def _parse_hierarchy(tokens: _Tokens) -> list[_Joint]:
    tokens.expect("HIERARCHY")
    word, line = tokens.next("'ROOT'")
    if word != "ROOT":
        raise tokens.error(f"expected 'ROOT' after HIERARCHY, found {word!r}", line)
    joints: list[_Joint] = []
    first_line: dict[str, int] = {}

    def open_joint(parent: int, line: int, site: bool) -> None:
        if site:
            base = f"{joints[parent].name}{SITE_SUFFIX}"
            name, k = base, 1
            while name in first_line:
                k += 1
                name = f"{base}{k}"
        else:
            words = tokens.rest_of_line(line)
            if not words:
                raise tokens.error("joint has no name", line)
            name = " ".join(words)
            if name in first_line:
                raise tokens.error(f"joint name {name!r} repeats the one on line {first_line[name]}", line)
        first_line[name] = line
        tokens.expect("{")
        joints.append(_Joint(name, parent, np.zeros(3), site=site, line=line))

    open_joint(-1, line, site=False)
    stack = [0]
    seen_offset = [False]
    while stack:
        current = stack[-1]
        word, line = tokens.next("'}' closing joint " + repr(joints[current].name))
        if word == "OFFSET":
            if seen_offset[current]:
                raise tokens.error(f"joint {joints[current].name!r} has a second OFFSET", line)
            joints[current].offset = np.array([tokens.number(f"OFFSET {a}") for a in "xyz"])
            seen_offset[current] = True
        elif word == "CHANNELS":
            if joints[current].site:
                raise tokens.error("an End Site cannot have CHANNELS", line)
            if joints[current].channels:
                raise tokens.error(f"joint {joints[current].name!r} has a second CHANNELS", line)
            count_tok, _ = tokens.next("the channel count")
            if not count_tok.isdigit() or int(count_tok) > MAX_CHANNELS:
                raise tokens.error(f"CHANNELS count must be a whole number from 0 to {MAX_CHANNELS}, "
                                   f"found {count_tok!r}", line)
            names = []
            for k in range(int(count_tok)):
                tok, tok_line = tokens.next(f"channel {k + 1} of {count_tok}")
                canonical = CHANNEL_NAMES.get(tok.lower())
                if canonical is None:
                    if tok in ("JOINT", "End", "}", "OFFSET", "CHANNELS", "MOTION"):
                        raise tokens.error(f"CHANNELS says {count_tok} channels but lists {k}", line)
                    raise tokens.error(f"unknown channel {tok!r} (expected X/Y/Z position or rotation)", tok_line)
                if canonical in names:
                    raise tokens.error(f"channel {canonical} listed twice", tok_line)
                names.append(canonical)
            nxt = tokens.peek()
            if nxt is not None and nxt[1] == line and nxt[0].lower() in CHANNEL_NAMES:
                raise tokens.error(f"CHANNELS says {count_tok} channels but lists more", line)
            joints[current].channels = tuple(names)
        elif word == "JOINT" or word == "End":
            if joints[current].site:
                raise tokens.error("an End Site cannot have children", line)
            if not seen_offset[current]:
                raise tokens.error(f"joint {joints[current].name!r} needs an OFFSET before its children", line)
            site = word == "End"
            if site:
                tokens.expect("Site")
            open_joint(current, line, site)
            joints[current].children.append(len(joints) - 1)
            stack.append(len(joints) - 1)
            seen_offset.append(False)
        elif word == "}":
            if not seen_offset[current]:
                raise tokens.error(f"joint {joints[current].name!r} has no OFFSET", line)
            stack.pop()
        elif word == "ROOT":
            raise tokens.error("only one ROOT is supported, and it must close before another starts", line)
        elif word == "MOTION":
            raise tokens.error(f"MOTION starts before joint {joints[current].name!r} is closed with '}}'", line)
        else:
            raise tokens.error(f"unexpected {word!r} in joint {joints[current].name!r}", line)
    return joints


_FRAMES = re.compile(r"^\s*Frames\s*:\s*(\S*)\s*$", re.IGNORECASE)
_FRAME_TIME = re.compile(r"^\s*Frame\s+Time\s*:\s*(\S*)\s*$", re.IGNORECASE)


def _header_value(lines: list[str], index: int, pattern: re.Pattern, what: str, source: str) -> str:
    if index >= len(lines):
        raise MotionFormatError(source, f"file ends where '{what}' was expected (truncated?)", line=index + 1)
    match = pattern.match(lines[index])
    if match is None:
        raise MotionFormatError(source, f"expected '{what} ...', found {lines[index].strip()[:40]!r}", line=index + 1)
    return match.group(1)


def _parse_motion(lines: list[str], start: int, n_channels: int, source: str) -> tuple[np.ndarray, float]:
    """Frame values (T, C) and the frame time from the lines after ``MOTION`` (``start`` is its index)."""
    count_text = _header_value(lines, start + 1, _FRAMES, "Frames:", source)
    if not count_text.isdigit():
        raise MotionFormatError(source, f"Frames must be a whole number, found {count_text!r}", line=start + 2)
    count = int(count_text)
    if count == 0:
        raise MotionFormatError(source, "the motion is empty (Frames: 0)", line=start + 2)
    time_text = _header_value(lines, start + 2, _FRAME_TIME, "Frame Time:", source)
    try:
        frame_time = float(time_text)
    except ValueError:
        raise MotionFormatError(source, f"Frame Time must be a number, found {time_text!r}", line=start + 3) from None
    if not (np.isfinite(frame_time) and frame_time > 0):
        raise MotionFormatError(source, f"Frame Time must be a positive number of seconds, found {time_text!r}",
                                line=start + 3)
    first = start + 3
    rows: list[str] = []
    row_lines: list[int] = []
    for k in range(first, len(lines)):
        text = lines[k]
        if not text.strip():
            continue
        if len(rows) == count:
            raise MotionFormatError(source, f"more frame lines than 'Frames: {count}' declares", line=k + 1)
        n = len(text.split())
        if n != n_channels:
            raise MotionFormatError(source, f"frame {len(rows) + 1} has {n} values, the hierarchy declares "
                                            f"{n_channels} channels", line=k + 1)
        rows.append(text)
        row_lines.append(k + 1)
    if len(rows) < count:
        raise MotionFormatError(source, f"'Frames: {count}' declared but the file ends after {len(rows)} frames "
                                        "(truncated?)", line=len(lines) + 1)
    try:
        values = np.array(" ".join(rows).split(), dtype=float).reshape(count, n_channels)
    except ValueError:
        for text, line in zip(rows, row_lines):
            for col, tok in enumerate(text.split()):
                try:
                    float(tok)
                except ValueError:
                    raise MotionFormatError(source, f"value {col + 1} is not a number: {tok[:40]!r}",
                                            line=line) from None
        raise MotionFormatError(source, "frame values are not numbers", line=row_lines[0]) from None
    bad = ~np.isfinite(values)
    if bad.any():
        frame, col = np.argwhere(bad)[0]
        raise MotionFormatError(source, f"value {col + 1} is not finite ({values[frame, col]})",
                                line=row_lines[frame])
    return values, frame_time


def parse_bvh(text: str, source: str = "<bvh>", axes: Axes | None = None, name: str = "") -> Clip:
    """A clip from BVH text; ``axes`` None guesses them from the skeleton (see :func:`guess_axes`)."""
    lines = text.splitlines()
    motion_at = next((k for k, line in enumerate(lines) if line.strip().upper() == "MOTION"), None)
    if not any(line.strip() for line in lines):
        raise MotionFormatError(source, "the file is empty", line=1)
    hierarchy_lines = lines if motion_at is None else lines[:motion_at]
    tokens = _Tokens(hierarchy_lines, source)
    joints = _parse_hierarchy(tokens)
    leftover = tokens.peek()
    if leftover is not None:
        raise tokens.error(f"unexpected {leftover[0]!r} after the hierarchy closed", leftover[1])
    if motion_at is None:
        raise MotionFormatError(source, "no MOTION section (truncated?)", line=len(lines) + 1)
    n_channels = sum(len(j.channels) for j in joints)
    if n_channels == 0:
        raise MotionFormatError(source, "no joint has CHANNELS, so there is no motion", line=joints[0].line)
    values, frame_time = _parse_motion(lines, motion_at, n_channels, source)
    return _clip_from_channels(joints, values, frame_time, source, axes, name)


def _clip_from_channels(joints: list[_Joint], values: np.ndarray, frame_time: float, source: str,
                        axes: Axes | None, name: str) -> Clip:
    skeleton = Skeleton(tuple(j.name for j in joints), tuple(j.parent for j in joints),
                        np.array([j.offset for j in joints]), tuple(j.site for j in joints),
                        tuple(j.channels for j in joints))
    frames = values.shape[0]
    positions = np.broadcast_to(skeleton.offsets, (frames, len(joints), 3)).copy()
    rotations = np.zeros((frames, len(joints), 4))
    rotations[..., 0] = 1.0
    by_order: dict[str, list[tuple[int, list[int]]]] = {}
    column = 0
    for j, joint in enumerate(joints):
        rot_cols = []
        order = ""
        for ch in joint.channels:
            if ch.endswith("position"):
                positions[:, j, "XYZ".index(ch[0])] = values[:, column]
            else:
                order += ch[0]
                rot_cols.append(column)
            column += 1
        if order:
            by_order.setdefault(order, []).append((j, rot_cols))
    for order, members in by_order.items():
        idx = [j for j, _ in members]
        cols = np.array([c for _, c in members])
        angles = values[:, cols]                                   # (T, G, k)
        r = Rotation.from_euler(order, angles.reshape(-1, len(order)), degrees=True)
        rotations[:, idx] = quat.from_scipy(r).reshape(frames, len(idx), 4)
    if axes is None:
        from strider.motion.anatomy import guess_axes

        axes = guess_axes(skeleton).axes
    clip = Clip(skeleton, 1.0 / frame_time, rotations, positions, axes=axes, name=name or Path(source).stem)
    return Clip(clip.skeleton, clip.fps, clip.rotations, clip.positions, loop=clip.looks_cyclic(), axes=axes,
                name=clip.name)


def read_bvh(path: str | Path, axes: Axes | None = None) -> Clip:
    """Read a BVH file into a :class:`Clip` in the file's own axes and units. A file named ``*.loop.bvh``
    holds a looping clip (see :func:`loop_marked`); otherwise the clip loops when its last pose repeats its first."""
    path = Path(path)
    marked = path.stem.lower().endswith(LOOP_MARKER)
    clip = parse_bvh(read_text(path), str(path), axes, path.stem[:-len(LOOP_MARKER)] if marked else path.stem)
    return replace(clip, loop=True) if marked else clip


def loop_marked(path: str | Path) -> Path:
    """Where a looping clip's BVH goes: BVH has no loop flag and other tools reject comments, so the file name
    carries it (``walk.bvh`` -> ``walk.loop.bvh``), which :func:`read_bvh` reads back as looping."""
    path = Path(path)
    return path if path.stem.lower().endswith(LOOP_MARKER) else path.with_name(path.stem + LOOP_MARKER + path.suffix)


def read_text(path: Path) -> str:
    """A motion file's text, with unreadable or binary files reported as :class:`MotionFormatError`."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MotionFormatError(str(path), f"cannot read file ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise MotionFormatError(str(path), "not a text file (bytes that are not UTF-8)", line=line) from None


# --- writing ---------------------------------------------------------------------------------
def _write_channels(clip: Clip, j: int) -> tuple[str, ...]:
    """The channels joint j is written with: its own, completed so that no motion is lost."""
    sk = clip.skeleton
    if sk.sites[j]:
        return ()
    own = sk.channels[j]
    own_rot = [c[0] for c in own if c.endswith("rotation")]
    own_pos = {c[0] for c in own if c.endswith("position")}
    moves = np.abs(clip.positions[:, j] - sk.offsets[j]).max(axis=0) > 0
    needs_pos = any(moves["XYZ".index(a)] and a not in own_pos for a in "XYZ")
    if len(own_rot) == 3 and not needs_pos:
        return own
    rot_order = own_rot + [a for a in "ZYX" if a not in own_rot]
    pos_axes = "XYZ" if needs_pos else "".join(a for a in "XYZ" if a in own_pos)
    return tuple(f"{a}position" for a in pos_axes) + tuple(f"{a}rotation" for a in rot_order)


def format_bvh(clip: Clip) -> str:
    sk = clip.skeleton
    channels = [_write_channels(clip, j) for j in range(len(sk))]
    out = io.StringIO()
    out.write("HIERARCHY\n")
    order = _depth_first(sk)
    stack: list[int] = []
    for j in order:
        while stack and sk.parents[j] != stack[-1]:
            stack.pop()
            out.write("\t" * len(stack) + "}\n")
        pad = "\t" * len(stack)
        head = "ROOT " + sk.names[j] if j == 0 else ("End Site" if sk.sites[j] else "JOINT " + sk.names[j])
        out.write(f"{pad}{head}\n{pad}{{\n")
        out.write(f"{pad}\tOFFSET " + " ".join(NUMBER_FORMAT % v for v in sk.offsets[j]) + "\n")
        if not sk.sites[j]:
            out.write(f"{pad}\tCHANNELS {len(channels[j])} {' '.join(channels[j])}\n")
        stack.append(j)
    while stack:
        stack.pop()
        out.write("\t" * len(stack) + "}\n")
    out.write(f"MOTION\nFrames: {clip.n_frames}\nFrame Time: {NUMBER_FORMAT % (1.0 / clip.fps)}\n")
    columns = []
    with warnings.catch_warnings():
        # Gimbal lock: scipy warns and picks one of the equivalent angle sets, which is still exact.
        warnings.simplefilter("ignore", UserWarning)
        for j in order:  # the motion lists channels in the hierarchy's order
            axes = "".join(c[0] for c in channels[j] if c.endswith("rotation"))
            euler = quat.to_scipy(clip.rotations[:, j]).as_euler(axes, degrees=True) if axes else None
            k = 0
            for c in channels[j]:
                if c.endswith("position"):
                    columns.append(clip.positions[:, j, "XYZ".index(c[0])])
                else:
                    columns.append(euler[:, k])
                    k += 1
    np.savetxt(out, np.stack(columns, axis=1), fmt=NUMBER_FORMAT, delimiter=" ")
    return out.getvalue()


def _depth_first(sk: Skeleton) -> list[int]:
    """Joint order for writing: each joint directly followed by its subtree."""
    order, stack = [], [0]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(sk.children(j)))
    return order


def write_bvh(clip: Clip, path: str | Path) -> Path:
    """Write ``clip`` as BVH in its own axes and units (convert first with :meth:`Clip.to_axes`); a looping clip
    goes to its :func:`loop_marked` name. Returns the path written."""
    path = loop_marked(path) if clip.loop else Path(path)
    path.write_text(format_bvh(clip))
    return path
