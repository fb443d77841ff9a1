"""What an executor request needs from a task: the modules and imports its code uses, and
what doctor runs as a solution (``exec_request``, which also builds a repository task's
request inside its project, is in core/projects/checkout.py, above both)."""

from __future__ import annotations

import ast
import contextlib
import functools
import sys
from typing import Literal

from convtui.core.catalog.loaders import imported_modules
from convtui.core.catalog.tasks import Task
from convtui.core.syntax import parse_python


@functools.lru_cache(maxsize=4096)
def task_modules(task: Task) -> frozenset[str]:
    """Modules the task itself needs: a missing one is the environment's fault, not the code's.

    Its declared libs, plus what its header, tests and ground truth import."""
    sources = [task.code_header, task.ground_truth, task.tests.source]
    sources += [code for _, code in task.tests.snippets]
    for requirement in task.requirements:
        sources += [code for _, code in requirement.tests.snippets]
    names = {lib.split(".")[0] for lib in task.libs}
    for source in sources:
        names |= imported_modules(source)
    return frozenset(names)


@functools.lru_cache(maxsize=4096)
def task_imports(task: Task) -> frozenset[str]:
    """Dotted names of what the task's own code (header and tests) imports, with
    ``from a.b import c`` giving both ``a.b`` and ``a.b.c`` (``c`` may be a submodule). Task
    data, never the candidate's code: the executor may import these before it forks a run.
    The ground truth is left out: what only it imports, a failing candidate never needs."""
    sources = [task.code_header, task.tests.source]
    sources += [code for _, code in task.tests.snippets]
    names: set[str] = set()
    for source in sources:
        for node in _import_nodes(source):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif node.module and not node.level:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(names)


def _import_nodes(source: str) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of ``source``; a header (a ``def`` with no body) does not
    parse whole, so its top-level import lines are parsed one by one."""
    try:
        trees = [parse_python(source)]
    except (SyntaxError, ValueError):
        trees = []
        for line in source.splitlines():
            if line.startswith(("import ", "from ")):
                with contextlib.suppress(SyntaxError, ValueError):
                    trees.append(parse_python(line))
    return [
        node
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]


def third_party_modules(task: Task) -> frozenset[str]:
    """The task's modules that are not in Python's standard library."""
    return frozenset(m for m in task_modules(task) if m not in sys.stdlib_module_names)


# What a deliberately broken solution does: its body is replaced by a raise. A plain
# RuntimeError with a message says what it is in every traceback the doctor shows.
# What doctor runs against a task's tests: its ground truth, or broken_solution's.
Solution = Literal["ground-truth", "broken"]
BROKEN_BODY = 'raise RuntimeError("convtui doctor: deliberately broken solution")'


def broken_solution(task: Task) -> str:
    """The task's own header with the body replaced by ``BROKEN_BODY``: a solution every
    discriminating test suite must fail."""
    if task.code_header.strip():
        return f"{task.code_header.rstrip()}\n    {BROKEN_BODY}\n"
    fallback = f"def {task.entry_point}(*args, **kwargs):\n    {BROKEN_BODY}\n"
    try:
        tree = parse_python(task.ground_truth)
    except SyntaxError:
        return fallback
    lines = task.ground_truth.splitlines(keepends=True)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == task.entry_point:
            head = "".join(lines[: node.body[0].lineno - 1])
            return f"{head}{' ' * node.body[0].col_offset}{BROKEN_BODY}\n"
    return fallback
