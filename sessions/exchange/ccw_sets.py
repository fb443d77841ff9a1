"""The log sets of a folder in ConvCodeWorld's static layout: each series of turn files
(turn 1 to N) with the turn-0 sample file it started from.

The turn-0 file may carry any name BigCodeBench gives an instruct-split sample file (any
backend, ``vllm`` or ``openai`` among them, temperature, sample count and version: see
sessions/exchange/ccw_files.py); it belongs to the turn files whose model one name spells both ways,
as ConvCodeWorld's scripts derive both from one ``--model_name``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from convtui.sessions.database.errors import ImportFormatError
from convtui.sessions.exchange.ccw_files import (
    TURN0_DIR,
    LogSetName,
    Turn0File,
    paired_name,
    parse_turn0_file,
    parse_turn_file,
)


@dataclass(frozen=True)
class FolderSet:
    """One log set found in a folder: its turn-0 file and its turn files, in turn order."""

    name: LogSetName
    model: str  # as the turn-0 file spells it, "/" restored
    files: tuple[Path, ...]  # turn 0, 1, ..., N-1


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
