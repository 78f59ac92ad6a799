"""The client TLS context: built once per run and shared by every user.

Building a context loads a CA bundle (~20 ms of CPU); one per user blocked the gevent hub for
seconds at 512 users (docs/pitfalls.md). Verification is on unless the user turns it off.
"""

from __future__ import annotations

import ssl

import gevent.ssl


def client_context(
    verify: bool = True,
    ca_file: str | None = None,
    *,
    alpn_protocols: tuple[str, ...] = ("http/1.1",),
) -> ssl.SSLContext:
    """A client context trusting ``ca_file`` (else the system store), offering ``alpn_protocols``.

    It is gevent's ``SSLContext`` (a subclass of the standard one) whether or not the process is
    monkey-patched: its ``wrap_socket`` yields a cooperative socket on a gevent socket, so a TLS
    handshake or read never blocks the hub; elsewhere it behaves as the standard context.
    """
    ctx: ssl.SSLContext = gevent.ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if verify:
        if ca_file is not None:
            ctx.load_verify_locations(cafile=ca_file)
        else:
            ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(list(alpn_protocols))
    return ctx
