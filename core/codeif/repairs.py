"""Repairs of CodeIF-Bench instruction tests whose fix is certain, applied under ``--protocol
convtui`` only (``--protocol codeif`` keeps the authors' tests as they are).

Which test gets which repair is data: the errata file (core/codeif/errata.csv, written by
``convtui doctor --suite codeif --audit --errata``) names each test by task, id and the digest
of its text, with the defect found, its evidence and the repair. A repair applies only to the
text it was found on, so a data file whose test was rewritten keeps that test as it is. The
repairs themselves are general rewrites of a test's text, one per defect kind, never code
for one task:

- ``else-raise``: a ``try`` that passes when nothing is raised gets ``else: raise
  AssertionError`` (the instruction asks for the exception; core/codeif/test_defects.py
  ``passes_without_raise``);
- ``dedent-source``: ``inspect.getsource(f)`` handed to radon or mccabe is dedented first,
  so a method's source parses;
- ``event-loop``: an ``async def`` test runs its body under ``asyncio.run``, so pytest runs
  it without an async plugin;
- ``import-stdlib``: a function-level test that uses a standard-library module it does not
  import (a NameError for every answer) imports it first.

Renaming a test to its id, ``self`` for a method and standard-library imports are repaired for
every test under ``--protocol convtui`` as it is put into its project (core/projects/splice.py);
the errata list them too, so every defect has one row.
"""

from __future__ import annotations

import ast
import builtins
import csv
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from convtui.core.codeif.test_defects import (
    async_test_node,
    called_name,
    parsed,
    text_digest,
    top_tries,
)
from convtui.core.projects.splice import bound_names

ERRATA = Path(__file__).with_name("errata.csv")


def else_raise(code: str) -> str:
    """Every top-level ``try`` of the test fails when its body raised nothing."""
    tree = parsed(code)
    if tree is None:
        return code
    lines = textwrap.dedent(code).splitlines()
    tries = [node for node in top_tries(tree) if not node.orelse]
    for node in sorted(tries, key=lambda n: n.end_lineno or 0, reverse=True):
        caught = " or ".join(ast.unparse(h.type) for h in node.handlers if h.type is not None)
        pad = " " * node.col_offset
        message = f"expected {caught}, nothing was raised"
        lines.insert(
            node.end_lineno or len(lines), f"{pad}else:\n{pad}    raise AssertionError({message!r})"
        )
    return "\n".join(lines) + "\n"


def dedent_source(code: str) -> str:
    """Every ``getsource(...)`` call of the test wrapped in ``textwrap.dedent``."""
    tree = parsed(code)
    if tree is None:
        return code
    text = textwrap.dedent(code)
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and called_name(node.func) == "getsource"
    ]
    spans = sorted(
        (
            (
                starts[n.lineno - 1] + n.col_offset,
                starts[(n.end_lineno or n.lineno) - 1] + (n.end_col_offset or 0),
            )
            for n in calls
        ),
        reverse=True,
    )
    for start, end in spans:
        text = f"{text[:start]}__import__('textwrap').dedent({text[start:end]}){text[end:]}"
    return text


def event_loop(code: str) -> str:
    """An ``async def`` test as a plain one that runs its body under ``asyncio.run``."""
    node = async_test_node(code)
    if node is None:
        return code
    lines = textwrap.dedent(code).splitlines(keepends=True)
    args = ast.unparse(node.args)
    body = textwrap.indent("".join(ast.unparse(s) + "\n" for s in node.body), " " * 8)
    plain = (
        f"def {node.name}({args}):\n"
        "    async def _body():\n"
        f"{body}"
        "    __import__('asyncio').run(_body())\n"
    )
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    return "".join([*lines[:first], plain, *lines[node.end_lineno or len(lines) :]])


def import_stdlib(code: str) -> str:
    """The standard-library modules the test uses without importing them, imported first."""
    tree = parsed(code)
    if tree is None:
        return code
    bound = bound_names(tree)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    missing = sorted(
        n for n in used - bound if n in sys.stdlib_module_names and not hasattr(builtins, n)
    )
    return "".join(f"import {name}\n" for name in missing) + code


REPAIRS: Mapping[str, Callable[[str], str]] = {
    "else-raise": else_raise,
    "dedent-source": dedent_source,
    "event-loop": event_loop,
    "import-stdlib": import_stdlib,
}


@dataclass(frozen=True)
class Erratum:
    """One test the audit found a defect in, and what ``--protocol convtui`` does about it:
    a repair (a key of REPAIRS, or one splice makes for every test), ``left out``, or
    nothing."""

    task: str
    test: str
    digest: str
    defect: str
    action: str
    evidence: str = ""


@cache
def errata(path: Path = ERRATA) -> Mapping[tuple[str, str, str], Erratum]:
    """The errata file's rows by (task, test id, text digest)."""
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as handle:
        rows = [
            Erratum(r["task"], r["test"], r["digest"], r["defect"], r["convtui"], r["evidence"])
            for r in csv.DictReader(handle)
            if r["defect"]
        ]
    return {(r.task, r.test, r.digest): r for r in rows}


def repaired(
    task_id: str, tests: Sequence[tuple[str, str]], found: Mapping | None = None
) -> tuple[tuple[str, str], ...]:
    """``tests`` (id, text) with the repairs the errata name for them applied."""
    found = errata() if found is None else found
    out = []
    for name, code in tests:
        erratum = found.get((task_id, name, text_digest(code)))
        repair = REPAIRS.get(erratum.action) if erratum is not None else None
        out.append((name, repair(code) if repair is not None else code))
    return tuple(out)
