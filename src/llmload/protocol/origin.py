"""Where requests go: the base URL split once into what the transports need per request."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Origin:
    """``scheme://host:port`` plus the path prefix every request path is appended to."""

    scheme: str
    host: str  # without brackets, also for IPv6
    port: int
    path_prefix: str  # "" or "/proxy": no trailing slash

    @property
    def tls(self) -> bool:
        return self.scheme == "https"

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == _DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://{self.host_header}{self.path_prefix}"


def parse_origin(base_url: str) -> Origin:
    """Parse ``base_url``; raise ``ValueError`` saying what is wrong with it."""
    parts = urlsplit(base_url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError("the scheme must be http or https")
    if not parts.hostname:
        raise ValueError("no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("credentials do not belong in the URL (use the API key option)")
    if parts.query or parts.fragment:
        raise ValueError("a base URL has no query or fragment")
    port = parts.port  # raises ValueError for a non-numeric or out-of-range port
    return Origin(
        scheme=scheme,
        host=parts.hostname,
        port=port if port is not None else _DEFAULT_PORTS[scheme],
        path_prefix=parts.path.rstrip("/"),
    )
