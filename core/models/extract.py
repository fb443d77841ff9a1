"""Pull Python code out of a model reply (docs/design.md#one-turn, step 2).

Two modes:

- ``robust`` (default): markdown fences of any flavour, several blocks, unfenced replies,
  unclosed final fences; then the task's import header is merged in without duplicating what
  the code already imports.
- ``ccw``: ConvCodeWorld's lossy parser, reproduced byte for byte for parity runs:
  ``ProgramOfThought.parse_code`` (CCW:``convcodeworld/pot.py:408-434``) followed by the header
  prefix of CCW:``convcodeworld/run.py:187-189`` (``code_prompt.split('def task_func')[0] +
  code``). The measured failure modes and the short names CCW/BCB are in
  docs/harness-notes.md (#code-extraction, #sources).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterable, Iterator
from typing import Literal, NamedTuple

from convtui.core.syntax import parse_python

__all__ = ["ExtractMode", "extract_code", "holds_code"]

ExtractMode = Literal["robust", "ccw"]

# CCW's two regexes, verbatim: the closing fence may be two backticks (the third is optional),
# and both fences must touch a space or newline.
_CCW_PYTHON_FENCE = re.compile(r"```python[ \n](.*?)[ \n]```?", re.DOTALL)
_CCW_BARE_FENCE = re.compile(r"```[ \n](.*?)[ \n]```?", re.DOTALL)

# An opening fence: any indentation (models indent fences inside list items), three or more
# backticks or tildes, then an optional info string. CommonMark forbids backticks in a backtick
# fence's info string, which is what keeps inline ```x``` spans from opening a block.
_FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*?)[ \t]*$")

# Tags that mean "this block is Python source". An empty tag counts: most models fence plain
# code without one.
_PYTHON_TAGS = frozenset({"", "py", "py3", "pyi", "ipython", "ipython3", "python"})

# Lines that can start a Python module; used to skip leading prose in unfenced replies
# ("Here is the solution:" does not parse, but "Sure" alone does, as an expression, so parsing
# alone cannot tell prose from code).
_CODE_START = re.compile(
    r"^(?:import\s|from\s+\S+\s+import\s|(?:async\s+)?def\s|class\s|@|#|if\s+__name__\b"
    r"|[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*(?::[^=]+)?=[^=]|try:|with\s|for\s|while\s)"
)

# Each deletion costs a parse; the bound keeps a long prose reply from making extraction
# quadratic.
_MAX_PROSE_DELETIONS = 40

# Statement keywords and names that begin unindented code lines the prose test must not touch
# (`print` covers Python 2 style prints, a real syntax error the model should be told about).
_NOT_PROSE_FIRST_WORDS = frozenset(
    {
        "assert",
        "async",
        "await",
        "break",
        "case",
        "continue",
        "del",
        "elif",
        "else",
        "except",
        "finally",
        "global",
        "lambda",
        "match",
        "nonlocal",
        "pass",
        "print",
        "raise",
        "return",
        "yield",
    }
)

# Markdown bullets, numbered steps and emphasis: prose even when short.
_MARKDOWN_PROSE = re.compile(r"^(?:[-*+]\s|\d+[.)]\s|\*\*|__\w)")

_DEFINITION_STMTS = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
)


class _Block(NamedTuple):
    """One fenced block: its language tag (lower-cased, may be empty) and dedented body."""

    lang: str
    code: str

    @property
    def is_python(self) -> bool:
        return self.lang in _PYTHON_TAGS or self.lang.startswith("python")


def extract_code(
    reply: str,
    *,
    header: str = "",
    entry_point: str | None = None,
    mode: ExtractMode = "robust",
) -> str:
    """Return the Python code in ``reply``, with the task's ``header`` merged in.

    ``header`` is the text of the task's code header before ``def <entry_point>`` (its imports
    and module-level set-up). In ``robust`` mode only the header statements the code lacks are
    prefixed, and an empty extraction stays empty (so callers can tell "no code" apart from
    "code"); in ``ccw`` mode the whole header is prefixed unconditionally, as ConvCodeWorld
    does.
    """
    if mode == "ccw":
        return header + _ccw_parse_code(reply)
    if mode != "robust":
        raise ValueError(f"unknown extraction mode: {mode!r}")
    code = _robust_extract(reply.replace("\r\n", "\n").replace("\r", "\n"), entry_point)
    if not code.strip():
        return ""
    return _merge_header(header, code) if header.strip() else code


def holds_code(reply: str, *, entry_point: str | None = None) -> bool:
    """Whether ``reply`` holds any Python at all, read as ``robust`` mode reads it: a
    Python-tagged (or untagged) fenced block, a foreign-tagged block that parses or defines
    ``entry_point``, or unfenced text left once prose is dropped. Prose, an empty reply,
    empty fences, shell or text blocks, and code made only of comments, a docstring or bare
    words hold none. Code that does not compile still counts: it is what compilation feedback
    is for. ``convtui check`` uses this to refuse a file that is not a candidate at all."""
    text = reply.replace("\r\n", "\n").replace("\r", "\n")
    found = _fenced_blocks(text)
    if not found:
        return _has_statements(_unfenced_code(text))
    return any(
        _has_statements(b.code)
        for b in found
        if b.is_python or _defines(b.code, entry_point) or _parses(b.code)
    )


def _has_statements(code: str) -> bool:
    if not code.strip():
        return False
    tree = _parse(code)
    if tree is None:
        return True  # broken code is still code
    return any(
        not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name | ast.Constant))
        for stmt in tree.body
    )


# --- ccw mode ---------------------------------------------------------------------------------


def _ccw_parse_code(reply: str) -> str:
    """ConvCodeWorld's ``parse_code`` (CCW:``convcodeworld/pot.py:408-434``), quirks included."""
    # The cut at the first triple newline is the lossy step: PEP 8's two blank lines between
    # functions end the code there (docs/harness-notes.md#code-extraction).
    code = reply.split("\n\n---\n\n", 1)[0].split("\n\n\n", 1)[0]
    match = _CCW_PYTHON_FENCE.search(code)
    if match is None:
        match = _CCW_BARE_FENCE.search(code)
    block = (match.group(1) if match else code).replace("```", "")
    # CCW reports "Empty code after parsing" and carries on with the cut text, fences and all.
    return block if block else code


# --- robust mode: finding blocks --------------------------------------------------------------


def _fenced_blocks(text: str) -> list[_Block]:
    """Split ``text`` into markdown fenced blocks, tolerating an unclosed final fence."""
    lines = text.split("\n")
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        opened = _FENCE_OPEN.match(lines[i])
        if opened is None or (opened["fence"][0] == "`" and "`" in opened["info"]):
            i += 1
            continue
        fence = opened["fence"]
        body: list[str] = []
        j = i + 1
        closed = False
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                closed = True
                break
            body.append(lines[j])
            j += 1
        if not closed:
            body = _cut_at_glued_fence(body, fence)
        blocks.append(_Block(_lang_of(opened["info"]), _tidy(body)))
        i = j + 1
    return blocks


def _cut_at_glued_fence(body: list[str], fence: str) -> list[str]:
    """Some models glue the closing fence to the last code line (``return x```). Only looked
    for when no proper closing line exists, because a fence string inside code is legal."""
    for k, line in enumerate(body):
        if line.rstrip().endswith(fence) and line.strip() != fence:
            return [*body[:k], line.rstrip()[: -len(fence)]]
    return body


def _lang_of(info: str) -> str:
    first = info.split()[0] if info.split() else ""
    return first.strip("{}.").lower()


def _tidy(lines: list[str]) -> str:
    """Dedent (fences nested in list items indent their code) and drop blank edges, but keep
    inner blank lines untouched: PEP 8's two blank lines between functions must survive."""
    code = "\n".join(_dedent(lines))
    return code.strip("\n").rstrip() + "\n" if code.strip() else ""


def _dedent(lines: list[str]) -> list[str]:
    """Remove the indentation all non-blank lines share. Unlike ``textwrap.dedent`` it leaves
    whitespace-only lines alone when there is nothing to remove: they may sit inside a string
    literal, and the code must reach the tests byte for byte."""
    indents = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    if not indents:
        return lines
    # The common prefix of all strings is the common prefix of the smallest and largest.
    low, high = min(indents), max(indents)
    size = 0
    while size < len(low) and low[size] == high[size]:
        size += 1
    prefix = low[:size]
    if not prefix:
        return lines
    return [line[len(prefix) :] if line.startswith(prefix) else line.lstrip() for line in lines]


def _robust_extract(text: str, entry_point: str | None) -> str:
    found = _fenced_blocks(text)
    if not found:
        return _unfenced_code(text)
    blocks = [b for b in found if b.code.strip()]
    if not blocks:
        # Fences with nothing inside: the reply has no code, whatever the prose around says.
        return ""
    python_blocks = [b for b in blocks if b.is_python]
    if not python_blocks:
        # Only foreign tags ("text", "bash", ...): accept one that holds the entry point or at
        # least parses, rather than feeding prose and shell lines to the compiler.
        python_blocks = [b for b in blocks if _defines(b.code, entry_point) or _parses(b.code)]
        if not python_blocks:
            return blocks[-1].code
    return _choose(python_blocks, entry_point)


def _choose(blocks: list[_Block], entry_point: str | None) -> str:
    """The block that defines the entry point (the last one, when a reply revises its code),
    plus earlier definition-only blocks it depends on; else the longest block."""
    defining = [k for k, b in enumerate(blocks) if _defines(b.code, entry_point)]
    if not defining:
        # Ties go to the first block: a later equally long block is usually a usage example.
        return max(blocks, key=lambda b: len(b.code.strip())).code
    chosen_at = defining[-1]
    chosen = blocks[chosen_at].code
    helpers = [
        b.code
        for b in blocks[:chosen_at]
        if not _defines(b.code, entry_point) and _is_needed_helper(b.code, chosen)
    ]
    return "\n\n".join(code.rstrip("\n") for code in [*helpers, chosen]) + "\n"


def _defines(code: str, entry_point: str | None) -> bool:
    if not entry_point:
        return False
    pattern = rf"^(?:async[ \t]+)?def[ \t]+{re.escape(entry_point)}[ \t]*\("
    return re.search(pattern, code, re.MULTILINE) is not None


def _parses(code: str) -> bool:
    return _parse(code) is not None


def _parse(code: str) -> ast.Module | None:
    try:
        # Model code is full of invalid escapes ("\d" in plain strings); the warnings are
        # noise here, and under `-W error` they would turn into SyntaxErrors.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return parse_python(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _is_needed_helper(code: str, chosen: str) -> bool:
    """An earlier block of imports/helpers ("first import these", "helper:") belongs to the
    solution when it binds a name the chosen block uses without binding it itself."""
    tree = _parse(code)
    if tree is None or not all(isinstance(s, _DEFINITION_STMTS) for s in tree.body):
        return False
    chosen_tree = _parse(chosen)
    already = _bound_names(chosen_tree.body) if chosen_tree else set()
    return any(
        name not in already and re.search(rf"\b{re.escape(name)}\b", chosen)
        for name in _bound_names(tree.body)
    )


# --- robust mode: unfenced replies ------------------------------------------------------------


def _unfenced_code(text: str) -> str:
    """Code in a reply without fences: the whole reply if it parses; else drop the prose lines
    before the first code-like line, then delete the prose paragraphs the parser trips on (a
    closing remark, a caption between functions)."""
    lines = text.split("\n")
    if not _parses(text):
        starts = [k for k, line in enumerate(lines) if _CODE_START.match(line)]
        lines = lines[starts[0] :] if starts else lines
        lines = _delete_prose(lines)
    return _tidy(_strip_bare_words(lines))


def _delete_prose(lines: list[str]) -> list[str]:
    lines = list(lines)
    for _ in range(_MAX_PROSE_DELETIONS):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parse_python("\n".join(lines))
        except SyntaxError as err:
            at = (err.lineno or 0) - 1
            if not (0 <= at < len(lines) and _is_prose(lines[at])):
                break
            # The whole paragraph goes at once, so a long explanation costs one parse.
            end = at
            while end < len(lines) and (_is_prose(lines[end]) or not lines[end].strip()):
                end += 1
            del lines[at:end]
        except (ValueError, RecursionError, MemoryError):
            break
        else:
            break
    # What is left may still not parse: compilation feedback will tell the model why.
    return lines


def _strip_bare_words(lines: list[str]) -> list[str]:
    """Drop a leading or trailing line that is one bare name ("Sure", "Done"): it parses, but
    would raise NameError when the tests import the code."""
    tree = _parse("\n".join(lines))
    if tree is None or not tree.body:
        return lines
    drop: set[int] = set()
    for stmt in (tree.body[0], tree.body[-1]):
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name):
            drop.add(stmt.lineno - 1)
    return [line for k, line in enumerate(lines) if k not in drop]


def _is_prose(line: str) -> bool:
    """An unindented line of words that is not the start of a statement. Deliberately narrow:
    deleting a real (broken) code line would hide the model's syntax error from it."""
    if not line.strip() or line[0].isspace() or _CODE_START.match(line):
        return False
    if _MARKDOWN_PROSE.match(line):
        return True
    words = line.split()
    first = words[0].rstrip(":,.!?")
    return (
        len(words) >= 2 and first.replace("'", "").isalpha() and first not in _NOT_PROSE_FIRST_WORDS
    )


# --- header merging ---------------------------------------------------------------------------


def _merge_header(header: str, code: str) -> str:
    """Prefix the header statements ``code`` lacks (BigCodeBench tasks need their imports and
    module-level set-up; prefixing all of it would duplicate imports the model wrote)."""
    header_tree = _parse(header)
    code_tree = _parse(code)
    if header_tree is None:
        missing = _missing_import_lines(header, code)
    elif code_tree is None:
        missing = _missing_segments(header, header_tree, code)
    else:
        missing = list(_missing_statements(header, header_tree, code_tree))
    if not missing:
        return code
    prefix = "\n".join(missing) + "\n"
    cut = _future_import_end(code_tree, code) if code_tree else 0
    # A `from __future__` import must stay first, so the header goes after it.
    return code[:cut] + prefix + ("\n" if cut else "") + code[cut:]


def _missing_statements(
    header: str, header_tree: ast.Module, code_tree: ast.Module
) -> Iterator[str]:
    imported = set(_import_bindings(_module_level(code_tree.body)))
    bound = _bound_names(code_tree.body)
    dumps = {ast.dump(s) for s in code_tree.body}
    for stmt in header_tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            keep = [
                a
                for a, key in zip(stmt.names, _alias_keys(stmt), strict=True)
                if key not in imported
            ]
            if len(keep) == len(stmt.names):
                yield _source(header, stmt)
            elif keep:
                # Part of a multi-name import is present: re-emit only the missing names.
                partial = (
                    ast.Import(names=keep)
                    if isinstance(stmt, ast.Import)
                    else ast.ImportFrom(module=stmt.module, names=keep, level=stmt.level)
                )
                yield ast.unparse(partial)
            continue
        if ast.dump(stmt) in dumps:
            continue
        names = _bound_names([stmt])
        if names and names <= bound:
            # The model defined these names itself; its version wins.
            continue
        yield _source(header, stmt)


def _missing_segments(header: str, header_tree: ast.Module, code: str) -> list[str]:
    """Fallback when the code does not parse: whole header statements whose lines are not all
    in the code already (whole statements, so a header class never arrives without its body)."""
    present = {line.strip() for line in code.split("\n")}
    segments = [_source(header, stmt) for stmt in header_tree.body]
    return [seg for seg in segments if any(ln.strip() not in present for ln in seg.split("\n"))]


def _missing_import_lines(header: str, code: str) -> list[str]:
    """Fallback when the header itself does not parse: its one-line imports the code lacks."""
    present = {line.strip() for line in code.split("\n")}
    return [
        line
        for line in header.split("\n")
        if re.match(r"(?:import|from\s+\S+\s+import)\s", line) and line.strip() not in present
    ]


def _source(text: str, node: ast.stmt) -> str:
    segment = ast.get_source_segment(text, node)
    return segment if segment is not None else ast.unparse(node)


def _alias_keys(stmt: ast.Import | ast.ImportFrom) -> list[tuple[object, ...]]:
    """What each alias of an import binds, so `import numpy as np` matches only itself."""
    if isinstance(stmt, ast.Import):
        return [("import", a.name, a.asname) for a in stmt.names]
    return [("from", stmt.level, stmt.module, a.name, a.asname) for a in stmt.names]


def _import_bindings(stmts: Iterable[ast.stmt]) -> Iterator[tuple[object, ...]]:
    for stmt in stmts:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            yield from _alias_keys(stmt)


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run at import time: the body plus the insides of module-level
    if/try/with blocks, but not function or class bodies."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _module_level(getattr(stmt, field, []) or [])
        for handler in getattr(stmt, "handlers", []) or []:
            yield from _module_level(handler.body)


def _bound_names(stmts: Iterable[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for stmt in _module_level(list(stmts)):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _future_import_end(tree: ast.Module, code: str) -> int:
    """Offset just past a leading docstring and ``from __future__`` imports, or 0 when the
    code has no future import (then a docstring may as well follow the header)."""
    end_line = 0
    has_future = False
    for k, stmt in enumerate(tree.body):
        is_doc = k == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if not (is_doc or is_future):
            break
        has_future = has_future or is_future
        end_line = stmt.end_lineno or stmt.lineno
    if not has_future:
        return 0
    lines = code.split("\n")
    return len("\n".join(lines[:end_line])) + 1
