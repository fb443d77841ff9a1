"""DevEval's archive: a resumable, checksum-checked download and an unpack that trusts nothing,
tested against a real loopback server (tests/support/archive_server.py, fault injecting where
a test needs a dropped connection or a server that ignores Range) and real tar.gz files."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
from support.archive_server import (
    SQLITEDICT,
    ArchiveServer,
    hostile_archive,
    make_archive,
    serving,
)
from support.projects import SITE, TASK

from convtui.core.projects.archive import (
    ARCHIVE_NAME,
    ARCHIVE_URL,
    ArchiveError,
    Step,
    archive_url,
    download_archive,
    fetch_projects,
    parse_sha256,
    part_path,
)
from convtui.core.projects.checkout import Checkout
from convtui.core.projects.rebuild import source_of
from convtui.core.projects.unpack import ARCHIVE_MARKER, ArchiveRefused, unpack_archive

BLOB = "Source_Code/Database/sqlitedict/blob.txt"


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """No mirror from the environment; urllib's proxies would never see the loopback."""
    monkeypatch.delenv("CONVTUI_PROJECTS_URL", raising=False)
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def archive(tmp_path: Path) -> bytes:
    """A DevEval-like archive of about 300 kB (a blob that does not compress away)."""
    blob = random.Random(30).randbytes(150_000).hex()
    return make_archive(tmp_path / "made.tar.gz", {**SQLITEDICT, BLOB: blob})


def test_an_interrupted_download_resumes_from_its_part_with_a_range_request(
    tmp_path: Path, archive: bytes
) -> None:
    cut = len(archive) // 3
    dest = tmp_path / "root" / ARCHIVE_NAME
    with serving(ArchiveServer(archive, drop_after=[cut])) as server:
        with pytest.raises(ArchiveError) as stopped:
            download_archive(server.url, dest, sha256=server.sha256)
        assert part_path(dest).read_bytes() == archive[:cut]
        assert "run the same command again to resume" in str(stopped.value)
        assert not dest.exists()

        got = download_archive(server.url, dest, sha256=server.sha256)

    first, second = server.served
    assert first.range is None and first.sent == cut
    assert second.range == f"bytes={cut}-" and second.status == 206
    assert second.sent == len(archive) - cut  # the bytes already held were not sent again
    assert dest.read_bytes() == archive and not part_path(dest).exists()
    assert (got.resumed_from, got.sha256, got.checked) == (cut, server.sha256, "given")


def test_a_server_that_ignores_range_makes_the_part_start_over(
    tmp_path: Path, archive: bytes
) -> None:
    dest = tmp_path / ARCHIVE_NAME
    part_path(dest).write_bytes(b"stale bytes of another file")
    with serving(ArchiveServer(archive, ignore_range=True)) as server:
        got = download_archive(server.url, dest, sha256=server.sha256)
    assert server.served[0].range == "bytes=27-" and server.served[0].status == 200
    assert dest.read_bytes() == archive and got.sha256 == server.sha256


def test_a_whole_part_answered_416_is_complete_and_checked(tmp_path: Path, archive: bytes) -> None:
    dest = tmp_path / ARCHIVE_NAME
    part_path(dest).write_bytes(archive)
    with serving(ArchiveServer(archive)) as server:
        got = download_archive(server.url, dest, sha256=server.sha256)
    assert [s.status for s in server.served] == [416]
    assert dest.read_bytes() == archive and got.resumed_from == len(archive)


def test_the_hubs_x_linked_etag_on_its_redirect_is_the_expected_digest(
    tmp_path: Path, archive: bytes
) -> None:
    spec = ArchiveServer(archive, hub_redirect=True)
    spec.etag = spec.sha256
    with serving(spec) as server:
        got = download_archive(server.url, tmp_path / ARCHIVE_NAME)
    assert [s.status for s in server.served] == [302, 200]
    assert (got.checked, got.sha256) == ("server", spec.sha256)


def test_an_etag_that_disagrees_refuses_the_archive_in_one_line_and_deletes_it(
    tmp_path: Path, archive: bytes
) -> None:
    dest = tmp_path / ARCHIVE_NAME
    with (
        serving(ArchiveServer(archive, etag="0" * 64)) as server,
        pytest.raises(ArchiveError) as refused,
    ):
        download_archive(server.url, dest)
    message = str(refused.value)
    assert "\n" not in message and "corrupt" in message and "the server's ETag" in message
    assert not dest.exists() and not part_path(dest).exists()


def test_without_a_digest_the_one_computed_is_reported_unchecked(
    tmp_path: Path, archive: bytes
) -> None:
    with serving(ArchiveServer(archive, etag="not-a-sha256")) as server:
        got = download_archive(server.url, tmp_path / ARCHIVE_NAME)
    assert (got.checked, got.sha256) == ("unchecked", server.sha256)


def test_progress_is_reported_in_bytes_up_to_the_whole_file(tmp_path: Path, archive: bytes) -> None:
    steps: list[Step] = []
    with serving(ArchiveServer(archive)) as server:
        download_archive(server.url, tmp_path / ARCHIVE_NAME, on_step=steps.append)
    assert steps[0] == Step("download", 0, len(archive))
    assert steps[-1] == Step("download", len(archive), len(archive))
    assert [s.done for s in steps] == sorted(s.done for s in steps)


def test_an_unreachable_server_is_one_line_that_says_what_to_do(tmp_path: Path) -> None:
    with serving(ArchiveServer(b"")) as server:
        url = server.url
    with pytest.raises(ArchiveError) as failed:
        download_archive(url, tmp_path / ARCHIVE_NAME, timeout=5)
    message = str(failed.value)
    assert "\n" not in message and "cannot reach" in message and "--url" in message


def test_the_mirror_variable_replaces_the_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    assert archive_url() == ARCHIVE_URL
    monkeypatch.setenv("CONVTUI_PROJECTS_URL", "http://mirror.example/deveval/")
    assert archive_url() == f"http://mirror.example/deveval/{ARCHIVE_NAME}"
    monkeypatch.setenv("CONVTUI_PROJECTS_URL", "http://mirror.example/x.tar.gz")
    assert archive_url() == "http://mirror.example/x.tar.gz"


def test_a_sha256_is_64_hex_digits() -> None:
    assert parse_sha256(" " + "AB" * 32 + "\n") == "ab" * 32
    with pytest.raises(ArchiveError, match="not a SHA-256"):
        parse_sha256("abc")


def test_a_finished_archive_is_unpacked_into_the_root_and_its_projects_found(
    tmp_path: Path, archive: bytes
) -> None:
    root = tmp_path / "projects"
    with serving(ArchiveServer(archive)) as server:
        fetched = fetch_projects(root, url=server.url, sha256=server.sha256)
    tree = root / "Source_Code"
    assert fetched.tree == tree and fetched.projects == 2
    assert (tree / "Database/sqlitedict/sqlitedict.py").read_text() == SQLITEDICT[
        "Source_Code/Database/sqlitedict/sqlitedict.py"
    ]
    marker = json.loads((tree / ARCHIVE_MARKER).read_text())
    assert marker["sha256"] == server.sha256 and marker["url"] == server.url
    assert marker["checked"] == "given" and marker["unpacked"]
    assert source_of(tree / "Database/sqlitedict")["route"] == "archive"
    assert not (root / ARCHIVE_NAME).exists()  # deleted once unpacked unless kept
    assert [p.name for p in root.iterdir()] == ["Source_Code"]  # no staging left behind
    site = replace(
        SITE,
        project_path="Database/sqlitedict",
        completion_path="Database/sqlitedict/sqlitedict.py",
    )
    checkout = Checkout(replace(TASK, site=site), root)
    assert checkout.tree == tree / "Database/sqlitedict"
    assert (checkout.tree / site.file_in_project).is_file()


def test_a_second_fetch_finds_the_projects_there_and_downloads_nothing(
    tmp_path: Path, archive: bytes
) -> None:
    root = tmp_path / "projects"
    with serving(ArchiveServer(archive)) as server:
        fetch_projects(root, url=server.url, sha256=server.sha256)
        again = fetch_projects(root, url=server.url)
    assert again.already and again.sha256 == server.sha256 and len(server.served) == 1


@pytest.mark.parametrize(
    "kind", ["dotdot", "absolute", "symlink", "abs-symlink", "hardlink", "device"]
)
def test_a_hostile_archive_is_refused_and_writes_nothing_outside(tmp_path: Path, kind: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    archive = outside / ARCHIVE_NAME
    hostile_archive(archive, kind)
    root = outside / "a" / "b" / "projects"
    root.mkdir(parents=True)
    before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(ArchiveRefused) as refused:
        unpack_archive(archive, root, {"sha256": "x"})
    assert "nothing was unpacked" in str(refused.value) and "\n" not in str(refused.value)
    after = sorted(p for p in tmp_path.rglob("*") if not p.is_relative_to(root))
    assert after == [p for p in before if not p.is_relative_to(root)]
    assert list(root.iterdir()) == []  # no tree, no staging folder


def test_a_hostile_archive_fetched_is_deleted_and_the_error_says_so(tmp_path: Path) -> None:
    body = hostile_archive(tmp_path / "bad.tar.gz", "symlink")
    root = tmp_path / "projects"
    with serving(ArchiveServer(body)) as server, pytest.raises(ArchiveError) as refused:
        fetch_projects(root, url=server.url, sha256=server.sha256)
    assert "points outside" in str(refused.value) and "the archive was deleted" in str(
        refused.value
    )
    assert list(root.iterdir()) == []


def test_a_truncated_archive_leaves_the_tree_there_before_untouched(
    tmp_path: Path, archive: bytes
) -> None:
    root = tmp_path / "projects"
    earlier = root / "Source_Code/Database/sqlitedict/sqlitedict.py"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("the copy there before\n")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(archive[: len(archive) // 2])
    with pytest.raises(ArchiveRefused, match=r"not a whole tar\.gz"):
        unpack_archive(cut, root, {})
    assert earlier.read_text() == "the copy there before\n"
    assert [p.name for p in root.iterdir()] == ["Source_Code"]


def test_an_unpack_replaces_an_older_tree_whole(tmp_path: Path, archive: bytes) -> None:
    root = tmp_path / "projects"
    stale = root / "Source_Code/Old/gone/x.py"
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    (root / ".Source_Code.unpacking.killed").mkdir()  # what a killed unpack left
    made = tmp_path / "made.tar.gz"
    tree, projects = unpack_archive(made, root, {"sha256": "s"})
    assert projects == 2 and not stale.exists()
    assert sorted(p.name for p in root.iterdir()) == ["Source_Code"]
    assert (root / BLOB).is_file() and tree == root / "Source_Code"
