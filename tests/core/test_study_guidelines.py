"""A study file's ``guidelines`` (core/studies/guidelines.py): the Markdown file it names,
relative to the study file, read once into the spec with the SHA-256 of its bytes; every
file that cannot serve is one error naming the study file, the guidelines file and the fix;
a stored spec gives the same guidelines back, and one whose text no longer matches its
digest is refused."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import pytest

from convtui.core.studies.guidelines import MAX_BYTES, Guidelines
from convtui.core.studies.spec import StudyError, StudySpec

STUDY = """
name = "pilot"
guidelines = "docs/guidelines.md"
tasks = ["BigCodeBench/2", "BigCodeBench/3"]
model = "mock:replies.jsonl"
annotators = ["ana", "ben"]
"""
# Bytes as an editor may save them: CRLF, non-ASCII, a byte-order mark.
SAVED = "\ufeff# Read me\r\n\r\nName the failing test. Ça va.\r\n".encode()


def study(tmp_path: Path, guidelines: bytes | None = SAVED, text: str = STUDY) -> Path:
    path = tmp_path / "study" / "STUDY.toml"
    (path.parent / "docs").mkdir(parents=True)
    path.write_text(text)
    if guidelines is not None:
        (path.parent / "docs" / "guidelines.md").write_bytes(guidelines)
    return path


def test_the_guidelines_file_is_read_beside_the_study_file_with_its_digest(tmp_path) -> None:
    spec = StudySpec.from_toml(study(tmp_path))
    assert spec.guidelines is not None
    assert spec.guidelines.text.encode("utf-8") == SAVED  # no newline translation
    assert spec.guidelines.sha256 == hashlib.sha256(SAVED).hexdigest()


def test_a_study_file_without_guidelines_has_none(tmp_path) -> None:
    text = STUDY.replace('guidelines = "docs/guidelines.md"\n', "")
    assert StudySpec.from_toml(study(tmp_path, None, text)).guidelines is None


def test_the_stored_spec_gives_the_same_guidelines_back(tmp_path) -> None:
    spec = StudySpec.from_toml(study(tmp_path))
    # As the store writes it (sessions/studies/study_rows.py): the spec as JSON, no simulator given.
    written = asdict(spec) | {"tasks": list(spec.tasks), "annotators": list(spec.annotators)}
    stored = json.loads(json.dumps({k: v for k, v in written.items() if v is not None}))
    assert StudySpec.from_mapping(stored) == spec
    stored["guidelines"]["text"] += "\nAnd one more rule."
    with pytest.raises(StudyError, match="do not match their SHA-256"):
        StudySpec.from_mapping(stored)


@pytest.mark.parametrize(
    ("saved", "key", "said"),
    [
        (None, None, "docs/guidelines.md does not exist: write it, or correct the 'guidelines'"),
        (b"", None, "docs/guidelines.md is empty: write the guidelines in it, or remove"),
        (b" \n\t\r\n", None, "is empty"),
        (b"caf\xe9 au lait\n", None, "docs/guidelines.md is not UTF-8 text (byte 3): save it"),
        (b"#" * (MAX_BYTES + 1), None, "docs/guidelines.md is over 128 KiB: shorten it"),
        (SAVED, 'guidelines = "docs"', "docs is a folder, not a regular file"),
        (SAVED, "guidelines = 3", "'guidelines' must be the path of a Markdown file"),
        (SAVED, 'guidelines = ""', "'guidelines' must be the path of a Markdown file"),
        (SAVED, "guidelines = { text = 'x', sha256 = 'y' }", "must be the path of a Markdown"),
    ],
)
def test_a_guidelines_file_that_cannot_serve_is_one_error_naming_both_files(
    tmp_path, saved, key, said
) -> None:
    text = STUDY if key is None else STUDY.replace('guidelines = "docs/guidelines.md"', key)
    path = study(tmp_path, saved, text)
    with pytest.raises(StudyError) as caught:
        StudySpec.from_toml(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and said in message
    assert "\n" not in message


def test_a_file_of_exactly_the_limit_is_taken() -> None:
    assert Guidelines.of("#" * MAX_BYTES).sha256 == hashlib.sha256(b"#" * MAX_BYTES).hexdigest()
