"""A big study's paths stay linear (issue 48, point 7): a sign-in hashes the token once and
looks the hash up, however many annotators the study has; `study init` goes over the
assignment a fixed number of times, not once per annotator; a study file's names are checked
in one pass. scripts/perf/study_scale.py times the same at 100,000 annotators."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from support.cli import convtui
from support.data import needs_bigcodebench
from support.studies import study_spec, write_study

import convtui.benchmarks.commands.study.study_admin as study_command
import convtui.core.studies.spec as spec_module
import convtui.sessions.studies.study_rows as studies_module
from convtui.core.studies.spec import StudySpec
from convtui.sessions import Store
from convtui.sessions.studies.study_rows import load_study, who_holds


def counting_hashes(monkeypatch) -> list[str]:
    """Every token hashed from now on, wherever the store's code calls the hash from."""
    hashed: list[str] = []
    real = spec_module.token_hash

    def counted(token: str) -> str:
        hashed.append(token)
        return real(token)

    monkeypatch.setattr(spec_module, "token_hash", counted)
    monkeypatch.setattr(studies_module, "token_hash", counted, raising=False)
    return hashed


@pytest.mark.parametrize("people", [3, 400])
def test_a_sign_in_hashes_the_token_once_whatever_the_number_of_annotators(
    tmp_path, monkeypatch, people
) -> None:
    names = tuple(f"annotator-{i}" for i in range(people))
    db = tmp_path / "study.db"
    write_study(db, study_spec(annotators=names, overlap=1))
    last = names[-1]
    with Store.open(db) as store:
        study = load_study(store)
        hashed = counting_hashes(monkeypatch)
        assert who_holds(store, study.id, f"token-of-{last}") == last
        assert who_holds(store, study.id, "token-of-nobody") is None
    assert hashed == [f"token-of-{last}", "token-of-nobody"]


class CountedPasses(list):
    """The assignment ``assign`` deals, counting each pass over it."""

    passes = 0

    def __iter__(self):
        CountedPasses.passes += 1
        return super().__iter__()


@needs_bigcodebench
def test_init_goes_over_the_assignment_a_fixed_number_of_times(tmp_path, monkeypatch) -> None:
    real = study_command.assign
    monkeypatch.setattr(CountedPasses, "passes", 0)
    monkeypatch.setattr(study_command, "assign", lambda *a: CountedPasses(real(*a)))
    names = [f"annotator-{i}" for i in range(40)]
    path = tmp_path / "STUDY.toml"
    path.write_text(
        'name = "pilot"\nmodel = "mock:replies.jsonl"\noverlap = 2\n'
        f'tasks = ["BigCodeBench/2", "BigCodeBench/3", "BigCodeBench/8"]\n'
        f"annotators = {json.dumps(names)}\n"
    )
    made = convtui("study", "init", str(path), "--db", str(tmp_path / "study.db"), "--json")
    assert made.returncode == 0, made.stderr
    assert sum(len(p["tasks"]) for p in json.loads(made.stdout)["annotators"]) == 6
    assert CountedPasses.passes <= 3  # storing it, grouping it by annotator; not one per person


def test_the_names_of_a_big_study_are_checked_in_one_pass(tmp_path: Path) -> None:
    # 40,000 names: about 0.1 s in one pass here; counting each name's copies took 22 s.
    names = [f"annotator-{i:05d}" for i in range(40_000)]
    data = {"name": "big", "tasks": ["BigCodeBench/2"], "model": "mock:x", "annotators": names}
    start = time.perf_counter()
    spec = StudySpec.from_mapping(data)
    assert time.perf_counter() - start < 3.0
    start = time.perf_counter()
    spec_module.check_distinct(spec.annotators)  # the names that print alike, as init checks
    assert time.perf_counter() - start < 3.0
    with pytest.raises(spec_module.StudyError, match="named twice: annotator-00007"):
        StudySpec.from_mapping(data | {"annotators": [*names, "annotator-00007"]})
