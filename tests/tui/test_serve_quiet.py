"""What `convtui serve` writes about connections, and the defaults it is given: a flood of
broken connections costs the log a few lines, never a traceback each (tui/web/quiet_log.py),
and the command line's defaults are the connection pool's own (one value, two places)."""

from __future__ import annotations

import asyncio
import inspect
import logging

import pytest

from convtui.cli.serve import serve
from convtui.tui.web.connections import Caps, network_of
from convtui.tui.web.hosts import AllowedHosts
from convtui.tui.web.quiet_log import LINES_PER_S, quiet_libraries
from convtui.tui.web.serve_study import ServeOptions


def test_a_thousand_library_errors_are_a_few_lines_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def flood() -> None:
        quiet_libraries()
        library = logging.getLogger("asyncio")
        for n in range(1000):
            try:
                raise OSError(24, f"Too many open files {n}")
            except OSError:
                library.error("socket.accept() out of system resource", exc_info=True)
        await asyncio.sleep(1.1)
        library.error("one more", exc_info=False)

    with caplog.at_level(logging.INFO, logger="convtui.serve"):
        asyncio.run(flood())
    lines = [r.getMessage() for r in caplog.records if r.name == "convtui.serve"]
    assert 1 <= len(lines) <= 2 * LINES_PER_S + 2, lines
    assert "OSError: [Errno 24] Too many open files 0" in lines[0]
    assert all("Traceback" not in line and "\n" not in line for line in lines)
    assert "more like it not shown" in lines[-1]  # what was left out is counted
    for name in ("asyncio", "aiohttp"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True


def test_the_command_lines_defaults_are_the_pools() -> None:
    given = inspect.signature(serve).parameters
    caps = Caps()
    assert given["max_connections"].default == caps.waiting
    assert given["max_per_network"].default == caps.per_network
    assert given["idle_timeout"].default == caps.idle_s
    assert given["app_memory_mb"].default == ServeOptions.app_memory_mb
    assert given["max_app_opens"].default == ServeOptions.app_opens_per_minute


def test_networks_are_what_an_attacker_cannot_vary_cheaply() -> None:
    assert network_of("127.0.0.1") == network_of("127.9.9.9") == network_of("::1") == "loopback"
    assert network_of("::ffff:127.0.0.2") == "loopback"
    assert network_of("2001:db8::1") == network_of("2001:db8::ffff:1") == "2001:db8::/64"
    assert network_of("2001:db8:0:1::1") != network_of("2001:db8::1")
    assert network_of("10.0.0.1") != network_of("10.0.0.2")
    assert network_of(None) == "unknown"


def test_hosts_answered_are_addresses_and_names_given() -> None:
    hosts = AllowedHosts.for_server(["Study.Example.org."])
    for ok in ("127.0.0.1:8000", "[::1]:8000", "localhost", "study.example.org:443", "10.1.2.3"):
        assert hosts.allows(ok), ok
    for refused in ("evil.example", "evil.example:8000", "", None, "localhost.evil.example"):
        assert not hosts.allows(refused), refused


def test_the_servers_log_lines_show_bidi_and_escapes_rather_than_obey_them() -> None:
    from convtui.tui.web.server import _VisibleFormatter

    record = logging.LogRecord(
        "convtui.serve", logging.INFO, __file__, 0, "%s: app opened", ("ana\u202egnp\x1b[2J",), None
    )
    line = _VisibleFormatter("%(message)s").format(record)
    assert "\u202e" not in line and "\x1b" not in line
    assert line == "ana\\u202egnp\u241b[2J: app opened"
