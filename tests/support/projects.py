"""A small project made by the test, laid out as DevEval lays out its projects, with a
repository task inside it: what the executor's project runs are tested on without DevEval's
archive. Its environment is this interpreter (it has pytest), linked where a project's
environment lives."""

from __future__ import annotations

import os
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

from convtui.core.catalog.tasks import ProjectSite, Requirement, Task, TestSpec
from convtui.core.projects.checkout import env_python, project_dir

PROJECT = "Demo/tiny"
MODULE = textwrap.dedent(
    '''\
    """A tiny project."""


    class Counter:
        def __init__(self):
            self.value = 0

        def add(self, amount):
            self.value += amount
            return self.value


    def double(x):
        return x * 2
    '''
)
TESTS = textwrap.dedent(
    """\
    import unittest

    from tiny.core import Counter, double


    class CounterTest(unittest.TestCase):
        def test_add(self):
            counter = Counter()
            self.assertEqual(counter.add(2), 2)
            self.assertEqual(counter.add(3), 5)


    def test_double():
        assert double(4) == 8
    """
)
ADD = "    def add(self, amount):\n        self.value += amount\n        return self.value\n"
SITE = ProjectSite(
    level=2,
    namespace="tiny.core.Counter.add",
    project_path=PROJECT,
    completion_path=f"{PROJECT}/tiny/core.py",
    signature_line=8,
    body_start=9,
    body_end=10,
    indent=4,
    column=4,
    context="class Counter:\n    def __init__(self):\n        self.value = 0\n",
)
TASK = Task(
    id="CodeIF/2999",
    suite="codeif",
    prompt="Please write a python function called 'add' base the context.",
    code_header="",
    entry_point="add",
    tests=TestSpec("pytest", snippets=(("tests/test_core.py::CounterTest::test_add", ""),)),
    ground_truth=ADD,
    requirements=(
        Requirement(
            "Input-Output Conditions",
            "add must refuse a negative amount with ValueError.",
            TestSpec(
                "pytest",
                snippets=(
                    (
                        "tests/test_core.py::CounterTest::test_add_negative",
                        # Written without ``self`` though its id names a class, as some of
                        # CodeIF-Bench's are.
                        "def test_add_negative():\n"
                        "    import pytest\n"
                        "    with pytest.raises(ValueError):\n"
                        "        Counter().add(-1)\n",
                    ),
                ),
            ),
        ),
    ),
    site=SITE,
)


def make_project(root: Path) -> Task:
    """The tiny project under ``root`` (a projects root) and its task."""
    tree = project_dir(root, SITE)
    (tree / "tiny").mkdir(parents=True)
    (tree / "tiny" / "__init__.py").write_text("")
    (tree / "tiny" / "core.py").write_text(MODULE)
    (tree / "tests").mkdir()
    (tree / "tests" / "test_core.py").write_text(TESTS)
    python = env_python(root, PROJECT)
    python.parent.mkdir(parents=True)
    os.symlink(sys.executable, python)
    return TASK


def with_tests(task: Task, *ids: str) -> Task:
    """``task`` checked by the tests ``ids`` name (the project holds them)."""
    return replace(task, tests=TestSpec("pytest", snippets=tuple((i, "") for i in ids)))
