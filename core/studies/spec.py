"""A human-feedback study: what it asks of its annotators (a TOML file, :class:`StudySpec`),
who gets which task (:func:`assign`, :func:`reassign`), and the tokens that let each
annotator in (:func:`new_token`, :func:`token_hash`).

Pure: the store keeps the study, its annotators and assignments; the front ends ask here
what to write. Assignment is balanced (annotators' loads differ by at most one), each task
goes to ``overlap`` different annotators (agreement is measured on those), and the same
spec and seed give the same assignment on every machine."""

from __future__ import annotations

import hashlib
import random
import secrets
import tomllib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, TypeAlias, get_args

from convtui.core.errors import ConvtuiError
from convtui.core.printable import control_characters, invisible_characters, print_key
from convtui.core.settings.config import ASSIST_MODES, ProtocolName, SessionConfig
from convtui.core.settings.omega import FeedbackChoice, FeedbackConfig
from convtui.core.settings.protocol import PlayRules
from convtui.core.studies.guidelines import Guidelines

# Who types a study's feedback: the annotator alone, or the annotator over a simulator's draft
# (``assist:<persona>``, config.py's ASSIST_MODES): checked against _USERS where a study file
# is read.
StudyUser: TypeAlias = str
_PROTOCOLS: tuple[str, ...] = get_args(ProtocolName)
_USERS: tuple[str, ...] = ("human", *ASSIST_MODES)
_KEYS = frozenset(
    {
        "name",
        "tasks",
        "model",
        "simulator",
        "feedback",
        "turns",
        "protocol",
        "user",
        "annotators",
        "overlap",
        "seed",
        "guidelines",
    }
)
_TASK_KEYS = frozenset({"suite", "ids", "lib", "stdlib_only"})


class StudyError(ConvtuiError):
    """A study file or a study operation that cannot be carried out as asked."""


@dataclass(frozen=True)
class TaskFilter:
    """Tasks chosen as ``bench`` chooses them (``--suite``, ``--ids``, ``--lib``,
    ``--stdlib-only``), for a study too large to list by id."""

    suite: str = "bigcodebench"
    ids: str | None = None
    lib: tuple[str, ...] = ()
    stdlib_only: bool = False


@dataclass(frozen=True)
class StudySpec:
    """What a study asks: its tasks (ids, or a filter), the model and, for assisted feedback,
    the simulator that drafts; Ω, the turn budget and the protocol of every session; its
    annotators, how many of them get each task, and the seed of the assignment; and the
    guidelines each annotator reads before their first assignment, where the file names any."""

    name: str
    tasks: tuple[str, ...] | TaskFilter
    model: str
    feedback: str
    turns: int
    protocol: ProtocolName
    user: StudyUser
    annotators: tuple[str, ...]
    overlap: int
    seed: int
    simulator: str | None = None
    # Read from the file the study file names, once, at `study init`; kept in the stored
    # spec (studies.spec_json) with its digest, so the app and the export never open it.
    guidelines: Guidelines | None = None

    @classmethod
    def from_toml(cls, path: Path) -> StudySpec:
        """Read a study file; every mistake is one :class:`StudyError` naming the file."""
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise StudyError(f"{path}: no such study file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise StudyError(f"{path}: cannot read it ({exc})") from None
        except tomllib.TOMLDecodeError as exc:
            raise StudyError(f"{path}: not valid TOML ({exc})") from None
        try:
            named = data.pop("guidelines", None)
            spec = cls.from_mapping(data)
            if named is not None:
                spec = replace(spec, guidelines=Guidelines.named_by(path, named))
            # Checked where a study is made, not where a stored one is read back: a study
            # made before names were checked still opens, its names shown escaped.
            checked_name("study name", spec.name)
            for name in spec.annotators:
                checked_name("annotator name", name)
            check_distinct(spec.annotators)
            return spec
        except ConvtuiError as exc:  # a bad Ω says so itself
            raise StudyError(f"{path}: {exc}") from None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> StudySpec:
        tasks = data.get("tasks")
        misplaced = sorted(set(tasks) & (_KEYS - _TASK_KEYS)) if isinstance(tasks, dict) else []
        if misplaced:
            # TOML puts every key after a table's header into that table, so a [tasks] written
            # first swallows the study's own keys; "missing 'model'" would send people looking
            # for a key that is there.
            raise StudyError(
                f"{', '.join(map(repr, misplaced))} sit inside the [tasks] table, which takes "
                "every key after its header: move [tasks] and its keys to the end of the file"
            )
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise StudyError(f"unknown key(s) {', '.join(unknown)}; a study takes {_sorted(_KEYS)}")
        for key in ("name", "tasks", "model", "annotators"):
            if key not in data:
                raise StudyError(f"missing {key!r}")
        spec = cls(
            name=_text(data, "name"),
            tasks=_tasks(data["tasks"]),
            model=_text(data, "model"),
            simulator=_text(data, "simulator") if "simulator" in data else None,
            feedback=_text(data, "feedback", "CF,EF:full,VF:expert"),
            turns=_int(data, "turns", 10),
            # A person gives the feedback: ConvCodeWorld's protocol asks its simulator inside
            # each turn, so convtui's own is the study default (as for `convtui session`).
            protocol=_choice(data, "protocol", _PROTOCOLS, "convtui"),  # type: ignore[arg-type]
            user=_choice(data, "user", _USERS, "human"),
            annotators=_names(data["annotators"]),
            overlap=_int(data, "overlap", 1),
            seed=_int(data, "seed", 0),
            guidelines=_stored_guidelines(data["guidelines"]) if "guidelines" in data else None,
        )
        spec.check()
        return spec

    @cached_property
    def omega(self) -> FeedbackConfig:
        """The one Ω of every session, parsed once."""
        configs = FeedbackChoice.parse(self.feedback).configs  # raises its own one-line error
        if len(configs) != 1:
            raise StudyError(f"feedback {self.feedback!r}: a study uses one Ω, not all nine")
        return configs[0]

    def check(self) -> None:
        """The rules a spec must keep, whoever built it; the protocol's own are
        :meth:`PlayRules.settings`'s (core/settings/protocol.py)."""
        verbal = self.omega.verbal
        if self.turns < 0:
            raise StudyError(f"turns must be 0 or more feedback turns, not {self.turns}")
        if not self.annotators:
            raise StudyError("annotators is empty: name at least one")
        check_overlap(self.overlap, len(self.annotators))
        if self.user.startswith("assist:"):
            kind = self.user.split(":", 1)[1]
            if verbal == "none":
                raise StudyError(f"user {self.user!r} drafts verbal feedback: add VF to feedback")
            if verbal != kind:
                raise StudyError(
                    f"user {self.user!r} drafts as the {kind} but feedback says VF:{verbal}: "
                    "make them agree"
                )
        self.config()

    def in_file_order(self, task_ids: Sequence[str]) -> list[str]:
        """``task_ids`` (as the catalog spells them) in the order the study file lists its
        tasks; under a filter, the catalog's: by suite, then by number (never as strings,
        which put 13 before 2)."""
        listed = self.tasks if isinstance(self.tasks, tuple) else ()
        place = {_id_key(t): i for i, t in reversed(list(enumerate(listed)))}

        def key(task_id: str) -> tuple[int, tuple[str, int, str]]:
            parsed = _id_key(task_id)
            return place.get(parsed, len(place)), parsed

        return sorted(task_ids, key=key)

    def config(self) -> SessionConfig:
        """The config every session of the study runs under, built where `convtui session`
        builds it from the same options (:meth:`PlayRules.settings`): the protocol's
        defaults, the model, Ω, the turn budget, and the simulator that drafts for an
        assisted annotator (the code model itself when the study names none)."""
        rules = PlayRules(self.protocol, self.turns, simulator=self.simulator)
        return rules.settings(model=self.model, feedback=self.omega, user=self.user)


def _stored_guidelines(value: Any) -> Guidelines:
    try:
        return Guidelines.from_stored(value)
    except ConvtuiError as exc:
        raise StudyError(str(exc)) from None


def _id_key(task_id: str) -> tuple[str, int, str]:
    """``BigCodeBench/13``, ``bigcodebench/13`` and ``13`` alike (a bare number is
    BigCodeBench's, as the catalog reads it), and a number compared as one."""
    prefix, _sep, number = task_id.strip().rpartition("/")
    suite = prefix.lower() or "bigcodebench"
    return (suite, int(number), "") if number.isdecimal() else (suite, -1, number)


def _sorted(keys: frozenset[str]) -> str:
    return ", ".join(sorted(keys))


def _text(data: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise StudyError(f"{key!r} must be a non-empty string")
    return value.strip()


def checked_name(kind: str, name: str) -> str:
    """``name`` without its outer spaces, refused when empty or when it holds a control
    character or one that prints as nothing (a zero-width space, a bidirectional override):
    names are printed in terminals and the served page, headers and lists alike, where an
    escape sequence would be obeyed, an override would reorder what follows, and a
    zero-width character would make a second name that looks like the first; shown escaped
    instead, neither is a name anyone can type back."""
    name = name.strip()
    if not name:
        raise StudyError(f"{kind} is empty: give it a name")
    found = control_characters(name)
    if found:
        raise StudyError(
            f"{kind} {name!r} holds control characters ({', '.join(found)}): "
            "write it in printable characters only, on one line"
        )
    hidden = invisible_characters(name)
    if hidden:
        raise StudyError(
            f"{kind} {name!r} holds characters that print as nothing or reorder the text "
            f"({', '.join(hidden)}): write it in visible characters only"
        )
    return name


def check_distinct(names: Sequence[str], taken: Sequence[str] = ()) -> None:
    """Refuse two names that print alike (:func:`print_key`: the same but for case, width or
    invisible characters), among ``names`` or between one of them and one of ``taken``: on
    a screen nobody could tell whose token, sessions or progress a line is. One pass."""
    seen = {print_key(name): name for name in taken}
    for name in names:
        key = print_key(name)
        other = seen.get(key)
        if other is not None:
            raise StudyError(
                f"annotator names {other!r} and {name!r} print alike: give each annotator a "
                "name that looks like no other's"
            )
        seen[key] = name


def _int(data: Mapping[str, Any], key: str, default: int) -> int:
    value = data.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise StudyError(f"{key!r} must be an integer, not {value!r}")
    return value


def _choice(data: Mapping[str, Any], key: str, choices: Sequence[str], default: str) -> str:
    value = data.get(key, default)
    if value not in choices:
        raise StudyError(f"{key!r} must be one of {', '.join(choices)}, not {value!r}")
    return str(value)


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise StudyError("'annotators' must be a list of names")
    names = tuple(v.strip() for v in value)
    # Counted in one pass: tuple.count per name made a study of 100,000 annotators take
    # minutes to read.
    counts = Counter(names)
    twice = sorted(n for n, count in counts.items() if count > 1)
    if twice:
        raise StudyError(f"annotator(s) named twice: {', '.join(twice)}")
    return names


def _tasks(value: Any) -> tuple[str, ...] | TaskFilter:
    if isinstance(value, list):
        if not value or not all(isinstance(v, str) and v.strip() for v in value):
            raise StudyError("'tasks' must be a non-empty list of task ids, or a table")
        ids = tuple(dict.fromkeys(v.strip() for v in value))
        return ids
    if isinstance(value, dict):
        unknown = sorted(set(value) - _TASK_KEYS)
        if unknown:
            raise StudyError(f"[tasks] takes {_sorted(_TASK_KEYS)}, not {', '.join(unknown)}")
        lib = value.get("lib", [])
        if isinstance(lib, str):
            lib = [lib]
        return TaskFilter(
            suite=str(value.get("suite", "bigcodebench")),
            ids=str(value["ids"]) if "ids" in value else None,
            lib=tuple(str(x) for x in lib),
            stdlib_only=bool(value.get("stdlib_only", False)),
        )
    raise StudyError("'tasks' must be a list of task ids or a table (suite, ids, lib)")


@dataclass(frozen=True)
class Assignment:
    """One task given to one annotator; ``position`` orders an annotator's assignments."""

    task_id: str
    annotator: str
    position: int


def check_overlap(overlap: int, annotators: int) -> None:
    """Refuse an overlap (annotators per task) the study's people cannot give, saying which
    number to change and to what."""
    if overlap < 1:
        raise StudyError(f"overlap {overlap}: each task needs at least 1 annotator; set 1 or more")
    if overlap > annotators:
        raise StudyError(
            f"overlap {overlap} gives each task to {overlap} different annotators, but the study "
            f"names {annotators}: set overlap to at most {annotators}, or name more annotators"
        )


def assign(
    task_ids: Sequence[str], annotators: Sequence[str], overlap: int, seed: int
) -> list[Assignment]:
    """Give each task to ``overlap`` different annotators, loads balanced to within one.

    The tasks and annotators are shuffled by ``seed`` (the same on every machine), then the
    task × overlap slots are dealt round-robin: consecutive slots of one task go to
    consecutive annotators, so they differ while ``overlap`` ≤ the number of annotators."""
    check_overlap(overlap, len(annotators))
    rng = random.Random(seed)
    tasks = list(dict.fromkeys(task_ids))
    people = list(annotators)
    rng.shuffle(tasks)
    rng.shuffle(people)
    given: dict[str, int] = {name: 0 for name in people}
    out: list[Assignment] = []
    slot = 0
    for task in tasks:
        for _ in range(overlap):
            name = people[slot % len(people)]
            out.append(Assignment(task, name, given[name]))
            given[name] += 1
            slot += 1
    return out


def reassign(
    assignments: Sequence[Assignment], leaving: str, done: frozenset[str], staying: Sequence[str]
) -> list[tuple[Assignment, str]]:
    """Who takes over each of ``leaving``'s assignments whose task is not in ``done``: the
    least loaded of ``staying`` who does not already have that task (ties by name, so the
    result is reproducible). Raises :class:`StudyError` when nobody can take one."""
    load = {name: 0 for name in staying}
    holders: dict[str, set[str]] = {}
    for a in assignments:
        holders.setdefault(a.task_id, set()).add(a.annotator)
        if a.annotator in load:
            load[a.annotator] += 1
    moves: list[tuple[Assignment, str]] = []
    for a in sorted(assignments, key=lambda a: a.position):
        if a.annotator != leaving or a.task_id in done:
            continue
        free = [n for n in staying if n not in holders[a.task_id]]
        if not free:
            raise StudyError(
                f"nobody can take {a.task_id} from {leaving}: every other annotator has it"
            )
        chosen = min(free, key=lambda n: (load[n], n))
        load[chosen] += 1
        holders[a.task_id].add(chosen)
        moves.append((a, chosen))
    return moves


def assign_more(
    assignments: Sequence[Assignment], annotator: str, count: int, tasks: Sequence[str]
) -> list[Assignment]:
    """``count`` more tasks for ``annotator`` (someone enrolled late, usually): the tasks of
    ``tasks`` they do not already have, the least covered first (fewest annotators in
    ``assignments`` hold them), ties in the order of ``tasks``; placed after their own last
    assignment. Raises :class:`StudyError` when fewer than ``count`` tasks are left to give."""
    if count < 0:
        raise StudyError(f"cannot give {count} tasks: give 0 or more")
    coverage = {task: 0 for task in tasks}
    theirs: set[str] = set()
    last = -1
    for a in assignments:
        if a.annotator == annotator:
            theirs.add(a.task_id)
            last = max(last, a.position)
        elif a.task_id in coverage:
            coverage[a.task_id] += 1
    order = {task: i for i, task in enumerate(tasks)}
    free = sorted((t for t in coverage if t not in theirs), key=lambda t: (coverage[t], order[t]))
    if count > len(free):
        raise StudyError(
            f"{annotator} can be given at most {len(free)} more of the study's "
            f"{len(coverage)} tasks, not {count}"
        )
    return [Assignment(task, annotator, last + 1 + i) for i, task in enumerate(free[:count])]


def new_token() -> str:
    """A fresh annotator token: 32 random bytes, URL-safe (it travels in a login form)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What the store keeps of a token. A fast hash is enough: the token is random with 256
    bits of entropy, so there is no dictionary to try (a password would need a slow one)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_matches(token: str, stored_hash: str) -> bool:
    """Whether ``token`` is the one ``stored_hash`` was made from, in constant time."""
    return secrets.compare_digest(token_hash(token), stored_hash)
