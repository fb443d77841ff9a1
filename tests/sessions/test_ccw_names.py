"""ConvCodeWorld's file names: what its scripts open, and whether our exports are there.

ConvCodeWorld's ``print_results.py`` (``__main__``, ``get_configs``, ``get_results_dict``)
takes one ``--model_name M`` and opens, for each Ω:

- turn 0: ``bigcodebench/sanitized_calibrated_samples/instruct/`` + M with ``/`` as ``--`` +
  ``--bigcodebench-instruct--B-0-1-sanitized-calibrated_eval_results.json``, where B is
  ``openai`` for the OpenAI models its ``azure_open_ai.py`` lists and ``vllm`` for any other;
- turn k >= 1: ``results/v0.3.6/`` (``--option static``: ``results/v0.3.6/static/`` + the
  reference's turn-1 file name without ``.jsonl`` + ``/``) + the turn file, ``bigcodebench_``
  + M with ``/`` as ``_`` + ``_CF``, ``_EF_UNIT``/``_EF_FULL``, ``_SNF``/``_SEF``, ``_by_`` +
  the ``--simulator_name`` with ``/`` as ``_`` unless it equals M, ``_ITER=k`` from k = 2,
  ``.jsonl``; the eval file is that path with every ``.jsonl`` replaced by
  ``_eval_results.json``.

If the turn files are not found it silently shows turn 0 alone. The helper below spells
those rules out from that reading, and the tests check that every file it names exists in an
export, for every kind of model spec.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from store_values import logged_config, turn
from support.cli import invoke

from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import Store
from convtui.sessions.database.errors import ExportError, ImportFormatError
from convtui.sessions.exchange.ccw_files import (
    file_model_name,
    name_problem,
    paired_name,
    parse_turn0_file,
    turn0_file,
)
from convtui.sessions.exchange.ccw_import import import_logs
from convtui.sessions.exchange.export import WrittenLogSet, export_convcodebench
from convtui.sessions.exchange.static_logs import MANIFEST

FIXTURES = Path(__file__).parents[1] / "fixtures"
OPENAI_LISTED = {"gpt-4o", "gpt-4-turbo-2024-04-09", "gpt-4-0613", "gpt-4o-mini"}
SAMPLES = "bigcodebench/sanitized_calibrated_samples/instruct"
EF = {"none": "", "partial": "_EF_UNIT", "full": "_EF_FULL"}
VF = {"none": "", "novice": "_SNF", "expert": "_SEF"}


def stem(model: str, feedback: FeedbackConfig, simulator: str) -> str:
    name = f"bigcodebench_{model.replace('/', '_')}_CF{EF[feedback.execution]}"
    name += VF[feedback.verbal]
    if feedback.verbal != "none" and model != simulator:
        name += f"_by_{simulator.replace('/', '_')}"
    return name


def print_results_opens(
    model: str,
    feedback: FeedbackConfig,
    simulator: str,
    max_iteration: int,
    reference: str | None = None,
) -> list[str]:
    """The eval files ConvCodeWorld's print_results.py opens for one Ω, as described above
    (``reference``: ``--option static --ref_model_name``, whose own files come first)."""
    opened = []
    models = [model] if reference is None else [reference, model]
    for name in models:
        backend = "openai" if name in OPENAI_LISTED else "vllm"
        opened.append(
            f"{SAMPLES}/{name.replace('/', '--')}--bigcodebench-instruct--{backend}-0-1-"
            "sanitized-calibrated_eval_results.json"
        )
    folder = "results/v0.3.6"
    if reference is not None:
        for k in range(1, max_iteration + 1):
            ref_file = stem(reference, feedback, simulator) + (f"_ITER={k}" if k > 1 else "")
            opened.append(f"{folder}/{ref_file}.jsonl".replace(".jsonl", "_eval_results.json"))
        folder = f"{folder}/static/{stem(reference, feedback, simulator)}"
    for k in range(1, max_iteration + 1):
        path = f"{folder}/{stem(model, feedback, simulator)}{f'_ITER={k}' if k > 1 else ''}.jsonl"
        opened.append(path.replace(".jsonl", "_eval_results.json"))
    return opened


def live_store(
    db: Path, model: str, *, verbal: str = "novice", simulator: str | None = "gpt-4o"
) -> list[str]:
    cfg = logged_config(
        feedback=FeedbackConfig("partial", verbal),  # type: ignore[arg-type]
        simulator=simulator,
        model=model,
    )
    return record(db, cfg, {"BigCodeBench/3": (False, False, True), "BigCodeBench/8": (True,)})


def record(db: Path, cfg: SessionConfig, patterns: dict[str, tuple[bool, ...]]) -> list[str]:
    with Store.open(db) as store:
        run_id = store.create_run("live", cfg, "ids", sorted(patterns))
        for row in store.run_sessions(run_id):
            play(store, row.id, patterns[row.task_id])
        return [row.id for row in store.run_sessions(run_id)]


def play(store: Store, session_id: str, verdicts: tuple[bool, ...]) -> None:
    for idx, passed in enumerate(verdicts):
        last = idx + 1 == len(verdicts)
        status = ("solved" if passed else "exhausted") if last else "running"
        store.save_turn(session_id, turn(idx, passed=passed), status)


def exported(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def manifest_sets(folder: Path) -> list[dict]:
    return json.loads((folder / MANIFEST).read_text())["log_sets"]


def arg(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


# --- names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("acme/coder-1b", "acme/coder-1b"),
        ("local:smollm2", "local_smollm2"),
        ("openai:gpt-4o", "openai_gpt-4o"),
        ("vllm:Qwen/Qwen2.5-Coder-7B-Instruct", "vllm_Qwen/Qwen2.5-Coder-7B-Instruct"),
        ("http://127.0.0.1:8000/v1", "http/127.0.0.1_8000/v1"),
        ("https://api.example.com//v1/", "https/api.example.com/v1"),
        ("mock:/tmp/run/script.jsonl", "mock/tmp/run/script_jsonl"),
        ("local:/m/x.jsonl.gguf", "local/m/x_jsonl.gguf"),
        ("-x", "x"),
        (":::", "model"),
    ],
)
def test_a_spec_gets_a_name_that_convcodeworld_can_take(spec: str, name: str) -> None:
    assert file_model_name(spec) == name
    assert name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("run.jsonl", "'.jsonl'"),
        ("a.jsonl/b", "'.jsonl'"),
        ("", "empty"),
        ("my model", "whitespace"),
        ("tab\there", "whitespace"),
        ("-model", "starts with '-'"),
        ("m" * 200, "too long"),
    ],
)
def test_a_name_the_reference_cannot_pair_says_why(name: str, why: str) -> None:
    problem = name_problem(name)
    assert problem is not None and why in problem


def test_the_turn0_file_of_a_listed_openai_model_says_openai() -> None:
    assert turn0_file("gpt-4o") == (
        "gpt-4o--bigcodebench-instruct--openai-0-1-sanitized-calibrated.jsonl"
    )
    assert turn0_file("deepseek-ai/deepseek-coder-6.7b-instruct") == (
        "deepseek-ai--deepseek-coder-6.7b-instruct--bigcodebench-instruct--vllm-0-1-"
        "sanitized-calibrated.jsonl"
    )


def test_one_name_spells_both_files_or_none_does() -> None:
    assert paired_name("acme--coder-1b", "acme_coder-1b") == "acme/coder-1b"
    assert paired_name("a--b", "a--b") == "a--b"  # a name with -- of its own
    assert paired_name("a_b", "a_b") == "a_b"
    assert paired_name("http_----h_8--v1", "http_h_8_v1") is None  # separately sanitized
    assert paired_name("a--b", "a_c") is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # ConvCodeWorld's submodule (BigCodeBench 0.1): vLLM and OpenAI-backed runs, ...
        ("m--bigcodebench-instruct--vllm-0-1-sanitized-calibrated", "vllm 0 1 m"),
        ("o--m--bigcodebench-instruct--openai-0-1-sanitized-calibrated", "openai 0 1 o--m"),
        ("m--bigcodebench-instruct--openai-0.2-1-sanitized-calibrated", "openai 0.2 1 m"),
        ("m--bigcodebench-instruct--hf-0.8-5-sanitized-calibrated", "hf 0.8 5 m"),
        # ... 0.1.0's spelling, 0.1.9's hard subset ...
        ("m--bigcodebench-instruct--anthropic-0-1-sanitized-calibrate", "anthropic 0 1 m"),
        ("m--bigcodebench-hard-instruct--google-0-1-sanitized-calibrated", "google 0 1 m"),
        # ... 0.2: written by generate itself, with the revision from 0.2.1
        ("m--bigcodebench-instruct--mistral-0-1-sanitized_calibrated", "mistral 0 1 m"),
        ("o--m--main--bigcodebench-instruct--hf-inference-0-1-sanitized_calibrated",
         "hf-inference 0 1 o--m"),
        ("m--skip_prefill--v1--bigcodebench-instruct--vllm-0-1-sanitized_calibrated", "vllm 0 1 m"),
    ],
)  # fmt: skip
def test_every_sample_file_bigcodebench_writes_is_a_turn0_file(name: str, expected: str) -> None:
    parsed = parse_turn0_file(f"{name}.jsonl")
    assert parsed is not None
    found = (parsed.backend, parsed.temperature, str(parsed.samples), parsed.spellings()[-1])
    assert " ".join(found) == expected


@pytest.mark.parametrize(
    "name",
    [
        "m--bigcodebench-instruct--vllm-0-1.jsonl",  # not sanitized: not what was scored
        "m--bigcodebench-complete--vllm-0-1-sanitized-calibrated.jsonl",  # another split
        "m--bigcodebench-instruct--vllm-0-1-sanitized-calibrated_eval_results.json",
        "bigcodebench_m_CF.jsonl",
    ],
)
def test_other_files_are_not_turn0_files(name: str) -> None:
    assert parse_turn0_file(name) is None


# --- export: every spec pairs -----------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        "http://127.0.0.1:8000/v1",
        "mock:/tmp/run/script.jsonl",
        "local:smollm2",
        "vllm:Qwen/Qwen2.5-Coder-7B-Instruct",
        "acme/coder-1b",
    ],
)
def test_print_results_finds_every_turn_file_of_any_spec(tmp_path: Path, spec: str) -> None:
    ids = live_store(tmp_path / "live.db", spec)
    with Store.open(tmp_path / "live.db") as store:
        export_convcodebench(store, ids, tmp_path / "out")
    files = exported(tmp_path / "out")
    (entry,) = manifest_sets(tmp_path / "out")
    args = entry["print_results_args"]
    # turns=3: three feedback turns after turn 0
    assert arg(args, "--option") == "live" and arg(args, "--max_iteration") == "3"
    model, simulator = arg(args, "--model_name"), arg(args, "--simulator_name")
    assert (model, simulator) == (file_model_name(spec), "gpt-4o")
    opens = print_results_opens(model, FeedbackConfig("partial", "novice"), simulator, 3)
    assert set(opens) <= files, sorted(set(opens) - files)


def test_a_model_that_played_its_own_user_has_no_by(tmp_path: Path) -> None:
    spec = "http://127.0.0.1:8000/v1"
    ids = live_store(tmp_path / "live.db", spec, verbal="expert", simulator=spec)
    with Store.open(tmp_path / "live.db") as store:
        export_convcodebench(store, ids, tmp_path / "out")
    (entry,) = manifest_sets(tmp_path / "out")
    model = file_model_name(spec)
    assert arg(entry["print_results_args"], "--simulator_name") == model
    assert entry["name"] == "bigcodebench_http_127.0.0.1_8000_v1_CF_EF_UNIT_SEF"
    opens = print_results_opens(model, FeedbackConfig("partial", "expert"), model, 3)
    assert set(opens) <= exported(tmp_path / "out")


def convtui(*args: str) -> subprocess.CompletedProcess:
    return invoke(*args, environ={"CI": os.environ.get("CI")})


@pytest.mark.parametrize("name", ["Qwen/Qwen2.5-Coder-7B-Instruct", "gpt-4o"])
def test_model_name_chooses_the_name_in_the_files(tmp_path: Path, name: str) -> None:
    live_store(tmp_path / "live.db", "http://127.0.0.1:8000/v1")
    out = tmp_path / "out"
    done = convtui(
        "sessions", "export", "--all", "--db", str(tmp_path / "live.db"),
        "--format", "convcodebench", "--out", str(out), "--model-name", name,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (entry,) = manifest_sets(out)
    assert arg(entry["print_results_args"], "--model_name") == name
    assert entry["model"] == "http://127.0.0.1:8000/v1"
    opens = print_results_opens(name, FeedbackConfig("partial", "novice"), "gpt-4o", 3)
    assert set(opens) <= exported(out)
    assert f"{SAMPLES}/{turn0_file(name)}" in exported(out)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--model-name", "scripted.jsonl"], "'.jsonl'"),
        (["--model-name", "two words"], "whitespace"),
        (["--model-name", ""], "is empty"),
        (["--model-name", "x", "--format", "jsonl"], "needs --format convcodebench"),
    ],
)
def test_a_bad_model_name_is_one_error_line(tmp_path: Path, args: list[str], expected: str) -> None:
    live_store(tmp_path / "live.db", "mock:/tmp/run/script.jsonl")
    out = tmp_path / "out"
    fmt = [] if "--format" in args else ["--format", "convcodebench"]
    done = convtui(
        "sessions", "export", "--all", "--db", str(tmp_path / "live.db"),
        "--out", str(out), *fmt, *args,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert expected in lines[0]
    assert not out.exists()


def test_model_name_refuses_a_selection_of_two_models(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    ids = live_store(db, "local:smollm2") + live_store(db, "http://127.0.0.1:8000/v1")
    with Store.open(db) as store, pytest.raises(ExportError, match="names one model"):
        export_convcodebench(store, ids, tmp_path / "out", model_name="m")


# --- import: every turn-0 name ----------------------------------------------------------


def test_an_openai_backed_turn0_file_imports(tmp_path: Path) -> None:
    with Store.open(tmp_path / "ccb.db") as store:
        (imported,) = import_logs(store, FIXTURES / "ccw_static_openai")
        assert (imported.model, imported.feedback, imported.sessions, imported.turns) == (
            "gpt-4o",
            "CF,EF:partial",
            1,
            2,
        )
        (row,) = store.run_sessions(imported.run_id)
        turns = store.load_turns(row.id)
        assert [t.passed for t in turns] == [False, True]
        assert turns[0].code.endswith("return sorted(LETTERS)")
        assert row.status == "solved"
        # Exported again, turn 0 goes back under the name print_results.py reads for gpt-4o.
        export_convcodebench(store, [row.id], tmp_path / "out")
    assert (
        f"{SAMPLES}/gpt-4o--bigcodebench-instruct--openai-0-1-sanitized-calibrated.jsonl"
        in exported(tmp_path / "out")
    )


@pytest.mark.parametrize(
    "turn0",
    [
        "acme--coder-1b--bigcodebench-instruct--openai-0-1-sanitized-calibrated",
        "acme--coder-1b--bigcodebench-instruct--openai-0.2-1-sanitized-calibrated",
        "acme--coder-1b--bigcodebench-instruct--anthropic-0-1-sanitized-calibrate",
        "acme--coder-1b--bigcodebench-hard-instruct--hf-0-1-sanitized-calibrated",
        "acme--coder-1b--main--bigcodebench-instruct--openai-0-1-sanitized_calibrated",
    ],
)
def test_the_fixture_imports_whatever_bigcodebench_named_its_turn0(
    tmp_path: Path, turn0: str
) -> None:
    folder = tmp_path / "logs"
    shutil.copytree(FIXTURES / "ccw_static", folder)
    samples = folder / SAMPLES
    old = "acme--coder-1b--bigcodebench-instruct--vllm-0-1-sanitized-calibrated"
    (samples / f"{old}.jsonl").rename(samples / f"{turn0}.jsonl")
    (samples / f"{old}_eval_results.json").rename(samples / f"{turn0}_eval_results.json")
    with Store.open(tmp_path / "ccb.db") as store:
        (imported,) = import_logs(store, folder)
        assert (imported.model, imported.sessions, imported.turns) == ("acme/coder-1b", 2, 3)


def test_two_turn0_files_for_one_model_are_one_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    shutil.copytree(FIXTURES / "ccw_static", folder)
    samples = folder / SAMPLES
    old = "acme--coder-1b--bigcodebench-instruct--vllm-0-1-sanitized-calibrated"
    new = "acme--coder-1b--bigcodebench-instruct--openai-0-1-sanitized-calibrated"
    for suffix in (".jsonl", "_eval_results.json"):
        shutil.copy(samples / f"{old}{suffix}", samples / f"{new}{suffix}")
    with Store.open(tmp_path / "x.db") as store, pytest.raises(ImportFormatError) as raised:
        import_logs(store, folder)
    assert "more than one turn-0 file" in str(raised.value)


# --- static replays ---------------------------------------------------------------------

REFERENCE = {"BigCodeBench/3": (False, False, True), "BigCodeBench/8": (False, True)}
TARGET = {"BigCodeBench/3": (False, True), "BigCodeBench/8": (False, True)}


def static_store(db: Path, target: str) -> tuple[list[str], list[str]]:
    """A reference log set (acme/coder-1b, novice feedback by gpt-4o) and a static replay of
    it by ``target``; (reference ids, replay ids)."""
    cfg = logged_config()
    references = record(db, cfg, REFERENCE)
    with Store.open(db) as store:
        rows = [store.session(sid) for sid in references]
        target_cfg = replace(cfg, model=target, simulator=None)
        run_id = store.create_static_run(target_cfg, "static;x", rows, {"log_set": "x"})
        for row in store.run_sessions(run_id):
            play(store, row.id, TARGET[row.task_id])
        return references, [row.id for row in store.run_sessions(run_id)]


def exported_replay(
    tmp_path: Path, target: str, *, with_references: bool = False
) -> tuple[list[str], list[WrittenLogSet]]:
    """``static_store`` in ``tmp_path/replay.db``, its replays (and, ``with_references``, the
    reference sessions too) exported to ``tmp_path/out``: (reference ids, the sets written)."""
    db = tmp_path / "replay.db"
    references, replays = static_store(db, target)
    with Store.open(db) as store:
        ids = references + replays if with_references else replays
        return references, export_convcodebench(store, ids, tmp_path / "out")


def test_a_static_replay_is_exported_where_print_results_static_reads_it(
    tmp_path: Path,
) -> None:
    references, written = exported_replay(tmp_path, "http://127.0.0.1:8000/v1")
    with Store.open(tmp_path / "replay.db") as store:
        given = {store.session(sid).task_id: store.load_turns(sid) for sid in references}
    files = exported(tmp_path / "out")
    reference_stem = "bigcodebench_acme_coder-1b_CF_EF_FULL_SNF_by_gpt-4o"
    target = file_model_name("http://127.0.0.1:8000/v1")
    opens = print_results_opens(
        target, FeedbackConfig("full", "novice"), "gpt-4o", 3, reference="acme/coder-1b"
    )
    assert set(opens) <= files, sorted(set(opens) - files)
    # Nothing of the replay lands among the live logs: only the reference set is there.
    assert not any(f.startswith("results/v0.3.6/bigcodebench_http") for f in files)
    by_name = {s.name: s for s in written}
    assert by_name[reference_stem].added and by_name[reference_stem].sessions == 2
    replay_set = by_name["bigcodebench_http_127.0.0.1_8000_v1_CF_EF_FULL_SNF_by_gpt-4o"]
    assert replay_set.reference == reference_stem and not replay_set.added
    entry = next(e for e in manifest_sets(tmp_path / "out") if e["reference_set"])
    assert entry["folder"] == f"results/v0.3.6/static/{reference_stem}"
    assert entry["print_results_args"] == [
        "--option", "static", "--model_name", target, "--simulator_name", "gpt-4o",
        "--ref_model_name", "acme/coder-1b", "--max_iteration", "3",
    ]  # fmt: skip
    # Each replayed turn k carries the feedback it was handed: the reference's turn k-1's.
    first = tmp_path / "out" / entry["folder"] / f"{entry['name']}.jsonl"
    lines = {json.loads(x)["task_id"]: json.loads(x) for x in first.read_text().splitlines()}
    assert lines["BigCodeBench/3"]["user_feedback"] == given["BigCodeBench/3"][0].verbal_feedback
    assert lines["BigCodeBench/3"]["execution_feedback"] == (
        given["BigCodeBench/3"][0].execution_feedback
    )
    # Imported back, the folder gives the reference set; the replay under static/ is output.
    with Store.open(tmp_path / "back.db") as store:
        (imported,) = import_logs(store, tmp_path / "out")
    assert imported.name == reference_stem


def test_a_replay_and_its_reference_selected_together_write_the_reference_once(
    tmp_path: Path,
) -> None:
    _, written = exported_replay(tmp_path, "local:smollm2", with_references=True)
    assert [(s.name, s.added, s.reference is not None) for s in written] == [
        ("bigcodebench_acme_coder-1b_CF_EF_FULL_SNF_by_gpt-4o", False, False),
        ("bigcodebench_local_smollm2_CF_EF_FULL_SNF_by_gpt-4o", False, True),
    ]
