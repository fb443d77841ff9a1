"""``convtui sessions import DIR``: a folder in ConvCodeWorld's static layout (its published
ConvCodeBench logs, or our own ``sessions export --format convcodebench``) loaded into the
store, one run per log set (reference model x Ω x simulator), one session per task.

Each run is a ``live`` run of ``--protocol convcodeworld`` (that is what the files record),
with ``runs.origin`` naming the folder. A task's turn k is file k's code with BigCodeBench's
verdict from the eval file beside it, and the feedback recorded in file k
(``Turn.received``: what turn k was given about turn k-1's code). The verdict is rebuilt as
an ``ExecResult`` whose execution feedback renders as ``pot.py``'s ``get_execution_feedback``
renders the eval's ``details``. A line with no compilation feedback after turn 0 was handed
on unchanged ("Already solved", or a session that stopped): the session ends before it.
Importing the same folder again adds nothing.

A folder that convtui exported (``sessions export --format convcodebench``) holds our
manifest beside the files (sessions/static_logs.py). A set whose files are byte for byte the
ones it lists is given back as it was recorded instead: the run takes the recorded config (its
protocol, model spec, Ω, context ...), its sessions the recorded user, annotator, status and
error, and each turn its recorded verdict, feedback and notes, with the code from the files.
A set whose files changed since (or an export from before the manifest held turns) is read as
ConvCodeWorld's logs, like any other.

The turn-0 file may carry any name BigCodeBench gives an instruct-split sample file (any
backend, ``vllm`` or ``openai`` among them, temperature, sample count and version: see
sessions/ccw_files.py); it belongs to the turn files whose model one name spells both ways,
as ConvCodeWorld's scripts derive both from one ``--model_name``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convtui.core.catalog.loaders import SUITE_PREFIX, load_catalog
from convtui.core.catalog.tasks import Task
from convtui.core.execution.types import ExecResult, TestIssue, TestOutcome
from convtui.core.feedback.evaluate import FeedbackSettings, render_execution
from convtui.core.feedback.render import compile_feedback, declared_test_names
from convtui.core.settings.config import SessionConfig, SessionStatus, Turn, TurnFeedback
from convtui.core.settings.protocol import build_config
from convtui.sessions.ccw_files import (
    TURN0_DIR,
    LogSetName,
    Turn0File,
    eval_file,
    paired_name,
    parse_turn0_file,
    parse_turn_file,
)
from convtui.sessions.codec import config_from_json, run_config_hash
from convtui.sessions.errors import ImportFormatError
from convtui.sessions.records import UserKind
from convtui.sessions.static_logs import MANIFEST, STATIC_FORMAT
from convtui.sessions.store import Store
from convtui.sessions.transcript import turn_from_record


@dataclass(frozen=True)
class FolderSet:
    """One log set found in a folder: its turn-0 file and its turn files, in turn order."""

    name: LogSetName
    model: str  # as the turn-0 file spells it, "/" restored
    files: tuple[Path, ...]  # turn 0, 1, ..., N-1


@dataclass(frozen=True)
class ImportedSet:
    run_id: str
    name: str
    model: str
    feedback: str
    sessions: int
    turns: int
    already: bool  # imported before: nothing was added
    protocol: str = "convcodeworld"  # the imported run's
    restored: bool = False  # given back as our export's manifest recorded it


@dataclass(frozen=True)
class RecordedSet:
    """What our export's manifest recorded of one log set whose files it lists unchanged."""

    config: SessionConfig
    user_kind: UserKind
    sessions: Mapping[str, Mapping[str, Any]]  # task id -> the manifest's entry
    digest: str  # of the set's files: two different exports of one set are two runs
    code_version: str | None  # of the runs that recorded them, where that was one version


def find_sets(folder: Path) -> list[FolderSet]:
    """The log sets under ``folder`` (outputs of a static run, under ``static/``, are not
    logs), or one clear error saying what is missing."""
    if not folder.is_dir():
        raise ImportFormatError(f"{folder} is not a folder in ConvCodeWorld's static layout")
    turn0 = [
        (path, sample)
        for path in sorted(folder.rglob("*.jsonl"))
        if "static" not in path.relative_to(folder).parts
        and (sample := parse_turn0_file(path.name)) is not None
    ]
    turns: dict[LogSetName, dict[int, Path]] = defaultdict(dict)
    for path in sorted(folder.rglob("bigcodebench_*.jsonl")):
        parsed = parse_turn_file(path.name)
        if parsed is not None and "static" not in path.relative_to(folder).parts:
            turns[parsed[0]][parsed[1]] = path
    if not turns:
        raise ImportFormatError(
            f"{folder} holds no ConvCodeWorld turn file (results/v0.3.6/bigcodebench_<model>_CF"
            "...jsonl): give the folder that holds results/ and bigcodebench/"
        )
    found = []
    for name, by_turn in sorted(turns.items(), key=lambda item: item[0].stem):
        zero, model = _turn0_of(folder, name, turn0)
        last = max(by_turn)
        missing = [k for k in range(1, last + 1) if k not in by_turn]
        if missing:
            raise ImportFormatError(
                f"{name.stem}: turn file{'s' if len(missing) > 1 else ''} "
                f"{', '.join(str(k) for k in missing)} missing (ITER=k); every turn up to "
                f"{last} is needed"
            )
        files = (zero, *(by_turn[k] for k in range(1, last + 1)))
        found.append(FolderSet(name, model, files))
    return found


def _turn0_of(
    folder: Path, name: LogSetName, turn0: Sequence[tuple[Path, Turn0File]]
) -> tuple[Path, str]:
    """The turn-0 sample file of ``name``'s model, and the model's name: the one name that
    spells both files as ConvCodeWorld's scripts do (``/`` as ``--`` in the sample file, as
    ``_`` in turn files), whatever backend, temperature and BigCodeBench version wrote the
    sample file. Exports of earlier convtui versions spelled other characters ``_`` on each
    side separately: they still pair, by that rule."""
    # Best first: the whole prefix pairs, then one without BigCodeBench 0.2's revision, then
    # the legacy rule.
    ranked: dict[int, list[tuple[Path, str]]] = defaultdict(list)
    for path, parsed in turn0:
        spellings = parsed.spellings()
        for rank, spelling in enumerate(spellings):
            model = paired_name(spelling, name.model)
            if model is not None:
                ranked[rank].append((path, model))
                break
        else:
            if _legacy_part(parsed.prefix) == name.model:
                ranked[_LEGACY].append((path, parsed.prefix.replace("--", "/")))
    candidates = ranked[min(ranked)] if ranked else []
    if not candidates:
        raise ImportFormatError(
            f"{folder} has {name.stem}.jsonl but not its turn-0 file ({TURN0_DIR}/<model, / "
            "as -->--bigcodebench-instruct--<backend>-<temperature>-<n>-sanitized-calibrated"
            ".jsonl, as BigCodeBench names it)"
        )
    if len(candidates) > 1:
        shown = " and ".join(path.name for path, _ in candidates[:2])
        raise ImportFormatError(
            f"{name.stem}: more than one turn-0 file could be its model's ({shown}): keep "
            "the one the logs started from"
        )
    return candidates[0]


_LEGACY = 9  # the legacy rule's rank: after every spelling (Turn0File.spellings gives 3 at most)


def _legacy_part(prefix: str) -> str:
    """How convtui before file_model_name spelled a turn-0 prefix's model in turn files."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", prefix.replace("--", "/")).strip("_") or "model"


def import_folder(
    store: Store, folder: Path, tasks: Mapping[str, Task], *, selected: Sequence[FolderSet]
) -> list[ImportedSet]:
    """Import ``selected`` sets (from :func:`find_sets`) of ``folder`` into ``store``."""
    return [_import_set(store, folder, found, tasks) for found in selected]


def import_logs(store: Store, folder: Path, data: Path | None = None) -> list[ImportedSet]:
    """Import every log set of ``folder`` into ``store`` (again: nothing new), with the tasks
    they name read from the catalog (``data`` as :func:`load_catalog` takes it)."""
    found = find_sets(folder)
    return import_folder(store, folder, _logged_tasks(found, data), selected=found)


def _logged_tasks(found: Sequence[FolderSet], data: Path | None) -> dict[str, Task]:
    """The catalog's tasks that the turn-0 files of ``found`` name."""
    ids: set[str] = set()
    for folder_set in found:
        with folder_set.files[0].open(encoding="utf-8") as handle:
            for text in handle:
                if text.strip():
                    try:
                        ids.add(str(json.loads(text)["task_id"]))
                    except (ValueError, KeyError, TypeError):
                        raise ImportFormatError(
                            f"{folder_set.files[0]}: a line without a task_id"
                        ) from None
    prefixes = {task_id.split("/")[0] for task_id in ids}
    suites = [suite for suite, prefix in SUITE_PREFIX.items() if prefix in prefixes]
    if not suites:
        raise ImportFormatError(f"the logs hold tasks of no known suite: {sorted(ids)[:3]}")
    catalog = load_catalog(",".join(suites), data)
    # Ids the catalog lacks are left out here: the import names the first one in its error.
    return {task_id: catalog.get(task_id) for task_id in ids if task_id in catalog}


def set_config(found: FolderSet) -> SessionConfig:
    feedback = found.name.feedback
    simulator = None
    if feedback.verbal != "none":
        simulator = found.name.by if found.name.by else found.model
    return build_config(
        "convcodeworld",
        model=found.model,
        feedback=feedback,
        simulator=simulator,
        turns=len(found.files) - 1,
    )


def _import_set(
    store: Store, folder: Path, found: FolderSet, tasks: Mapping[str, Task]
) -> ImportedSet:
    lines = [_lines(path, first=k == 0) for k, path in enumerate(found.files)]
    evals = [_evals(path) for path in found.files]
    task_ids = list(lines[0])
    for task_id in task_ids:
        if task_id not in tasks:
            raise ImportFormatError(
                f"{found.files[0]}: task {task_id} is not in the task catalog "
                "(is CONVTUI_DATA_DIR set to the BigCodeBench data?)"
            )
    recorded = recorded_set(folder, found, task_ids)
    config = set_config(found) if recorded is None else recorded.config
    label = config.feedback.label
    selection = f"imported;{found.name.stem}"
    if recorded is not None:
        selection += f";{recorded.digest}"
    key = run_config_hash(config, [label])

    def imported(run_id: str, already: bool) -> ImportedSet:
        return ImportedSet(
            run_id,
            found.name.stem,
            config.model if recorded else found.model,
            label,
            len(task_ids),
            len(lines),
            already,
            config.protocol,
            recorded is not None,
        )

    existing = store.find_finished_run(key, selection)
    if existing is not None:
        return imported(existing, True)
    run_id = store.create_run(
        "live",
        config,
        selection,
        task_ids,
        code_version=None if recorded is None else recorded.code_version,
        origin=f"imported from {folder.resolve()}",
        user_kind=None if recorded is None else recorded.user_kind,
        annotators=None
        if recorded is None
        else {t: entry.get("annotator") for t, entry in recorded.sessions.items()},
    )
    settings = FeedbackSettings.of(config)
    for row in store.run_sessions(run_id):
        if recorded is not None:
            _restore_session(store, row.id, recorded.sessions[row.task_id], lines, found)
            continue
        task = tasks[row.task_id]
        turns = _task_turns(row.task_id, task, lines, evals, found, settings)
        for turn in turns:
            status: SessionStatus = "running"
            if turn.idx == turns[-1].idx:
                status = _final_status(turns, config.max_turns)
            store.save_turn(row.id, turn, status)
    store.finish_run(run_id, "done")
    return imported(run_id, False)


def recorded_set(folder: Path, found: FolderSet, task_ids: Sequence[str]) -> RecordedSet | None:
    """What our manifest in ``folder`` recorded of ``found``, when it lists the set and every
    one of its files unchanged (its SHA-256); None otherwise, and for ConvCodeWorld's own
    logs. A manifest that lists the files unchanged but not as convtui writes it is refused:
    it is an export that was damaged, not someone else's logs."""
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != STATIC_FORMAT:
        return None
    try:
        hashes = {entry["name"]: entry["sha256"] for entry in manifest["files"]}
        where = found.files[-1].parent.relative_to(folder).as_posix()
        entry = next(
            (
                entry
                for entry in manifest["log_sets"]
                if (entry["name"], entry["folder"]) == (found.name.stem, where)
            ),
            None,
        )
        names = [
            p.relative_to(folder).as_posix()
            for path in found.files
            for p in (path, path.with_name(eval_file(path.name)))
        ]
        digests = [_sha256(folder / name) for name in names]
        if entry is None or any(hashes.get(n) != d for n, d in zip(names, digests, strict=True)):
            return None
        sessions = {str(s["task_id"]): s for s in entry["sessions"]}
        if "turns" not in next(iter(sessions.values()), {}):
            return None  # written before the manifest kept turns: nothing more to restore
        if sorted(sessions) != sorted(task_ids):
            raise ValueError("its sessions are not the files' tasks")
        return RecordedSet(
            config_from_json(json.dumps(entry["config"])),
            entry["user_kind"],
            sessions,
            hashlib.sha256("".join(digests).encode()).hexdigest()[:16],
            versions[0] if len(versions := entry["code_versions"]) == 1 else None,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ImportFormatError(
            f"{path} lists {found.name.stem}'s files unchanged but is not as convtui writes "
            f"it ({error}): remove it to import the files as ConvCodeWorld's logs"
        ) from None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _restore_session(
    store: Store,
    session_id: str,
    entry: Mapping[str, Any],
    lines: Sequence[Mapping[str, dict[str, Any]]],
    found: FolderSet,
) -> None:
    """Record a session's turns as the manifest recorded them, each with turn k's code from
    file k, and end it as it ended."""
    records = entry["turns"]
    if len(records) > len(lines):
        raise ImportFormatError(
            f"{found.name.stem}: the manifest has {len(records)} turns of {entry['task_id']} "
            f"and the files {len(lines)}"
        )
    for k, record in enumerate(records):
        code = str(lines[k][entry["task_id"]].get("solution") or "")
        last = k + 1 == len(records)
        store.save_turn(
            session_id, turn_from_record(record, code), entry["status"] if last else "running"
        )
    if entry.get("error"):
        store.set_session_status(session_id, entry["status"], entry["error"])


def _final_status(turns: Sequence[Turn], max_turns: int) -> SessionStatus:
    if turns[-1].passed:
        return "solved"
    return "exhausted" if len(turns) >= max_turns else "stalled"


def _task_turns(
    task_id: str,
    task: Task,
    lines: Sequence[Mapping[str, dict[str, Any]]],
    evals: Sequence[Mapping[str, dict[str, Any]]],
    found: FolderSet,
    settings: FeedbackSettings,
) -> list[Turn]:
    turns: list[Turn] = []
    names = _test_names(task)
    for k, (file_lines, file_evals) in enumerate(zip(lines, evals, strict=True)):
        where = found.files[k].name
        line = file_lines.get(task_id)
        entry = file_evals.get(task_id)
        if line is None or entry is None:
            missing = where if line is None else eval_file(where)
            raise ImportFormatError(f"{missing} has no entry for {task_id}")
        if k > 0 and line.get("compilation_feedback") is None:
            break  # handed on unchanged: the session ended at turn k-1
        result = result_from_eval(entry, where, names)
        code = str(line.get("solution") or "")
        compiled = compile_feedback(code, compat="ccw")
        received = None
        if k > 0:
            user = line.get("user_feedback")
            source = f"simulator:{found.name.feedback.verbal}:{found.name.by or found.model}"
            received = TurnFeedback(
                compilation=line.get("compilation_feedback"),
                execution=line.get("execution_feedback"),
                user=user,
                user_source=source if user is not None else "none",
            )
        log = line.get("log")
        turns.append(
            Turn(
                idx=k,
                reply=log if isinstance(log, str) else "",
                code=code,
                compiled=compiled.ok,
                compile_feedback=compiled.text,
                execution=result,
                execution_feedback=(
                    render_execution(task, result, settings) if compiled.ok else None
                ),
                notes=(f"imported from ConvCodeWorld's {where}",),
                received=received,
            )
        )
    return turns


def _test_names(task: Task) -> tuple[str, ...] | None:
    """The names BigCodeBench runs for ``task`` (the ``test*`` methods of its ``TestCases``),
    or its snippets' names; None when its test module does not parse."""
    if task.tests.kind == "snippets":
        return tuple(name for name, _ in task.tests.snippets)
    try:
        return declared_test_names(task.tests.source)
    except SyntaxError:
        return None


def result_from_eval(
    entry: Mapping[str, Any], where: str = "eval", test_names: Collection[str] | None = None
) -> ExecResult:
    """An ``ExecResult`` whose BigCodeBench ``details`` (``feedback.failure_details``) are
    ``entry``'s, in the same order, so that its execution feedback renders as the reference's.

    BigCodeBench fills ``details[test.id().split(".")[-1]] = trace`` over unittest's
    ``failures + errors`` (bigcode-project/bigcodebench: bigcodebench/eval/__init__.py,
    ``unsafe_execute``): failures before errors, each group in run order (tests by name, a
    test's failing subtests as they ran, then its own failure). Each key is filed under its
    test (:func:`_keyed_by_test`): a test's own entry stays a test of its own; a test with
    failing subtests gets them, and its own entry, as ``issues`` in the dict's order, as the
    executor records them (core/execution/types.py ``TestOutcome``). Failures and errors are told
    apart by :func:`_failures_end`.

    ``test_names``: the task's tests (``declared_test_names`` of its module, or its snippet
    names), which tell a subtest's key from one that only looks like it; without them, any
    identifier is taken for a test's name.
    """
    status = entry.get("status")
    details = entry.get("details") or {}
    if status not in ("pass", "fail", "timeout") or not isinstance(details, dict):
        raise ImportFormatError(
            f"{where}: an eval entry needs status pass|fail|timeout and details"
        )
    if status == "pass":
        return ExecResult("pass", isolation="imported")
    run_status = "timeout" if status == "timeout" else "fail"
    if not details:
        return ExecResult(run_status, isolation="imported")  # type: ignore[arg-type]
    if set(details) == {"ALL"}:
        text = str(details.get("ALL", ""))
        return ExecResult(
            "timeout" if status == "timeout" else "error",
            isolation="imported",
            detail=text,
            error_message=text,
        )
    # Keys that collided in the reference (two subtests described alike, or cut alike at
    # their last dot: "test_x (value=1.5)" and "test_x (value=2.5)" are both "5)") were one
    # entry there, at the first one's position with the last one's traceback: the others are
    # gone from the dict and cannot be recovered, and neither can the text a cut key lost.
    keyed = _keyed_by_test(
        [(str(key), str(text)) for key, text in details.items()],
        None if test_names is None else frozenset(test_names),
    )
    end = _failures_end(
        [test for test, _, _ in keyed], [_raised_assertion(text) for _, _, text in keyed]
    )
    by_test: dict[str, list[TestIssue]] = {}
    for position, (test, name, text) in enumerate(keyed):
        by_test.setdefault(test, []).append(
            TestIssue(name, "fail" if position < end else "error", text)
        )
    tests = []
    for test, issues in by_test.items():
        first = issues[0]
        if len(issues) == 1 and first.name == test:
            tests.append(TestOutcome(test, first.status, 0.0, first.traceback))
        else:
            # A test with failing subtests: the executor's shape, whose status and traceback
            # are its first problem and whose issues are what unittest filed for it.
            tests.append(
                TestOutcome(test, first.status, 0.0, first.traceback, issues=tuple(issues))
            )
    return ExecResult(run_status, tests=tuple(tests), isolation="imported")  # type: ignore[arg-type]


# A subtest's id is its test's id, a space, then unittest's description of it: "[msg]",
# "(k=v, ...)", both, or "(<subtest>)" (CPython Lib/unittest/case.py, _SubTest._subDescription).
_SUBTEST_KEY = re.compile(r"([A-Za-z_]\w*) [\[(]")


def _keyed_by_test(
    details: Sequence[tuple[str, str]], test_names: frozenset[str] | None
) -> list[tuple[str, str, str]]:
    """(test, issue name, traceback) for each ``details`` entry, in order.

    A key that is a test's name (an identifier: a cut key always ends with the ``)`` or ``]``
    of a description) is that test's own entry; ``name (...)`` or ``name [...]`` a subtest of
    test ``name`` (one of ``test_names`` when given), named by its key. A key with no test's
    name left, cut at a dot inside the description (``5)``), belongs to the test of the key
    before it, as BigCodeBench files a test's subtests one after another (keys before any
    that names a test go with the first that does); it is named ``test_x ...5)``: its test's
    name, so the store files it back under its test (sessions/codec.py), and a dot before
    the key, so that ``bcb_subtest_key`` cuts it back to the key (core/feedback/render.py). The
    subtest it stood for may have been a later test's, whose every key was cut: the text
    renders the same either way, and nothing in the dict tells them apart. When no key names
    a test, the first key stands for one."""
    tests: list[str | None] = []
    for key, _ in details:
        match = _SUBTEST_KEY.match(key)
        if key.isidentifier():
            tests.append(key)
        elif match and (test_names is None or match.group(1) in test_names):
            tests.append(match.group(1))
        else:
            tests.append(None)
    current = next((test for test in tests if test is not None), details[0][0])
    keyed: list[tuple[str, str, str]] = []
    for (key, text), test in zip(details, tests, strict=True):
        if test is not None:
            current = test
            keyed.append((test, key, text))
        elif key == current:
            keyed.append((key, key, text))  # the first key, standing for a test
        else:
            keyed.append((current, f"{current} ...{key}", text))
    return keyed


_TRACEBACK_HEAD = "Traceback (most recent call last):"


def _raised_assertion(text: str) -> bool | None:
    """Whether the traceback ``text`` ends in an ``AssertionError`` (unittest files those
    under ``failures``, anything else under ``errors``: CPython Lib/unittest/case.py,
    ``_Outcome.testPartExecutor``); None when it names no exception. The exception is the
    first line at the margin after the last ``Traceback`` head, where a chained traceback's
    last exception is; its message may run on over further lines."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line == _TRACEBACK_HEAD]
    if not heads:
        return None
    for line in lines[heads[-1] + 1 :]:
        if line and not line[0].isspace():
            name = re.match(r"[\w.]+", line)
            if name is None or line[name.end() :][:1] not in (":", ""):
                return None
            return name.group(0).rsplit(".", 1)[-1] == "AssertionError"
    return None


def _failures_end(tests: Sequence[str], assertions: Sequence[bool | None]) -> int:
    """How many of the entries, whose tests are ``tests``, are failures (the rest are errors).

    BigCodeBench lists failures then errors, each by test name (unittest's loader sorts the
    methods), so a split is possible only where the test names before it, and those after
    it, never go down; the names are compared, not the keys (``test_x (length=100)`` sorts
    before ``test_x (length=50)``, which ran first). Among the possible splits, the one that
    agrees with the most tracebacks (:func:`_raised_assertion`) wins, then the latest one.
    Any possible split renders the dict in its order; the tracebacks make the statuses right.
    A dict in no such order (not BigCodeBench's) keeps the longest sorted run as failures."""
    count = len(tests)
    rising_to = 1  # tests[:rising_to] never goes down
    while rising_to < count and tests[rising_to - 1] <= tests[rising_to]:
        rising_to += 1
    rising_from = count - 1  # nor does tests[rising_from:]
    while rising_from > 0 and tests[rising_from - 1] <= tests[rising_from]:
        rising_from -= 1
    if rising_from > rising_to:
        return rising_to
    # score(end) = failures' tracebacks before end + errors' from end on, kept as it moves.
    score = sum(found is True for found in assertions[:rising_from]) + sum(
        found is False for found in assertions[rising_from:]
    )
    best, best_score = rising_from, score
    for end in range(rising_from + 1, rising_to + 1):
        score += (assertions[end - 1] is True) - (assertions[end - 1] is False)
        if score >= best_score:
            best, best_score = end, score
    return best


def _lines(path: Path, *, first: bool = False) -> dict[str, dict[str, Any]]:
    """Task id -> its line. ``first``: a sample file of several samples a task (BigCodeBench's
    ``--n_samples``) gives the task's first, whose verdict is the eval's first entry."""
    found: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except ValueError:
                raise ImportFormatError(f"{path}:{number} is not a JSON line") from None
            if not isinstance(line, dict) or "task_id" not in line or "solution" not in line:
                raise ImportFormatError(f"{path}:{number} lacks task_id or solution")
            task_id = str(line["task_id"])
            if not (first and task_id in found):
                found[task_id] = line
    return found


def _evals(path: Path) -> dict[str, dict[str, Any]]:
    target = path.with_name(eval_file(path.name))
    try:
        report = json.loads(target.read_text(encoding="utf-8"))
        entries = report["eval"]
        return {task_id: found[0] for task_id, found in entries.items()}
    except FileNotFoundError:
        raise ImportFormatError(
            f"{target.name} is missing beside {path.name}: BigCodeBench's verdicts are needed"
        ) from None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        raise ImportFormatError(
            f'{target} is not an eval results file ({{"eval": {{task_id: [entry]}}}})'
        ) from None
