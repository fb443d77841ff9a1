"""Parsing Python source into an AST, one thread at a time.

CPython 3.11 keeps the AST constructor's recursion depth per interpreter, not per thread: when
a collection in the middle of one thread's ``ast.parse`` runs a finaliser that lets another
thread parse, either fails with ``SystemError: AST constructor recursion depth mismatch``
(python/cpython#106905). The harness parses on its event loop and in the executor's threads
at once (a sweep's plans, verdicts and extractions), so every parse in the harness goes
through the one lock here. Compiling to bytecode builds no AST objects and needs no lock."""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse_python(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, never at the same time as another thread's."""
    with _LOCK:
        return ast.parse(source, filename)
