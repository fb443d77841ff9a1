"""Where dataset files come from.

Datasets are never shipped with convtui (docs/design.md#data). A dataset file is looked up, in
order, at an explicit path (``--data``), in ``$CONVTUI_DATA_DIR``, in the user cache
(``$XDG_CACHE_HOME/convtui`` or ``~/.cache/convtui``), and finally downloaded from the
dataset's public release into that cache. ``$CONVTUI_DATA_URL`` replaces the release URL with a
mirror (a base URL under which the canonical file name is fetched; tests serve files on
loopback this way) and ``$CONVTUI_OFFLINE=1`` skips the download.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from convtui.core.errors import ConvtuiError, DataNotFoundError

ENV_DATA_DIR = "CONVTUI_DATA_DIR"
ENV_DATA_URL = "CONVTUI_DATA_URL"
ENV_OFFLINE = "CONVTUI_OFFLINE"

# Short on purpose: without network a lookup must fail in seconds, not hang. The files are
# about 1 MB, so a healthy connection never comes near it (it bounds each socket operation,
# not the whole transfer).
DEFAULT_TIMEOUT_S = 10.0

_CHUNK = 1 << 16
_TRUTHY = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class DatasetSource:
    """One dataset file: the names it may go by, where it is published, and its checksum.

    ``filenames[0]`` is the canonical name: the one a download is saved under in the cache and
    fetched under from a ``$CONVTUI_DATA_URL`` mirror. The others are names the same data is
    commonly found under (the release asset's own name, an uncompressed copy).
    """

    name: str
    title: str
    filenames: tuple[str, ...]
    url: str
    sha256: str | None = None

    @property
    def filename(self) -> str:
        """The canonical file name."""
        return self.filenames[0]


BIGCODEBENCH = DatasetSource(
    name="bigcodebench",
    title="BigCodeBench v0.1.0_hf",
    filenames=(
        "BigCodeBench-v0.1.0.jsonl.gz",
        "BigCodeBench.jsonl.gz",
        "BigCodeBench-v0.1.0.jsonl",
        # The name the `bigcodebench` package caches this release under, decompressed.
        "BigCodeBench-v0.1.0_hf.jsonl",
    ),
    # The `bigcodebench` package builds its download URL the same way:
    # releases/download/<version>/BigCodeBench.jsonl.gz, with version v0.1.0_hf here.
    url=(
        "https://github.com/bigcode-project/bigcodebench-annotation/releases/download/"
        "v0.1.0_hf/BigCodeBench.jsonl.gz"
    ),
    sha256="58142744edaf6036387f8761701f1b353432b0ed33f2edec1de8a59e7431ef7a",
)

CODEIF = DatasetSource(
    name="codeif",
    title="CodeIF-Bench L1 (function)",
    filenames=("CodeIF-Bench-L1-function.jsonl", "L_1_part_1.jsonl"),
    url="https://raw.githubusercontent.com/zhu-zhu-ding/CodeIF-Bench/main/function/L_1_part_1.jsonl",
    sha256="198bbd931946cdd614b4b53239a003ccdf33a440fec8af921db612e75b5f1bac",
)

# The repository-level files, as the authors publish them on their branch v1 (the same rows
# as main's repo/*.jsonl, L-2's two parts in one file).
_CODEIF_V1 = "https://raw.githubusercontent.com/zhu-zhu-ding/CodeIF-Bench/v1/data"


def _codeif_repo(level: int, published: str, sha256: str) -> DatasetSource:
    """CodeIF-Bench's level ``level`` at repository scale, published as ``published``."""
    return DatasetSource(
        name=f"codeif-l{level}" + ("-repo" if level == 1 else ""),
        title=f"CodeIF-Bench L{level} (repository)",
        filenames=(f"CodeIF-Bench-L{level}-repo.jsonl", published),
        url=f"{_CODEIF_V1}/{published}",
        sha256=sha256,
    )


CODEIF_L1_REPO = _codeif_repo(
    1, "L_1_part_2.jsonl", "06bb7ff27741fa73d3f79913811f8c08a5a51177cedd12891dd0c3605ab00cbe"
)
CODEIF_L2 = _codeif_repo(
    2, "L_2.jsonl", "b343c78dd64559d93a952192e84b7d7b51e0bab9dbe8deac55d44f29386a8015"
)
CODEIF_L3 = _codeif_repo(
    3, "L_3.jsonl", "c51aa987f8dba3a2532657626e88e7f02306a8f96a6d16f1634480e1e3c6f0e2"
)
# Every file of the codeif suite, in the order their tasks are numbered.
CODEIF_FILES: tuple[DatasetSource, ...] = (CODEIF, CODEIF_L1_REPO, CODEIF_L2, CODEIF_L3)

DATASETS: dict[str, DatasetSource] = {
    s.name: s for s in (BIGCODEBENCH, CODEIF, CODEIF_L1_REPO, CODEIF_L2, CODEIF_L3)
}


class DownloadError(ConvtuiError):
    """A download failed: network error, HTTP error, or a checksum mismatch."""


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUTHY


def is_offline() -> bool:
    """Whether ``$CONVTUI_OFFLINE`` asks to never download."""
    return _env_flag(ENV_OFFLINE)


def cache_dir() -> Path:
    """The user cache directory for convtui (``$XDG_CACHE_HOME/convtui`` or ``~/.cache/convtui``).

    Not created here: only a download needs it to exist.
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    # The XDG spec says a relative value is invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "convtui"


def get_source(name: str | DatasetSource) -> DatasetSource:
    """The :class:`DatasetSource` called ``name`` (a source passes through)."""
    if isinstance(name, DatasetSource):
        return name
    try:
        return DATASETS[name.strip().lower()]
    except KeyError:
        known = ", ".join(DATASETS)
        raise ConvtuiError(f"unknown dataset {name!r}; known datasets: {known}") from None


def download_url(source: DatasetSource) -> str:
    """Where ``source`` is downloaded from: the ``$CONVTUI_DATA_URL`` mirror, else its release."""
    base = os.environ.get(ENV_DATA_URL, "").strip()
    if base:
        return base.rstrip("/") + "/" + source.filename
    return source.url


def _find_in_dir(directory: Path, source: DatasetSource) -> Path | None:
    for name in source.filenames:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def download(
    source: DatasetSource,
    dest_dir: Path,
    *,
    url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> Path:
    """Download ``source`` into ``dest_dir`` under its canonical name and return the path.

    The body is streamed to a temporary file in ``dest_dir`` and renamed into place only once
    complete and, when ``source.sha256`` is known, verified: an interrupted or corrupt download
    never leaves a file a later lookup would trust. Raises :class:`DownloadError`.
    """
    # Imported here: every command that reads tasks loads this module, few ever download.
    import http.client
    import urllib.error
    import urllib.request

    url = url or download_url(source)
    dest = dest_dir / source.filename
    try:
        dest_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DownloadError(f"cannot create {dest_dir}: {exc.strerror or exc}") from exc

    # Same directory as the destination, so the final rename is atomic (same filesystem).
    fd, tmp_name = tempfile.mkstemp(dir=dest_dir, prefix=f".{source.filename}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        request = urllib.request.Request(url, headers={"User-Agent": "convtui"})
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=timeout) as resp:
            while chunk := resp.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
        got = digest.hexdigest()
        if source.sha256 is not None and got != source.sha256:
            raise DownloadError(f"sha256 mismatch for {url} (expected {source.sha256}, got {got})")
        os.replace(tmp, dest)
    except DownloadError:
        tmp.unlink(missing_ok=True)
        raise
    except urllib.error.HTTPError as exc:
        tmp.unlink(missing_ok=True)
        raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        tmp.unlink(missing_ok=True)
        raise DownloadError(f"{url}: {exc.reason}") from exc
    except (OSError, ValueError, http.client.HTTPException) as exc:
        # OSError covers timeouts and resets, HTTPException a body cut short (IncompleteRead),
        # ValueError a malformed URL.
        tmp.unlink(missing_ok=True)
        raise DownloadError(f"{url}: {exc}") from exc
    except BaseException:
        # KeyboardInterrupt included: never leave a partial file behind.
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
    return dest


def locate(
    source: str | DatasetSource,
    data: Path | str | None = None,
    *,
    offline: bool | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> Path:
    """Find the file of ``source``, downloading it into the cache if needed.

    ``data`` is an explicit file (used whatever its name) or a directory holding the file under
    one of ``source.filenames``. An explicit ``data`` that does not yield the file is an error
    on its own: the user named a place, so silently reading another copy would hide a typo.
    ``offline`` defaults to ``$CONVTUI_OFFLINE``. Raises :class:`DataNotFoundError` with a
    one-line message listing every place looked at and how to fix it.
    """
    src = get_source(source)
    names = ", ".join(src.filenames)
    fix = (
        f"fix: pass --data PATH (the file, or a directory holding {src.filename}) "
        f"or set {ENV_DATA_DIR} to a directory holding it"
    )

    if data is not None:
        path = Path(data).expanduser()
        if path.is_file():
            return path
        if path.is_dir():
            found = _find_in_dir(path, src)
            if found is not None:
                return found
            where = f"directory {path} holds none of {names}"
        else:
            where = f"{path} does not exist"
        raise DataNotFoundError(f"{src.title} data not found: --data {where}; {fix}")

    looked: list[str] = []
    env_dir = os.environ.get(ENV_DATA_DIR, "").strip()
    if env_dir:
        # A relative value means the directory convtui starts in: made absolute here, the
        # path found stays right wherever it is used later, and a miss names where it looked
        # (the README exports ../shared/data, which only the clone's own folder finds).
        env_path = Path(os.path.abspath(Path(env_dir).expanduser()))
        found = _find_in_dir(env_path, src)
        if found is not None:
            return found
        relative = "" if Path(env_dir).expanduser().is_absolute() else f" (from {env_dir})"
        looked.append(f"{ENV_DATA_DIR}={env_path}{relative}")
    else:
        looked.append(f"{ENV_DATA_DIR} (unset)")

    cache = cache_dir()
    found = _find_in_dir(cache, src)
    if found is not None:
        return found
    looked.append(f"cache {cache}")

    if offline is None:
        offline = is_offline()
    if offline:
        looked.append(f"no download ({ENV_OFFLINE}=1)")
    else:
        url = download_url(src)
        try:
            return download(src, cache, url=url, timeout=timeout)
        except DownloadError as exc:
            looked.append(f"download failed: {_one_line(str(exc))}")

    raise DataNotFoundError(
        f"{src.title} data not found (looked for {names}): " + "; ".join(looked) + f"; {fix}"
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())
