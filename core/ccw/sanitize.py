"""BigCodeBench's ``sanitize --calibrate`` and its calibrated evaluation, as ConvCodeWorld
post-processed turn 0 (BCB-fork = sfc-gh-hhan/bigcodebench@777303b, based on
bigcode-project/bigcodebench v0.1.8):

1. calibrate (BCB-fork:``bigcodebench/sanitize.py`` ``script``): every ```` ```python ````
   fence followed by a 4-space indented line gets the task's ``complete_prompt`` inserted, so
   an answer that is only a function body becomes a whole function;
2. sanitize (``sanitize``): keep the longest run of lines that parses, then its top-level
   imports and the definitions the entry point reaches (:func:`sanitize`);
3. evaluate (BCB-fork:``bigcodebench/evaluate.py``, samples named ``*sanitized-calibrated*``):
   the program run is ``code_prompt + "\\n    pass\\n" + solution``, so the prompt's imports
   are always there (:func:`calibrated_program`).

BigCodeBench parses with tree-sitter (tree-sitter 0.21.3, tree_sitter_languages 1.10.2);
this module reproduces the same selection with Python's ``ast``. Known divergences:

- the line ranges are tested with the running Python's ``ast.parse`` (BigCodeBench ran 3.9):
  code using later syntax (``match``, ``except*``) parses here and not there;
- when no range of two or more lines parses, BigCodeBench hands the first line to
  tree-sitter's error-recovering parser; here that line is kept only if it parses, else the
  result is empty;
- tree-sitter's grammar ends a block early when a bracketed continuation line is indented
  less than the block (``return (1 +`` / ``  2)``) and drops what follows; ``ast`` does not.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from convtui.core.syntax import parse_python

__all__ = [
    "CALIBRATION_FENCE",
    "EVALUATION_STUB",
    "Turn0Code",
    "calibrate",
    "calibrated_program",
    "extract_code",
    "sanitize",
    "turn0_code",
]

# sanitize.py script():
#     solution.replace("```python\n    ", "```python\n" + complete_prompt + "    ")
CALIBRATION_FENCE = "```python\n"
_CALIBRATION_MARK = CALIBRATION_FENCE + "    "
# evaluate.py evaluate(): code_prompt + "\n    pass\n" + solution
EVALUATION_STUB = "\n    pass\n"

# What may follow a block's last statement on its line and still belong to the definition in
# tree-sitter's tree: an optional ";" then an optional comment (to the end of the line).
_LINE_TAIL = re.compile(rb"(?:[ \t\f]*;)?(?:[ \t\f]*#.*)?")


def calibrate(solution: str, complete_prompt: str) -> str:
    """``--calibrate``: an answer whose fenced code starts indented (a bare function body)
    gets the task's ``complete_prompt`` (imports, signature, docstring) in front of it."""
    return solution.replace(_CALIBRATION_MARK, CALIBRATION_FENCE + complete_prompt + "    ")


def calibrated_program(solution: str, code_prompt: str) -> str:
    """The program BigCodeBench's evaluation runs for a sanitized-calibrated solution."""
    return code_prompt + EVALUATION_STUB + solution


@dataclass(frozen=True)
class Turn0Code:
    """Turn 0 after BigCodeBench's post-processing. ``solution`` is what its
    ``-sanitized-calibrated.jsonl`` holds (ConvCodeWorld's "previous code" for turn 1);
    ``program`` is what its evaluation runs."""

    raw: str
    solution: str
    program: str


def turn0_code(raw: str, *, complete_prompt: str, code_prompt: str, entry_point: str) -> Turn0Code:
    """Calibrate, sanitize and build the evaluated program for one answer."""
    solution = sanitize(calibrate(raw, complete_prompt), entry_point)
    return Turn0Code(raw, solution, calibrated_program(solution, code_prompt))


def _tree(source: str) -> ast.Module | None:
    # BigCodeBench's syntax_check: ast.parse, failing on SyntaxError or MemoryError; the other
    # errors ast.parse can raise (null bytes, nesting too deep) count as failures here, and
    # its warnings (invalid escape sequences) are not shown.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return parse_python(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None


def _parses(source: str) -> bool:
    return _tree(source) is not None


def extract_code(text: str) -> str:
    """BigCodeBench's ``code_extract``: of all runs of two or more lines that parse, the one
    with the most non-blank lines, the earliest (by start, then end) on a tie; the first line
    if none parses. Same answer as its all-pairs search, found with far fewer parses: a start
    is tried only while it could still beat the best run, its ends from the last line down."""
    lines = text.split("\n")
    n = len(lines)
    # before[k]: non-blank lines among lines[:k]
    before = [0]
    for line in lines:
        before.append(before[-1] + (1 if line.strip() else 0))
    best, start, end = 0, 0, 0
    for i in range(n):
        if before[n] - before[i] <= best:
            break
        for j in range(n - 1, i, -1):
            count = before[j + 1] - before[i]
            if count <= best:
                break
            if not _parses("\n".join(lines[i : j + 1])):
                continue
            # The earliest end with this count: drop trailing blank lines that need not be kept.
            first = j
            k = j - 1
            while k > i and not lines[k + 1].strip():
                if _parses("\n".join(lines[i : k + 1])):
                    first = k
                k -= 1
            best, start, end = count, i, first
            break
    return "\n".join(lines[start : end + 1])


def _identifiers(node: ast.AST) -> set[str]:
    """Every identifier in the subtree, as tree-sitter's ``identifier`` nodes: names,
    attribute names, parameters, keyword-argument names, imported names, definition names."""
    found: set[str] = set()
    for sub in ast.walk(node):
        match sub:
            case ast.Name(id=name):
                found.add(name)
            case ast.Attribute(attr=name):
                found.add(name)
            case ast.arg(arg=name):
                found.add(name)
            case ast.keyword(arg=str(name)):
                found.add(name)
            case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name):
                found.add(name)
            case ast.ClassDef(name=name):
                found.add(name)
            case ast.alias(name=name, asname=asname):
                found.update(name.split("."))
                if asname:
                    found.add(asname)
            case ast.ImportFrom(module=str(module)):
                found.update(module.split("."))
            case ast.Global(names=names) | ast.Nonlocal(names=names):
                found.update(names)
            case ast.ExceptHandler(name=str(name)):
                found.add(name)
            case ast.MatchAs(name=str(name)) | ast.MatchStar(name=str(name)):
                found.add(name)
            case ast.MatchMapping(rest=str(name)):
                found.add(name)
            case ast.MatchClass(kwd_attrs=names):
                found.update(names)
    return found


def _assignment_name(node: ast.Assign | ast.AnnAssign) -> str | None:
    """tree-sitter's name for an assignment: its first child that is an identifier, which is
    the target when it is a bare name, else the value when that is a bare name (``d.x = y`` is
    named ``y``); a chained assignment's value is another assignment, so it has none."""
    if isinstance(node, ast.Assign):
        target = node.targets[0]
        value: ast.expr | None = node.value if len(node.targets) == 1 else None
    else:
        target, value = node.target, node.value
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(value, ast.Name):
        return value.id
    return None


def _indent_width(line: bytes) -> int:
    # tree-sitter-python's scanner: a space counts 1, a tab 8, a form feed starts again.
    width = 0
    for byte in line:
        if byte == 0x20:
            width += 1
        elif byte == 0x09:
            width += 8
        elif byte == 0x0C:
            width = 0
        else:
            break
    return width


class _Source:
    """The code as bytes with line starts, to cut node text by ``ast`` positions (whose
    columns are UTF-8 byte offsets)."""

    def __init__(self, code: str) -> None:
        self.data = code.encode("utf-8")
        self.lines = self.data.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def content(self, row: int) -> bytes:
        """Line ``row`` (0-based) without its "\\n" (a "\\r" stays, as in tree-sitter's text)."""
        line = self.lines[row]
        return line[:-1] if line.endswith(b"\n") else line

    def offset(self, lineno: int, col: int) -> int:
        return self.starts[lineno - 1] + col

    def text(self, start: int, end: int) -> bytes:
        return self.data[start:end]

    def statement(self, node: ast.stmt) -> tuple[int, int]:
        end_lineno = node.end_lineno or node.lineno
        end_col = node.end_col_offset or 0
        return self.offset(node.lineno, node.col_offset), self.offset(end_lineno, end_col)

    def definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
        """Where tree-sitter's node for a top-level definition ends: after its last statement,
        the rest of that line when it is only ";" and/or a comment, then, for a body on its
        own lines, the comment lines that follow (blank lines skipped) while they are
        indented at least as deep as the body."""
        row = (node.end_lineno or node.lineno) - 1
        col = node.end_col_offset or 0
        tail = _LINE_TAIL.match(self.content(row), col)
        end = self.starts[row] + (tail.end() if tail else col)
        first = node.body[0]
        first_line = self.content(first.lineno - 1)
        if first_line[: first.col_offset].strip():
            return end  # the body shares the header's line: no block, no comments join it
        depth = _indent_width(first_line)
        for after in range(row + 1, len(self.lines)):
            line = self.content(after)
            stripped = line.lstrip(b" \t\f")
            if not stripped.strip():
                continue
            if not stripped.startswith(b"#") or _indent_width(line) < depth:
                break
            end = self.starts[after] + len(line)
        return end


def _reachable(entry_point: str, deps: dict[str, set[str]]) -> set[str]:
    seen = {entry_point}
    queue = deque([entry_point])
    while queue:
        for name in deps.get(queue.popleft(), ()):
            if name not in seen:
                seen.add(name)
                queue.append(name)
    return seen


def _drop_trailing_calls(code: str, entry_point: str) -> str:
    """BigCodeBench's last step ("ad-hoc approach to remove unnecessary lines"): among the
    lines after the last one starting with a space, the first that names the entry point
    is cut, with everything after it."""
    lines = code.splitlines()
    cut: int | None = None
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith(" "):
            break
        if entry_point in lines[index]:
            cut = index
    return code if cut is None else "\n".join(lines[:cut])


# A kept definition: its name, its text, the identifiers it contains.
_Definition = tuple[str, bytes, set[str]]


def _pieces(tree: ast.Module, source: _Source) -> tuple[list[bytes], list[_Definition]]:
    """The top-level imports, and the definitions BigCodeBench keeps a name for (the first
    definition of each name, in order; unnamed assignments left out, as nothing reaches
    them), each with its text and its identifiers."""
    imports: list[bytes] = []
    definitions: list[_Definition] = []
    taken: set[str | None] = set()
    for node in tree.body:
        if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and not _future(node)):
            imports.append(source.text(*source.statement(node)))
            continue
        name: str | None
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.decorator_list:
                continue  # a decorated_definition in tree-sitter: not kept
            name = node.name
            start = source.offset(node.lineno, node.col_offset)
            text = source.text(start, source.definition(node))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            name = _assignment_name(node)
            text = source.text(*source.statement(node))
        else:
            continue
        if name in taken:
            continue
        taken.add(name)
        if name is not None:
            definitions.append((name, text, _identifiers(node)))
    return imports, definitions


def _future(node: ast.ImportFrom) -> bool:
    # tree-sitter's future_import_statement, which BigCodeBench does not count as an import.
    return node.module == "__future__" and not node.level


def _join(chunks: Iterable[bytes]) -> str:
    return b"\n".join(chunks).decode("utf-8")


def sanitize(text: str, entry_point: str) -> str:
    """BigCodeBench's ``sanitize(code, entrypoint)``: the longest parsable run of lines
    (:func:`extract_code`), then its top-level imports (``__future__`` ones excepted) and,
    in source order, the top-level functions, classes and assignments that ``entry_point``
    reaches through the identifiers they contain; decorated definitions and every other
    statement are dropped. Lines naming the entry point after the last indented line are
    cut (:func:`_drop_trailing_calls`)."""
    code = extract_code(text.strip())
    tree = _tree(code)
    if tree is None:
        return ""
    imports, definitions = _pieces(tree, _Source(code))
    reachable = _reachable(entry_point, {name: ids for name, _, ids in definitions})
    kept = [text for name, text, _ in definitions if name in reachable]
    return _drop_trailing_calls(_join([*imports, *kept]), entry_point)
