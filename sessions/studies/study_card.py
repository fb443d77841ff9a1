"""The README.md (a Hugging Face dataset card) written beside a study's Parquet export: YAML
front matter whose ``configs`` point ``datasets.load_dataset(folder)`` at the file and whose
``dataset_info`` declares its columns, then what the study was and what the table holds.
The prose is the template study_card.md beside this module."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from string import Template
from typing import Any

from convtui.core.plural import counted
from convtui.sessions.studies.fidelity import StoredTurn
from convtui.sessions.studies.study_dataset import (
    COLUMNS,
    FIDELITY_COLUMNS,
    FIDELITY_PATH,
    PARQUET_PATH,
    card_features,
    shown_type,
)
from convtui.sessions.studies.study_export import StudySession, StudyTranscripts
from convtui.sessions.studies.study_fidelity_card import fidelity_section

# The guidelines' text, beside the card in an export folder.
GUIDELINES_NAME = "guidelines.md"


def render_card(
    transcripts: StudyTranscripts, rows: int, fidelity: Sequence[StoredTurn] = ()
) -> str:
    """The card of an export of ``transcripts`` holding ``rows`` rows, and the target turns
    of the simulated-user fidelity study on its sessions (``fidelity``), if any."""
    study = transcripts.study
    sessions = [s.detail.session for s in transcripts.sessions]
    states = Counter(a.state for a in transcripts.assignments)
    people = list(dict.fromkeys(a.annotator for a in transcripts.assignments))
    text = resources.files("convtui.sessions.studies").joinpath("study_card.md").read_text("utf-8")
    return Template(text).substitute(
        front_matter=front_matter(study.name, fidelity=bool(fidelity)),
        title=f"convtui study: {study.name}",
        name=study.name,
        settings=_table(_settings(transcripts)),
        guidelines=_guidelines(transcripts),
        rows=rows,
        sessions=len(sessions),
        annotator_count=len({s.annotator for s in transcripts.sessions}),
        task_count=len({s.task_id for s in sessions}),
        assignments=len(transcripts.assignments),
        done=states["done"],
        started=states["started"],
        pending=states["pending"],
        reassigned=states["reassigned"],
        unfinished=_unfinished(transcripts),
        per_annotator=_table(
            [
                (
                    name,
                    str(sum(s.annotator == name for s in transcripts.sessions)),
                    str(sum(len(s.detail.turns) for s in _of(transcripts, name))),
                    str(sum(s.detail.session.status == "solved" for s in _of(transcripts, name))),
                )
                for name in people
            ]
        ),
        per_status=_table(
            [(status, str(n)) for status, n in sorted(Counter(s.status for s in sessions).items())]
        ),
        columns=_table([(f"`{c.name}`", shown_type(c.kind), c.description) for c in COLUMNS]),
        parquet=PARQUET_PATH,
        fidelity=fidelity_section(fidelity),
    )


def front_matter(name: str, *, fidelity: bool = False) -> str:
    """The card's YAML metadata (without its ``---`` fences); with ``fidelity``, a second
    config (``fidelity``) for the simulated-user fidelity rows."""
    meta: dict[str, Any] = {
        "pretty_name": f"convtui study: {name}",
        "license": "other",
        "tags": ["code", "human-feedback", "multi-turn", "convtui"],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": "train", "path": PARQUET_PATH}],
            }
        ],
        # No `splits`: datasets wants their size in bytes as it measures them, or ignores them.
        "dataset_info": {"features": card_features()},
    }
    if fidelity:
        meta["configs"].append(
            {
                "config_name": "fidelity",
                "data_files": [{"split": "train", "path": FIDELITY_PATH}],
            }
        )
        meta["dataset_info"] = [
            {"config_name": "default", "features": card_features()},
            {"config_name": "fidelity", "features": card_features(FIDELITY_COLUMNS)},
        ]
    return "\n".join(_yaml(meta, 0))


def _yaml(value: Any, indent: int) -> list[str]:
    """Block-style YAML of dicts, lists and scalars; strings as JSON's double-quoted scalars
    (valid YAML), so no name or path can break the document."""
    pad = " " * indent
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines += [f"{pad}{key}:", *_yaml(item, indent + 2)]
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
        return lines
    if isinstance(value, list):
        lines = []
        for item in value:
            inner = _yaml(item, indent + 2)
            lines.append(f"{pad}- {inner[0].lstrip()}")
            lines += inner[1:]
        return lines
    return [f"{pad}{_scalar(value)}"]


def _scalar(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _settings(transcripts: StudyTranscripts) -> list[tuple[str, str]]:
    spec, config = transcripts.study.spec, transcripts.study.config
    tasks = spec.tasks if isinstance(spec.tasks, tuple) else ()
    shown = [
        ("model", f"`{spec.model}`"),
        ("protocol", f"`{spec.protocol}`"),
        ("feedback setting Ω", f"`{spec.feedback}`"),
        ("feedback turns", f"{spec.turns} (up to {config.max_turns} generations)"),
        ("context", f"`{config.context}`"),
        ("who gives verbal feedback", f"`{spec.user}`"),
        ("annotators", ", ".join(spec.annotators)),
        ("annotators per task", str(spec.overlap)),
        ("seed", str(spec.seed)),
        ("created", transcripts.study.created_utc),
    ]
    if spec.simulator is not None:
        shown.insert(6, ("drafting simulator", f"`{spec.simulator}`"))
    if tasks:
        shown.insert(1, ("tasks", f"{len(tasks)}: " + ", ".join(tasks)))
    return shown


def _guidelines(transcripts: StudyTranscripts) -> str:
    """Which instructions the annotators had: the guidelines' SHA-256, and their text in
    the file beside the card (sessions/studies/study_share.py writes it)."""
    guidelines = transcripts.study.spec.guidelines
    if guidelines is None:
        return (
            "The study file named no guidelines, so the app showed the annotators none: "
            "whatever instructions they had came from outside convtui."
        )
    return (
        "The app showed each annotator the study's guidelines before their first assignment, "
        f"and again from its help: [`{GUIDELINES_NAME}`]({GUIDELINES_NAME}) beside this card, "
        f"SHA-256 `{guidelines.sha256}`."
    )


def _unfinished(transcripts: StudyTranscripts) -> str:
    open_ = [s for s in transcripts.sessions if not s.detail.session.finished]
    if transcripts.finished_only:
        return "Only finished sessions are included: sessions still open were left out."
    if not open_:
        return "Every session in the table had ended when it was exported."
    return (
        f"{counted(len(open_), 'session')} had not ended when exported (`session_status` "
        "`running`, "
        "or `planned` before its first turn): their rows are the turns recorded so far, "
        "and the session may have gone on since."
    )


def _of(transcripts: StudyTranscripts, name: str) -> list[StudySession]:
    return [s for s in transcripts.sessions if s.annotator == name]


def _table(rows: Sequence[Sequence[str]]) -> str:
    return "\n".join("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
