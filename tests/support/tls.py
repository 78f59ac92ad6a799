"""A throwaway certificate authority: a server certificate for 127.0.0.1/localhost and the CA
file a client must trust to verify it (``trustme``, in memory; the CA file is written once)."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import trustme


@dataclass(frozen=True)
class LocalCA:
    ca_file: str  # PEM of the CA: what the client is told to trust
    server_context: ssl.SSLContext  # serves a certificate for 127.0.0.1 and localhost


def local_ca(directory: Path) -> LocalCA:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(server_context)
    server_context.set_alpn_protocols(["http/1.1"])
    path = directory / "local-ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return LocalCA(str(path), server_context)
