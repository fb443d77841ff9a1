"""`convtui doctor --suite codeif --instructions`: per instruction category, the dataset's
reference solutions (the task code, for the initial instruction only) pass, every assert
compiles, and how many instructions the task code already follows, as written and after the
benchmark's pre-processing. Real executor, real tasks; counts taken from the data file."""

from __future__ import annotations

import csv
import json
import subprocess

import pytest
from support.cli import convtui_argv, env
from support.data import DATA

from convtui.core.catalog.loaders import load_catalog
from convtui.core.codeif.instructions import BASE, instructions

pytestmark = pytest.mark.skipif(
    not (DATA / "CodeIF-Bench-L1-function.jsonl").exists(), reason=f"no CodeIF data in {DATA}"
)

IDS = "CodeIF/11,CodeIF/12,CodeIF/13"


def doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        convtui_argv("doctor", *args),
        capture_output=True,
        text=True,
        env=env(),
        timeout=600,
        check=False,
    )


def test_instruction_tests_are_checked_by_category() -> None:
    done = doctor("--suite", "codeif", "--instructions", "--ids", IDS, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    tasks = [load_catalog("codeif", DATA).get(i) for i in IDS.split(",")]
    for key in ("as_written", "preprocessed"):
        found = {c["category"]: c for c in data[key]}
        assert set(found) == {i.category for t in tasks for i in instructions(t)}
        base = found[BASE]
        assert (base["tasks"], base["references"], base["references_pass"]) == (3, 3, 3)
        for category, check in found.items():
            asserts = sum(
                len(i.tests) for t in tasks for i in instructions(t) if i.category == category
            )
            assert check["asserts"] == check["asserts_compile"] == asserts
            if category != BASE:
                assert check["references"] == 0  # the dataset has none for follow-ups
            assert 0 <= check["followed_by_task_code"] <= check["tasks"]


def test_instructions_needs_the_codeif_suite() -> None:
    done = doctor("--instructions", "--ids", "1")
    assert done.returncode == 2
    assert "--suite codeif" in done.stderr and done.stderr.strip().count("\n") == 0


def test_audit_classes_every_instruction_test_and_writes_the_errata(tmp_path) -> None:
    errata = tmp_path / "errata.csv"
    data = DATA / "CodeIF-Bench-L1-function.jsonl"
    done = doctor(
        "--suite", "codeif", "--audit", "--ids", "CodeIF/11", "--data", str(data),
        "--json", "--errata", str(errata),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    task = load_catalog("codeif", DATA).get("CodeIF/11")
    texts = [name for i in instructions(task) for name, _ in i.tests]
    assert sorted(r["test"] for r in found["tests"]) == sorted(set(texts))
    verdict = {r["test"]: r for r in found["tests"]}
    assert {verdict[name]["verdict"] for name, _ in task.tests.snippets} == {"judges"}
    raise_check = [r for r in found["tests"] if r["defect"] == "no-raise-check"]
    assert raise_check and all(r["placeholder"] == "pass" for r in raise_check)
    with errata.open() as handle:
        assert len(list(csv.DictReader(handle))) == len(found["tests"])


def test_errata_needs_the_audit() -> None:
    done = doctor("--suite", "codeif", "--errata", "x.csv")
    assert done.returncode == 2 and "--audit" in done.stderr
