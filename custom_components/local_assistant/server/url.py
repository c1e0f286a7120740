"""Server URLs: one spelling per server, and no credentials where people read them.

A base URL may carry credentials (``http://user:secret@host/v1``, or a key in
its query string). :func:`redact_url` hides them for diagnostics, repair
issues and log lines; :func:`url_without_credentials` drops them for titles.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["REDACTED", "redact_url", "url_without_credentials"]

# What HA's own diagnostics put in place of a secret.
REDACTED = "**REDACTED**"


def _host_port(netloc: str) -> str:
    """The part of a netloc after its credentials."""
    return netloc.rpartition("@")[2]


def redact_url(url: str) -> str:
    """The URL with its user, password and query values replaced by REDACTED."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{_host_port(netloc)}"
    query = parts.query
    if query:
        query = urlencode(
            [(key, REDACTED) for key, _ in parse_qsl(query, keep_blank_values=True)],
            safe="*",
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_without_credentials(url: str) -> str:
    """The URL without user, password and query, for titles people see."""
    parts = urlsplit(url)
    return urlunsplit(
        (parts.scheme, _host_port(parts.netloc), parts.path, "", parts.fragment)
    )
