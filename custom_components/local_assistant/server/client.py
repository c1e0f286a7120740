"""The OpenAI-compatible client: creation, model listing and error wording."""

from __future__ import annotations

from typing import TYPE_CHECKING

from homeassistant.core import HomeAssistant
from homeassistant.helpers.httpx_client import get_async_client
import httpx
import openai

from ..const import MODELS_LIST_TIMEOUT

if TYPE_CHECKING:
    from ..llm.sentences import SpokenKey

# Servers without auth (Swama, llama.cpp) still need a non-empty key for the client.
NO_API_KEY = "not-needed"


async def async_create_client(
    hass: HomeAssistant, base_url: str, api_key: str | None, timeout: float
) -> openai.AsyncOpenAI:
    """Create a client on HA's shared httpx client.

    Retries are off: a voice user would rather hear an error than wait for
    the client's back-off, and the caller decides what to retry.
    """
    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or NO_API_KEY,
        http_client=get_async_client(hass),
        timeout=timeout,
        max_retries=0,
    )
    # The first call reads platform details from disk; keep that off the loop.
    await hass.async_add_executor_job(client.platform_headers)
    return client


async def async_list_models(client: openai.AsyncOpenAI) -> list[str]:
    """Return the model ids the server offers (raises openai errors).

    A body that is no model list (a proxy's HTML page while the server
    starts, "{}", broken JSON) is an OpenAIError too: the client's parser
    raises AttributeError, TypeError or ValueError on it, and setup must
    retry rather than fail for good.
    """
    try:
        page = await client.with_options(timeout=MODELS_LIST_TIMEOUT).models.list()
        return [str(model.id) for model in page.data]
    except (AttributeError, TypeError, ValueError) as err:
        raise openai.OpenAIError(
            f"the server's model list could not be read ({type(err).__name__})"
        ) from err


def is_auth_error(err: BaseException) -> bool:
    """Tell whether the server refused our credentials."""
    return isinstance(err, openai.AuthenticationError | openai.PermissionDeniedError)


def error_key(err: BaseException) -> SpokenKey:
    """The sentence a voice user can act on (llm/sentences.py); never the raw error."""
    # Errors raised mid-stream come from httpx and json, unwrapped by the client.
    if isinstance(err, openai.APITimeoutError | httpx.TimeoutException):
        return "model_timeout"
    if isinstance(err, openai.APIConnectionError | httpx.TransportError):
        return "model_unreachable"
    if is_auth_error(err):
        return "model_auth"
    if isinstance(err, openai.NotFoundError):
        return "model_not_found"
    if isinstance(err, openai.RateLimitError):
        return "model_busy"
    if isinstance(err, openai.APIStatusError):
        return "model_error"
    if isinstance(err, openai.APIError | ValueError):
        return "model_broken_answer"
    return "model_failed"
