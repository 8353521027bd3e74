"""Scenarios, the runner loop, perturbations and results."""

from strider.runner.perturbation import Push, PushOutcome
from strider.runner.scenario import CommandChange, EpisodeSnapshot, Result, Runner, Scenario

__all__ = ["CommandChange", "EpisodeSnapshot", "Push", "PushOutcome", "Result", "Runner", "Scenario"]
