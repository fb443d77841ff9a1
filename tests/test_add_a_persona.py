"""A persona is declared once (core/settings/persona.py): adding a third is one line there plus
its prompt files, and the command line, the app and the store take it. Checked on a copy of the
product tree, imported in a child process in place of the installed one."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from convtui.core.ccw.turn import USER_KINDS
from convtui.core.settings.persona import PERSONAS
from convtui.core.settings.protocol import DEFAULTS
from convtui.sessions import Store
from convtui.sessions.database.persona_check import checked_personas, lacks_a_persona

ROOT = Path(__file__).parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
PACKAGES = ("convtui", "core", "sessions", "tui", "benchmarks")
DECLARED = 'Persona = Literal["novice", "expert"]\n'

# Imports convtui.* from the copy at sys.argv[1], laid out as pyproject's package-dir does
# (convtui.core is core/, convtui.cli is convtui/cli/), ahead of any installed finder.
BOOT = """
import sys
from importlib.util import spec_from_file_location
from pathlib import Path

ROOT = Path(sys.argv[1])
TOP = {"core", "sessions", "tui", "benchmarks"}


class CopyFinder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        parts = name.split(".")
        if parts[0] != "convtui":
            return None
        rest = parts[1:]
        base = ROOT.joinpath(*rest) if rest and rest[0] in TOP else ROOT.joinpath("convtui", *rest)
        if (base / "__init__.py").is_file():
            return spec_from_file_location(
                name, base / "__init__.py", submodule_search_locations=[str(base)]
            )
        if base.with_suffix(".py").is_file():
            return spec_from_file_location(name, base.with_suffix(".py"))
        return None


sys.meta_path.insert(0, CopyFinder)
"""

CHECKS = """
import convtui.core.settings.persona as persona
assert persona.__file__.startswith(str(ROOT)), persona.__file__
assert persona.PERSONAS == ("novice", "expert", "mentor"), persona.PERSONAS

# The command line: the choices --help shows, and the values it parses.
import re

import typer.main
from typer.testing import CliRunner
from convtui.cli import app

cli = typer.main.get_command(app)


def parsed(*argv):
    command, args = cli, list(argv)
    while args and args[0] in getattr(command, "commands", {}):
        command = command.commands[args.pop(0)]
    return command.make_context(command.name, args).params


def choices(*command, option):
    # The values `convtui COMMAND --help` lists for option: <a|b|c>.
    shown = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "250"}).output
    found = re.search(rf"{option}\\s+<([^<>\\s]*)>", shown)
    assert found, shown
    return tuple(found[1].split("|"))


assert choices("session", option="--user") == (
    "human", "novice", "expert", "mentor", "assist:novice", "assist:expert", "assist:mentor"
)
sources = ("human", "novice", "expert", "mentor", "none")
assert choices("bench", "static", option="--user") == sources
session = parsed("session", "--user", "assist:mentor", "--feedback", "CF,EF:full,VF:mentor")
assert session["user"] == "assist:mentor", session
assert session["feedback"].one("one").verbal == "mentor"
live = parsed("bench", "live", "--feedback", "CF,EF:partial,VF:mentor", "--model", "mock:x")
assert [c.verbal for c in live["feedback"].configs] == ["mentor"]
assert len(live["feedback"].__class__.parse("all").configs) == 12  # 3 EF x (none + 3 VF)
fidelity = parsed("study", "fidelity", "--db", "x.db", "--persona", "mentor")
assert fidelity["persona"] == ["mentor"], fidelity

# ConvCodeWorld's protocol knows its own two simulated users: a third is one line, no crash.
from convtui.core.errors import ConvtuiError
from convtui.core.settings.omega import FeedbackChoice
from convtui.core.settings.protocol import PlayRules

mentor = FeedbackChoice.parse("CF,EF:full,VF:mentor").one("one")
try:
    PlayRules("convcodeworld").settings(model="mock:x", feedback=mentor, user="mentor")
except ConvtuiError as refused:
    assert "\\n" not in str(refused) and "mentor" in str(refused), refused
else:
    raise AssertionError("convcodeworld played a persona it does not have")
config = PlayRules("convtui").settings(model="mock:x", feedback=mentor, user="mentor")

# The app: its mode list, and whom a session with the new persona asks.
from convtui.core.feedback.simulators import Simulator
from convtui.core.studies.fidelity_states import prompt_sha256, session_persona
from convtui.tui.controller import USER_MODES

assert {"mentor", "assist:mentor"} <= set(USER_MODES), USER_MODES
assert session_persona(config) == "mentor"
assert not Simulator("mentor", None).sees_reference  # type: ignore[arg-type]
assert prompt_sha256("mentor") != prompt_sha256("novice")  # its own prompt files

# The store: a simulated user's session and turn, a person playing the persona, and a
# simulator of it asked on that person's state (the table that held a CHECK of personas).
from dataclasses import replace
from convtui.core.turns.record import Turn
from convtui.sessions import Store
from convtui.sessions.studies.fidelity import feedback_rows, read_states, save_feedback
from convtui.core.studies.fidelity_states import simulator_identity
from convtui.sessions.database.persona_check import checked_personas

turn = Turn(0, "x", "x = 1", True, "No compilation errors", None)
with Store.open(ROOT / "store.db") as store:
    simulated = store.create_interactive_session("BigCodeBench/13", config, "simulator")
    words = replace(turn, verbal_feedback="Try again.", feedback_source="simulator:mentor:mock:x")
    store.save_turn(simulated, words, "running")
    [back] = store.load_turns(simulated)
    assert back.feedback_source == "simulator:mentor:mock:x"
    assert store.session_config(simulated).feedback.verbal == "mentor"
    row = store.session(simulated)
    assert (row.omega.verbal, row.user_kind, row.feedback) == ("mentor", "simulator", mentor.label)
    person = store.create_interactive_session("BigCodeBench/13", config, "human")
    said = replace(turn, verbal_feedback="Mind the empty list.", feedback_source="human")
    store.save_turn(person, said, "running")
    [state] = read_states(store)
    save_feedback(store, state, simulator_identity("mock:x", "mentor"), "Sum it.", None, None)
    [row] = feedback_rows(store).values()
    assert row.identity.persona == "mentor" and row.text == "Sum it."
    assert checked_personas(store.db) == ("novice", "expert", "mentor")

# A file of the two personas' day opens, its CHECK widened and every row kept.
import shutil, sqlite3

older = ROOT / "older.db"
shutil.copy(sys.argv[2], older)
before = sqlite3.connect(older).execute("SELECT rowid, * FROM fidelity_feedback").fetchall()
with Store.open(older) as store:
    assert checked_personas(store.db) == ("novice", "expert", "mentor")
    after = store.db.execute("SELECT rowid, * FROM fidelity_feedback").fetchall()
    assert [tuple(r) for r in after] == before and before, (before, after)
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []
print("mentor accepted")
"""


def test_a_third_persona_is_one_line_and_its_prompts(tmp_path: Path) -> None:
    copy = tmp_path / "tree"
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    declaring = copy / "core" / "settings" / "persona.py"
    text = declaring.read_text()
    assert text.count(DECLARED) == 1
    declaring.write_text(text.replace(DECLARED, DECLARED.replace('"]', '", "mentor"]')))
    prompts = copy / "core" / "prompts"
    (prompts / "mentor_system.md").write_text("You mentor a programmer; be brief and kind.\n")
    (prompts / "mentor_user.md").write_text("Task:\n$prompt\n\nCode:\n$code\n\n$feedback\n")

    script = textwrap.dedent(BOOT) + textwrap.dedent(CHECKS)
    done = subprocess.run(
        [sys.executable, "-c", script, str(copy), str(FIXTURES / "store-m014_merges.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip() == "mentor accepted"


def test_convcodeworld_plays_its_own_two_simulated_users() -> None:
    """The protocol's data (settings) and the reference's (core/ccw) name the same two, and
    today they are convtui's personas too."""
    assert DEFAULTS["convcodeworld"].personas == USER_KINDS[1:] == PERSONAS
    assert DEFAULTS["convtui"].personas is None


def test_a_file_of_todays_personas_keeps_its_check_as_written(tmp_path: Path) -> None:
    """No persona is missing from m013's CHECK today: opening never rebuilds the table."""
    with Store.open(tmp_path / "s.db") as store:
        assert checked_personas(store.db) == PERSONAS
        assert not lacks_a_persona(store.db)
