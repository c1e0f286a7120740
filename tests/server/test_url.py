"""Server URLs: one spelling per server, credentials hidden where people read them."""

from __future__ import annotations

import pytest

from custom_components.local_assistant.server.url import (
    REDACTED,
    normalize_base_url,
    redact_url,
    url_without_credentials,
)


@pytest.mark.parametrize(
    ("url", "redacted", "shown"),
    [
        ("http://127.0.0.1:28100/v1", "http://127.0.0.1:28100/v1", None),
        (
            "http://ada:s3cret@mac.local:28100/v1",
            f"http://{REDACTED}@mac.local:28100/v1",
            "http://mac.local:28100/v1",
        ),
        (
            "https://token@api.example/v1",
            f"https://{REDACTED}@api.example/v1",
            "https://api.example/v1",
        ),
        (
            "https://api.example/v1?key=s3cret&x=",
            f"https://api.example/v1?key={REDACTED}&x={REDACTED}",
            "https://api.example/v1",
        ),
        ("not a url", "not a url", None),
        ("", "", None),
    ],
)
def test_credentials_never_show(url: str, redacted: str, shown: str | None) -> None:
    assert redact_url(url) == redacted
    assert url_without_credentials(url) == (shown or redacted)
    for secret in ("s3cret", "token@", "ada"):
        assert secret not in redact_url(url)
        assert secret not in url_without_credentials(url)


@pytest.mark.parametrize(
    ("url", "normalized"),
    [
        ("http://127.0.0.1:28100/v1", "http://127.0.0.1:28100/v1"),
        ("  http://127.0.0.1:28100/v1/ ", "http://127.0.0.1:28100/v1"),
        ("HTTP://Mac.Local:28100/v1//", "http://mac.local:28100/v1"),
        ("http://mac.local:80/v1", "http://mac.local/v1"),
        ("https://API.example:443/V1/", "https://api.example/V1"),
        ("https://api.example:80/v1", "https://api.example:80/v1"),
        ("http://[::1]:8080/v1/", "http://[::1]:8080/v1"),
        ("http://Ada:PassWord@Mac.Local/v1", "http://Ada:PassWord@mac.local/v1"),
        ("http://mac.local:port/v1/", "http://mac.local:port/v1"),
        ("mac.local:28100/v1/", "mac.local:28100/v1"),
        ("", ""),
    ],
)
def test_one_spelling_per_server(url: str, normalized: str) -> None:
    assert normalize_base_url(url) == normalized
    assert normalize_base_url(normalized) == normalized
