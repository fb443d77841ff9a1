"""Where dataset files come from: lookup order, download into the cache, offline errors.

Everything runs against the real data files (``$CONVTUI_DATA_DIR``, by default ``../shared/data``
beside the repository). Downloads go to a real HTTP server on 127.0.0.1 serving copies of those
files; nothing leaves the machine.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from support.data import DATA as DATA_DIR

from convtui.core.catalog import datasets
from convtui.core.catalog.datasets import BIGCODEBENCH, CODEIF, DATASETS, DatasetSource, locate
from convtui.core.errors import ConvtuiError, DataNotFoundError

REPO_ROOT = Path(__file__).resolve().parents[2]
# Read at import, before the autouse fixture below clears the variable for each test.


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No ambient data dir, mirror, offline flag or proxy; a private, empty user cache."""
    for name in ("CONVTUI_DATA_DIR", "CONVTUI_DATA_URL", "CONVTUI_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    # urllib honours proxy variables; a proxy would never see our loopback server.
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    xdg = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    return xdg / "convtui"


@pytest.fixture
def real_file() -> Path:
    path = DATA_DIR / BIGCODEBENCH.filename
    assert path.is_file(), f"missing {path}: set CONVTUI_DATA_DIR to the shared data directory"
    return path


def _copy_into(directory: Path, src: Path, name: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    dest = directory / (name or src.name)
    shutil.copyfile(src, dest)
    return dest


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    requests: list[str]

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.requests.append(self.path)
        super().do_GET()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[Path, str, list[str]]]:
    """A real HTTP server on loopback serving ``tmp_path/www``: (root, base URL, paths hit)."""
    root = tmp_path / "www"
    root.mkdir()
    hits: list[str] = []
    handler = type("Handler", (_QuietHandler,), {"requests": hits})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
    )
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}/data", hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class Mirror(NamedTuple):
    """The loopback server with a copy of the real BigCodeBench file under ``/data``."""

    file: Path  # the copy it serves
    base: str  # the URL of /data
    hits: list[str]  # the paths requested


@pytest.fixture
def mirror(serve: tuple[Path, str, list[str]], real_file: Path) -> Mirror:
    root, base, hits = serve
    return Mirror(_copy_into(root / "data", real_file), base, hits)


# --------------------------------------------------------------------------- sources


@pytest.mark.parametrize("source", list(DATASETS.values()), ids=list(DATASETS))
def test_sha256_constants_match_the_shared_files(source: DatasetSource) -> None:
    digest = hashlib.sha256((DATA_DIR / source.filename).read_bytes()).hexdigest()
    assert digest == source.sha256


def test_sources_describe_the_public_releases() -> None:
    assert BIGCODEBENCH.filenames[:3] == (
        "BigCodeBench-v0.1.0.jsonl.gz",
        "BigCodeBench.jsonl.gz",
        "BigCodeBench-v0.1.0.jsonl",
    )
    assert BIGCODEBENCH.url.endswith("/releases/download/v0.1.0_hf/BigCodeBench.jsonl.gz")
    assert CODEIF.url.endswith("/function/L_1_part_1.jsonl")
    assert datasets.get_source("BigCodeBench") is BIGCODEBENCH
    with pytest.raises(ConvtuiError, match="known datasets: bigcodebench, codeif"):
        datasets.get_source("humaneval")


def test_cache_dir_follows_xdg_then_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, clean_env: Path
) -> None:
    assert datasets.cache_dir() == clean_env
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert datasets.cache_dir() == tmp_path / "home" / ".cache" / "convtui"
    # A relative XDG_CACHE_HOME is invalid per the spec and ignored.
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")
    assert datasets.cache_dir() == tmp_path / "home" / ".cache" / "convtui"


# --------------------------------------------------------------------------- lookup order


def test_explicit_path_beats_env_beats_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, real_file: Path, clean_env: Path
) -> None:
    explicit = _copy_into(tmp_path / "explicit", real_file)
    env_copy = _copy_into(tmp_path / "env", real_file)
    cached = _copy_into(clean_env, real_file)
    monkeypatch.setenv("CONVTUI_DATA_DIR", str(env_copy.parent))
    monkeypatch.setenv("CONVTUI_OFFLINE", "1")

    assert locate("bigcodebench", explicit) == explicit  # a file
    assert locate("bigcodebench", explicit.parent) == explicit  # a directory holding it
    assert locate("bigcodebench") == env_copy
    monkeypatch.delenv("CONVTUI_DATA_DIR")
    assert locate("bigcodebench") == cached


def test_explicit_file_is_used_whatever_its_name(tmp_path: Path, real_file: Path) -> None:
    odd = _copy_into(tmp_path, real_file, "my-copy.bin")
    assert locate(BIGCODEBENCH, odd) == odd


def test_alternative_file_names_are_accepted(tmp_path: Path, real_file: Path) -> None:
    alt = _copy_into(tmp_path / "d", real_file, "BigCodeBench.jsonl.gz")
    assert locate(BIGCODEBENCH, alt.parent) == alt
    # The canonical name wins when both are there.
    canonical = _copy_into(tmp_path / "d", real_file)
    assert locate(BIGCODEBENCH, alt.parent) == canonical


def test_env_dir_without_the_file_falls_through_to_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, real_file: Path, clean_env: Path
) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("CONVTUI_DATA_DIR", str(tmp_path / "empty"))
    cached = _copy_into(clean_env, real_file)
    assert locate("bigcodebench") == cached


def test_explicit_path_that_lacks_the_file_does_not_fall_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, real_file: Path
) -> None:
    # The env dir has the file, but the user named another place: say so, do not guess.
    monkeypatch.setenv("CONVTUI_DATA_DIR", str(real_file.parent))
    missing = tmp_path / "nope"
    with pytest.raises(DataNotFoundError) as info:
        locate("bigcodebench", missing)
    msg = str(info.value)
    assert "\n" not in msg
    assert f"--data {missing} does not exist" in msg
    assert "--data PATH" in msg and "CONVTUI_DATA_DIR" in msg

    (tmp_path / "emptydir").mkdir()
    with pytest.raises(DataNotFoundError, match=r"holds none of BigCodeBench-v0\.1\.0\.jsonl\.gz"):
        locate("bigcodebench", tmp_path / "emptydir")


# --------------------------------------------------------------------------- download


def test_download_into_cache_from_loopback_server(
    monkeypatch: pytest.MonkeyPatch, real_file: Path, clean_env: Path, mirror: Mirror
) -> None:
    monkeypatch.setenv("CONVTUI_DATA_URL", mirror.base + "/")  # a trailing slash is fine

    path = locate("bigcodebench")

    assert path == clean_env / BIGCODEBENCH.filename
    assert path.read_bytes() == real_file.read_bytes()
    assert mirror.hits == ["/data/BigCodeBench-v0.1.0.jsonl.gz"]
    assert sorted(p.name for p in clean_env.iterdir()) == [BIGCODEBENCH.filename]
    # Now it is cached: found without a second request.
    assert locate("bigcodebench") == path
    assert len(mirror.hits) == 1


def test_checksum_mismatch_is_rejected_and_leaves_no_file(
    monkeypatch: pytest.MonkeyPatch, real_file: Path, clean_env: Path, mirror: Mirror
) -> None:
    mirror.file.write_bytes(real_file.read_bytes()[:-10] + b"corrupted!")
    monkeypatch.setenv("CONVTUI_DATA_URL", mirror.base)

    with pytest.raises(DataNotFoundError) as info:
        locate("bigcodebench")

    msg = str(info.value)
    assert "\n" not in msg
    assert "sha256 mismatch" in msg and BIGCODEBENCH.sha256 in msg
    assert mirror.hits  # the server was really asked
    assert list(clean_env.iterdir()) == []  # neither the file nor a partial one


def test_download_raises_download_error_directly(
    tmp_path: Path, real_file: Path, mirror: Mirror
) -> None:
    dest = tmp_path / "dl"
    got = datasets.download(BIGCODEBENCH, dest, url=f"{mirror.base}/{BIGCODEBENCH.filename}")
    assert got.read_bytes() == real_file.read_bytes()
    with pytest.raises(datasets.DownloadError, match="HTTP 404"):
        datasets.download(BIGCODEBENCH, dest, url=f"{mirror.base}/missing.jsonl.gz")
    assert sorted(p.name for p in dest.iterdir()) == [BIGCODEBENCH.filename]


def test_unknown_checksum_is_not_verified(
    tmp_path: Path, serve: tuple[Path, str, list[str]]
) -> None:
    root, base, _ = serve
    (root / "data").mkdir()
    (root / "data" / "x.jsonl").write_text('{"a": 1}\n')
    source = DatasetSource("x", "X", ("x.jsonl",), f"{base}/x.jsonl", sha256=None)
    assert datasets.download(source, tmp_path).read_text() == '{"a": 1}\n'


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_offline_error_names_every_place_and_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, clean_env: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("CONVTUI_DATA_DIR", str(empty))
    # Nothing listens on this port: the connection is refused, as offline.
    monkeypatch.setenv("CONVTUI_DATA_URL", f"http://127.0.0.1:{_closed_port()}/data")

    start = time.monotonic()
    with pytest.raises(DataNotFoundError) as info:
        locate("codeif")
    assert time.monotonic() - start < 5

    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("CodeIF-Bench L1 (function) data not found")
    assert "CodeIF-Bench-L1-function.jsonl" in msg
    assert f"CONVTUI_DATA_DIR={empty}" in msg
    assert f"cache {clean_env}" in msg
    assert "download failed" in msg and "127.0.0.1" in msg
    assert "pass --data PATH" in msg and "set CONVTUI_DATA_DIR" in msg
    assert not clean_env.exists() or list(clean_env.iterdir()) == []


def test_offline_flag_skips_download(
    monkeypatch: pytest.MonkeyPatch, clean_env: Path, serve: tuple[Path, str, list[str]]
) -> None:
    _, base, hits = serve
    monkeypatch.setenv("CONVTUI_DATA_URL", base)
    monkeypatch.setenv("CONVTUI_OFFLINE", "1")
    with pytest.raises(DataNotFoundError) as info:
        locate("bigcodebench")
    msg = str(info.value)
    assert "CONVTUI_DATA_DIR (unset)" in msg
    assert "no download (CONVTUI_OFFLINE=1)" in msg
    assert hits == []
    assert not clean_env.exists()


def test_silent_server_times_out_fast(tmp_path: Path) -> None:
    # Accepts connections (the kernel completes the handshake) but never answers.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/x"
        start = time.monotonic()
        with pytest.raises(datasets.DownloadError):
            datasets.download(CODEIF, tmp_path / "dl", url=url, timeout=0.5)
        assert time.monotonic() - start < 5
    assert list((tmp_path / "dl").iterdir()) == []
