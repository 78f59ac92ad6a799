"""Build transports from one frozen config: the shared parts once, one transport per user."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llmload.config.settings import TransportConfig
from llmload.protocol.origin import Origin, parse_origin
from llmload.transport.base import Transport

if TYPE_CHECKING:  # imported for real only once Locust has patched the process (see below)
    import ssl

    import httpx

__all__ = ["TransportConfig", "TransportFactory"]  # the config is importable from here too


class TransportFactory:
    """Holds what all users share (TLS context, httpx client); ``new()`` makes one user's.

    The transport modules are imported here, when a factory is built, not when this module is:
    option parsing imports ``TransportConfig`` before Locust monkey-patches, and ``ssl``, gevent
    or httpx imported before the patching deadlocked or recursed (docs/pitfalls.md).
    """

    def __init__(self, config: TransportConfig) -> None:
        self.config = config
        self._origin: Origin = parse_origin(config.base_url)
        self._ssl_context: ssl.SSLContext | None = None
        self._client: httpx.Client | None = None  # kind httpx: shared by every user
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

            assert self._client is not None, "built with the factory, for kind httpx"
            return HttpxTransport(self._client, self._origin, connect_timeout_s=config.connect_timeout_s)
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
