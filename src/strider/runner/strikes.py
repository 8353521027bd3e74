"""What every strike-to-strike walker shares (CW's planar SIMBICON steps, TLC's GBWC steps): an episode that a
planner advances one step at a time, branched at strikes, with an optional video."""

from __future__ import annotations

from typing import Any


class StrikeEpisode:
    """A base for walkers holding ``runner`` (a started :class:`~strider.runner.Runner`), ``video`` (its recorder
    or None) and ``last`` (what the last foot strike reported)."""

    runner: Any
    video: Any
    last: Any

    def close(self) -> None:
        """Finish the video, if one is being written."""
        if self.video is not None:
            self.video.close()
            self.video = None

    @property
    def time(self) -> float:
        return self.runner.time

    def snapshot(self):
        """The episode and the last strike, to branch from (:meth:`restore`)."""
        return self.runner.snapshot(), self.last

    def restore(self, snap) -> None:
        episode, self.last = snap
        self.runner.restore(episode)
