"""The README's shape: its first screen is the two set-up commands and a quick start, a table
of contents reaches every section, and every link inside the repository lands on a file and a
heading that exist."""

from __future__ import annotations

import re
import shlex
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

# The quick start must begin on the first screen (a terminal or a browser page shows about
# 40 lines of it), and stay about one screen long.
QUICK_START_BY_LINE = 45
QUICK_START_MAX_LINES = 90

LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def fenced(text: str) -> list[tuple[int, str, int | None]]:
    """(line number, line, line of its block's opening fence or None) for every line; the
    fence lines themselves are left out. CommonMark's rules: a backtick fence's info string
    holds no backtick (a line opening with ```` ```python ```` is prose), and a block closes
    on a fence of its own character at least as long, with nothing after it."""
    out: list[tuple[int, str, int | None]] = []
    fence, opened = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if not fence:
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                fence, opened = match.group(1), number
            else:
                out.append((number, line, None))
        elif (
            match
            and match.group(1)[0] == fence[0]
            and len(match.group(1)) >= len(fence)
            and not match.group(2).strip()
        ):
            fence = ""
        else:
            out.append((number, line, opened))
    return out


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the text outside fenced code blocks."""
    return [(number, line) for number, line, block in fenced(text) if block is None]


def code_blocks(text: str) -> list[tuple[int, list[str]]]:
    """(line of the opening fence, body lines) of each fenced block, in order."""
    blocks: dict[int, list[str]] = {}
    for _, line, block in fenced(text):
        if block is not None:
            blocks.setdefault(block, []).append(line)
    return list(blocks.items())


def anchor(title: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lowercase, punctuation other than
    hyphens and underscores dropped, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link keeps its words
    text = text.replace("`", "").strip().lower()
    kept = []
    for char in text:
        if char in "-_ " or unicodedata.category(char)[0] in "LN":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def headings(text: str) -> list[tuple[int, int, str]]:
    """(line number, level, title) of every heading outside code blocks."""
    out = []
    for number, line in prose_lines(text):
        match = re.match(r"^(#{1,6})\s+(.+?)\s*#*\s*$", line)
        if match:
            out.append((number, len(match.group(1)), match.group(2)))
    return out


def anchors(text: str) -> set[str]:
    """Every anchor the file's headings give, duplicates numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    out = set()
    for _, _, title in headings(text):
        base = anchor(title)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


@pytest.fixture(scope="module")
def readme() -> str:
    return README.read_text(encoding="utf-8")


def section(text: str, title: str) -> tuple[int, list[str]]:
    """The first line number and the lines of the section under the heading `title`, up to
    the next heading of the same or a higher level."""
    lines = text.splitlines()
    found = [(n, level) for n, level, t in headings(text) if t == title]
    assert found, f"no heading {title!r} in the README"
    start, level = found[0]
    end = next((n for n, lv, _ in headings(text) if n > start and lv <= level), len(lines) + 1)
    return start, lines[start : end - 1]


def test_anchor_follows_github() -> None:
    assert anchor("Is the difference real?") == "is-the-difference-real"
    assert anchor("Replay (ConvCodeBench)") == "replay-convcodebench"
    assert anchor("Past one machine: executions on a Ray cluster") == (
        "past-one-machine-executions-on-a-ray-cluster"
    )
    assert anchor("Repository tasks: levels 1 to 3 inside real projects") == (
        "repository-tasks-levels-1-to-3-inside-real-projects"
    )
    assert anchor("Report: static results, correlation and plots") == (
        "report-static-results-correlation-and-plots"
    )


def test_the_two_set_up_commands_come_first(readme: str) -> None:
    """The first code block is the set-up: exactly two commands, numbered 1 and 2, the first
    running the main job on the embedded defaults, the second the tests as `.ci/run` runs
    them, with the same extras."""
    first_line, body = code_blocks(readme)[0]
    assert first_line < QUICK_START_BY_LINE
    commands = [line for line in body if line.strip() and not line.lstrip().startswith("#")]
    comments = [line for line in body if line.lstrip().startswith("#")]
    assert len(commands) == 2, commands
    assert comments[0].startswith("# 1. install and run the main job on the embedded defaults")
    assert comments[1].startswith("# 2. install and run the whole test suite")
    main, tests = commands
    for command in commands:
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && ")
        assert "bash scripts/install-llama.sh" in command
    assert "convtui bench live" in main and "convtui report" in main
    assert "--model" not in main  # the embedded default
    assert tests.endswith("&& pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    extras = re.search(r'pip install -e "(\.\[[^\]]+\])"', tests)
    assert extras is not None
    assert f'-e "{extras.group(1)}"' in ci
    assert re.search(r"^python -m pytest\b", ci, re.M)


def test_the_quick_start_follows_the_set_up(readme: str) -> None:
    start, body = section(readme, "Quick start")
    assert start <= QUICK_START_BY_LINE
    assert len(body) <= QUICK_START_MAX_LINES, len(body)
    setup_line = code_blocks(readme)[0][0]
    # Nothing but prose lies between the set-up block and the quick start: no other section.
    assert not [h for h in headings(readme) if setup_line < h[0] < start]
    text = "\n".join(body)
    for command in (
        "convtui session --task BigCodeBench/13",
        "convtui bench live",
        "convtui report",
        "convtui compare",
    ):
        assert command in text, command
    for key in ("ctrl+j", "ctrl+q"):
        assert key in text, key


def test_the_contents_reach_every_section(readme: str) -> None:
    """Every top-level (##) and second-level (###) heading is linked from the contents, and
    every link there lands on a heading."""
    _, body = section(readme, "Contents")
    items = [line for line in body if line.lstrip().startswith("- [")]
    linked = [m.group(1) for line in items for m in LINK.finditer(line)]
    assert linked, "the contents link nothing"
    have = anchors(readme)
    for target in linked:
        assert target.startswith("#"), target
        assert target[1:] in have, f"contents link {target} matches no heading"
    wanted = {
        "#" + anchor(title)
        for _, level, title in headings(readme)
        if level in (2, 3) and title != "Contents"
    }
    missing = wanted - set(linked)
    assert not missing, f"sections missing from the contents: {sorted(missing)}"


def test_the_contents_come_before_the_first_long_section(readme: str) -> None:
    contents, _ = section(readme, "Contents")
    commands, _ = section(readme, "Commands")
    quick, _ = section(readme, "Quick start")
    assert quick < contents < commands


def test_the_commands_table_is_kept(readme: str) -> None:
    _, body = section(readme, "Commands")
    assert "| command | what it does |" in body
    rows = [line for line in body if line.startswith("| `convtui ")]
    assert len(rows) >= 20


def markdown_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.name)
def test_links_inside_the_repository_resolve(path: Path) -> None:
    """Links to a heading of the same file, or to another file of the repository (and a
    heading in it), land on something that exists."""
    text = path.read_text(encoding="utf-8")
    broken = []
    for number, line in prose_lines(text):
        for match in LINK.finditer(line):
            target = match.group(1)
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            file_part, _, fragment = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            if not linked.exists():
                broken.append(f"{path.name}:{number}: {target} (no such file)")
                continue
            if (
                fragment
                and linked.suffix == ".md"
                and fragment not in anchors(linked.read_text(encoding="utf-8"))
            ):
                broken.append(f"{path.name}:{number}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_quick_start_commands_parse(readme: str) -> None:
    """Every command the quick start tells a reader to type names a real command and options
    it takes, with values it accepts (parsed by the command line itself, not run)."""
    import importlib

    import typer

    from convtui.cli import app

    # Newer typer bundles its own click (typer._click); older ones use click itself.
    click = getattr(typer.core, "_click", None) or importlib.import_module("click")
    _, body = section(readme, "Quick start")
    text = "\n".join(body)
    commands = [
        line for _, block in code_blocks(text) for line in block if line.startswith("convtui ")
    ]
    assert len(commands) >= 5, commands
    root = typer.main.get_command(app)
    for line in commands:
        words = shlex.split(line, comments=True)[1:]
        command, ctx = root, click.Context(root, info_name="convtui")
        while hasattr(command, "list_commands"):
            name = words.pop(0)
            found = command.get_command(ctx, name)
            assert found is not None, f"{line}: no command {name!r}"
            command, ctx = found, click.Context(found, info_name=name, parent=ctx)
        try:
            command.make_context(ctx.info_name, list(words), parent=ctx.parent)
        except click.exceptions.ClickException as exc:
            raise AssertionError(f"{line}: {exc.format_message()}") from exc
