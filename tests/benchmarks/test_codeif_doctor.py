"""`convtui doctor --suite codeif --instructions`: per instruction category, the dataset's
reference solutions (the task code, for the initial instruction only) pass, every assert
compiles, and how many instructions the task code already follows, as written and after the
benchmark's pre-processing. Real executor, real tasks; counts taken from the data file."""

from __future__ import annotations

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
