"""What can be told about a CodeIF-Bench instruction test from its text alone, before it runs:
defects that no answer can change (it does not parse; it hands a method's indented source to a
parser; it is a coroutine that nothing awaits; it is written under another name than its id's)
and one that lets every answer through (it calls the function in a ``try`` that passes when
nothing is raised). The audit (core/codeif/audit.py) reads these beside what the test did on
the reference and on a placeholder; the repairs (core/codeif/repairs.py) rewrite the text."""

from __future__ import annotations

import ast
import hashlib
import re
import textwrap

from convtui.core.syntax import parse_python

DIGEST_CHARS = 12  # hex digits of a test text's SHA-256 that name its version in the errata
_TEST_NAME = re.compile(r"^\s*(?:async\s+def|def)\s+(\w+)", re.MULTILINE)
# Code Complexity tests that measure a function's source: radon's visitors and mccabe parse
# what they are given as a module, so a method's source, indented, is an IndentationError.
_SOURCE_PARSERS = ("cc_visit", "radon", "get_code_complexity", "mccabe")


def text_digest(code: str) -> str:
    """The version of a test's text the errata name (a repair applies to that text only)."""
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


def parsed(code: str) -> ast.Module | None:
    """The test's syntax tree (dedented: repository tests are methods), None if it does not
    parse."""
    try:
        return parse_python(textwrap.dedent(code))
    except (SyntaxError, ValueError, UnicodeError):
        return None


def syntax_error(code: str) -> str | None:
    """The SyntaxError the test's text raises before any answer is seen, as one line."""
    try:
        parse_python(textwrap.dedent(code))
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except (ValueError, UnicodeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def written_name(code: str) -> str | None:
    """The name the test function is written under (a repository test is one function)."""
    found = _TEST_NAME.search(code)
    return found.group(1) if found else None


def is_async_test(code: str) -> bool:
    """A repository test written ``async def``: pytest without an async plugin never runs
    its body (7.4 skips it, 8.4 fails it)."""
    return async_test_node(code) is not None


def async_test_node(code: str) -> ast.AsyncFunctionDef | None:
    """The test's first top-level ``async def`` (imports may come before it)."""
    tree = parsed(code)
    found = [n for n in tree.body if isinstance(n, ast.AsyncFunctionDef)] if tree else []
    return found[0] if found else None


def parses_indented_source(code: str, method: str | None, decorated: bool = False) -> bool:
    """The test hands ``inspect.getsource`` of ``method`` (the task's function, where it sits
    inside a class), not dedented, to a parser (radon, mccabe): the source is indented and
    the parser raises IndentationError for every answer. ``.strip()`` unindents only the
    first line, which is enough unless the method is ``decorated`` (the ``def`` line stays
    indented under the decorator's)."""
    if method is None or "dedent" in code or not any(n in code for n in _SOURCE_PARSERS):
        return False
    tree = parsed(code)
    if tree is None:
        return False
    stripped = {
        id(node.func.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("strip", "lstrip")
    }
    return any(
        isinstance(node, ast.Call)
        and called_name(node.func) == "getsource"
        and bool(node.args)
        and called_name(node.args[0]) == method
        and (decorated or id(node) not in stripped)
        for node in ast.walk(tree)
    )


def called_name(func: ast.expr) -> str:
    """The last name of a dotted expression (``inspect.getsource`` -> ``getsource``)."""
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def passes_without_raise(code: str) -> bool:
    """The test calls something inside a ``try`` whose handlers check the exception, but
    nothing fails when no exception comes: no ``assert``/``raise`` in the ``try`` body, no
    ``else``. An answer that raises nothing passes (``try: f('x', 'll')`` / ``except
    ValueError as e: assert str(e) == …``)."""
    tree = parsed(code)
    if tree is None:
        return False
    tries = top_tries(tree)
    return bool(tries) and all(_unguarded(node) for node in tries)


def top_tries(tree: ast.Module) -> list[ast.Try]:
    """The ``try`` statements at the test's top level, or at its test function's."""
    body = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body += node.body
    return [node for node in body if isinstance(node, ast.Try)]


def _unguarded(node: ast.Try) -> bool:
    if node.orelse or node.finalbody or not node.handlers:
        return False
    if any(handler.type is None for handler in node.handlers):
        return False
    body = ast.Module(body=node.body, type_ignores=[])
    return not any(isinstance(n, ast.Assert | ast.Raise) for n in ast.walk(body))
