"""Webhook URLs of monitors (``notify``): what may be one, and where a POST may go.

A webhook URL is a secret (a Slack incoming-webhook URL is its own credential), and the server
POSTs to it from inside the operator's network, so:

- at config load ``check_webhook_url`` refuses what cannot be a webhook (not http(s), no host,
  credentials in the URL) and addresses a webhook must not reach: link-local addresses (the
  cloud metadata service lives at 169.254.169.254) and the metadata host names, always; private,
  loopback and other non-public ranges unless ``[live] allow_private_webhooks`` is true;
- at send time ``pinned_request`` resolves the host once, applies the same rule to every
  address it resolves to (a public name may point inside), and the POST goes to that address
  (with the original ``Host`` and TLS server name), so a second lookup cannot lead elsewhere;
- nothing stores or logs the URL: messages name the host only (``webhook_host``), and
  ``scrub`` takes the URL out of any error text.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

METADATA_HOSTS = frozenset({
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data",
    "instance-data.ec2.internal", "metadata.azure.internal",
})
"""Host names of cloud metadata services (refused like their link-local addresses)."""
METADATA_ADDRESSES = frozenset({
    ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254"),
    ipaddress.ip_address("100.100.100.200"), ipaddress.ip_address("169.254.170.2"),
})
"""Cloud metadata endpoints (AWS, AWS IPv6, Alibaba, ECS task metadata)."""

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class WebhookRefused(ValueError):
    """A webhook URL or the address it resolves to is not allowed; the message names the host
    only (never the URL) and the fix."""


def webhook_host(url: str) -> str:
    """The host of a webhook URL for messages (``hooks.slack.com``), never its path or query."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        host = None
    return host or "(no host)"


def scrub(text: str, url: str) -> str:
    """``text`` with the URL (and its path and query) replaced by its host."""
    parts = urlsplit(url)
    for secret in (url, parts.path, parts.query):
        if secret and secret != "/":
            text = text.replace(secret, "…")
    return text


def address_problem(address: Address, *, allow_private: bool) -> str | None:
    """Why a webhook must not go to ``address`` (None when it may)."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_link_local:
        return "a link-local address (cloud metadata services live there)"
    if address.is_multicast or address.is_unspecified or address.is_reserved:
        return "not a unicast address"
    if address.is_global or allow_private:
        return None
    kind = "a loopback" if address.is_loopback else "a private (non-public)"
    return f"{kind} address; set [live] allow_private_webhooks = true to allow it"


def check_webhook_url(url: str, *, allow_private: bool) -> str:
    """``url`` if it may be a webhook, else ``WebhookRefused`` saying why (host only)."""
    if not isinstance(url, str) or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise WebhookRefused("a webhook URL must be one http(s) URL without spaces")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise WebhookRefused(
            f"a webhook URL (host {webhook_host(url)}) has an invalid host or port") from None
    if parts.scheme not in ("http", "https"):
        raise WebhookRefused("a webhook URL must start with http:// or https://")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise WebhookRefused("a webhook URL needs a host (https://hooks.example.com/...)")
    if parts.username is not None or parts.password is not None:
        raise WebhookRefused(
            f"the webhook URL for host {host} carries credentials (user:password@); remove "
            "them: tracescore sends no credentials of the URL")
    if port == 0:
        raise WebhookRefused(f"the webhook URL for host {host} names port 0")
    lowered = host.lower()
    if lowered in METADATA_HOSTS:
        raise WebhookRefused(f"webhook host {host} is a cloud metadata service")
    try:
        literal: Address | None = ipaddress.ip_address(lowered)
    except ValueError:
        literal = None
    if lowered == "localhost" or lowered.endswith(".localhost"):
        literal = ipaddress.ip_address("127.0.0.1")
    if literal is not None:
        problem = address_problem(literal, allow_private=allow_private)
        if problem:
            raise WebhookRefused(f"webhook host {host} is {problem}")
    return url


@dataclass(frozen=True, slots=True)
class PinnedRequest:
    """Where one POST goes: ``url`` with the host replaced by a checked address."""

    url: str
    headers: dict[str, str]
    extensions: dict[str, Any]


async def pinned_request(url: str, *, allow_private: bool, loop: Any) -> PinnedRequest:
    """Resolve the webhook's host once (``loop.getaddrinfo``), refuse it when any address is
    not allowed (``WebhookRefused``), and aim the request at the first address."""
    check_webhook_url(url, allow_private=allow_private)
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise WebhookRefused(f"webhook host {host} cannot be resolved ({exc})") from None
    addresses: list[Address] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        problem = address_problem(address, allow_private=allow_private)
        if problem:
            raise WebhookRefused(f"webhook host {host} resolves to {address}, {problem}")
        addresses.append(address)
    if not addresses:
        raise WebhookRefused(f"webhook host {host} resolves to no address")
    target = addresses[0]
    shown = f"[{target}]" if target.version == 6 else str(target)
    netloc = f"{shown}:{parts.port}" if parts.port else shown
    host_header = parts.netloc.rsplit("@", 1)[-1]
    extensions: dict[str, Any] = {"sni_hostname": host} if parts.scheme == "https" else {}
    return PinnedRequest(urlunsplit(parts._replace(netloc=netloc)), {"Host": host_header},
                         extensions)


__all__ = [
    "METADATA_ADDRESSES",
    "METADATA_HOSTS",
    "PinnedRequest",
    "WebhookRefused",
    "address_problem",
    "check_webhook_url",
    "pinned_request",
    "scrub",
    "webhook_host",
]
