"""Server URLs: credentials hidden where people read them (pure, no HA)."""

from __future__ import annotations

import pytest

from custom_components.local_assistant.server.url import (
    REDACTED,
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
