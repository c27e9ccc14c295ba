"""Fetch guard: only public http(s) URLs, every redirect re-checked, connect where checked."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

import httpx
import pytest
from support.local_web import serving

from plait.adapters.hosts.mcp import netguard
from plait.adapters.hosts.mcp.netguard import (
    blocked_reason,
    check_url,
    fetch_guarded,
    parse_address,
)
from plait.state.base.errors import PlaitError, UnsafeURL

REFUSED = [
    "file:///etc/passwd",
    "gopher://127.0.0.1:6379/_INFO",
    "ftp://example.com/x",
    "javascript:alert(1)",
    "http://",
    "http://127.0.0.1/",
    "http://127.0.0.1:6379/",
    "http://localhost:8000/",
    "http://LOCALHOST./",
    "http://127.1/",
    "http://2130706433/",
    "http://017700000001/",
    "http://0177.0.0.1/",
    "http://0x7f.0.0.1/",
    "http://0x7f000001/",
    "http://0x7f.1/",
    "http://0.0.0.0:8080/",
    "http://0/",
    "http://[::]/",
    "http://[::1]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:a9fe:a9fe::]/",
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://2852039166/latest/meta-data/",
    "http://169.254.170.2/v2/credentials",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://metadata/computeMetadata/v1/",
    "http://100.100.100.200/latest/meta-data/",
    "http://10.0.0.5/",
    "http://172.16.3.4/",
    "http://192.168.1.1/",
    "http://192.168.1.1./",
    "http://100.64.0.1/",
    "http://169.254.1.2/",
    "http://[fe80::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://[fec0::1]/",
    "http://224.0.0.251/",
    "http://[ff02::1]/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://192.0.2.10/",
    "http://[2001:db8::1]/",
    "https://user:hunter2pass@127.0.0.1/?token=abc123",
]


@pytest.mark.parametrize("url", REFUSED)
def test_check_url_refuses_local_private_metadata_and_odd_spellings(url: str) -> None:
    with pytest.raises(UnsafeURL) as refused:
        check_url(url)
    assert isinstance(refused.value, PlaitError) and isinstance(refused.value, ValueError)
    assert "refusing to fetch" in str(refused.value) and refused.value.reason in str(refused.value)
    assert "hunter2pass" not in str(refused.value) and "abc123" not in str(refused.value)


@pytest.mark.parametrize(
    "url",
    [
        "http://1.1.1.1/",
        "https://8.8.8.8:443/dns",
        "http://[2606:4700:4700::1111]/",
        "http://134744072/",
    ],
)
def test_check_url_lets_public_addresses_through(url: str) -> None:
    check_url(url)


def test_check_url_message_says_why() -> None:
    with pytest.raises(UnsafeURL, match=r"2130706433 is 127\.0\.0\.1, a loopback address"):
        check_url("http://2130706433/")
    with pytest.raises(UnsafeURL, match="an IPv6 form of 169.254.169.254, a cloud metadata"):
        check_url("http://[::ffff:169.254.169.254]/")
    with pytest.raises(UnsafeURL, match="only http and https can be fetched, not file"):
        check_url("file:///etc/passwd")


@pytest.mark.parametrize(
    ("url", "allow"),
    [
        ("http://127.0.0.1:8000/", ["127.0.0.1"]),
        ("http://2130706433/", ["127.0.0.1"]),
        ("http://localhost:8000/", ["LOCALHOST"]),
        ("http://[::1]:8000/", ["[::1]"]),
    ],
)
def test_check_url_allows_listed_hosts(url: str, allow: list[str]) -> None:
    check_url(url, allow_hosts=allow)


def test_check_url_refuses_when_any_resolved_address_is_private(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resolve_to(monkeypatch, {"mixed.example": ["93.184.216.34", "10.1.2.3"]})
    with pytest.raises(UnsafeURL, match=r"mixed\.example resolves to 10\.1\.2\.3, a private"):
        check_url("https://mixed.example/")
    resolve_to(monkeypatch, {"public.example": ["93.184.216.34", "2606:2800:220:1::1"]})
    check_url("https://public.example/")


def test_check_url_refuses_hosts_that_do_not_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    resolve_to(monkeypatch, {})
    with pytest.raises(UnsafeURL, match="does not resolve"):
        check_url("https://nowhere.example/")


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("0x7F000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("10.1.258", "10.1.1.2"),
        ("0", "0.0.0.0"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),
        ("fe80::1%eth0", "fe80::1"),
        ("256.1.1.1", None),
        ("1.2.3.4.5", None),
        ("08.1.1.1", None),
        ("example.com", None),
        ("deadbeef", None),
    ],
)
def test_parse_address_reads_every_spelling(host: str, address: str | None) -> None:
    parsed = parse_address(host)
    assert (str(parsed) if parsed else None) == address


def test_blocked_reason_passes_public_addresses() -> None:
    for spelled in ("93.184.216.34", "::ffff:93.184.216.34", "1.1"):
        address = parse_address(spelled)
        assert address is not None and blocked_reason(address) is None


# -- fetching -------------------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        port = cast(ThreadingHTTPServer, self.server).server_port
        routes = {
            "/": (200, {}, b"hello from loopback"),
            "/big": (200, {}, b"x" * 100_000),
            "/to-ip": (302, {"Location": f"http://127.0.0.1:{port}/"}, b""),
            "/to-metadata": (302, {"Location": "http://169.254.169.254/latest/meta-data/"}, b""),
            "/to-decimal": (307, {"Location": "http://2130706433/"}, b""),
            "/relative": (301, {"Location": "/"}, b""),
            "/loop": (302, {"Location": "/loop"}, b""),
        }
        status, headers, body = routes.get(self.path, (404, {}, b"no"))
        self.send_response(status)
        for name, value in {"Content-Type": "text/plain", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1; yields its base URL by name (localhost)."""
    with serving(_Handler) as port:
        yield f"http://localhost:{port}"


@pytest.fixture
async def client() -> Any:
    async with httpx.AsyncClient(trust_env=False, timeout=5) as client:
        yield client


async def test_fetch_guarded_refuses_a_local_server_unless_allowed(
    local_server: str, client: httpx.AsyncClient
) -> None:
    with pytest.raises(UnsafeURL, match="localhost resolves to 127.0.0.1, a loopback address"):
        await fetch_guarded(client, local_server + "/")
    page = await fetch_guarded(client, local_server + "/", allow_hosts=["localhost"])
    assert (page.status_code, page.text, page.truncated) == (200, "hello from loopback", False)
    assert page.content_type == "text/plain"


async def test_fetch_guarded_follows_allowed_redirects(
    local_server: str, client: httpx.AsyncClient
) -> None:
    page = await fetch_guarded(client, local_server + "/relative", allow_hosts=["localhost"])
    assert page.text == "hello from loopback" and page.url == local_server + "/"


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/to-ip", "127.0.0.1 is a loopback address"),
        ("/to-metadata", "169.254.169.254 is a cloud metadata address"),
        ("/to-decimal", "2130706433 is 127.0.0.1, a loopback address"),
    ],
)
async def test_fetch_guarded_refuses_redirects_from_an_allowed_host_to_private_ones(
    local_server: str, client: httpx.AsyncClient, path: str, why: str
) -> None:
    with pytest.raises(UnsafeURL, match=why):
        await fetch_guarded(client, local_server + path, allow_hosts=["localhost"])


async def test_fetch_guarded_stops_redirect_loops_and_caps_the_body(
    local_server: str, client: httpx.AsyncClient
) -> None:
    with pytest.raises(UnsafeURL, match="redirects more than 3 times"):
        await fetch_guarded(
            client, local_server + "/loop", allow_hosts=["localhost"], max_redirects=3
        )
    page = await fetch_guarded(
        client, local_server + "/big", allow_hosts=["localhost"], max_bytes=1000
    )
    assert len(page.content) == 1000 and page.truncated


async def test_fetch_guarded_connects_to_the_address_it_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The resolver answers once; the request goes to that IP, naming the host for Host and SNI."""
    answers = resolve_to(monkeypatch, {"docs.example": ["93.184.216.34"]})
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/moved":
            return httpx.Response(302, headers={"Location": "http://10.0.0.5/admin"})
        return httpx.Response(200, text="docs", headers={"Content-Type": "text/html"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        page = await fetch_guarded(client, "https://docs.example:8443/guide?page=2")
        with pytest.raises(UnsafeURL, match=r"10\.0\.0\.5 is a private address"):
            await fetch_guarded(client, "https://docs.example/moved")
    first = seen[0]
    assert str(first.url) == "https://93.184.216.34:8443/guide?page=2"
    assert first.headers["host"] == "docs.example:8443"
    assert first.extensions["sni_hostname"] == "docs.example"
    assert page.url == "https://docs.example:8443/guide?page=2" and page.text == "docs"
    assert len(seen) == 2 and answers == ["docs.example", "docs.example"]


def resolve_to(monkeypatch: pytest.MonkeyPatch, table: dict[str, list[str]]) -> list[str]:
    """Answer name lookups from ``table`` (the outer boundary: no DNS server in tests)."""
    asked: list[str] = []

    def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        asked.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (
                socket.AF_INET6 if ":" in address else socket.AF_INET,
                socket.SOCK_STREAM,
                6,
                "",
                (address, port),
            )
            for address in table[host]
        ]

    monkeypatch.setattr(netguard.socket, "getaddrinfo", getaddrinfo)
    return asked
