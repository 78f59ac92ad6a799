"""Build transports from one frozen config: the shared parts once, one transport per user."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any, Literal

from llmload.errors import ConfigError
from llmload.redact import redact_url
from llmload.transport.base import Transport
from llmload.transport.origin import Origin, parse_origin

_PROXY_SCHEMES = ("http://", "https://", "socks5://", "socks5h://")


@dataclass(frozen=True)
class TransportConfig:
    """How to reach the target. ``base_url`` may carry a path prefix (``http://h:8000/proxy``)."""

    base_url: str
    kind: Literal["lean", "httpx"] = "lean"
    connect_timeout_s: float = 10.0
    verify: bool = True
    ca_file: str | None = None
    http2: bool = False
    proxy: str | None = None
    pool_size: int = 128  # httpx only: connections in the shared pool, one per user

    def __post_init__(self) -> None:
        try:
            parse_origin(self.base_url)
        except ValueError as exc:
            raise ConfigError("base_url", redact_url(self.base_url), str(exc)) from None
        if self.kind not in ("lean", "httpx"):
            raise ConfigError("kind", self.kind, "must be 'lean' or 'httpx'")
        timeout = self.connect_timeout_s
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ConfigError("connect_timeout_s", timeout, "must be a positive number")
        if isinstance(self.pool_size, bool) or not isinstance(self.pool_size, int):
            raise ConfigError("pool_size", self.pool_size, "must be an integer")
        if self.pool_size < 1:
            raise ConfigError("pool_size", self.pool_size, "must be at least 1")
        if self.ca_file is not None and not os.path.isfile(self.ca_file):
            raise ConfigError("ca_file", self.ca_file, "no such file")
        if self.http2 and self.kind != "httpx":
            raise ConfigError("http2", self.http2, "HTTP/2 needs the httpx transport")
        if self.proxy is not None:
            self._check_proxy(self.proxy)

    def _check_proxy(self, proxy: str) -> None:
        if self.kind != "httpx":
            raise ConfigError("proxy", proxy, "proxies need the httpx transport")
        if not proxy.startswith(_PROXY_SCHEMES):
            raise ConfigError("proxy", proxy, "must be an http, https or socks5 URL")
        if proxy.startswith("socks") and find_spec("socksio") is None:
            raise ConfigError("proxy", proxy, "a SOCKS proxy needs httpx[socks] installed")


class TransportFactory:
    """Holds what all users share (TLS context, httpx client); ``new()`` makes one user's.

    The transport modules are imported here, when a factory is built, not when this module is:
    option parsing imports ``TransportConfig`` before Locust monkey-patches, and ``ssl``, gevent
    or httpx imported before the patching deadlocked or recursed (docs/pitfalls.md).
    """

    def __init__(self, config: TransportConfig) -> None:
        self.config = config
        self._origin: Origin = parse_origin(config.base_url)
        self._ssl_context: Any = None
        self._client: Any = None  # the shared httpx.Client
        if config.kind == "httpx":
            from llmload.transport.httpx_ import build_client
            from llmload.transport.tls import client_context

            alpn = ("h2", "http/1.1") if config.http2 else ("http/1.1",)
            self._ssl_context = client_context(config.verify, config.ca_file, alpn_protocols=alpn)
            self._client = build_client(
                ssl_context=self._ssl_context,
                pool_size=config.pool_size,
                connect_timeout_s=config.connect_timeout_s,
                http2=config.http2,
                proxy=config.proxy,
            )
        elif self._origin.tls:
            from llmload.transport.tls import client_context

            self._ssl_context = client_context(config.verify, config.ca_file)

    def new(self) -> Transport:
        """One transport for one user (one stream at a time)."""
        config = self.config
        if config.kind == "httpx":
            from llmload.transport.httpx_ import HttpxTransport

            return HttpxTransport(
                self._client, self._origin, connect_timeout_s=config.connect_timeout_s
            )
        from llmload.transport.lean import LeanTransport

        return LeanTransport(
            self._origin,
            connect_timeout_s=config.connect_timeout_s,
            ssl_context=self._ssl_context,
        )

    def close(self) -> None:
        """Close the shared client; each lean transport closes its own socket."""
        client, self._client = self._client, None
        if client is not None:
            client.close()
