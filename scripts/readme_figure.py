"""Draw the README's report picture: `convtui report --plot` on a small database whose
verdicts are set by hand (three models, live and replayed against one reference), so the
picture shows what the figure holds without a long run. The numbers are illustrative.

    python scripts/readme_figure.py docs   # writes docs/demo-pass-at-turn.png (and the rest)
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from convtui.core.execution.types import ExecResult
from convtui.core.models.types import GenerationParams
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.record import Turn
from convtui.sessions import SessionRow, Store

TASKS = [f"BigCodeBench/{i}" for i in range(40)]
TURNS = 6
OMEGAS = (FeedbackConfig("none", "none"), FeedbackConfig("full", "none"))
# Per model: the chance a turn passes, at turn 0 and at each feedback turn.
MODELS = {"model-a": (0.35, 0.25), "model-b": (0.25, 0.15), "model-c": (0.1, 0.08)}


def _config(model: str, omega: FeedbackConfig) -> SessionConfig:
    params = GenerationParams(temperature=0.0, max_tokens=64)
    return SessionConfig(model=model, feedback=omega, max_turns=TURNS, params=params)


def _turn(idx: int, passed: bool) -> Turn:
    result = ExecResult("pass" if passed else "fail", duration_s=0.1, isolation="bwrap")
    return Turn(idx, "", f"x = {idx}", True, "No compilation errors", result)


def _verdicts(
    rng: random.Random, first: float, later: float, handed: tuple[bool, ...] = ()
) -> tuple[bool, ...]:
    """A session's verdicts; in a replay a turn after a passing reference turn passes (the
    target is handed that code)."""
    out: list[bool] = []
    for idx in range(TURNS):
        carried = 0 < idx <= len(handed) and handed[idx - 1]
        out.append(carried or rng.random() < (first if idx == 0 else later))
        if out[-1]:
            break
    return tuple(out)


def _play(store: Store, rows: list[SessionRow], rng: random.Random, odds) -> None:
    for row in rows:
        handed: tuple[bool, ...] = ()
        if row.reference_session_id:
            handed = tuple(t.passed for t in store.load_turns(row.reference_session_id))
        verdicts = _verdicts(rng, *odds, handed)
        for idx, passed in enumerate(verdicts):
            last = passed or idx + 1 == TURNS
            status = ("solved" if passed else "exhausted") if last else "running"
            store.save_turn(row.id, _turn(idx, passed), status)


def build(db: Path) -> None:
    rng = random.Random(7)
    with Store.open(db) as store:
        for omega in OMEGAS:
            boost = 1.6 if omega.execution != "none" else 1.0
            ref_id = store.create_run("live", _config("reference", omega), "demo", TASKS)
            _play(store, store.run_sessions(ref_id), rng, (0.2, 0.1 * boost))
            references = store.run_sessions(ref_id)
            for model, (first, later) in MODELS.items():
                live_id = store.create_run("live", _config(model, omega), "demo", TASKS)
                _play(store, store.run_sessions(live_id), rng, (first, later * boost))
                config = replace(_config(model, omega), context="markov")
                static_id = store.create_static_run(config, f"demo;{model}", references, {})
                _play(store, store.run_sessions(static_id), rng, (first, later * boost * 0.9))


def main(out: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "demo.db"
        build(db)
        return subprocess.call(
            [
                sys.executable,
                "-m",
                "convtui",
                "report",
                "--db",
                str(db),
                "--out",
                tmp,
                "--correlate",
                "--plot",
                out,
            ]
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs"))
