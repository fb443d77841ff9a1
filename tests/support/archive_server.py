"""DevEval-like archives made in a test, and a loopback HTTP server that serves one.

The server is a real ``http.server`` that honours Range requests as a CDN does (206 with
Content-Range, 416 past the end), and is also a FAULT-INJECTING handler, since no real server
misbehaves on demand: it can drop the connection after a number of body bytes, ignore Range
(answer 200 with the whole file), send the archive's SHA-256 (or a wrong one) as ``ETag``, and
answer the archive's path with a 302 carrying ``X-Linked-Etag`` as the Hugging Face Hub does
before its CDN."""

from __future__ import annotations

import hashlib
import http.server
import io
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

SQLITEDICT = {
    "Source_Code/Database/sqlitedict/sqlitedict.py": "def encode(obj):\n    return obj\n",
    "Source_Code/Database/sqlitedict/tests/test_core.py": "def test_nothing():\n    pass\n",
    "Source_Code/Internet/boto/boto/__init__.py": "__version__ = '2.49.0'\n",
}


def make_archive(path: Path, files: dict[str, str] | None = None) -> bytes:
    """A tar.gz at ``path`` holding ``files`` (name -> text; default: a tiny
    ``Source_Code/`` with sqlitedict and boto); its bytes."""
    with tarfile.open(path, "w:gz") as tarred:
        for name, text in (files or SQLITEDICT).items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tarred.addfile(info, io.BytesIO(data))
    return path.read_bytes()


def hostile_archive(path: Path, kind: str) -> bytes:
    """A tar.gz with the sqlitedict tree and one member that reaches outside: ``dotdot``
    (``../escape``), ``absolute`` (``/…/absolute``), ``symlink`` (a link to ``../../..``),
    ``abs-symlink`` (a link to ``/etc``), ``hardlink`` (a hard link to ``../escape``), or
    ``device`` (a character device, which only tarfile's ``data`` filter refuses)."""
    with tarfile.open(path, "w:gz") as tarred:
        for name, text in SQLITEDICT.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tarred.addfile(info, io.BytesIO(text.encode()))
        bad = tarfile.TarInfo()
        if kind == "dotdot":
            bad.name, bad.size = "Source_Code/../../escape", 5
        elif kind == "absolute":
            bad.name, bad.size = str(path.parent / "absolute"), 5
        elif kind == "symlink":
            bad.name, bad.type, bad.linkname = "Source_Code/out", tarfile.SYMTYPE, "../../.."
        elif kind == "abs-symlink":
            bad.name, bad.type, bad.linkname = "Source_Code/etc", tarfile.SYMTYPE, "/etc"
        elif kind == "hardlink":
            bad.name, bad.type, bad.linkname = "Source_Code/hard", tarfile.LNKTYPE, "../escape"
        elif kind == "device":
            bad.name, bad.type = "Source_Code/null", tarfile.CHRTYPE
        else:
            raise ValueError(kind)
        tarred.addfile(bad, io.BytesIO(b"owned") if bad.isreg() else None)
    return path.read_bytes()


@dataclass
class Served:
    """One request the server answered: its Range header and how many body bytes it sent."""

    path: str
    range: str | None
    status: int
    sent: int


@dataclass
class ArchiveServer:
    """What the server serves and how it misbehaves (fault injection, see the module)."""

    body: bytes
    etag: str | None = None  # sent as ETag (quoted) when set
    hub_redirect: bool = False  # /resolve/… answers 302 with X-Linked-Etag = etag
    ignore_range: bool = False
    drop_after: list[int] = field(default_factory=list)  # per request, in order: then hang up
    served: list[Served] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/resolve/main/Source_Code.tar.gz"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.body).hexdigest()


def _handler(spec: ArchiveServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            wanted = self.headers.get("Range")
            if spec.hub_redirect and self.path.startswith("/resolve/"):
                self.send_response(302)
                self.send_header("Location", "/cdn/Source_Code.tar.gz")
                self.send_header("X-Linked-Etag", f'"{spec.etag}"')
                self.send_header("Content-Length", "0")
                # Recorded before the client can see the answer, so that the list is in the
                # order the requests came (the next one waits for this one's answer).
                spec.served.append(Served(self.path, wanted, 302, 0))
                self.end_headers()
                return
            size = len(spec.body)
            start = 0
            status = 200
            if wanted and not spec.ignore_range:
                start = int(wanted.removeprefix("bytes=").split("-")[0])
                status = 206
                if start >= size:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    spec.served.append(Served(self.path, wanted, 416, 0))
                    self.end_headers()
                    return
            payload = spec.body[start:]
            self.send_response(status)
            self.send_header("Content-Length", str(len(payload)))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
            if spec.etag and not spec.hub_redirect:
                self.send_header("ETag", f'"{spec.etag}"')
            cut = spec.drop_after.pop(0) if spec.drop_after else None
            sent = payload if cut is None else payload[:cut]
            spec.served.append(Served(self.path, wanted, status, len(sent)))
            self.end_headers()
            self.wfile.write(sent)
            self.wfile.flush()
            if cut is not None:
                self.close_connection = True

    return Handler


@contextmanager
def serving(spec: ArchiveServer) -> Iterator[ArchiveServer]:
    """``spec`` served on a loopback port for the block."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(spec))
    spec.port = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield spec
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
