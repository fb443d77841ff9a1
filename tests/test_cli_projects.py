"""``convtui projects fetch`` in process (tests/support/cli.py) against a loopback server
serving a small DevEval-like archive (tests/support/archive_server.py, fault injecting where
a test needs a dropped connection)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.archive_server import ArchiveServer, hostile_archive, make_archive, serving
from support.cli import invoke

from convtui.benchmarks.commands.catalog.projects import ArchiveProgress
from convtui.core.projects.checkout import env_python

SQLITEDICT_PY = "Source_Code/Database/sqlitedict/sqlitedict.py"


def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """No mirror or projects folder from the environment; no proxy between us and loopback."""
    for name in ("CONVTUI_PROJECTS_URL", "CONVTUI_PROJECTS_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_proxy(monkeypatch)


@pytest.fixture
def archive(tmp_path: Path) -> bytes:
    return make_archive(tmp_path / "made.tar.gz")


@dataclass
class FirstFetch:
    done: subprocess.CompletedProcess[str]
    root: Path
    url: str


@pytest.fixture(scope="module")
def first_fetch(tmp_path_factory: pytest.TempPathFactory) -> FirstFetch:
    """A fetch into an empty projects root, as a person runs it the first time: downloaded,
    unpacked, and each project's environment built (pip, some seconds a project). The one
    build of this module: the other fetches that unpack start from a root holding these
    environments, ready (``with_envs``), which a fetch keeps as they are."""
    folder = tmp_path_factory.mktemp("first-fetch")
    root = folder / "projects"
    with pytest.MonkeyPatch.context() as monkeypatch:
        _no_proxy(monkeypatch)
        with serving(ArchiveServer(make_archive(folder / "made.tar.gz"))) as server:
            done = invoke(
                "projects", "fetch", "--projects", str(root), "--url", server.url,
                "--sha256", server.sha256,
            )  # fmt: skip
    return FirstFetch(done, root, server.url)


def with_envs(root: Path, first_fetch: FirstFetch) -> Path:
    """``root`` holding the environments ``first_fetch`` built (copied)."""
    shutil.copytree(first_fetch.root / "envs", root / "envs", symlinks=True)
    return root


def test_fetch_downloads_the_archive_and_unpacks_it_under_the_projects_root(
    first_fetch: FirstFetch,
) -> None:
    done, root, url = first_fetch.done, first_fetch.root, first_fetch.url
    assert done.returncode == 0, done.stderr
    assert (root / SQLITEDICT_PY).is_file()
    assert "DevEval's 2 projects are under" in done.stdout and "as --sha256 says" in done.stdout
    assert f"downloading {url}" in done.stderr and "unpacking into" in done.stderr
    assert not (root / "Source_Code.tar.gz").exists()
    # Each project unpacked has its environment built, with pytest in it.
    for project in ("Database/sqlitedict",):
        assert f"environment of {project}: ready" in done.stderr
        python = env_python(root, project)
        assert subprocess.run([python, "-c", "import pytest"], check=False).returncode == 0


def test_fetch_refuses_a_corrupt_archive_in_one_line_and_unpacks_nothing(
    tmp_path: Path, archive: bytes
) -> None:
    root = tmp_path / "projects"
    wrong = hashlib.sha256(b"another archive").hexdigest()
    with serving(ArchiveServer(archive)) as server:
        done = invoke("projects", "fetch", "--projects", str(root), "--url", server.url,
                      "--sha256", wrong)  # fmt: skip
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode != 0
    assert len(errors) == 1 and "corrupt" in errors[0] and wrong in errors[0]
    assert not (root / "Source_Code").exists()
    assert sorted(p.name for p in root.iterdir()) == []  # no archive, no part, no tree


def test_an_interrupted_fetch_says_to_run_it_again_and_the_rerun_resumes(
    tmp_path: Path, archive: bytes, first_fetch: FirstFetch
) -> None:
    root = with_envs(tmp_path / "projects", first_fetch)
    cut = len(archive) // 2
    args = ["projects", "fetch", "--projects", str(root)]
    with serving(ArchiveServer(archive, drop_after=[cut])) as server:
        first = invoke(*args, "--url", server.url, "--sha256", server.sha256)
        second = invoke(*args, "--url", server.url, "--sha256", server.sha256)
    assert first.returncode != 0 and "run the same command again to resume" in first.stderr
    assert second.returncode == 0, second.stderr
    assert "resuming at" in second.stderr
    assert server.served[1].range == f"bytes={cut}-"
    assert server.served[1].sent == len(archive) - cut
    assert (root / SQLITEDICT_PY).is_file()


def test_fetch_keeps_the_archive_when_asked_and_a_second_fetch_does_nothing(
    tmp_path: Path, archive: bytes, first_fetch: FirstFetch
) -> None:
    root = with_envs(tmp_path / "projects", first_fetch)
    with serving(ArchiveServer(archive, etag=hashlib.sha256(archive).hexdigest())) as server:
        done = invoke("projects", "fetch", "--projects", str(root), "--url", server.url,
                      "--keep-archive")  # fmt: skip
        again = invoke("projects", "fetch", "--projects", str(root), "--url", server.url)
    assert done.returncode == 0, done.stderr
    assert (root / "Source_Code.tar.gz").read_bytes() == archive
    assert "as the server says" in done.stdout and "kept at" in done.stdout
    assert again.returncode == 0 and "already under" in again.stdout
    assert len(server.served) == 1


def test_a_mirror_that_sends_no_digest_leaves_the_archive_unverified_and_says_so(
    tmp_path: Path, archive: bytes, first_fetch: FirstFetch
) -> None:
    root = with_envs(tmp_path / "projects", first_fetch)
    with serving(ArchiveServer(archive)) as server:
        mirror = server.url.rsplit("/", 1)[0]
        done = invoke("projects", "fetch", "--projects", str(root),
                      environ={"CONVTUI_PROJECTS_URL": mirror})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "warning:" in done.stderr and "was not verified" in done.stderr
    assert server.served[0].path == "/resolve/main/Source_Code.tar.gz"
    assert (root / SQLITEDICT_PY).is_file()


def test_fetch_refuses_a_hostile_archive_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    body = hostile_archive(tmp_path / "bad.tar.gz", "dotdot")
    root = tmp_path / "deep" / "projects"
    with serving(ArchiveServer(body)) as server:
        done = invoke("projects", "fetch", "--projects", str(root), "--url", server.url)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode != 0 and len(errors) == 1 and "climbs out" in errors[0]
    assert not (tmp_path / "escape").exists() and not (tmp_path / "deep" / "escape").exists()
    assert list(root.iterdir()) == []


def test_a_sha256_that_is_not_one_is_a_usage_error() -> None:
    done = invoke("projects", "fetch", "--sha256", "abc", "--url", "http://127.0.0.1:9/x")
    assert done.returncode == 2 and "not a SHA-256" in done.stderr


def test_fetch_help_says_what_it_downloads_how_big_where_and_that_it_resumes() -> None:
    shown = " ".join(invoke("projects", "fetch", "--help").stdout.split())
    for words in ("Source_Code.tar.gz", "0.9 GB", "LJ0815/DevEval", "resumes", "--sha256",
                  "--keep-archive", "$CONVTUI_PROJECTS_DIR", "$CONVTUI_PROJECTS_URL"):  # fmt: skip
        assert words in shown, words


def test_plain_progress_lines_say_megabytes_and_how_far() -> None:
    bar = ArchiveProgress(unit=None, every_s=None, counts_solved=False, disable=True)
    task = bar.add_task("Source_Code.tar.gz", total=900_000_000)
    bar.update(task, completed=450_000_000)
    (line,) = bar.plain_lines()
    assert line.startswith("450.0 MB of 900.0 MB (50%), elapsed ")
    assert line.endswith(" · Source_Code.tar.gz")
