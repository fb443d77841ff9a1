"""The names `convtui serve` answers to. A page on another site can make an annotator's own
browser reach this server by giving its own domain name the server's address (DNS
rebinding); the browser then sends that domain in the Host header, and the server's pages
would be that site's, its cookies and all. So a request is answered only when its Host is an
address, this machine's own name, or a name the organiser listed (`serve --allow-host`, for a
reverse proxy's public name). An address cannot be rebound: only names can."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit


def host_name(host_header: str) -> str | None:
    """The name or address in a Host header, without its port, lower-cased; None when it is
    not a host at all."""
    try:
        name = urlsplit(f"//{host_header}").hostname
    except ValueError:
        return None
    return name.rstrip(".") if name else None


def is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class AllowedHosts:
    """Names besides addresses a request's Host may give."""

    names: frozenset[str]

    @classmethod
    def for_server(cls, listed: Iterable[str] = ()) -> AllowedHosts:
        own = {"localhost", socket.gethostname(), socket.getfqdn()}
        return cls(frozenset(n.lower().rstrip(".") for n in (*own, *listed) if n))

    def allows(self, host_header: str | None) -> bool:
        name = host_name(host_header or "")
        return name is not None and (is_address(name) or name in self.names)
