"""Base entity: the streaming tool loop against the model server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from homeassistant.components import conversation
from homeassistant.components.conversation import AssistantContentDeltaDict
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import CONF_MODEL
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.entity import Entity
import httpx
import openai

from .compat import schema_to_openapi, tool_result_data
from .const import (
    CONF_MAX_TOKENS,
    CONF_TEMPERATURE,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TEMPERATURE,
    DOMAIN,
    EMPTY_ANSWER_RETRIES,
    LOGGER,
    MAX_TOOL_CALLS_PER_ROUND,
    MAX_TOOL_ITERATIONS,
)
from .llm.messages import current_turn_messages, to_messages
from .llm.sentences import SpokenKey
from .llm.spoken import VoiceStyle
from .llm.stream import StreamOutcome, transform_stream
from .llm.tool_repair import call_repairer
from .server.client import error_key, is_auth_error
from .server.health import async_report as async_report_health
from .turn.guard import TurnGuard, TurnKind

if TYPE_CHECKING:
    from . import LocalAssistantConfigEntry

# Turns whose calls get the turn's target when they name none (tool_repair).
_ACTING = frozenset({TurnKind.ACTION, TurnKind.DEVICE, TurnKind.FOLLOW_UP})

# What a broken server or stream can raise while we read it: the client's own
# errors, transport errors, and JSON errors from malformed SSE lines.
STREAM_ERRORS = (openai.OpenAIError, httpx.HTTPError, ValueError)


class ModelError(HomeAssistantError):
    """The turn failed; `key` names the sentence the user hears (llm/sentences.py).

    It is an exception translation too, so an AI task fails with it as is.
    """

    def __init__(self, key: SpokenKey) -> None:
        """Keep the sentence's key."""
        super().__init__(translation_domain=DOMAIN, translation_key=key)
        self.key: SpokenKey = key


class LocalAssistantEntity(Entity):
    """Shared by the agents of one model server."""

    _attr_has_entity_name = True
    _attr_name = None

    def __init__(
        self, entry: LocalAssistantConfigEntry, subentry: ConfigSubentry
    ) -> None:
        """Set up identity from the subentry."""
        self.entry = entry
        self.subentry = subentry
        self._attr_unique_id = subentry.subentry_id
        self._attr_device_info = dr.DeviceInfo(
            identifiers={(DOMAIN, subentry.subentry_id)},
            name=subentry.title,
            manufacturer="Local Assistant",
            model=subentry.data.get(CONF_MODEL),
            entry_type=dr.DeviceEntryType.SERVICE,
        )
        # Whether the server's chat template prefills `<think>` (then only a bare
        # `</think>` arrives). Until a completion shows it, text is held until
        # `</think>` or the end of the stream, so reasoning before a bare
        # `</think>` is never spoken, not even in the first answer.
        self._prefills_think: bool | None = None

    async def async_run_completions(
        self,
        chat_log: conversation.ChatLog,
        prefix: list[dict[str, Any]],
        voice: VoiceStyle | None = None,
        *,
        response_format: dict[str, Any] | None = None,
        guard: TurnGuard | None = None,
        tool_choice: str | None = None,
        turn: list[dict[str, Any]] | None = None,
    ) -> StreamOutcome:
        """Stream answers into the chat log until the model stops calling tools.

        `prefix` is the system message(s) plus the remembered history; `turn`
        the request's own messages (default: the chat log's last user message
        and the tool rounds after it). `voice` makes the text speakable; its
        filler is only for the first completion. `response_format` asks for
        structured output (AI tasks). `guard` refuses tool calls the turn may
        not make and holds text that claims what no tool did (turn/guard.py).
        `tool_choice` goes with the first completion only (servers that honour
        it, like llama.cpp, then must call a tool).
        Returns the last completion's outcome; raises ModelError, naming a
        short spoken sentence, when the turn cannot finish.
        """
        if turn is None:
            turn = current_turn_messages(chat_log.content)
        messages = [*prefix, *turn]
        options = self.subentry.data
        request: dict[str, Any] = {
            "model": options[CONF_MODEL],
            "temperature": options.get(CONF_TEMPERATURE, DEFAULT_TEMPERATURE),
            "max_tokens": options.get(CONF_MAX_TOKENS, DEFAULT_MAX_TOKENS),
        }
        if response_format is not None:
            request["response_format"] = response_format
        if chat_log.llm_api and chat_log.llm_api.tools:
            serializer = chat_log.llm_api.custom_serializer
            request["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description or "",
                        "parameters": schema_to_openapi(tool.parameters, serializer),
                    },
                }
                for tool in chat_log.llm_api.tools
            ]

        empty_retries = 0
        for _round in range(MAX_TOOL_ITERATIONS):
            outcome = await self._async_stream_once(
                chat_log,
                messages,
                {**request, "tool_choice": tool_choice}
                if tool_choice and _round == 0 and "tools" in request
                else request,
                voice if voice is None or _round == 0 else replace(voice, filler=None),
                guard,
            )
            if outcome.withheld is not None:
                # Nothing of this answer reached the chat log; the caller decides.
                return outcome
            if chat_log.unresponded_tool_results:
                continue
            if outcome.visible_chars or outcome.tool_calls:
                return outcome
            if empty_retries >= EMPTY_ANSWER_RETRIES:
                LOGGER.warning("The model gave an empty answer twice")
                raise ModelError("no_answer")
            # Swama drops a malformed tool call and leaves an empty answer: ask again.
            empty_retries += 1
            if messages and messages[-1]["role"] == "assistant":
                messages.pop()
        LOGGER.warning(
            "The model kept calling tools for %s rounds", MAX_TOOL_ITERATIONS
        )
        raise ModelError("tool_loop")

    async def _async_stream_once(
        self,
        chat_log: conversation.ChatLog,
        messages: list[dict[str, Any]],
        request: dict[str, Any],
        voice: VoiceStyle | None = None,
        guard: TurnGuard | None = None,
    ) -> StreamOutcome:
        """One streamed completion into the chat log; appends what it added."""
        client = self.entry.runtime_data.client
        outcome = StreamOutcome()
        try:
            # The body goes in extra_body, which the SDK sends as is: its typed
            # arguments first run through a TypedDict transform costing about
            # 0.2 ms per message on the event loop (some 35 ms for a full
            # session buffer, again on every tool round; docs/benchmarks.md).
            # The JSON sent is the same; extra_body wins over messages=[]
            # (tests/test_request_body.py pins it; the manifest bounds openai).
            stream = await client.chat.completions.create(
                model=request["model"],
                messages=[],
                stream=True,
                extra_body={**request, "messages": messages},
            )
            try:
                added = [
                    content
                    async for content in chat_log.async_add_delta_content_stream(
                        self.entity_id,
                        cast(
                            "AsyncIterator[AssistantContentDeltaDict]",
                            transform_stream(
                                stream,
                                outcome,
                                start_in_think=self._prefills_think is not False,
                                tools_available=chat_log.llm_api is not None,
                                voice=voice,
                                guard=guard,
                                repair=call_repairer(
                                    self.hass,
                                    {
                                        tool["function"]["name"]: set(
                                            tool["function"]["parameters"].get(
                                                "properties", {}
                                            )
                                        )
                                        for tool in request.get("tools", ())
                                    },
                                    guard.targets
                                    if guard is not None and guard.kind in _ACTING
                                    else (),
                                    guard.said if guard is not None else None,
                                ),
                            ),
                        ),
                    )
                ]
            finally:
                await stream.close()
        except STREAM_ERRORS as err:
            LOGGER.warning("Model request failed: %s", _safe_error(err))
            async_report_health(self.hass, self.entry, err)  # repair issue if down
            if is_auth_error(err):  # the key was changed on the server: ask for it
                self.entry.async_start_reauth(self.hass)
            raise ModelError(error_key(err)) from err
        async_report_health(self.hass, self.entry)
        learned = outcome.prefills_think
        if learned is not None and self._prefills_think is None:
            LOGGER.debug("Server prefills <think>: %s", learned)
            self._prefills_think = learned
        elif learned and not self._prefills_think:
            LOGGER.debug("Server prefills <think>; holding text until </think>")
            self._prefills_think = True
        if outcome.invalid_calls:
            LOGGER.debug(
                "Invalid tool arguments from the model for %s", outcome.invalid_calls
            )
        if outcome.skipped_calls:
            LOGGER.warning(
                "The model made %s tool calls in one answer; ran the first %s",
                outcome.tool_calls,
                MAX_TOOL_CALLS_PER_ROUND,
            )
        if guard is not None:
            for content in added:
                if isinstance(content, conversation.ToolResultContent):
                    guard.record_result(content.tool_name, tool_result_data(content))
        messages.extend(to_messages(added))
        return outcome


def _safe_error(err: BaseException) -> str:
    """The error's class and status, never request bodies (they hold prompts)."""
    if isinstance(err, openai.APIStatusError):
        return f"{type(err).__name__} (HTTP {err.status_code})"
    detail = str(err) if isinstance(err, httpx.HTTPError) else ""
    return type(err).__name__ + (f": {detail}" if detail else "")
