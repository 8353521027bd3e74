"""Malformed motion files, generated from real ones by seeded mutations (shared by the fuzz tests)."""

from __future__ import annotations

import json
import random
import re

BVH_GARBAGE = ("abc", "nan", "NaN", "inf", "-inf", "1e999", "", "1.2.3", "{", "}", "JOINT", "\x00", "0x1F", "--1")
JSON_GARBAGE = ("NaN", "Infinity", "-Infinity", "null", '"x"', "true", "[]", "{}", "1e999", "", "[[[[")
_NUMBER = re.compile(r"-?\d*\.?\d+(?:[eE][-+]?\d+)?")


def _replace_random(rng: random.Random, text: str, pattern: re.Pattern, replacement: str) -> str:
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[:m.start()] + replacement + text[m.end():]


def mutate_bvh(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    kind = rng.randrange(14)
    if kind == 0:                                   # truncated anywhere
        return text[:rng.randrange(len(text))]
    if kind == 1:                                   # a line lost
        del lines[rng.randrange(len(lines))]
    elif kind == 2:                                 # a line repeated
        k = rng.randrange(len(lines))
        lines.insert(k, lines[k])
    elif kind == 3:                                 # a number replaced by garbage
        return _replace_random(rng, text, _NUMBER, rng.choice(BVH_GARBAGE))
    elif kind == 4:                                 # wrong channel count
        return _replace_random(rng, text, re.compile(r"CHANNELS \d"), f"CHANNELS {rng.choice([0, 1, 2, 4, 5, 7, 9])}")
    elif kind == 5:                                 # a brace lost or added
        return _replace_random(rng, text, re.compile(r"[{}]"), rng.choice(["", "{", "}", "}}"]))
    elif kind == 6:                                 # a joint name repeated (the closest BVH gets to a cycle)
        names = re.findall(r"JOINT (\S+)", text)
        if len(names) >= 2:
            a, b = rng.sample(names, 2)
            return text.replace(f"JOINT {a}\n", f"JOINT {b}\n", 1)
    elif kind == 7:                                 # frame count wrong
        return re.sub(r"Frames:\s*\d+", f"Frames: {rng.choice([0, 1, 10**12, -3, 'x', ''])}", text)
    elif kind == 8:                                 # frame time wrong
        return re.sub(r"Frame Time:\s*\S+", f"Frame Time: {rng.choice(['0', '-1', 'nan', 'x', '', 'inf'])}", text)
    elif kind == 9:                                 # hierarchy or motion section missing
        word = rng.choice(["HIERARCHY", "ROOT", "MOTION", "OFFSET", "End Site", "CHANNELS"])
        return text.replace(word, rng.choice(["", word.lower(), word + "X"]), 1)
    elif kind == 10:                                # empty motion
        head = text[:text.index("MOTION")] if "MOTION" in text else text
        return head + "MOTION\nFrames: 0\nFrame Time: 0.01\n"
    elif kind == 11:                                # bytes that are not text
        k = rng.randrange(len(text))
        return text[:k] + "\udcff" + text[k:]
    elif kind == 12:                                # a value dropped from or added to a frame line
        k = len(lines) - 1 - rng.randrange(min(5, len(lines)))
        parts = lines[k].split()
        lines[k] = " ".join(parts[:-1] if parts and rng.random() < 0.5 else parts + ["0"])
    else:                                           # two mutations at once
        return mutate_bvh(rng, mutate_bvh(rng, text))
    return "\n".join(lines)


def mutate_deepmimic(rng: random.Random, text: str) -> str:
    try:
        return _mutate_deepmimic(rng, text)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
        return text[:rng.randrange(len(text))]  # an earlier mutation left no structure to edit: truncate instead


def _mutate_deepmimic(rng: random.Random, text: str) -> str:
    kind = rng.randrange(10)
    if kind == 0:
        return text[:rng.randrange(len(text))]
    if kind == 1:
        return _replace_random(rng, text, _NUMBER, rng.choice(JSON_GARBAGE))
    if kind in (2, 3):                              # a frame with a value too few or too many
        data = json.loads(text)
        frame = rng.randrange(len(data["Frames"]))
        if kind == 2:
            data["Frames"][frame].pop(rng.randrange(len(data["Frames"][frame])))
        else:
            data["Frames"][frame].insert(rng.randrange(44), 0.5)
        return json.dumps(data, indent=0)
    if kind == 4:                                   # empty motion
        data = json.loads(text)
        data["Frames"] = []
        return json.dumps(data)
    if kind == 5:
        return text.replace('"Loop"', rng.choice(['"loop"', '"Loop": 3, "x"', '"Lp"']), 1).replace(
            '"wrap"', rng.choice(['"wrap"', '"forever"', "1"]), 1)
    if kind == 6:
        return text.replace('"Frames"', rng.choice(['"Frame"', '"Frames": 1, "y"']), 1)
    if kind == 7:                                   # structure of a frame broken: nested deeply or not a list
        return "[" * rng.choice([1, 10, 5000]) + text
    if kind == 8:                                   # a zero quaternion or a zero frame time
        data = json.loads(text)
        frame = data["Frames"][rng.randrange(len(data["Frames"]))]
        start = rng.choice([0, 4, 8])
        for k in range(start, start + (1 if start == 0 else 4)):
            frame[k] = 0.0
        return json.dumps(data)
    return mutate_deepmimic(rng, mutate_deepmimic(rng, text))
