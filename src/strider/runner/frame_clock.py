"""When to hand out frames (video, BVH, progress) on a grid of physics steps, at exactly the rate asked for.

30 frames per second on 1 ms steps is one frame every 33.33 steps. Rounding that to 33 would write a video
at 30.30 fps; instead frame k falls on the step nearest k / rate, so the frames keep the asked rate with no
drift, each within half a physics step of its time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class FrameClock:
    rate: float   # frames per simulated second, > 0 and at most one per physics step
    dt: float     # s per physics step

    def __post_init__(self) -> None:
        if not 0.0 < self.rate * self.dt <= 1.0:
            raise ValueError(f"a frame rate of {self.rate} per second needs 0 < rate <= {1.0 / self.dt:g} "
                             f"on {self.dt} s steps")

    @property
    def steps_per_frame(self) -> float:
        return 1.0 / (self.rate * self.dt)

    def step_of(self, k: int) -> int:
        """The physics step on which frame ``k`` falls."""
        return round(k * self.steps_per_frame)

    def is_frame(self, n: int) -> bool:
        return self.step_of(round(n / self.steps_per_frame)) == n

    def next_after(self, n: int) -> int:
        """The first frame's step after step ``n``."""
        k = math.floor(n / self.steps_per_frame)
        while self.step_of(k) <= n:
            k += 1
        return self.step_of(k)
