"""Turn dataset rows into :class:`~convtui.core.catalog.tasks.Task` objects and select among them.

Two suites: ``bigcodebench`` (BigCodeBench v0.1.0_hf, 1,140 unittest tasks) and ``codeif``
(CodeIF-Bench: 50 level-1 function tasks with follow-up instructions, and 74 repository tasks
of levels 1 to 3, read by :mod:`convtui.core.catalog.repo_rows`). Files are found by
:mod:`convtui.core.catalog.datasets`; this module only parses and indexes them.
"""

from __future__ import annotations

import ast
import difflib
import gzip
import json
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, get_args

from convtui.core.catalog.datasets import CODEIF_FILES, DATASETS, locate
from convtui.core.catalog.repo_rows import as_the_authors_held_them, is_repo_row, parse_repo_row
from convtui.core.catalog.tasks import Requirement, Task, TestSpec
from convtui.core.catalog.tasks import Suite as Suite
from convtui.core.catalog.tasks import SuiteOrAll as SuiteOrAll
from convtui.core.errors import ConvtuiError, UnknownTaskError
from convtui.core.syntax import parse_python

# --suite takes one suite, or all of them (SuiteOrAll); load_catalog also reads a
# comma-separated list.
SUITES: tuple[str, ...] = get_args(Suite)
# The id prefix of each suite, as ids are written in data, logs and reports.
SUITE_PREFIX: dict[str, str] = {"bigcodebench": "BigCodeBench", "codeif": "CodeIF"}
_PREFIX_SUITE: dict[str, str] = {p.lower(): s for s, p in SUITE_PREFIX.items()}

# Appended to unknown-id messages; front ends list tasks with this command.
LIST_TASKS_HINT = "list task ids with `convtui tasks list`"

_STDLIB: frozenset[str] = frozenset(sys.stdlib_module_names)
_GZIP_MAGIC = b"\x1f\x8b"
# Imports inside snippets that do not parse (a few CodeIF rows hold broken ones).
_IMPORT_RE = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.MULTILINE)
_QUOTED_NAME_RE = re.compile(r"['\"`]([A-Za-z_]\w*)['\"`]")
_DEF_RE = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)", re.MULTILINE)


def suite_of(task_id: str) -> str | None:
    """The suite a written id names by its prefix (``CodeIF/11`` → ``codeif``), None for a
    bare number or an unknown prefix."""
    prefix, sep, _ = task_id.strip().rpartition("/")
    return _PREFIX_SUITE.get(prefix.strip().lower()) if sep else None


class BadSelectionError(ConvtuiError):
    """A task selection (ids spec, library filter, suite name) is malformed or selects nothing."""


class DataFormatError(ConvtuiError):
    """A dataset file is not in the expected format (bad JSON, missing fields)."""


# --------------------------------------------------------------------------- reading files


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of a JSONL file, gzip-compressed or not.

    Compression is detected from the content, not the name, because ``--data`` may point at a
    file under any name.
    """
    raw = Path(path).read_bytes()
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataFormatError(f"{path}: corrupt gzip data ({exc})") from exc
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise DataFormatError(f"{path}:{lineno}: not valid JSON ({exc})") from exc
        if not isinstance(row, dict):
            raise DataFormatError(f"{path}:{lineno}: expected a JSON object per line")
        yield _surrogates_escaped(row) if _ESCAPED_SURROGATE in line.lower() else row


# A JSON ``\udc00`` with no partner decodes to a lone surrogate, which no UTF-8 file, parser or
# hash accepts. v0's CodeIF/1002 has one in a test's string literal (``'http://\udc00.com'``):
# written back as the escape it was, the test reads as its authors wrote it.
_ESCAPED_SURROGATE = b"\\ud"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogates_escaped(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings written back as the escape it was
    (six characters: a backslash, ``u`` and four hex digits, e.g. ``\\udc00``)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", value)
    if isinstance(value, list):
        return [_surrogates_escaped(v) for v in value]
    if isinstance(value, dict):
        return {k: _surrogates_escaped(v) for k, v in value.items()}
    return value


def _field(row: dict[str, Any], name: str, where: str) -> Any:
    try:
        return row[name]
    except KeyError:
        raise DataFormatError(f"{where}: missing field {name!r}") from None


# --------------------------------------------------------------------------- BigCodeBench


def _parse_libs(value: Any, where: str) -> tuple[str, ...]:
    # The release stores libs as the repr of a Python list ("['random', 'os']"); other copies
    # of the data (e.g. through `datasets`) may already hold a list.
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value) if value.strip() else []
        except (ValueError, SyntaxError) as exc:
            raise DataFormatError(f"{where}: field 'libs' is not a list literal") from exc
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise DataFormatError(f"{where}: field 'libs' is not a list of names")
    return tuple(value)


def parse_bigcodebench(row: dict[str, Any], where: str = "BigCodeBench row") -> Task:
    """One BigCodeBench row as a :class:`Task` (the Instruct variant's prompt)."""
    task_id = _field(row, "task_id", where)
    where = f"{where} ({task_id})"
    code_prompt = _field(row, "code_prompt", where)
    return Task(
        id=task_id,
        suite="bigcodebench",
        prompt=_field(row, "instruct_prompt", where),
        code_header=code_prompt,
        entry_point=_field(row, "entry_point", where),
        tests=TestSpec("unittest", source=_field(row, "test", where)),
        # BigCodeBench's canonical solutions are bodies only; the header makes them runnable.
        ground_truth=code_prompt + _field(row, "canonical_solution", where),
        libs=_parse_libs(_field(row, "libs", where), where),
        complete_prompt=row.get("complete_prompt", ""),
    )


def load_bigcodebench(path: Path) -> list[Task]:
    """All tasks of a BigCodeBench JSONL(.gz) file, in file order."""
    return [
        parse_bigcodebench(row, f"{path}:{i}") for i, row in enumerate(read_jsonl(path), start=1)
    ]


# --------------------------------------------------------------------------- CodeIF-Bench


def _nl(text: str) -> str:
    # The reference code comes with Windows line endings; normalise so that code shown to
    # models, diffs and line numbers in tracebacks are what a Python user expects.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _snippets(value: Any, where: str) -> list[str]:
    # A few rows hold a single snippet as a bare string instead of a one-item list;
    # iterating it would yield characters.
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataFormatError(f"{where}: expected a list of test snippets")
    return [_nl(v) for v in value]


def _slug(category: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", category.lower()).strip("_")


def _parse_quietly(source: str) -> ast.Module:
    # Dataset code has invalid escapes like "\w" in plain strings; parsing it must not spray
    # SyntaxWarnings (DeprecationWarnings before 3.12) at whoever loads the catalog.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return parse_python(source)


def imported_modules(source: str) -> set[str]:
    """Top-level names of the modules ``source`` imports (regex fallback if it won't parse)."""
    try:
        tree = _parse_quietly(source)
    except SyntaxError:
        return {(m1 or m2).split(".")[0] for m1, m2 in _IMPORT_RE.findall(source)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def _top_level_functions(code: str) -> list[str]:
    try:
        tree = _parse_quietly(code)
    except SyntaxError:
        return _DEF_RE.findall(code)
    return [
        node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def _codeif_entry_point(prompt: str, code: str, tests: Sequence[str], where: str) -> str:
    """The function a CodeIF task asks for.

    Usually the first top-level function of the reference code, but in a few tasks the code
    defines helpers first (e.g. ``str_to_list`` before ``remove_dirty_chars``), so the name
    the prompt quotes wins, then the first defined function the tests call.
    """
    functions = _top_level_functions(code)
    if not functions:
        raise DataFormatError(f"{where}: reference code defines no top-level function")
    defined = set(functions)
    for name in _QUOTED_NAME_RE.findall(prompt):
        if name in defined:
            return name
    for snippet in tests:
        for name in re.findall(r"\b([A-Za-z_]\w*)\s*\(", snippet):
            if name in defined:
                return name
    return functions[0]


def parse_codeif(row: dict[str, Any], where: str = "CodeIF row") -> Task:
    """One CodeIF-Bench L1 row as a :class:`Task`, its follow-up instructions as requirements."""
    number = _field(row, "task_id", where)
    where = f"{where} (task_id {number})"
    prompt = _nl(_field(row, "prompt", where))
    code = _nl(_field(row, "code", where))
    base = _snippets(_field(row, "test", where), f"{where} field 'test'")

    requirements: list[Requirement] = []
    sources = [code, *base]
    raw_reqs = _field(row, "requirements", where)
    if not isinstance(raw_reqs, dict):
        raise DataFormatError(f"{where}: field 'requirements' is not an object")
    for category, spec in raw_reqs.items():
        req_where = f"{where} requirement {category!r}"
        unit_test = _field(spec, "unit_test", req_where)
        snippets = _snippets(unit_test, req_where)
        sources.extend(snippets)
        slug = _slug(category)
        requirements.append(
            Requirement(
                category=category,
                text=_nl(_field(spec, "requirement", req_where)),
                tests=TestSpec(
                    "snippets",
                    snippets=tuple((f"{slug}_{i}", s) for i, s in enumerate(snippets, start=1)),
                ),
                one_string=isinstance(unit_test, str),
            )
        )

    # Only third-party imports count: the executor needs them installed (mccabe and
    # pycodestyle for the Code Complexity and Code Standard checks).
    third_party = set().union(*(imported_modules(s) for s in sources)) - _STDLIB
    return Task(
        id=f"{SUITE_PREFIX['codeif']}/{number}",
        suite="codeif",
        prompt=prompt,
        code_header="",
        entry_point=_codeif_entry_point(prompt, code, base, where),
        tests=TestSpec(
            "snippets", snippets=tuple((f"test_{i}", s) for i, s in enumerate(base, start=1))
        ),
        ground_truth=code,
        libs=tuple(sorted(third_party)),
        requirements=tuple(requirements),
        instruction_order=tuple(row.get("multi-turn", ())),
    )


def load_codeif(path: Path) -> list[Task]:
    """All tasks of a CodeIF-Bench JSONL file, function or repository rows, in file order."""
    tasks: list[Task] = []
    place = 0
    for i, row in enumerate(read_jsonl(path), start=1):
        if is_repo_row(row):
            place += 1
            tasks.append(parse_repo_row(row, place, f"{path}:{i}"))
        else:
            tasks.append(parse_codeif(row, f"{path}:{i}"))
    return as_the_authors_held_them(tasks) if place else tasks


def codeif_files(data: Path | str | None = None) -> list[Path]:
    """The CodeIF-Bench files to read: ``data`` when it is one file (any of them, the ``-v0``
    ones included), else the function file and the three repository-level files found as
    :func:`convtui.core.catalog.datasets.locate` finds a dataset (``data`` a folder holding
    them)."""
    if data is not None and Path(data).expanduser().is_file():
        return [Path(data).expanduser()]
    return [locate(source, data) for source in CODEIF_FILES]


LOADERS: dict[str, Callable[[Path], list[Task]]] = {
    "bigcodebench": load_bigcodebench,
    "codeif": load_codeif,
}


# --------------------------------------------------------------------------- selection


def parse_suites(suite: str) -> tuple[str, ...]:
    """``"bigcodebench"``, ``"codeif"``, ``"all"`` or a comma list, as suite names in order."""
    wanted: list[str] = []
    for part in suite.split(","):
        name = part.strip().lower()
        names = SUITES if name == "all" else (name,)
        for n in names:
            if n not in SUITES:
                raise BadSelectionError(
                    f"unknown suite {part.strip()!r}; choose one of {', '.join(SUITES)} or all"
                )
            if n not in wanted:
                wanted.append(n)
    if not wanted:
        raise BadSelectionError(f"no suite given; choose one of {', '.join(SUITES)} or all")
    # Canonical order, so iteration order does not depend on how the suites were spelled.
    return tuple(s for s in SUITES if s in wanted)


_RANGE_RE = re.compile(r"^(\d+)\s*-\s*(\d+)$")


def parse_id_spec(spec: str) -> tuple[list[tuple[int, int]], list[str]]:
    """Split an ids spec like ``0-9,42,CodeIF/12`` into inclusive number ranges and full ids.

    Raises :class:`BadSelectionError` for anything else.
    """
    ranges: list[tuple[int, int]] = []
    full_ids: list[str] = []
    parts = [p.strip() for p in spec.split(",")]
    if not spec.strip() or any(not p for p in parts):
        raise BadSelectionError(
            f"bad task selection {spec!r}: empty item; write numbers and ranges like 0-9,42,100-110"
        )
    for part in parts:
        if part.isdecimal():
            ranges.append((int(part), int(part)))
        elif m := _RANGE_RE.match(part):
            lo, hi = int(m[1]), int(m[2])
            if lo > hi:
                raise BadSelectionError(
                    f"bad task selection {spec!r}: range {part} runs backwards; write {hi}-{lo}"
                )
            ranges.append((lo, hi))
        elif "/" in part:
            full_ids.append(part)
        else:
            raise BadSelectionError(
                f"bad task selection {spec!r}: cannot read {part!r}; "
                "write numbers and ranges like 0-9,42,100-110"
            )
    return ranges, full_ids


def _split_libs(libs: Iterable[str]) -> list[str]:
    # Accept both repeated options and comma lists (`--libs pandas,numpy`).
    return [name.strip() for item in libs for name in item.split(",") if name.strip()]


class TaskCatalog:
    """The loaded tasks of one or more suites, indexed by id, iterated in numeric order."""

    def __init__(self, tasks: Iterable[Task]) -> None:
        suite_rank = {s: i for i, s in enumerate(SUITES)}
        self._tasks: list[Task] = sorted(tasks, key=lambda t: (suite_rank[t.suite], t.number))
        self._by_key: dict[tuple[str, int], Task] = {}
        for task in self._tasks:
            key = (task.suite, task.number)
            if key in self._by_key:
                raise DataFormatError(f"duplicate task id {task.id}")
            self._by_key[key] = task
        self.suites: tuple[str, ...] = tuple(
            s for s in SUITES if any(t.suite == s for t in self._tasks)
        )

    def __iter__(self) -> Iterator[Task]:
        return iter(self._tasks)

    def __len__(self) -> int:
        return len(self._tasks)

    def __contains__(self, task_id: object) -> bool:
        return isinstance(task_id, str) and self._key(task_id) in self._by_key

    def __getitem__(self, task_id: str) -> Task:
        return self.get(task_id)

    def __repr__(self) -> str:
        return f"TaskCatalog(suites={self.suites!r}, tasks={len(self)})"

    @property
    def ids(self) -> list[str]:
        """Every task id, in iteration order."""
        return [t.id for t in self._tasks]

    def libraries(self) -> list[str]:
        """Every library some task uses, sorted case-insensitively."""
        return sorted({lib for t in self._tasks for lib in t.libs}, key=str.lower)

    def _key(self, task_id: str) -> tuple[str, int] | None:
        text = task_id.strip()
        if text.isdecimal():
            # A bare number means BigCodeBench (the common case), or the only suite loaded.
            if "bigcodebench" in self.suites:
                return ("bigcodebench", int(text))
            if len(self.suites) == 1:
                return (self.suites[0], int(text))
            return None
        prefix, sep, number = text.rpartition("/")
        suite = _PREFIX_SUITE.get(prefix.strip().lower())
        if not sep or suite is None or not number.strip().isdecimal():
            return None
        return (suite, int(number))

    def get(self, task_id: str) -> Task:
        """The task called ``task_id``: ``BigCodeBench/13``, ``bigcodebench/13`` or ``13``.

        Raises :class:`UnknownTaskError` naming the nearest ids.
        """
        key = self._key(task_id)
        if key is not None and key in self._by_key:
            return self._by_key[key]
        raise UnknownTaskError(self._unknown_message(task_id, key))

    def _unknown_message(self, task_id: str, key: tuple[str, int] | None) -> str:
        if key is not None and key[0] not in self.suites:
            return (
                f"unknown task {task_id!r}: suite {key[0]} is not loaded "
                f"(loaded: {', '.join(self.suites) or 'none'}); {LIST_TASKS_HINT}"
            )
        query = task_id.strip()
        if key is not None:
            query = f"{SUITE_PREFIX[key[0]]}/{key[1]}"
        near = difflib.get_close_matches(query, self.ids, n=3, cutoff=0.5)
        if not near:
            near = difflib.get_close_matches(query.lower(), [i.lower() for i in self.ids], n=3)
            near = [self.get(n).id for n in near]
        hint = f"nearest: {', '.join(near)}" if near else "no similar id"
        spans = ", ".join(self._span(s) for s in self.suites)
        return f"unknown task {task_id!r} ({hint}; ids run {spans}); {LIST_TASKS_HINT}"

    def _span(self, suite: str) -> str:
        # Grouped by thousands: CodeIF-Bench's repository levels are numbered 1001-, 2001-
        # and 3001- (core/catalog/repo_rows.py), far from its function tasks.
        groups: dict[int, list[int]] = {}
        for s, n in self._by_key:
            if s == suite:
                groups.setdefault(n // 1000 if suite == "codeif" else 0, []).append(n)
        prefix = SUITE_PREFIX[suite]
        return ", ".join(
            f"{prefix}/{min(numbers)} to {prefix}/{max(numbers)}"
            for _, numbers in sorted(groups.items())
        )

    def select(
        self,
        ids: str | None = None,
        libs: Sequence[str] | None = None,
        stdlib_only: bool = False,
    ) -> list[Task]:
        """The tasks matching every given filter, in catalog order, without duplicates.

        ``ids``: a spec like ``0-19``, ``13`` or ``0-9,42,100-110`` of task numbers (in every
        loaded suite) and full ids (``CodeIF/12``). ``libs``: keep tasks using all of these
        libraries (names compared case-insensitively; comma lists accepted). ``stdlib_only``:
        keep tasks whose libraries all belong to the standard library.
        """
        chosen: Iterable[Task] = self._tasks
        if ids is not None:
            ranges, full_ids = parse_id_spec(ids)
            named = {self.get(i).id for i in full_ids}
            chosen = [
                t for t in chosen if t.id in named or any(lo <= t.number <= hi for lo, hi in ranges)
            ]
            if not chosen:
                spans = ", ".join(self._span(s) for s in self.suites)
                raise BadSelectionError(f"task selection {ids!r} matches no task (ids run {spans})")
        if libs:
            wanted = self._resolve_libs(_split_libs(libs))
            chosen = [t for t in chosen if wanted <= {lib.lower() for lib in t.libs}]
        if stdlib_only:
            chosen = [t for t in chosen if all(lib.split(".")[0] in _STDLIB for lib in t.libs)]
        return list(chosen)

    def _resolve_libs(self, names: list[str]) -> set[str]:
        # An unknown library name is almost always a typo (`panda`, `sklearn` vs
        # `scikit-learn`): say so rather than silently select nothing.
        known = {lib.lower(): lib for lib in self.libraries()}
        wanted: set[str] = set()
        for name in names:
            low = name.lower()
            if low not in known:
                near = difflib.get_close_matches(low, list(known), n=3, cutoff=0.6)
                hint = (
                    f"did you mean {', '.join(known[n] for n in near)}?"
                    if near
                    else "no loaded task uses a similar name"
                )
                raise BadSelectionError(f"no loaded task uses library {name!r}; {hint}")
            wanted.add(low)
        return wanted


def load_catalog(suite: str = "bigcodebench", data: Path | str | None = None) -> TaskCatalog:
    """Load the tasks of ``suite`` (``bigcodebench``, ``codeif``, ``all`` or a comma list).

    ``data`` is as for :func:`convtui.core.catalog.datasets.locate`; with several suites it must
    be a directory, since one file holds one dataset."""
    suites = parse_suites(suite)
    if data is not None and len(suites) > 1 and Path(data).expanduser().is_file():
        raise BadSelectionError(
            f"--data {data} is a file but suites {', '.join(suites)} were asked for; "
            "pass a directory holding all their files"
        )
    tasks: list[Task] = []
    for name in suites:
        if name == "codeif":
            for path in codeif_files(data):
                tasks.extend(load_codeif(path))
        else:
            tasks.extend(LOADERS[name](locate(DATASETS[name], data)))
    return TaskCatalog(tasks)
