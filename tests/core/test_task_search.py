"""Searching the catalog by id, library and words of the prompt (the TUI's task picker).

Runs against the real data files (``$CONVTUI_DATA_DIR``, by default ``../shared/data`` beside
the repository), both suites loaded, as the picker sees them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.data import DATA as DATA_DIR

from convtui.core.catalog.loaders import TaskCatalog, load_catalog
from convtui.core.catalog.search import TaskIndex, search_tasks
from convtui.core.catalog.tasks import Task

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog() -> TaskCatalog:
    return load_catalog("all", DATA_DIR)


@pytest.fixture(scope="module")
def index(catalog: TaskCatalog) -> TaskIndex:
    return TaskIndex(catalog)


def ids(tasks: list[Task]) -> list[str]:
    return [t.id for t in tasks]


def words(task: Task) -> list[str]:
    """The prompt's words, lower-cased, and the parts of its snake_case words that do not
    start the word (``json_file_path`` is one word starting with "json", not two)."""
    found = re.findall(r"\w+", task.prompt.lower())
    parts = [
        part
        for word in found
        for n, part in enumerate(word.split("_"))
        if part and "_" in word and (n > 0 or word.startswith("_"))
    ]
    return found + parts


def test_empty_query_gives_every_task_in_catalog_order_up_to_the_limit(
    index: TaskIndex, catalog: TaskCatalog
) -> None:
    assert len(index) == 1140 + 124
    assert ids(index.search("", limit=None)) == catalog.ids
    assert ids(index.search("   ")) == catalog.ids[:200]
    assert ids(index.search("", limit=3)) == ["BigCodeBench/0", "BigCodeBench/1", "BigCodeBench/2"]


def test_a_number_matches_the_task_number_exactly_never_a_substring(index: TaskIndex) -> None:
    assert ids(index.search("123")) == ["BigCodeBench/123"]
    # /1123, /12 and prompts mentioning 123 of something are not matches.
    assert ids(index.search("12", limit=None)) == ["BigCodeBench/12", "CodeIF/12"]
    assert index.search("99999") == []


def test_a_number_ranks_its_task_first_among_other_terms(index: TaskIndex) -> None:
    assert ids(index.search("123 csv")) == ["BigCodeBench/123"]
    assert index.search("123 matplotlib") == []  # AND: /123 uses no matplotlib


def test_a_full_id_matches_case_insensitively_and_a_partial_one_by_prefix(
    index: TaskIndex,
) -> None:
    assert ids(index.search("bigcodebench/123")) == ["BigCodeBench/123"]
    assert ids(index.search("CodeIF/11"))[0] == "CodeIF/11"
    got = ids(index.search("bigcodebench/12", limit=None))
    # The exact id first, then the ids it starts, in catalog order.
    assert got == ["BigCodeBench/12"] + [f"BigCodeBench/{n}" for n in range(120, 130)]


def test_a_suite_name_selects_that_suite(index: TaskIndex, catalog: TaskCatalog) -> None:
    codeif = [t.id for t in catalog if t.suite == "codeif"]
    assert ids(index.search("codeif", limit=None)) == codeif
    assert ids(index.search("CODEIF", limit=None)) == codeif
    assert {t.suite for t in index.search("bigcodebench", limit=None)} == {"bigcodebench"}


def test_lib_filter_matches_libraries_exactly(index: TaskIndex, catalog: TaskCatalog) -> None:
    got = index.search("lib:pandas", limit=None)
    assert got and all("pandas" in t.libs for t in got)
    assert len(got) == sum("pandas" in t.libs for t in catalog)
    # Exact, not prefix: `pandas` is not `geopandas`, and `lib:pan` names no library.
    assert not any(t.libs == ("geopandas",) for t in got)
    assert index.search("lib:pan") == []
    assert ids(index.search("LIB:PIL", limit=None)) == ids(index.search("lib:pil", limit=None))


def test_an_unfinished_lib_filter_is_ignored(index: TaskIndex) -> None:
    assert ids(index.search("lib:", limit=None)) == ids(index.search("", limit=None))
    assert ids(index.search("csv lib:", limit=None)) == ids(index.search("csv", limit=None))


def test_a_bare_library_name_ranks_tasks_using_it_above_prompt_mentions(
    index: TaskIndex,
) -> None:
    got = index.search("seaborn", limit=None)
    using = [t for t in got if "seaborn" in t.libs]
    assert using, "some task uses seaborn"
    assert got[: len(using)] == using
    assert all("seaborn" in words(t) for t in got[len(using) :])


def test_a_term_is_a_case_insensitive_word_prefix_of_the_prompt(index: TaskIndex) -> None:
    got = index.search("csv", limit=None)
    assert "BigCodeBench/123" in ids(got)  # "... CSV files from a directory ..."
    assert all(any(w.startswith("csv") for w in words(t)) for t in got)
    regexes = ids(index.search("regex", limit=None))
    assert "BigCodeBench/52" in regexes  # "regex" itself
    assert any("regexptokenizer" in words(index_task) for index_task in index.search("regexp"))
    # A word merely containing the term is no match ("ip_regex" counts through its part).
    assert index.search("egex") == []


def test_a_term_matches_parts_of_snake_case_words(index: TaskIndex) -> None:
    got = index.search("regex", limit=None)
    assert any("email_regex" in re.findall(r"\w+", t.prompt.lower()) for t in got)
    assert all(any(w.startswith("regex") for w in words(t)) for t in got)


def test_a_term_with_punctuation_is_a_substring_of_the_prompt(index: TaskIndex) -> None:
    got = index.search("os.path", limit=None)
    assert got and all("os.path" in t.prompt.lower() for t in got)


def test_every_term_must_match(index: TaskIndex) -> None:
    both = set(ids(index.search("pandas csv", limit=None)))
    assert both
    assert both <= set(ids(index.search("pandas", limit=None)))
    assert both <= set(ids(index.search("csv", limit=None)))
    assert both < set(ids(index.search("csv", limit=None)))
    assert set(ids(index.search("lib:pandas lib:numpy", limit=None))) == {
        t.id for t in index.search("lib:pandas", limit=None) if "numpy" in t.libs
    }


def test_more_prompt_hits_rank_first_and_ties_keep_catalog_order(
    index: TaskIndex, catalog: TaskCatalog
) -> None:
    got = index.search("json", limit=None)
    position = {task_id: n for n, task_id in enumerate(catalog.ids)}

    def key(t: Task) -> tuple[int, int, int]:
        hits = sum(w.startswith("json") for w in words(t))
        return (-int("json" in t.libs), -hits, position[t.id])

    assert got == sorted(got, key=key)
    assert len({key(t)[:2] for t in got}) > 2, "the ranking is exercised on several levels"


def test_no_match_gives_an_empty_list(index: TaskIndex) -> None:
    assert index.search("zzqxj") == []
    assert index.search("csv zzqxj") == []
    assert index.search("lib:nosuchlibrary") == []


def test_search_tasks_is_the_same_search_without_keeping_an_index(
    index: TaskIndex, catalog: TaskCatalog
) -> None:
    assert ids(search_tasks(catalog, "pandas csv")) == ids(index.search("pandas csv"))
    assert len(search_tasks(catalog, "", limit=5)) == 5
    assert search_tasks([], "csv") == []
