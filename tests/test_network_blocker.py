"""The autouse blocker must stop any test from leaving the machine, and let loopback through."""

import socket
import urllib.request

import pytest

from tests.conftest import NetworkBlockedError

pytestmark = pytest.mark.unit


def test_connect_to_public_address_is_blocked():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        with pytest.raises(NetworkBlockedError):
            s.connect(("93.184.216.34", 80))


def test_dns_resolution_is_blocked():
    with pytest.raises(NetworkBlockedError):
        socket.getaddrinfo("example.com", 443)


def test_urllib_is_blocked():
    with pytest.raises((NetworkBlockedError, OSError)) as info:
        urllib.request.urlopen("http://example.com", timeout=2)
    assert "about to" in str(info.value) or isinstance(info.value.__cause__ if hasattr(info.value, "__cause__") else None, NetworkBlockedError) or "NetworkBlocked" in repr(info.value)


def test_loopback_is_allowed():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as c:
        c.connect(("127.0.0.1", port))
    server.close()
