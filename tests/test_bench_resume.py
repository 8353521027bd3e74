"""Engine benches whose trials stand alone keep each trial in a checkpoint as it finishes: a run that was killed
resumes where it stopped, and ends with what an uninterrupted run gives. On the real engine (track-slopes' walks)
and a real killed process."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strider.bench.execution import bench_checkpoint
from strider.bench.output import TIMING_KEYS
from strider.bench.protocol import load_protocol
from strider.cli.main import main
from strider.parallel import Checkpoint, Resumable

SRC = Path(__file__).resolve().parents[1] / "src"
SLOPES = ("bench: track-slopes\nparams: {track: cmu-walk, slopes: [0, 3, -3], level: 2, slope_length: 12, "
          "progress: 5, seconds: 30, policies: [integral], source_policies: []}\n")


def test_resumable_runs_a_task_once_and_reads_back_what_it_recorded(tmp_path):
    checkpoint = Checkpoint(tmp_path / "c.jsonl", "key")
    calls = []

    def task(x):
        calls.append(x)
        return {"x": x, "pair": (x, x + 1)}

    first = Resumable(checkpoint)
    assert first.result("a", task, 1) == {"x": 1, "pair": [1, 2]}   # through JSON, as a resumed run reads it
    assert first.result("a", task, 99) == {"x": 1, "pair": [1, 2]} and calls == [1]
    again = Resumable(checkpoint)
    assert again.result("a", task, 99) == {"x": 1, "pair": [1, 2]} and calls == [1]
    assert again.result("b", task, 2)["x"] == 2 and calls == [1, 2]
    assert Resumable().result("a", task, 3)["x"] == 3   # without a checkpoint every task runs


def test_the_resumable_engine_benches_take_a_checkpoint_and_fresh():
    from strider.cli.bench_commands import ENGINE_BENCH_HELP, RESUMABLE_BENCHES, engine_runners
    from strider.cli.main import build_parser

    parser = build_parser()
    runners = engine_runners()
    assert set(RESUMABLE_BENCHES) <= set(runners)
    for name in ENGINE_BENCH_HELP:
        takes = "checkpoint" in inspect.signature(runners[name]).parameters
        assert takes == (name in RESUMABLE_BENCHES), name
        if name in RESUMABLE_BENCHES:
            assert parser.parse_args(["bench", name, "--fresh"]).fresh
        else:
            with pytest.raises(SystemExit):
                parser.parse_args(["bench", name, "--fresh"])


def _trials(out: Path) -> list[dict]:
    (result,) = out.glob("track-slopes-track-*.json")
    return json.loads(result.read_text())["trials"]


def _untimed(trial: dict) -> dict:
    return {k: v for k, v in trial.items() if k not in TIMING_KEYS and k != "step_wall_seconds"}


def test_a_killed_bench_resumes_where_it_stopped_and_ends_as_an_uninterrupted_run(tmp_path, capsys):
    protocol = tmp_path / "slopes.yaml"
    protocol.write_text(SLOPES)
    resumed, straight = tmp_path / "resumed", tmp_path / "straight"
    args = ["bench", "track-slopes", "--protocol", str(protocol), "--no-progress"]
    code = f"import sys; from strider.cli.main import main; sys.exit(main({[*args, '--out', str(resumed)]!r}))"
    process = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(SRC)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    partial = resumed / ".partial"
    deadline = time.monotonic() + 120
    try:
        # Killed as soon as its first walk is recorded (the header and one line), before the second is.
        while not any(len(p.read_text().splitlines()) >= 2 for p in partial.glob("*.jsonl")):
            assert process.poll() is None and time.monotonic() < deadline, "the bench ended before it was killed"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    (kept,) = partial.glob("*.jsonl")
    recorded = [json.loads(line) for line in kept.read_text().splitlines()[1:]]
    assert len(recorded) == 1 and not list(resumed.glob("*.json"))

    capsys.readouterr()
    assert main([*args, "--out", str(resumed)]) == 0
    assert "resuming: 1 trial(s) of an interrupted run" in capsys.readouterr().err
    (result,) = resumed.glob("track-slopes-track-*.json")
    assert json.loads(result.read_text())["run"]["resumed_trials"] == 1
    trials = _trials(resumed)
    assert trials[0] == recorded[0]["result"]       # read back, wall time and all, not walked again
    assert not kept.exists()                         # a finished run leaves no checkpoint
    assert main([*args, "--out", str(straight)]) == 0
    assert [_untimed(t) for t in trials] == [_untimed(t) for t in _trials(straight)]
    assert [t["slope_deg"] for t in trials] == [0, 3, -3]


def test_fresh_discards_the_checkpoint_of_an_interrupted_run(tmp_path):
    path = tmp_path / "slopes.yaml"
    path.write_text(SLOPES.replace("slopes: [0, 3, -3]", "slopes: [0]"))
    out = tmp_path / "results"
    checkpoint = bench_checkpoint(out, load_protocol("track-slopes", path), "engine")
    # What an interrupted run would have kept for the level walk, doctored so that reading it back shows.
    planted = {"policy": "integral", "source_controller": False, "slope_deg": 0, "fell": True, "distance": 0.0,
               "progress_on_slope": -2.0, "passed": False}
    checkpoint.append(f"integral source=False slope={0.0!r}", planted)
    args = ["bench", "track-slopes", "--protocol", str(path), "--out", str(out), "--no-progress"]
    assert main(args) == 0
    assert _trials(out) == [planted]
    for result in out.glob("track-slopes-*"):
        result.unlink()
    checkpoint.append(f"integral source=False slope={0.0!r}", planted)
    assert main([*args, "--fresh"]) == 0
    (walk,) = _trials(out)
    assert not walk["fell"] and walk["passed"] and walk["progress_on_slope"] > 5.0


def test_the_readme_names_every_resumable_engine_bench():
    from strider.cli.bench_commands import RESUMABLE_BENCHES

    text = (SRC.parent / "README.md").read_text()
    paragraph = text[text.index("An interrupted bench"):text.index("The speed benches start over")]
    assert all(f"`{name}`" in paragraph for name in RESUMABLE_BENCHES)
