"""The one evaluate path on code that does not compile, through the real sandbox: the
execution feedback a ConvCodeWorld turn reads for it (as a stale EF) is BigCodeBench's
``details["ALL"] = str(e)`` (BCB-fork ``bigcodebench/eval/__init__.py`` ``unsafe_execute``,
which compiles ``code + "\\n" + test_code`` as ``__test__.py``); convtui's own protocol says
it in a sentence instead."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from convtui.core.evaluate import FeedbackSettings, evaluate, render_execution
from convtui.core.executor import Executor
from convtui.core.loaders import load_catalog
from convtui.core.loop import cached_execute

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("CONVTUI_DATA_DIR", ROOT.parent / "shared" / "data"))
pytestmark = pytest.mark.skipif(
    not (DATA / "BigCodeBench-v0.1.0.jsonl.gz").exists(), reason=f"no BigCodeBench data in {DATA}"
)

BROKEN = "import random\ndef task_func(LETTERS):\n    return {x for x in\n"


def _bcb_all(code: str, test_code: str) -> str:
    """What BigCodeBench stores as ALL for code that does not compile with its tests."""
    try:
        compile(code + "\n" + test_code, "__test__.py", "exec")
    except SyntaxError as exc:
        return str(exc)
    raise AssertionError("the code was meant not to compile")


def test_code_that_does_not_compile_reads_as_bigcodebench_under_convcodeworld():
    task = load_catalog("bigcodebench", DATA).get("BigCodeBench/2")
    ccw = FeedbackSettings("full", "ccw", source_lines=False, compile_compat="ccw")
    ours = FeedbackSettings("full", "first-tests")

    async def both():
        with Executor(jobs=1) as executor:
            execute = cached_execute(executor, None)
            return (
                await evaluate(task, BROKEN, ccw, execute, trim=None),
                await evaluate(task, BROKEN, ours, execute, trim=None),
            )

    under_ccw, under_ours = asyncio.run(both())
    assert not under_ccw.compiled.ok and under_ccw.result.status == "error"
    # The loop shows compilation feedback for such code; the EF is what a later turn reads
    # as the stale EF of this turn, rendered from the stored result.
    text = render_execution(task, under_ccw.result, ccw, trim=None)
    assert text == f"ALL\n{_bcb_all(BROKEN, task.tests.source)}\n"
    assert render_execution(task, under_ours.result, ours, trim=None) == (
        f"ALL\n{under_ours.result.detail}\n"
    )
    assert under_ours.result.detail.startswith("the code does not compile")
