"""The error a malformed motion file raises: one line naming the file, where in it, and the problem."""

from __future__ import annotations

from strider.errors import StriderError


class MotionFormatError(StriderError):
    """A motion file (BVH, DeepMimic, ``.npz``, joint map) cannot be read.

    ``line`` is the 1-based line of a text file; ``field`` names the array or
    key of a structured file where a line means nothing.
    """

    def __init__(self, source: str, problem: str, line: int | None = None, field: str | None = None):
        self.source = str(source)
        self.problem = problem
        self.line = line
        self.field = field
        where = self.source
        if line is not None:
            where += f": line {line}"
        if field:
            where += f": {field}"
        super().__init__(f"{where}: {problem}")
