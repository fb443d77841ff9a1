"""Names in the host's terminal (issue 48, point 6): a bidirectional override, an isolate or a
zero-width character in a name is shown as an escape (``\\u202e``), never obeyed, by every
`convtui study` command; `study init` and `study add-annotator` refuse names that hold one,
and names that print alike (``ana``, ``Ana``, full-width ``ａｎａ``), with one line and
nothing written. The command line runs in process over real SQLite files in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import assert_one_line_error, convtui
from support.data import needs_bigcodebench
from support.studies import study_spec, write_study

pytestmark = needs_bigcodebench

# What a terminal obeys or draws as nothing: the embeddings and overrides, the isolates, the
# marks, the Arabic letter mark, the zero-width space, joiners and word joiner, the BOM.
HIDDEN = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
HIDDEN += "\u200b\u200c\u200d\u2060\ufeff"

STUDY = """
name = {name}
tasks = ["BigCodeBench/2", "BigCodeBench/3", "BigCodeBench/8"]
model = "mock:replies.jsonl"
annotators = {annotators}
"""


def study_file(folder: Path, annotators: list[str], name: str = "pilot") -> Path:
    path = folder / "STUDY.toml"
    text = STUDY.format(name=json.dumps(name), annotators=json.dumps(annotators))
    path.write_text(text, encoding="utf-8")
    return path


def assert_nothing_hidden(output: str) -> None:
    for ch in HIDDEN:
        assert ch not in output, f"U+{ord(ch):04X} reached the terminal"


@pytest.mark.parametrize(
    ("annotators", "said"),
    [
        (["ana", "Ana"], "annotator names 'ana' and 'Ana' print alike"),
        (["ana", "ben", "ＡＮＡ"], "annotator names 'ana' and 'ＡＮＡ' print alike"),  # full width
        (["Straße", "STRASSE"], "'Straße' and 'STRASSE' print alike"),
        (["ana", "a\u200bna"], "name 'a\\u200bna' holds characters that print as nothing"),
        (["ana\u202egnp.exe"], "(\\u202e): write it in visible characters only"),
        (["\u2066ana\u2069"], "(\\u2066, \\u2069)"),
        (["an\u200da", "\ufeffben"], "(\\u200d)"),
    ],
)
def test_init_refuses_names_that_print_alike_or_hold_hidden_characters(
    tmp_path, annotators, said
) -> None:
    path = study_file(tmp_path, annotators)
    db = tmp_path / "study.db"
    done = convtui("study", "init", str(path), "--db", str(db))
    assert_one_line_error(done, str(path), said)
    assert_nothing_hidden(done.stderr)
    assert not db.exists() and list(tmp_path.iterdir()) == [path]


def test_init_refuses_a_study_name_with_an_override(tmp_path: Path) -> None:
    path = study_file(tmp_path, ["ana"], name="pilot\u202e")
    done = convtui("study", "init", str(path), "--db", str(tmp_path / "study.db"))
    assert_one_line_error(done, "study name 'pilot\\u202e' holds characters")
    assert not (tmp_path / "study.db").exists()


def test_add_annotator_refuses_a_name_like_an_enrolled_one(tmp_path: Path) -> None:
    db = tmp_path / "study.db"
    made = convtui("study", "init", str(study_file(tmp_path, ["ana", "ben"])), "--db", str(db))
    assert made.returncode == 0, made.stderr
    for name, said in [
        ("ANA", "annotator names 'ana' and 'ANA' print alike"),
        ("ｂｅｎ", "annotator names 'ben' and 'ｂｅｎ' print alike"),
        ("d\u200bee", "annotator name 'd\\u200bee' holds characters that print as nothing"),
    ]:
        done = convtui("study", "add-annotator", name, "--db", str(db))
        assert_one_line_error(done, said)
    status = json.loads(convtui("study", "status", "--db", str(db), "--json").stdout)
    assert [p["name"] for p in status["annotators"]] == ["ana", "ben"]


def test_every_study_command_shows_hidden_characters_instead_of_obeying_them(tmp_path) -> None:
    # A study made before names were checked (or by another tool): its names are stored as
    # they were written, and each command shows them escaped.
    spoof, blank = "ana\u202egnp.exe", "b\u200bob"
    db = tmp_path / "study.db"
    write_study(db, study_spec(annotators=(spoof, blank, "cy"), overlap=1))
    shown = {
        "status": convtui("study", "status", "--db", str(db), columns=200),
        "token": convtui("study", "token", spoof, "--db", str(db), columns=200),
        "reassign": convtui("study", "reassign", blank, "--db", str(db), columns=200),
        "unknown": convtui("study", "token", "zed\u2067", "--db", str(db), columns=200),
    }
    for done in shown.values():
        assert_nothing_hidden(done.stdout + done.stderr)
    assert shown["status"].returncode == 0, shown["status"].stderr
    assert "ana\\u202egnp.exe" in shown["status"].stdout
    assert "b\\u200bob" in shown["status"].stdout
    assert "New token for ana\\u202egnp.exe" in shown["token"].stdout
    assert "b\\u200bob left study 'pilot'" in shown["reassign"].stdout
    assert_one_line_error(shown["unknown"], "has no annotator 'zed\\u2067'", "ana\\u202egnp.exe")
