"""Check that an OpenAI-compatible server answers, for the flows."""

from __future__ import annotations

import logging

from homeassistant.core import HomeAssistant
import httpx
import openai

from ..const import DEFAULT_TIMEOUT
from ..server.client import async_create_client, async_list_models, is_auth_error
from ..server.url import redact_url

_LOGGER = logging.getLogger(__name__)


async def async_check_server(
    hass: HomeAssistant, base_url: str, api_key: str | None
) -> tuple[list[str], str | None]:
    """List the server's models, or name the flow error that explains why not."""
    try:
        client = await async_create_client(hass, base_url, api_key, DEFAULT_TIMEOUT)
    except (ValueError, httpx.InvalidURL):  # "http://127.0.0.1:28l00/v1"
        return [], "cannot_connect"
    try:
        return await async_list_models(client), None
    except openai.APIConnectionError:  # refused, DNS, timeout
        return [], "cannot_connect"
    except openai.APIStatusError as err:
        if is_auth_error(err):
            return [], "invalid_auth"
        _LOGGER.warning(
            "The server at %s answered HTTP %s", redact_url(base_url), err.status_code
        )
        return [], "unknown"
    except Exception:
        _LOGGER.exception("Unexpected error listing models")
        return [], "unknown"
