"""Server URLs: one spelling per server, and no credentials where people read them.

:func:`normalize_base_url` gives every way of writing one server's URL the same
spelling (``HTTP://Mac.local:80/v1/`` is ``http://mac.local/v1``), so one server
cannot become two entries. A base URL may carry credentials (``http://user:secret@host/v1``, or a key in
its query string). :func:`redact_url` hides them for diagnostics, repair
issues and log lines; :func:`url_without_credentials` drops them for titles.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["REDACTED", "normalize_base_url", "redact_url", "url_without_credentials"]

# What HA's own diagnostics put in place of a secret.
REDACTED = "**REDACTED**"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_base_url(url: str) -> str:
    """One spelling per server: trimmed, scheme and host in lower case, no default
    port, no trailing slash. The path keeps its case (servers may tell it apart).

    Something that is not an absolute URL is only trimmed (the server check
    then says it cannot connect).
    """
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:  # "http://[::1:8080" (no closing bracket), a port "28l00"
        return text.rstrip("/")
    if not parts.scheme or not parts.hostname:
        return text.rstrip("/")
    scheme = parts.scheme.lower()
    userinfo, _, _ = parts.netloc.rpartition("@")
    host = parts.hostname  # lower case, IPv6 without brackets
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        netloc = f"{netloc}:{port}"
    if userinfo:
        netloc = f"{userinfo}@{netloc}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, parts.query, parts.fragment))


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
