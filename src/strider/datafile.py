"""Loading and validating YAML data files (characters, styles, scripts, protocols).

Every data file strider reads goes through :class:`Fields`, so that a bad file
always gives one message naming the file, the field and the problem.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from strider.errors import ConfigError, UsageError


def load_yaml(path: str | Path) -> dict:
    """Read a YAML mapping, turning every parse problem into a :class:`ConfigError`."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read file ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(str(path), where, f"invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), "", "expected a mapping of fields at the top level")
    return data


class Fields:
    """Typed access to one mapping of a data file, with errors that name the field path."""

    def __init__(self, data: Any, source: str, path: str = ""):
        if not isinstance(data, dict):
            raise ConfigError(source, path or "(top)", f"expected a mapping, got {type(data).__name__}")
        self.data = data
        self.source = source
        self.path = path

    def _name(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(self.source, self._name(key), problem)

    def has(self, key: str) -> bool:
        return key in self.data

    def reject_unknown(self, allowed: set[str]) -> None:
        unknown = sorted(set(self.data) - allowed)
        if unknown:
            raise self.error(unknown[0], f"unknown field (allowed: {', '.join(sorted(allowed))})")

    def raw(self, key: str, default: Any = ...) -> Any:
        if key not in self.data:
            if default is ...:
                raise self.error(key, "missing required field")
            return default
        return self.data[key]

    def number(self, key: str, default: Any = ..., *, min: float | None = None, max: float | None = None,
               positive: bool = False) -> float:
        value = self.raw(key, default)
        if value is None and default is None:
            return None  # type: ignore[return-value]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"expected a number, got {value!r}")
        value = float(value)
        if not math.isfinite(value):
            raise self.error(key, f"must be finite, got {value}")
        if positive and value <= 0:
            raise self.error(key, f"must be > 0, got {value}")
        if min is not None and value < min:
            raise self.error(key, f"must be >= {min}, got {value}")
        if max is not None and value > max:
            raise self.error(key, f"must be <= {max}, got {value}")
        return value

    def flag(self, key: str, default: Any = ...) -> bool:
        """A switch written true or false (not a number or a string that might read as one)."""
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def whole(self, key: str, default: Any = ..., *, min: int = 1) -> int:
        """A whole number >= ``min`` (a count, a seed)."""
        value = self.number(key, default, min=min)
        if value != int(value):
            raise self.error(key, f"expected a whole number, got {value}")
        return int(value)

    def string(self, key: str, default: Any = ..., choices: tuple[str, ...] | None = None) -> str:
        value = self.raw(key, default)
        if value is None and default is None:
            return None  # type: ignore[return-value]
        if not isinstance(value, str):
            raise self.error(key, f"expected a string, got {value!r}")
        if choices is not None and value not in choices:
            raise self.error(key, f"must be one of {', '.join(choices)}; got {value!r}")
        return value

    def vector(self, key: str, length: int, default: Any = ...) -> tuple[float, ...]:
        value = self.raw(key, default)
        if value is None and default is None:
            return None  # type: ignore[return-value]
        if not isinstance(value, (list, tuple)) or len(value) != length:
            raise self.error(key, f"expected a list of {length} numbers, got {value!r}")
        out = []
        for item in value:
            if isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item):
                raise self.error(key, f"expected {length} finite numbers, got {value!r}")
            out.append(float(item))
        return tuple(out)

    def numbers(self, key: str, default: Any = ..., *, positive: bool = False) -> tuple[float, ...]:
        """A non-empty list of finite numbers of any length (each > 0 if ``positive``)."""
        value = self.raw(key, default)
        if not isinstance(value, list) or not value:
            raise self.error(key, f"expected a non-empty list of numbers, got {value!r}")
        out = []
        for i, v in enumerate(value):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (positive and v <= 0):
                raise self.error(f"{key}[{i}]", f"expected a finite number{' > 0' if positive else ''}, got {v!r}")
            out.append(float(v))
        return tuple(out)

    def mapping(self, key: str, default: Any = ...) -> Fields:
        value = self.raw(key, default)
        if value is None:
            value = {}
        return Fields(value, self.source, self._name(key))

    def items(self, key: str, default: Any = ...) -> list[Fields]:
        value = self.raw(key, default)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(key, f"expected a list, got {type(value).__name__}")
        return [Fields(v, self.source, f"{self._name(key)}[{i}]") for i, v in enumerate(value)]


YAML_SUFFIXES = (".yaml", ".yml")


def shipped_names(folder: Path) -> list[str]:
    """Names of the YAML data files shipped in ``folder`` (file stems, sorted)."""
    return sorted(p.stem for p in folder.glob("*.yaml"))


def resolve_data_file(name_or_path: str | Path, folder: Path, kind: str) -> Path:
    """A shipped data file by name (``folder/NAME.yaml``) or a user's YAML file by path.

    ``kind`` names the file in messages ("style", "skill", ...). A missing file
    or an unknown name is a :class:`~strider.errors.UsageError` listing what ships.
    """
    path = Path(name_or_path)
    if path.suffix in YAML_SUFFIXES or path.exists():
        if not path.is_file():
            raise UsageError(f"{kind} file {str(name_or_path)!r} does not exist")
        return path
    shipped = folder / f"{name_or_path}.yaml"
    if not shipped.is_file():
        raise UsageError(f"unknown {kind} {str(name_or_path)!r} (available: {', '.join(shipped_names(folder))}; "
                         "or give a path to a .yaml file)")
    return shipped


def json_safe(value: Any) -> Any:
    """``value`` with every float JSON cannot hold (NaN, infinity) as None, through dicts, lists and tuples."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def save_array_file(path: str | Path, header: dict, arrays: dict[str, Any]) -> Path:
    """Write NumPy arrays and a JSON header (which must carry ``format`` and ``version``) as one compressed
    ``.npz`` file, whatever its suffix."""
    import json

    import numpy as np

    path = Path(path)
    with open(path, "wb") as f:
        np.savez_compressed(f, header=np.array(json.dumps(header)), **arrays)
    return path


def load_array_file(path: str | Path, fmt: str, version: int, kind: str) -> tuple[dict, dict[str, Any]]:
    """The JSON header and the arrays of a file written by :func:`save_array_file`, checked to be of format
    ``fmt`` and ``version``; any other file is one :class:`UsageError` naming it as not a ``kind``."""
    import json
    import zipfile

    import numpy as np

    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["header"]))
            arrays = {k: data[k] for k in data.files if k != "header"}
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: a folder, not a {kind}") from None
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as exc:   # np.load's ways of refusing
        raise UsageError(f"{path}: not a strider {kind} ({exc or type(exc).__name__})") from None
    if not isinstance(header, dict) or header.get("format") != fmt:
        raise UsageError(f"{path}: not a strider {kind} (no {fmt!r} header)")
    if header.get("version") != version:
        raise UsageError(f"{path}: {kind} version {header.get('version')}; this strider reads {version}")
    return header, arrays
