"""Browsing recorded sessions and exporting them as JSONL transcripts and static log sets."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from store_values import MODEL, config, turn

from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.record import Turn
from convtui.sessions import NotFoundError, Store
from convtui.sessions.database.errors import AmbiguousIdError, ExportError
from convtui.sessions.exchange.export import export_convcodebench, export_jsonl
from convtui.sessions.exchange.static_logs import MANIFEST
from convtui.sessions.reading.browse import list_sessions, load_session, resolve_session_id

PARTIAL_NOVICE = FeedbackConfig("partial", "novice")


def novice_config(**changes: object) -> SessionConfig:
    return replace(config(PARTIAL_NOVICE, simulator="openai:gpt-4o"), **changes)


def as_json(value: object) -> object:
    return json.loads(json.dumps(value))


def edited(t: Turn) -> Turn:
    """A turn whose simulator draft a person rewrote before sending (``--user assist``)."""
    return replace(
        t,
        feedback_draft="The sum is off by one.",
        verbal_feedback="Drop the + 1 at the end.",
        feedback_source="human",
    )


def record(
    store: Store,
    task_id: str,
    turns: list[Turn],
    status: str,
    *,
    cfg: SessionConfig | None = None,
    user_kind: str = "human",
) -> str:
    """An interactive (TUI) session with these turns, ending in ``status``."""
    session_id = store.create_interactive_session(
        task_id,
        cfg or novice_config(),
        user_kind,  # type: ignore[arg-type]
    )
    for t in turns:
        store.save_turn(session_id, t, status if t is turns[-1] else "running")  # type: ignore[arg-type]
    return session_id


@pytest.fixture
def recorded(store: Store) -> dict[str, str]:
    """Three finished human sessions under one config, one still running, one simulated."""
    return {
        "solved": record(
            store, "BigCodeBench/10", [edited(turn(0)), turn(1, passed=True)], "solved"
        ),
        "exhausted": record(store, "BigCodeBench/2", [turn(0), turn(1), turn(2)], "exhausted"),
        "first_try": record(store, "BigCodeBench/7", [turn(0, passed=True)], "solved"),
        "running": record(store, "BigCodeBench/3", [turn(0)], "running"),
        "simulated": record(
            store,
            "BigCodeBench/10",
            [turn(0), turn(1)],
            "exhausted",
            cfg=novice_config(),
            user_kind="simulator",
        ),
    }


def finished(recorded: dict[str, str]) -> list[str]:
    return [recorded[k] for k in ("solved", "exhausted", "first_try")]


# --- list and show ---------------------------------------------------------------------------


def test_list_is_newest_first_and_filters_by_task_status_user_and_run(
    store: Store, recorded: dict[str, str]
) -> None:
    every = list_sessions(store)
    assert [s.id for s in every] == sorted(recorded.values(), reverse=True)

    assert {s.id for s in list_sessions(store, task="BigCodeBench/10")} == {
        recorded["solved"],
        recorded["simulated"],
    }
    assert {s.id for s in list_sessions(store, status="solved")} == {
        recorded["solved"],
        recorded["first_try"],
    }
    assert {s.id for s in list_sessions(store, status=["running", "exhausted"])} == {
        recorded["running"],
        recorded["exhausted"],
        recorded["simulated"],
    }
    assert [s.id for s in list_sessions(store, user_kind="simulator")] == [recorded["simulated"]]
    assert len(list_sessions(store, limit=2)) == 2

    run_id = store.create_run("live", config(), "ids=0", ["BigCodeBench/0"])
    assert [s.task_id for s in list_sessions(store, run_id=run_id)] == ["BigCodeBench/0"]
    assert list_sessions(store, run_id=run_id)[0].status == "planned"
    assert [s.task_id for s in list_sessions(store, interactive=False)] == ["BigCodeBench/0"]
    assert [s.id for s in list_sessions(store, interactive=True, limit=50)] == [s.id for s in every]


def test_summary_carries_what_a_listing_shows(store: Store, recorded: dict[str, str]) -> None:
    (s,) = [s for s in list_sessions(store) if s.id == recorded["solved"]]
    assert (s.task_id, s.model, s.feedback, s.user_kind) == (
        "BigCodeBench/10",
        MODEL,
        "CF,EF:partial,VF:novice",
        "human",
    )
    assert (s.status, s.turns_done, s.max_turns, s.first_pass_turn, s.run_id) == (
        "solved",
        2,
        3,
        1,
        None,
    )
    assert s.created_utc <= s.updated_utc


def test_a_unique_prefix_of_six_characters_names_a_session(
    store: Store, recorded: dict[str, str]
) -> None:
    run_id = store.create_run("live", config(), "ids=0-1", ["BigCodeBench/0", "BigCodeBench/1"])
    a, b = (s.id for s in store.run_sessions(run_id))
    common = a[: next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)]
    assert len(common) >= 6  # made in the same millisecond, or nearly

    assert resolve_session_id(store, a) == a
    assert resolve_session_id(store, a[: len(common) + 1].upper()) == a
    with pytest.raises(AmbiguousIdError) as ambiguous:
        resolve_session_id(store, common)
    assert a in str(ambiguous.value) and b in str(ambiguous.value)


def test_an_unknown_id_names_it_and_points_at_the_list(store: Store) -> None:
    with pytest.raises(NotFoundError) as unknown:
        resolve_session_id(store, "zzzzzzzzzz")
    assert "zzzzzzzzzz" in str(unknown.value)
    assert "convtui sessions list" in str(unknown.value)
    with pytest.raises(NotFoundError, match="at least 6"):
        resolve_session_id(store, "01a")


def test_load_session_gives_row_config_and_turns(store: Store, recorded: dict[str, str]) -> None:
    detail = load_session(store, recorded["solved"][:20])
    assert detail.session.id == recorded["solved"]
    assert detail.config == novice_config()
    assert list(detail.turns) == [edited(turn(0)), turn(1, passed=True)]
    assert detail.code_version is None  # TUI sessions record none


# --- JSONL -----------------------------------------------------------------------------------


def test_jsonl_holds_each_session_with_its_config_and_every_turn(
    store: Store, recorded: dict[str, str]
) -> None:
    out = io.StringIO()
    assert export_jsonl(store, [recorded["solved"], recorded["exhausted"]], out) == 2
    lines = out.getvalue().splitlines()
    assert len(lines) == 2  # one line each, whatever the texts hold
    first = json.loads(lines[0])
    assert first["session"]["id"] == recorded["solved"]  # creation order
    assert first["config"] == as_json(novice_config().to_dict())
    assert first["config_hash"] == novice_config().config_hash

    saved = [edited(turn(0)), turn(1, passed=True)]
    for got, want in zip(first["turns"], saved, strict=True):
        assert got["idx"] == want.idx
        assert (got["reply"], got["code"], got["compiled"]) == (want.reply, want.code, True)
        assert got["compile_feedback"] == want.compile_feedback
        assert got["execution_feedback"] == want.execution_feedback
        assert got["verbal_feedback"] == want.verbal_feedback
        assert got["feedback_source"] == want.feedback_source
        assert got["feedback_draft"] == want.feedback_draft
        assert got["feedback_edited"] == want.feedback_edited
        assert got["passed"] == want.passed
        assert tuple(got["notes"]) == want.notes
        assert got["prompt"] == [{"role": m.role, "content": m.content} for m in want.prompt]
        execution = got["execution"]
        assert execution["status"] == want.execution.status
        assert (execution["tests_passed"], execution["tests_total"]) == want.execution.counts()
        assert [
            (t["name"], t["status"], t["duration_s"], t["traceback"]) for t in execution["tests"]
        ] == [(t.name, t.status, t.duration_s, t.traceback) for t in want.execution.tests]
    assert first["turns"][0]["feedback_edited"] is True
    assert first["turns"][1]["feedback_edited"] is None


def test_jsonl_keeps_odd_text_on_one_line(store: Store) -> None:
    odd = replace(turn(0), verbal_feedback="line\u2028separator\x85next\nline ☃")
    sid = record(store, "BigCodeBench/1", [odd], "abandoned")
    out = io.StringIO()
    export_jsonl(store, [sid], out)
    assert len(out.getvalue().splitlines()) == 1
    assert json.loads(out.getvalue())["turns"][0]["verbal_feedback"] == odd.verbal_feedback


def test_unfinished_sessions_are_refused_unless_asked_for(
    store: Store, recorded: dict[str, str]
) -> None:
    out = io.StringIO()
    with pytest.raises(ExportError, match="include-unfinished") as refused:
        export_jsonl(store, [recorded["solved"], recorded["running"]], out)
    assert recorded["running"] in str(refused.value)
    assert out.getvalue() == ""

    assert export_jsonl(store, [recorded["running"]], out, include_unfinished=True) == 1


def test_jsonl_export_is_byte_identical_twice(store: Store, recorded: dict[str, str]) -> None:
    first, second = io.StringIO(), io.StringIO()
    export_jsonl(store, finished(recorded), first)
    export_jsonl(store, list(reversed(finished(recorded))), second)
    assert first.getvalue() == second.getvalue()


# --- ConvCodeBench static logs ---------------------------------------------------------------


RESULTS = "results/v0.3.6"
TURN0 = (
    "bigcodebench/sanitized_calibrated_samples/instruct/"
    "local_smollm2--bigcodebench-instruct--vllm-0-1-sanitized-calibrated.jsonl"
)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def read_eval(path: Path) -> dict[str, dict]:
    report = json.loads(path.with_name(path.stem + "_eval_results.json").read_text())
    return {task_id: entries[0] for task_id, entries in report["eval"].items()}


def test_convcodebench_layout_is_convcodeworlds_static_files(
    store: Store, recorded: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "logs"
    written = export_convcodebench(store, finished(recorded), out)

    stem = "bigcodebench_local_smollm2_CF_EF_UNIT_SNF_by_human"
    assert [w.name for w in written] == [stem]
    turn_files = [TURN0, f"{RESULTS}/{stem}.jsonl", f"{RESULTS}/{stem}_ITER=2.jsonl"]
    evals = [name.removesuffix(".jsonl") + "_eval_results.json" for name in turn_files]
    present = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert present == sorted([MANIFEST, *turn_files, *evals])

    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    for entry in manifest["files"]:
        assert entry["sha256"] == hashlib.sha256((out / entry["name"]).read_bytes()).hexdigest()
    (logged,) = manifest["log_sets"]
    assert (logged["model"], logged["feedback"], logged["user_kind"]) == (
        MODEL,
        "CF,EF:partial,VF:novice",
        "human",
    )
    assert logged["config"] == as_json(novice_config().to_dict())

    files = [read_jsonl(out / name) for name in turn_files]
    # Every file holds every task, in catalog order: /2 before /7 before /10.
    order = ["BigCodeBench/2", "BigCodeBench/7", "BigCodeBench/10"]
    assert all([line["task_id"] for line in lines] == order for lines in files)
    assert set(files[0][0]) == {"task_id", "solution"}
    # /10's turn 1 line: its turn-1 code with the feedback given about turn 0's code, which
    # our protocol records with turn 0 (a person rewrote the simulator's draft).
    ten = files[1][2]
    want = edited(turn(0))
    assert (ten["solution"], ten["iteration"]) == (turn(1, passed=True).code, 2)
    assert (ten["compilation_feedback"], ten["execution_feedback"], ten["user_feedback"]) == (
        want.compile_feedback,
        want.execution_feedback,
        "Drop the + 1 at the end.",
    )
    # /7 passed at turn 0 and /10 at turn 1: handed on as ConvCodeWorld's "Already solved".
    for line in (files[1][1], files[2][1], files[2][2]):
        assert (line["compilation_feedback"], line["user_feedback"]) == (None, None)
    assert files[2][2]["solution"] == ten["solution"]
    # BigCodeBench's verdicts beside each file; a failure keeps its traceback per test.
    verdicts = [read_eval(out / name) for name in turn_files]
    assert [verdicts[k]["BigCodeBench/10"]["status"] for k in range(3)] == ["fail", "pass", "pass"]
    assert verdicts[0]["BigCodeBench/10"]["details"]["test_types"].startswith("Traceback")
    assert verdicts[2]["BigCodeBench/2"]["status"] == "fail"


def test_convcodebench_export_is_byte_identical_twice(
    store: Store, recorded: dict[str, str], tmp_path: Path
) -> None:
    export_convcodebench(store, finished(recorded), tmp_path / "a")
    export_convcodebench(store, list(reversed(finished(recorded))), tmp_path / "b")
    export_convcodebench(store, finished(recorded), tmp_path / "a")  # replaces its own export

    def contents(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert contents(tmp_path / "a") == contents(tmp_path / "b")
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize(
    ("task_id", "cfg", "words"),
    [
        # Sessions under different configs never share a log set.
        (
            "BigCodeBench/11",
            novice_config(context="full", max_turns=5),
            ("context", "max_turns"),
        ),
        # Two sets of one model whose turn 0 differs: ConvCodeWorld keeps one turn-0 file.
        (
            "BigCodeBench/10",
            novice_config(feedback=FeedbackConfig("full", "expert")),
            ("one turn-0 file per model",),
        ),
    ],
    ids=["different-configs", "one-model-two-turn-0"],
)
def test_a_session_that_cannot_join_the_export_is_refused_and_nothing_is_written(
    store: Store,
    recorded: dict[str, str],
    tmp_path: Path,
    task_id: str,
    cfg: SessionConfig,
    words: tuple[str, ...],
) -> None:
    other = record(store, task_id, [turn(0, passed=True)], "solved", cfg=cfg)
    with pytest.raises(ExportError) as refused:
        export_convcodebench(store, [recorded["solved"], other], tmp_path / "logs")
    for word in words:
        assert word in str(refused.value)
    assert not (tmp_path / "logs").exists()


def test_human_and_simulated_feedback_never_share_a_log_set(
    store: Store, recorded: dict[str, str], tmp_path: Path
) -> None:
    with pytest.raises(ExportError, match="different users"):
        export_convcodebench(
            store, [recorded["exhausted"], recorded["simulated"]], tmp_path / "logs"
        )


def test_one_task_twice_in_a_set_is_refused(
    store: Store, recorded: dict[str, str], tmp_path: Path
) -> None:
    again = record(store, "BigCodeBench/10", [turn(0, passed=True)], "solved")
    with pytest.raises(ExportError, match="BigCodeBench/10"):
        export_convcodebench(store, [recorded["solved"], again], tmp_path / "logs")


def test_each_model_and_feedback_setting_gets_its_own_set(
    store: Store, recorded: dict[str, str], tmp_path: Path
) -> None:
    # Same turn 0 as the novice set's /10: ConvCodeWorld keeps one turn-0 file per model.
    expert = record(
        store,
        "BigCodeBench/10",
        [edited(turn(0)), turn(1, passed=True)],
        "solved",
        cfg=novice_config(feedback=FeedbackConfig("full", "expert")),
    )
    written = export_convcodebench(store, [recorded["solved"], expert], tmp_path / "logs")
    assert [(w.feedback, w.sessions) for w in written] == [
        ("CF,EF:full,VF:expert", 1),
        ("CF,EF:partial,VF:novice", 1),
    ]
    assert [w.name for w in written] == [
        "bigcodebench_local_smollm2_CF_EF_FULL_SEF_by_human",
        "bigcodebench_local_smollm2_CF_EF_UNIT_SNF_by_human",
    ]


def test_benchmark_sessions_name_their_run_and_code_version(store: Store, tmp_path: Path) -> None:
    cfg = config(PARTIAL_NOVICE, simulator="openai:gpt-4o")
    run_id = store.create_run("live", cfg, "ids=0", ["BigCodeBench/0"], code_version="0.1.0+gabc")
    (session,) = store.run_sessions(run_id)
    store.save_turn(session.id, turn(0, passed=True), "solved")

    (written,) = export_convcodebench(store, [session.id], tmp_path / "logs")
    assert written.name == "bigcodebench_local_smollm2_CF_EF_UNIT_SNF_by_openai_gpt-4o"
    (manifest,) = json.loads((written.folder / MANIFEST).read_text())["log_sets"]
    assert manifest["run_ids"] == [run_id]
    assert manifest["code_versions"] == ["0.1.0+gabc"]
    assert manifest["user_kind"] == "simulator" and manifest["simulator"] == "openai:gpt-4o"


def test_a_folder_that_is_not_an_earlier_export_is_left_alone(
    store: Store, recorded: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "logs" / "results"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match="not an earlier convtui export"):
        export_convcodebench(store, finished(recorded), tmp_path / "logs")
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
