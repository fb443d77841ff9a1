"""Searching the task catalog as a person types: by id, by library, by words of the prompt.

The TUI's task picker calls this on every keystroke over the whole catalog (1,190 tasks with
both suites), so the event loop's ~20 ms budget applies: :class:`TaskIndex` lower-cases and
tokenises every prompt once, and a search only walks precomputed postings.

A query is whitespace-separated terms, all of which must match (AND). A term matches a task by

- **id**: a pure number is the task number, exactly (``123`` finds ``BigCodeBench/123``, not
  ``/1123``); a term with a ``/`` is a prefix of the id (``bigcodebench/12``); a suite name or id
  prefix (``codeif``, ``bigcodebench``) selects that suite;
- **library**: ``lib:pandas`` matches ``task.libs`` exactly, and so does a bare ``pandas``;
- **prompt**: a word of the prompt, or a part of a snake_case one, starting with the term
  (``csv`` finds "CSV file", ``regex`` finds "RegexpTokenizer" and "email_regex"); a term
  holding punctuation (``os.path``) is looked up as a substring.

Results rank exact id matches first, then library matches, then more prompt hits; ties keep
catalog order.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from convtui.core.catalog.tasks import Task

_WORD_RE = re.compile(r"\w+")
_LIB_PREFIX = "lib:"
# Terms are looked up once each and reused while the user types the next one; past this many
# the cache starts over rather than grow without bound.
_CACHE_SIZE = 512
_MISSING = object()


@dataclass(frozen=True)
class _Hit:
    """What one term contributed to one task's rank."""

    exact_id: int = 0
    lib: int = 0
    prompt: int = 0


class TaskIndex:
    """A lower-cased, tokenised view of some tasks that answers :meth:`search` quickly.

    Built once per catalog (tens of milliseconds for 1,190 tasks); the tasks are kept in the
    order given, which is the order ties are broken in.
    """

    def __init__(self, tasks: Iterable[Task]) -> None:
        self._tasks: tuple[Task, ...] = tuple(tasks)
        self._ids: list[str] = [t.id.lower() for t in self._tasks]
        self._prompts: list[str] = [t.prompt.lower() for t in self._tasks]
        self._by_number: dict[int, list[int]] = {}
        self._by_lib: dict[str, list[int]] = {}
        self._by_suite: dict[str, list[int]] = {}
        # word -> {task position: occurrences}; `_vocab` is the sorted words, so the words a
        # prefix starts are one contiguous run found by bisection.
        self._postings: dict[str, dict[int, int]] = {}
        for pos, task in enumerate(self._tasks):
            self._by_number.setdefault(task.number, []).append(pos)
            for lib in {lib.lower() for lib in task.libs}:
                self._by_lib.setdefault(lib, []).append(pos)
            id_prefix = self._ids[pos].rpartition("/")[0]
            for name in {task.suite.lower(), id_prefix}:
                self._by_suite.setdefault(name, []).append(pos)
            for word, count in Counter(_prompt_words(self._prompts[pos])).items():
                self._postings.setdefault(word, {})[pos] = count
        self._vocab: list[str] = sorted(self._postings)
        self._cache: dict[str, dict[int, _Hit] | None] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    @property
    def tasks(self) -> tuple[Task, ...]:
        """Every indexed task, in the order given."""
        return self._tasks

    def search(self, query: str, limit: int | None = 200) -> list[Task]:
        """The tasks matching every term of ``query``, best first, at most ``limit`` of them.

        An empty query (or one made only of an unfinished ``lib:``) gives every task in order.
        ``limit=None`` returns all matches, for callers that show how many there are.
        """
        ranked = self._rank(query)
        return ranked if limit is None else ranked[:limit]

    def _rank(self, query: str) -> list[Task]:
        totals: dict[int, list[int]] | None = None
        for term in query.lower().split():
            hits = self._term_hits(term)
            if hits is None:
                continue
            if totals is None:
                totals = {pos: [h.exact_id, h.lib, h.prompt] for pos, h in hits.items()}
            else:
                merged: dict[int, list[int]] = {}
                for pos, acc in totals.items():
                    h = hits.get(pos)
                    if h is not None:
                        merged[pos] = [acc[0] + h.exact_id, acc[1] + h.lib, acc[2] + h.prompt]
                totals = merged
            if not totals:
                return []
        if totals is None:
            return list(self._tasks)
        order = sorted(
            totals, key=lambda pos: (-totals[pos][0], -totals[pos][1], -totals[pos][2], pos)
        )
        return [self._tasks[pos] for pos in order]

    def _term_hits(self, term: str) -> dict[int, _Hit] | None:
        """Which tasks ``term`` (lower-cased) matches and how strongly; None to ignore it."""
        # One lookup, not `in` then `[]`: a search from a worker thread may clear the cache
        # between the two.
        cached = self._cache.get(term, _MISSING)
        if cached is not _MISSING:
            return cached  # type: ignore[return-value]
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.clear()
        hits = self._compute_term_hits(term)
        self._cache[term] = hits
        return hits

    def _compute_term_hits(self, term: str) -> dict[int, _Hit] | None:
        if term.startswith(_LIB_PREFIX):
            name = term[len(_LIB_PREFIX) :]
            # A bare `lib:` is a filter still being typed: leave the results as they are.
            if not name:
                return None
            return {pos: _Hit(lib=1) for pos in self._by_lib.get(name, ())}
        if term.isdecimal():
            # A number is a task number, never a substring of one nor a word of a prompt:
            # `12` must not bring up /112, /120 or every prompt mentioning twelve of something.
            return {pos: _Hit(exact_id=1) for pos in self._by_number.get(int(term), ())}

        exact: set[int] = set()
        filter_only: set[int] = set()
        if "/" in term:
            for pos, task_id in enumerate(self._ids):
                if task_id == term:
                    exact.add(pos)
                elif task_id.startswith(term):
                    filter_only.add(pos)
        filter_only.update(self._by_suite.get(term, ()))
        libs = set(self._by_lib.get(term, ()))
        prompt = self._prompt_hits(term)

        return {
            pos: _Hit(exact_id=int(pos in exact), lib=int(pos in libs), prompt=prompt.get(pos, 0))
            for pos in exact | filter_only | libs | prompt.keys()
        }

    def _prompt_hits(self, term: str) -> dict[int, int]:
        """Occurrences of ``term`` in each prompt: as a word prefix, or as a substring when the
        term holds characters that never occur inside a word."""
        if _WORD_RE.fullmatch(term):
            counts: dict[int, int] = {}
            vocab = self._vocab
            i = bisect.bisect_left(vocab, term)
            while i < len(vocab) and vocab[i].startswith(term):
                for pos, count in self._postings[vocab[i]].items():
                    counts[pos] = counts.get(pos, 0) + count
                i += 1
            return counts
        return {
            pos: prompt.count(term) for pos, prompt in enumerate(self._prompts) if term in prompt
        }


def _prompt_words(prompt: str) -> list[str]:
    """The words a term can be a prefix of: every word, and the inner parts of snake_case ones
    (``regex`` should find ``email_regex``, ``init`` find ``__init__``). A leading part is left
    out: the whole word already starts with it, and counting it twice would skew the ranking."""
    found = _WORD_RE.findall(prompt)
    for word in found[:]:
        if "_" in word:
            parts = [part for part in word.split("_") if part]
            found.extend(parts if word.startswith("_") else parts[1:])
    return found


def search_tasks(tasks: Iterable[Task], query: str, limit: int = 200) -> list[Task]:
    """The tasks matching ``query``, best first (see the module docstring for the syntax).

    Builds a :class:`TaskIndex` each call: fine for one-off searches; a caller searching
    repeatedly (the task picker, per keystroke) should keep one index and call its
    :meth:`TaskIndex.search`.
    """
    return TaskIndex(tasks).search(query, limit)
