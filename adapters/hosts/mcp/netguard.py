"""Fetch guard: plait fetches only public http(s) URLs, and connects where it checked.

:func:`check_url` refuses a URL whose scheme is not http(s), or whose host is, or resolves (every
address of it) to, loopback, private (RFC 1918, unique-local), shared (CGNAT 100.64/10),
link-local, cloud metadata, unspecified, multicast, reserved or otherwise non-global addresses —
in any spelling: decimal, octal and hex IPv4 (``2130706433``, ``0177.1``, ``0x7f.0.0.1``), IPv6
with a zone, and IPv6 forms that embed an IPv4 address (mapped ``::ffff:…``, compatible ``::…``,
NAT64 ``64:ff9b::…``, 6to4 ``2002::…``). Hosts in ``allow_hosts`` skip the check.

:func:`fetch_guarded` follows redirects itself and checks every hop. Against DNS rebinding (a name
that resolves to a public address for the check and to a private one for the connection) it
resolves once, checks all the addresses, and sends the request to the first checked address: the
URL's host is replaced by that IP, the ``Host`` header and the TLS server name (SNI, which is also
what the certificate is verified against) keep the original name. A proxy configured on the client
would resolve nothing: it is handed the checked IP. Allowed hosts are connected to by name.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from plait.state.base.errors import UnsafeURL
from plait.state.base.redact import redact_url

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWED_SCHEMES = frozenset({"http", "https"})
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
METADATA_HOSTNAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
        "metadata.platformequinix.com",
    }
)
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle …
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.253",  # AWS VPC DNS
        "169.254.169.123",  # AWS time sync
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::253",
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (legacy)
    )
)
_SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_LOOSE_IPV4 = re.compile(r"(?:0[xX][0-9a-fA-F]*|[0-9]+)(?:\.(?:0[xX][0-9a-fA-F]*|[0-9]+)){0,3}")


# -- what a URL names -----------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Target:
    """A URL's parts that decide where a request goes."""

    url: str
    scheme: str
    host: str
    port: int
    address: IPAddress | None  # the host, when it is an IP address in any spelling

    @property
    def safe_url(self) -> str:
        """The URL without credentials, fit for messages."""
        return redact_url(self.url)


def parse_target(url: str) -> Target:
    """Split ``url`` into what the guard checks; refuse what no lookup can make safe.

    Raises:
        UnsafeURL: not an http(s) URL, no host, or a cloud metadata host name.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as error:
        raise UnsafeURL(url, f"it is not a valid URL ({error})") from error
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise UnsafeURL(url, f"only http and https can be fetched, not {scheme or 'no scheme'}")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise UnsafeURL(url, "it names no host")
    if host in METADATA_HOSTNAMES:
        raise UnsafeURL(url, f"{host} is a cloud metadata service")
    default_port = 443 if scheme == "https" else 80
    return Target(
        url=url, scheme=scheme, host=host, port=port or default_port, address=parse_address(host)
    )


def parse_address(host: str) -> IPAddress | None:
    """The IP address ``host`` spells, in any form a resolver accepts, or ``None`` for a name.

    >>> str(parse_address("2130706433")), str(parse_address("0x7f.1")), str(parse_address("[::1]"))
    ('127.0.0.1', '127.0.0.1', '::1')
    """
    host = host.strip("[]").split("%", 1)[0]  # an IPv6 zone (``fe80::1%eth0``) names no address
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return _loose_ipv4(host)


def _loose_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """``inet_aton`` spellings: 1 to 4 parts, each decimal, ``0x`` hex or ``0`` octal.

    The last part fills the remaining bytes (``127.1`` is 127.0.0.1, ``2130706433`` too).
    """
    if not _LOOSE_IPV4.fullmatch(host):
        return None
    try:
        parts = [int(part, 0) if not _octal(part) else int(part, 8) for part in host.split(".")]
    except ValueError:
        return None
    *leading, last = parts
    if any(part > 0xFF for part in leading) or last >= 1 << (8 * (4 - len(leading))):
        return None
    value = last
    for index, part in enumerate(leading):
        value |= part << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _octal(part: str) -> bool:
    """``0177``: a leading zero means octal (``0`` alone and ``0x…`` do not)."""
    return len(part) > 1 and part.startswith("0") and part[1] not in "xX"


# -- which addresses are refused ------------------------------------------------------------------
def blocked_reason(address: IPAddress) -> str | None:
    """Why ``address`` may not be fetched from, or ``None`` when it is a public address."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        inner = blocked_reason(embedded)
        return f"an IPv6 form of {embedded}, {inner}" if inner else None
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    for reason, refused in (
        ("an unspecified address", address.is_unspecified),
        ("a loopback address", address.is_loopback),
        ("a link-local address", address.is_link_local),
        ("a multicast address", address.is_multicast),
        ("a shared (CGNAT) address", address in _SHARED_ADDRESS_SPACE),
        ("a private address", address.is_private),
        (
            "a site-local address",
            isinstance(address, ipaddress.IPv6Address) and address.is_site_local,
        ),
        ("a reserved address", address.is_reserved),
        ("not a public address", not address.is_global),
    ):
        if refused:
            return reason
    return None


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address inside a mapped, compatible, NAT64 or 6to4 IPv6 address."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    packed = int(address)
    if address in _NAT64 or (packed >> 32 == 0 and packed > 1):  # 64:ff9b::a.b.c.d, ::a.b.c.d
        return ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    return None


def check_addresses(target: Target, addresses: Sequence[IPAddress]) -> None:
    """Refuse the target unless every address it resolves to is public.

    Raises:
        UnsafeURL: naming the first refused address and why.
    """
    if not addresses:
        raise UnsafeURL(target.url, f"{target.host} resolves to no address")
    for address in addresses:
        reason = blocked_reason(address)
        if not reason:
            continue
        if target.address is None:
            raise UnsafeURL(target.url, f"{target.host} resolves to {address}, {reason}")
        if str(address) == target.host.strip("[]"):
            raise UnsafeURL(target.url, f"{address} is {reason}")
        raise UnsafeURL(target.url, f"{target.host} is {address}, {reason}")


def is_allowed(target: Target, allow_hosts: Collection[str]) -> bool:
    """Whether the host is listed (by name, or by address in any spelling)."""
    allowed = {host.strip().strip("[]").rstrip(".").lower() for host in allow_hosts}
    if target.host.strip("[]") in allowed:
        return True
    return target.address is not None and str(target.address) in allowed


def check_url(url: str, *, allow_hosts: Collection[str] = ()) -> None:
    """Refuse a URL that is not http(s) or reaches anything but public addresses.

    The host is resolved (blocking) and every address is checked; hosts in ``allow_hosts`` are
    not checked at all.

    Raises:
        UnsafeURL: a ``ValueError`` naming the URL (without credentials) and why.
    """
    target = parse_target(url)
    if not is_allowed(target, allow_hosts):
        check_addresses(target, [target.address] if target.address else _resolve(target))


def _resolve(target: Target) -> list[IPAddress]:
    """Every address the host resolves to (blocking)."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise UnsafeURL(target.url, f"{target.host} does not resolve ({error})") from error
    return _addresses(infos)


async def _resolve_async(target: Target) -> list[IPAddress]:
    """Every address the host resolves to, without blocking the event loop."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise UnsafeURL(target.url, f"{target.host} does not resolve ({error})") from error
    return _addresses(infos)


def _addresses(infos: Sequence[tuple[object, ...]]) -> list[IPAddress]:
    """The distinct addresses of ``getaddrinfo`` results, in order."""
    seen: dict[IPAddress, None] = {}
    for info in infos:
        sockaddr = info[4]
        if isinstance(sockaddr, tuple) and sockaddr:
            address = parse_address(str(sockaddr[0]))
            if address is not None:
                seen.setdefault(address)
    return list(seen)


# -- fetching -------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class GuardedResponse:
    """What a guarded fetch returns: the final URL, status, content type and (capped) body."""

    url: str
    status_code: int
    content_type: str
    encoding: str
    content: bytes
    truncated: bool

    @property
    def text(self) -> str:
        """The body decoded (undecodable bytes replaced)."""
        return self.content.decode(self.encoding, errors="replace")


async def fetch_guarded(
    client: httpx.AsyncClient,
    url: str,
    *,
    allow_hosts: Collection[str] = (),
    max_redirects: int = 5,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> GuardedResponse:
    """GET ``url`` with ``client``, checking it and every redirect before connecting.

    Args:
        client: any ``httpx.AsyncClient`` (its own redirect following is not used).
        url: an http(s) URL.
        allow_hosts: host names or addresses exempt from the check (a local test server).
        max_redirects: redirects followed before giving up.
        max_bytes: the body is cut after this many bytes (``truncated`` says so).

    Raises:
        UnsafeURL: the URL, or a redirect, goes where plait does not fetch from, or redirects
            more than ``max_redirects`` times.
        httpx.HTTPError: the transport failed.
    """
    for _ in range(max_redirects + 1):
        request = await _guarded_request(client, url, allow_hosts)
        response = await client.send(request, stream=True, follow_redirects=False)
        try:
            location = response.headers.get("location")
            if response.status_code in REDIRECT_STATUSES and location:
                url = str(httpx.URL(url).join(location))
                continue
            return await _read_capped(response, url, max_bytes)
        finally:
            await response.aclose()
    raise UnsafeURL(url, f"it redirects more than {max_redirects} times")


async def _guarded_request(
    client: httpx.AsyncClient, url: str, allow_hosts: Collection[str]
) -> httpx.Request:
    """A GET request for ``url``, pinned to a checked address unless the host is allowed."""
    target = parse_target(url)
    if is_allowed(target, allow_hosts):
        return client.build_request("GET", url)
    addresses = [target.address] if target.address else await _resolve_async(target)
    check_addresses(target, addresses)
    return _pinned_request(client, target, addresses[0])


def _pinned_request(client: httpx.AsyncClient, target: Target, address: IPAddress) -> httpx.Request:
    """A GET to ``address`` that still names ``target.host`` (Host header, TLS server name)."""
    logical = httpx.URL(target.url)
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    request = client.build_request(
        "GET",
        logical.copy_with(host=str(address)),
        headers={"Host": logical.netloc.decode("ascii").rpartition("@")[2]},
        extensions=extensions,
    )
    return request


async def _read_capped(response: httpx.Response, url: str, max_bytes: int) -> GuardedResponse:
    """Read at most ``max_bytes`` of the body."""
    body = bytearray()
    truncated = False
    async for piece in response.aiter_bytes():
        body += piece
        if len(body) > max_bytes:
            del body[max_bytes:]
            truncated = True
            break
    return GuardedResponse(
        url=url,
        status_code=response.status_code,
        content_type=response.headers.get("content-type", ""),
        encoding=response.encoding or "utf-8",
        content=bytes(body),
        truncated=truncated,
    )


__all__ = [
    "ALLOWED_SCHEMES",
    "METADATA_ADDRESSES",
    "METADATA_HOSTNAMES",
    "GuardedResponse",
    "Target",
    "blocked_reason",
    "check_addresses",
    "check_url",
    "fetch_guarded",
    "is_allowed",
    "parse_address",
    "parse_target",
]
