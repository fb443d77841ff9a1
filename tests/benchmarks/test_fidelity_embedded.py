"""``convtui study fidelity`` end to end on real models: the embedded SmolLM2 as simulator and
target (in process), then llama.cpp's server on the same weights as the target. Only what the
model cannot change is asserted: the rows exist and are linked, their counts, no second call,
the sessions' own tables unchanged; never what it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import invoke
from support.data import needs_bigcodebench
from support.fidelity import count, dump, record_study

pytestmark = [needs_bigcodebench, pytest.mark.slow]

# One annotator, one task, one feedback turn: one state, small replies.
PERSON = {"ana": ("BigCodeBench/2", "ana: the function returns None; build the dict.")}


def _fidelity(db: Path, simulator: str, target: str) -> dict:
    done = invoke(
        "study", "fidelity", "--db", str(db), "--simulator", simulator, "--target", target,
        "--json", "--resamples", "50",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _linked(db: Path) -> None:
    """Every feedback row names its call; every target turn its execution and (when the
    model was called) its answered call; nothing dangles."""
    assert count(db, "SELECT count(*) FROM fidelity_feedback WHERE call_id IS NULL AND "
                     "status = 'said'") == 0  # fmt: skip
    assert (
        count(
            db,
            "SELECT count(*) FROM fidelity_turns t LEFT JOIN executions e ON e.id = t.execution_id "
            "WHERE e.id IS NULL",
        )
        == 0
    )
    assert (
        count(
            db,
            "SELECT count(*) FROM fidelity_turns t LEFT JOIN fidelity_calls c ON c.id = t.call_id "
            "WHERE t.call_id IS NOT NULL AND c.status != 'ok'",
        )
        == 0
    )


def test_the_embedded_model_as_simulator_and_target(tmp_path, executor, catalog, smollm2_path):
    pytest.importorskip("llama_cpp")
    db = tmp_path / "study.db"
    record_study(db, executor, catalog, tmp_path / "scripts", PERSON, turns=1, max_tokens=32)
    before = dump(db)

    first = _fidelity(db, "local:smollm2", "local:smollm2")
    assert len(first["states"]) == 1
    # One state: the simulator once (or twice, when the expert's words copied the reference
    # and it was asked again), and a target turn per source that exists.
    assert 1 <= count(db, "SELECT count(*) FROM fidelity_calls WHERE role = 'simulator'") <= 2
    assert count(db, "SELECT count(*) FROM fidelity_feedback") == 1
    sources = 2 + count(db, "SELECT count(*) FROM fidelity_feedback WHERE status = 'said'")
    assert count(db, "SELECT count(*) FROM fidelity_turns") == sources
    assert [r["source"] for r in first["sources"]][:2] == ["none", "person"]
    _linked(db)

    calls = count(db, "SELECT count(*) FROM fidelity_calls")
    again = _fidelity(db, "local:smollm2", "local:smollm2")
    assert again["run"] == {"simulator_steps": 0, "target_turns": 0}
    assert count(db, "SELECT count(*) FROM fidelity_calls") == calls
    assert again["sources"] == first["sources"]
    assert dump(db) == before

    from support.llama_server import running_llama_server

    with running_llama_server(smollm2_path, 4096, tmp_path) as url:
        served = _fidelity(db, "local:smollm2", url)
    assert served["run"]["simulator_steps"] == 0  # the simulator's feedback is recorded
    assert served["run"]["target_turns"] == sources
    assert (
        count(db, "SELECT count(*) FROM fidelity_turns WHERE target = ?".replace("?", f"'{url}'"))
        == sources
    )
    _linked(db)
    assert dump(db) == before
