"""Transport configuration, origins and the TLS context: validated once, no sockets."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from llmload.errors import ConfigError
from llmload.protocol.origin import parse_origin
from llmload.transport.factory import TransportConfig, TransportFactory
from llmload.transport.httpx_ import HttpxTransport
from llmload.transport.lean import LeanTransport
from llmload.transport.tls import client_context


def test_origin_parts() -> None:
    origin = parse_origin("https://Example.com/proxy/")
    assert (origin.scheme, origin.host, origin.port, origin.path_prefix) == (
        "https",
        "example.com",
        443,
        "/proxy",
    )
    assert origin.host_header == "example.com" and origin.tls
    v6 = parse_origin("http://[::1]:8000")
    assert v6.host_header == "[::1]:8000" and v6.base_url == "http://[::1]:8000"


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"base_url": "ftp://h"}, "base_url"),
        ({"base_url": "http://"}, "base_url"),
        ({"base_url": "http://h:99999"}, "base_url"),
        ({"base_url": "http://u:p@h"}, "base_url"),
        ({"base_url": "http://h/?q=1"}, "base_url"),
        ({"kind": "curl"}, "kind"),
        ({"connect_timeout_s": 0}, "connect_timeout_s"),
        ({"connect_timeout_s": float("nan")}, "connect_timeout_s"),
        ({"pool_size": 0}, "pool_size"),
        ({"pool_size": True}, "pool_size"),
        ({"ca_file": "/no/such/ca.pem"}, "ca_file"),
        ({"http2": True}, "http2"),
        ({"proxy": "http://proxy:3128"}, "proxy"),
        ({"kind": "httpx", "proxy": "ftp://proxy"}, "proxy"),
    ],
)
def test_bad_options_name_themselves(options: dict[str, object], option: str) -> None:
    values: dict[str, object] = {"base_url": "http://127.0.0.1:8000", **options}
    with pytest.raises(ConfigError) as info:
        TransportConfig(**values)  # type: ignore[arg-type]
    assert info.value.option == option
    assert option in str(info.value)


def test_factory_builds_one_transport_per_user() -> None:
    lean = TransportFactory(TransportConfig("http://127.0.0.1:8000"))
    first, second = lean.new(), lean.new()
    assert isinstance(first, LeanTransport) and first is not second
    lean.close()
    shared = TransportFactory(TransportConfig("https://127.0.0.1:8000", kind="httpx", http2=True))
    assert isinstance(shared.new(), HttpxTransport)
    shared.close()


def test_tls_context_verifies_by_default() -> None:
    ctx = client_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    assert isinstance(ctx, ssl.SSLContext)


def test_tls_context_without_verification() -> None:
    ctx = client_context(verify=False)
    assert ctx.verify_mode == ssl.CERT_NONE and not ctx.check_hostname


def test_tls_context_trusts_a_given_ca(tmp_path: Path) -> None:
    trustme = pytest.importorskip("trustme")
    path = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(path))
    ctx = client_context(ca_file=str(path))
    assert len(ctx.get_ca_certs()) == 1
