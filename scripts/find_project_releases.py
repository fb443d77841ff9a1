"""Check whether a PyPI release (or a commit of a git repository) rebuilds DevEval's copy of
one of the 42 projects behind CodeIF-Bench's repository-level tasks.

DevEval's own archive of the projects (``Source_Code.tar.gz``) is not always reachable. A
candidate counts as DevEval's copy, for our purposes, when every task of the project has its
reference ``code`` at exactly lines ``signature_position[0]``..``body_position[1]`` of its
file; this script checks that, for every task of every CodeIF-Bench repository file (the
current ones and the ``-v0`` ones), and says which of the test modules the tasks name (their
``tests`` and their requirements' ``test`` ids) the candidate holds.

It also compares what the rows quote of DevEval's copy (an L-2 row's ``context``, the class
around its function; an L-3 row's ``intra_context``, its whole file, and ``cross_context``,
whole other modules) with the candidate: when several candidates hold the code at its lines,
the one that agrees with the quotes is closest to DevEval's copy. DevEval edited its copies
(it moved some imports into function bodies), so some projects fit only with ``--overlay``:
the files the rows quote whole, rebuilt from the rows, laid over the candidate.

Examples::

    # one release
    python scripts/find_project_releases.py Database/sqlitedict --pypi sqlitedict --version 2.1.0
    # every release with a source distribution, newest first, uploaded in a window
    python scripts/find_project_releases.py Utilities/boltons --pypi boltons --scan \\
        --since 2021-01-01 --until 2024-06-30
    # a commit of a repository fetched locally (a bare git directory is fine)
    python scripts/find_project_releases.py Utilities/boltons \\
        --git /work/.mirror/mahmoud+boltons/... --commit <sha>
    # every commit on any branch that changes a task's file or test module
    python scripts/find_project_releases.py Security/pycoin --git <repo> --rev=--all
    # write the project laid out as DevEval has it (for running its tests)
    python scripts/find_project_releases.py Internet/falcon --pypi falcon --version 3.1.3 \\
        --overlay --extract /tmp/Source_Code/Internet/falcon

The data files are read from ``--data`` (default ``$CONVTUI_DATA_DIR``, else
``../shared/data`` beside the repository); downloads are cached under ``--cache`` (default
/tmp/deveval-research/sdists) and checked against PyPI's sha256. Lines are compared after
dropping trailing whitespace and CR, and the report says when that mattered. Output: a short
line per candidate, or one JSON object each (``--json``); the exit status is 0 when some
candidate holds every task's code at its lines.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from abc import ABC, abstractmethod
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DATA_FILES = (
    "CodeIF-Bench-L1-repo.jsonl",
    "CodeIF-Bench-L2-repo.jsonl",
    "CodeIF-Bench-L3-repo.jsonl",
    "CodeIF-Bench-L1-repo-v0.jsonl",
    "CodeIF-Bench-L2-repo-v0.jsonl",
    "CodeIF-Bench-L3-repo-v0.jsonl",
)
DEFAULT_DATA = Path(
    os.environ.get("CONVTUI_DATA_DIR")
    or Path(__file__).resolve().parent.parent.parent / "shared" / "data"
)
DEFAULT_CACHE = Path("/tmp/deveval-research/sdists")
SDIST_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".zip")


@dataclass(frozen=True)
class SiteTask:
    """Where one task's function sits in its project, and what tests it names."""

    namespace: str
    file: str  # relative to the project root
    first: int  # 1-based, inclusive
    last: int
    code: str
    tests: tuple[str, ...]
    requirement_tests: tuple[str, ...]
    sources: tuple[str, ...]  # data files naming it (file:row)
    # What the rows quote of DevEval's copy: L-3's ``intra_context`` (the whole file, the
    # function replaced by a ``###The function: name###`` line), L-2's ``context`` (its class
    # or surroundings, the same way) and L-3's ``cross_context`` (whole files of other
    # modules, by the dotted name of something in them).
    contexts: tuple[tuple[str, str, str], ...] = ()  # (kind, name, text)


@dataclass
class TaskCheck:
    namespace: str
    file: str
    lines: str
    found_file: bool
    at_lines: bool
    needed_normalising: bool = False
    found_elsewhere: int | None = None  # 1-based line where the code starts, if moved
    # Agreement with what the row quotes of DevEval's copy (see SiteTask.contexts):
    # "file" = the whole file equals the quoted one, with the reference code in place;
    # "pieces" = every quoted piece of the surroundings occurs in the file;
    # "module" = a quoted other module equals the candidate's.
    context_agrees: list[str] = field(default_factory=list)
    context_differs: list[str] = field(default_factory=list)


@dataclass
class Report:
    project: str
    candidate: str
    top: str
    matched: int
    total: int
    tasks: list[TaskCheck]
    test_modules: dict[str, bool]
    test_functions_missing: list[str] = field(default_factory=list)
    # files taken from the rows' quotes, with how many lines the candidate's own differ by
    overlaid: dict[str, int] = field(default_factory=dict)
    sdist_url: str = ""
    sha256: str = ""
    uploaded: str = ""

    @property
    def all_match(self) -> bool:
        return self.matched == self.total

    @property
    def tests_present(self) -> bool:
        return all(self.test_modules.values())


def load_tasks(project: str, data_dir: Path) -> list[SiteTask]:
    """Every distinct task (by namespace and lines) of ``project`` in the data files."""
    found: dict[tuple[str, int, int], SiteTask] = {}
    for name in DATA_FILES:
        path = data_dir / name
        if not path.exists():
            continue
        for place, line in enumerate(path.read_text().splitlines(), 1):
            row = json.loads(line)
            if row.get("project_path") != project:
                continue
            first = row["signature_position"][0]
            last = row["body_position"][1]
            key = (row["namespace"], first, last)
            req_tests = tuple(
                spec["test"]
                for spec in row["requirements"].values()
                if isinstance(spec, dict) and spec.get("test")
            )
            source = f"{name}:{place}"
            old = found.get(key)
            if old is not None:
                if old.code != row["code"]:
                    raise SystemExit(f"{key}: the data files disagree on the reference code")
                found[key] = SiteTask(
                    old.namespace,
                    old.file,
                    first,
                    last,
                    old.code,
                    tuple(dict.fromkeys(old.tests + tuple(row["tests"]))),
                    tuple(dict.fromkeys(old.requirement_tests + req_tests)),
                    (*old.sources, source),
                    old.contexts,
                )
                continue
            found[key] = SiteTask(
                namespace=row["namespace"],
                file=row["completion_path"][len(project) + 1 :],
                first=first,
                last=last,
                code=row["code"],
                tests=tuple(row["tests"]),
                requirement_tests=req_tests,
                sources=(source,),
                contexts=_contexts(row),
            )
    if not found:
        raise SystemExit(f"no task names project {project!r}")
    return list(found.values())


def _contexts(row: dict[str, Any]) -> tuple[tuple[str, str, str], ...]:
    found: list[tuple[str, str, str]] = []
    if row.get("intra_context"):
        found.append(("file", "", row["intra_context"]))
    elif row.get("context"):
        found.append(("pieces", "", row["context"]))
    cross = row.get("cross_context") or []
    if isinstance(cross, str):
        try:
            cross = json.loads(cross)
        except ValueError:
            cross = []
    for entry in cross:
        if isinstance(entry, dict):
            found.extend(("module", str(k), str(v)) for k, v in entry.items())
    return tuple(found)


# --- candidates: a mapping from paths (relative to the project root) to file bytes ---------


class Tree(ABC):
    """Files of a candidate, read lazily, by path relative to the project root."""

    @abstractmethod
    def names(self) -> set[str]:
        """Every file's path."""

    @abstractmethod
    def read(self, path: str) -> bytes | None:
        """The file's bytes, None when there is none."""


class ArchiveTree(Tree):
    def __init__(self, blob: bytes, filename: str, top: str | None) -> None:
        self._files: dict[str, bytes] = {}
        for name, data in _archive_members(blob, filename):
            self._files[name] = data
        tops = {n.split("/", 1)[0] for n in self._files if "/" in n}
        self.top = top if top is not None else (tops.pop() if len(tops) == 1 else "")
        prefix = self.top + "/" if self.top else ""
        self._rel = {n[len(prefix) :]: n for n in self._files if n.startswith(prefix)}

    def names(self) -> set[str]:
        return set(self._rel)

    def read(self, path: str) -> bytes | None:
        full = self._rel.get(path)
        return None if full is None else self._files[full]


class GitTree(Tree):
    def __init__(self, git_dir: str, commit: str, top: str = "") -> None:
        self.git_dir = git_dir
        self.commit = commit
        self.top = top
        out = subprocess.run(
            ["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", commit],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        prefix = top + "/" if top else ""
        self._names = {n[len(prefix) :] for n in out.splitlines() if n.startswith(prefix)}

    def names(self) -> set[str]:
        return self._names

    def read(self, path: str) -> bytes | None:
        if path not in self._names:
            return None
        full = f"{self.top}/{path}" if self.top else path
        shown = subprocess.run(
            ["git", "--git-dir", self.git_dir, "show", f"{self.commit}:{full}"],
            capture_output=True,
        )
        # A partial copy of a repository can list a (large) file and lack its content.
        return shown.stdout if shown.returncode == 0 else None


class OverlayTree(Tree):
    """A candidate with some files replaced (by what the rows quote of DevEval's copy)."""

    def __init__(self, base: Tree, files: dict[str, bytes]) -> None:
        self.base = base
        self.files = files
        self.top = getattr(base, "top", "")

    def names(self) -> set[str]:
        return self.base.names() | set(self.files)

    def read(self, path: str) -> bytes | None:
        return self.files[path] if path in self.files else self.base.read(path)


def quoted_files(tree: Tree, tasks: list[SiteTask]) -> dict[str, bytes]:
    """DevEval's copy of the files the rows quote whole: an L-3 row's own file (its
    ``intra_context`` with the reference code where the marker is; the rows dropped the
    code and its line end) and the other modules in its ``cross_context``."""
    files: dict[str, bytes] = {}
    for task in tasks:
        for kind, name, text in task.contexts:
            if kind == "file":
                code = task.code.rstrip("\n") + "\n"
                at = MARKER.search(text)
                rebuilt = text if at is None else text[: at.start()] + code + text[at.end() :]
                files[task.file] = rebuilt.encode()
            elif kind == "module":
                path = _module_file(tree, name)
                if path is not None and path not in files:
                    files[path] = text.encode()
    return files


def _archive_members(blob: bytes, filename: str) -> Iterator[tuple[str, bytes]]:
    if filename.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    yield info.filename, archive.read(info)
        return
    with tarfile.open(fileobj=io.BytesIO(blob)) as archive:
        for member in archive.getmembers():
            if member.isfile():
                handle = archive.extractfile(member)
                if handle is not None:
                    yield member.name, handle.read()


# --- checks -----------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def check_task(tree: Tree, task: SiteTask) -> TaskCheck:
    result = TaskCheck(task.namespace, task.file, f"{task.first}-{task.last}", False, False)
    data = tree.read(task.file)
    if data is None:
        return result
    result.found_file = True
    held = _lines(data.decode("utf-8", errors="replace"))
    wanted = _lines(task.code.rstrip("\n"))
    span = held[task.first - 1 : task.last]
    if span == wanted:
        result.at_lines = True
        return result
    if [s.rstrip() for s in span] == [w.rstrip() for w in wanted]:
        result.at_lines = True
        result.needed_normalising = True
        return result
    stripped = [h.rstrip() for h in held]
    target = [w.rstrip() for w in wanted]
    for start in range(len(stripped) - len(target) + 1):
        if stripped[start : start + len(target)] == target:
            result.found_elsewhere = start + 1
            break
    return result


# Where a quoted context leaves its function out; the rows put it at a line's start, and
# sometimes run the next line of source onto it.
MARKER = re.compile(r"###The function: [^#\n]*###")


def _norm(text: str) -> str:
    """Text for comparing quoted contexts: trailing blanks, CRs and blank lines dropped (the
    rows' quotes lose the blank line after the function they leave out)."""
    return "\n".join(s for line in _lines(text) if (s := line.rstrip()))


def _module_file(tree: Tree, dotted: str) -> str | None:
    """The candidate file that defines the dotted name (the longest module prefix)."""
    parts = dotted.split(".")
    names = tree.names()
    for end in range(len(parts), 0, -1):
        for tail in ("/".join(parts[:end]) + ".py", "/".join(parts[:end]) + "/__init__.py"):
            hits = sorted((n for n in names if n == tail or n.endswith("/" + tail)), key=len)
            if hits:
                return hits[0]
    return None


def check_contexts(tree: Tree, task: SiteTask, result: TaskCheck) -> None:
    held = tree.read(task.file)
    own = _norm(held.decode("utf-8", errors="replace")) if held is not None else ""
    for kind, name, text in task.contexts:
        if kind == "file":
            rebuilt = MARKER.sub(lambda _: task.code.rstrip("\n") + "\n", text, count=1)
            ok = _norm(rebuilt) == own
            label = f"file {task.file}"
        elif kind == "pieces":
            pieces = [_norm(p) for p in MARKER.split(text)]
            ok = all(p in own for p in pieces if p)
            label = f"context of {task.namespace.rsplit('.', 1)[-1]}"
        else:
            path = _module_file(tree, name)
            data = tree.read(path) if path else None
            ok = data is not None and _norm(data.decode("utf-8", errors="replace")) == _norm(text)
            label = f"module {path or name}"
        (result.context_agrees if ok else result.context_differs).append(label)


def named_test_modules(tasks: list[SiteTask]) -> list[str]:
    # One row (falcon's L-3 task) wraps its requirement test ids in single quotes.
    ids = [t.strip("'\"") for task in tasks for t in task.tests + task.requirement_tests]
    return sorted({t.split("::", 1)[0] for t in ids})


def missing_test_functions(tree: Tree, tasks: list[SiteTask]) -> list[str]:
    """Task ``tests`` ids whose module is there but holds no ``def <name>`` for them."""
    missing = []
    for task in tasks:
        for test_id in task.tests:
            module, _, rest = test_id.strip("'\"").partition("::")
            data = tree.read(module)
            if data is None:
                continue
            name = rest.rsplit("::", 1)[-1].split("[", 1)[0]
            if f"def {name}(" not in data.decode("utf-8", errors="replace"):
                missing.append(test_id)
    return missing


def changed_lines(old: bytes | None, new: bytes) -> int:
    """Lines added or removed going from ``old`` to ``new`` (blank lines aside)."""
    before = _norm(old.decode("utf-8", errors="replace")).split("\n") if old else []
    after = _norm(new.decode("utf-8", errors="replace")).split("\n")
    diff = difflib.unified_diff(before, after, lineterm="", n=0)
    return sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def check_tree(project: str, candidate: str, tree: Tree, tasks: list[SiteTask]) -> Report:
    checks = [check_task(tree, task) for task in tasks]
    for task, check in zip(tasks, checks, strict=True):
        check_contexts(tree, task, check)
    names = tree.names()
    overlaid = (
        {path: changed_lines(tree.base.read(path), data) for path, data in tree.files.items()}
        if isinstance(tree, OverlayTree)
        else {}
    )
    return Report(
        project=project,
        candidate=candidate,
        top=getattr(tree, "top", ""),
        matched=sum(c.at_lines for c in checks),
        total=len(checks),
        tasks=checks,
        test_modules={m: m in names for m in named_test_modules(tasks)},
        test_functions_missing=missing_test_functions(tree, tasks),
        overlaid=overlaid,
    )


# --- PyPI ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sdist:
    version: str
    url: str
    filename: str
    sha256: str
    uploaded: str


def _get(url: str, attempts: int = 4) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "convtui-release-check"})
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                data: bytes = response.read()
                return data
        except urllib.error.URLError:
            if attempt == attempts - 1:
                raise
            time.sleep(2 * (attempt + 1))
    raise AssertionError("unreachable")


def canonical_url(url: str) -> str:
    """The files.pythonhosted.org address of a distribution file (some PyPI mirrors answer
    the JSON API with addresses relative to it)."""
    marker = "packages/packages/"
    if not url.startswith("http") and marker in url:
        return "https://files.pythonhosted.org/packages/" + url.split(marker, 1)[1]
    return url


def pypi_sdists(name: str, cache: Path) -> list[Sdist]:
    """Every release of ``name`` that has a source distribution, newest upload first."""
    cache.mkdir(parents=True, exist_ok=True)
    index = cache / f"{name.lower()}.json"
    if not index.exists():
        index.write_bytes(_get(f"https://pypi.org/pypi/{name}/json"))
    info: dict[str, Any] = json.loads(index.read_bytes())
    found = []
    for version, files in info["releases"].items():
        for entry in files:
            if entry["packagetype"] == "sdist" and entry["filename"].endswith(SDIST_SUFFIXES):
                found.append(
                    Sdist(
                        version,
                        canonical_url(entry["url"]),
                        entry["filename"],
                        entry["digests"]["sha256"],
                        entry["upload_time_iso_8601"],
                    )
                )
                break
    return sorted(found, key=lambda s: s.uploaded, reverse=True)


def download(sdist: Sdist, cache: Path) -> bytes:
    path = cache / sdist.filename
    if path.exists():
        data = path.read_bytes()
    else:
        data = _get(sdist.url)
        path.write_bytes(data)
    if hashlib.sha256(data).hexdigest() != sdist.sha256:
        path.unlink()
        raise SystemExit(f"{sdist.filename}: sha256 differs from PyPI's")
    return data


def prepared(tree: Tree, tasks: list[SiteTask], overlay: bool) -> Tree:
    return OverlayTree(tree, quoted_files(tree, tasks)) if overlay else tree


def check_sdist(
    project: str,
    name: str,
    sdist: Sdist,
    tasks: list[SiteTask],
    cache: Path,
    top: str | None,
    overlay: bool = False,
) -> tuple[Report, Tree]:
    archive = ArchiveTree(download(sdist, cache), sdist.filename, top)
    tree = prepared(archive, tasks, overlay)
    report = check_tree(project, f"{name}=={sdist.version}", tree, tasks)
    report.sdist_url = sdist.url
    report.sha256 = sdist.sha256
    report.uploaded = sdist.uploaded
    return report, tree


def extract(tree: Tree, dest: Path) -> None:
    """Write the candidate's files under ``dest`` (the project root)."""
    for name in sorted(tree.names()):
        data = tree.read(name)
        if data is None:
            print(f"not extracted (no content here): {name}", file=sys.stderr)
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def git_commits(git_dir: str, rev: str, tasks: list[SiteTask], since: str, until: str) -> list[str]:
    """Commits reachable from ``rev``, newest first, committed in the window, that change a
    task's file or a test module: between two of them those files stay as they are."""
    paths = sorted({t.file for t in tasks} | set(named_test_modules(tasks)))
    out = subprocess.run(
        [
            *("git", "--git-dir", git_dir, "log", "--format=%H"),
            *(f"--since={since}", f"--until={until}", rev, "--", *paths),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.split()


def commit_date(git_dir: str, commit: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, "log", "-1", "--format=%cI", commit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def describe(report: Report) -> str:
    tests = sum(report.test_modules.values())
    moved = [
        f"{c.namespace}@{c.found_elsewhere}" for c in report.tasks if c.found_elsewhere is not None
    ]
    absent = [c.file for c in report.tasks if not c.found_file]
    norm = any(c.needed_normalising for c in report.tasks)
    parts = [
        f"{report.candidate:40} {report.uploaded[:10]:10} code {report.matched}/{report.total}",
        f"tests {tests}/{len(report.test_modules)}",
    ]
    if norm:
        parts.append("(trailing whitespace/CR normalised)")
    if moved:
        parts.append("moved: " + ", ".join(moved))
    if absent:
        parts.append("no file: " + ", ".join(sorted(set(absent))))
    agree = sum(len(c.context_agrees) for c in report.tasks)
    quoted = agree + sum(len(c.context_differs) for c in report.tasks)
    if quoted:
        parts.append(f"context {agree}/{quoted}")
    if report.overlaid:
        differ = sum(report.overlaid.values())
        parts.append(f"overlaid {len(report.overlaid)} quoted files ({differ} lines differ)")
    if report.test_functions_missing:
        parts.append(f"{len(report.test_functions_missing)} task test functions missing")
    return "  ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("project", help="DevEval project_path, e.g. Database/sqlitedict")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--pypi", help="PyPI distribution name")
    parser.add_argument("--version", action="append", default=[], help="release(s) to check")
    parser.add_argument("--scan", action="store_true", help="check every release in the window")
    parser.add_argument("--since", default="2000-01-01", help="scan: uploaded on/after (ISO)")
    parser.add_argument("--until", default="2099-12-31", help="scan: uploaded on/before (ISO)")
    parser.add_argument(
        "--stop",
        action="store_true",
        help="scan: stop at the first full match (--git: one that also has the test modules)",
    )
    parser.add_argument("--git", help="a git directory (bare is fine)")
    parser.add_argument("--commit", action="append", default=[], help="commit(s) in --git")
    parser.add_argument(
        "--rev", default="HEAD", help="--git without --commit: scan the history of this rev"
    )
    parser.add_argument("--top", help="folder of the project root in the candidate")
    parser.add_argument(
        "--overlay",
        action="store_true",
        help="replace the files the rows quote whole (L-3 contexts) by the quoted text first",
    )
    parser.add_argument("--extract", type=Path, help="write the (last) candidate here")
    parser.add_argument("--json", action="store_true", help="one JSON object per candidate")
    args = parser.parse_args(argv)

    tasks = load_tasks(args.project, args.data)
    reports: list[tuple[Report, Tree]] = []

    def emit(report: Report) -> None:
        if args.json:
            out = asdict(report)
            out["all_match"] = report.all_match
            out["tests_present"] = report.tests_present
            print(json.dumps(out), flush=True)
        else:
            print(describe(report), flush=True)

    if args.git:
        commits = args.commit or git_commits(args.git, args.rev, tasks, args.since, args.until)
        for commit in commits:
            git_tree = prepared(GitTree(args.git, commit, args.top or ""), tasks, args.overlay)
            report = check_tree(args.project, commit, git_tree, tasks)
            report.uploaded = commit_date(args.git, commit)
            emit(report)
            reports.append((report, git_tree))
            if args.stop and report.all_match and report.tests_present:
                break
    elif args.pypi:
        sdists = pypi_sdists(args.pypi, args.cache)
        if args.version:
            chosen = [s for s in sdists if s.version in args.version]
            unknown = set(args.version) - {s.version for s in chosen}
            if unknown:
                raise SystemExit(f"no sdist on PyPI for {args.pypi} {sorted(unknown)}")
        elif args.scan:
            chosen = [s for s in sdists if args.since <= s.uploaded[:10] <= args.until]
        else:
            chosen = sdists[:1]
        if args.stop:
            for sdist in chosen:
                report, tree = check_sdist(
                    args.project, args.pypi, sdist, tasks, args.cache, args.top, args.overlay
                )
                emit(report)
                reports.append((report, tree))
                if report.all_match:
                    break
        else:
            with ThreadPoolExecutor(max_workers=6) as pool:
                for report, tree in pool.map(
                    lambda s: check_sdist(
                        args.project, args.pypi, s, tasks, args.cache, args.top, args.overlay
                    ),
                    chosen,
                ):
                    emit(report)
                    reports.append((report, tree))
    else:
        parser.error("give --pypi or --git")

    if args.extract and reports:
        extract(reports[-1][1], args.extract)
    return 0 if any(r.all_match for r, _ in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
