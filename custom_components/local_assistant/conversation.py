"""The Assist conversation agent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Literal

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import CONF_LLM_HASS_API, CONF_PROMPT, MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import (
    CONF_TOOL_BIAS,
    CONF_TOOL_FILLER,
    DEFAULT_TOOL_BIAS,
    DEFAULT_TOOL_FILLER,
    DOMAIN,
    SUBENTRY_CONVERSATION,
)
from .entity import LocalAssistantEntity, ModelError
from .llm.messages import history_messages
from .llm.prompt import build_system_prompt
from .llm.sentences import async_spoken_message
from .llm.spoken import voice_style
from .tools.api import async_build_llm_api, live_tool_names

if TYPE_CHECKING:
    from . import LocalAssistantConfigEntry

# Entities only call the server; HA's own locking is not needed.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: LocalAssistantConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One agent per conversation subentry."""
    for subentry_id, subentry in entry.subentries.items():
        if subentry.subentry_type != SUBENTRY_CONVERSATION:
            continue
        async_add_entities(
            [LocalAssistantConversationEntity(entry, subentry)],
            config_subentry_id=subentry_id,
        )


class LocalAssistantConversationEntity(
    LocalAssistantEntity, conversation.ConversationEntity
):
    """Talks to the local model with per-speaker memory."""

    _attr_supports_streaming = True

    def __init__(
        self, entry: LocalAssistantConfigEntry, subentry: ConfigSubentry
    ) -> None:
        """Set features from the agent's settings."""
        super().__init__(entry, subentry)
        if subentry.data.get(CONF_LLM_HASS_API):
            self._attr_supported_features = (
                conversation.ConversationEntityFeature.CONTROL
            )

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """Whatever the model speaks."""
        return MATCH_ALL

    async def _async_handle_message(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> conversation.ConversationResult:
        """Answer one request, remembering the exchange for this speaker."""
        options = self.subentry.data
        data = self.entry.runtime_data
        memory = data.memory
        speaker = memory.resolve_speaker(user_input, chat_log.conversation_id)
        try:
            await chat_log.async_provide_llm_data(
                user_input.as_llm_context(DOMAIN),
                async_build_llm_api(self.hass, options),
                options.get(CONF_PROMPT),
                user_input.extra_system_prompt,
            )
        except conversation.ConverseError as err:
            return err.as_conversation_result()

        rendered = chat_log.content[0]
        system = build_system_prompt(
            rendered.content
            if isinstance(rendered, conversation.SystemContent)
            else "",
            memory.prompt_facts(speaker),
            tool_bias=options.get(CONF_TOOL_BIAS, DEFAULT_TOOL_BIAS),
            live_tool_names=live_tool_names(options),
        )
        prefix = [
            {"role": "system", "content": system},
            *history_messages(memory.history(speaker)),
        ]
        async with data.reply_gate.reply():
            try:
                # Always speakable: the same text goes to TTS and the chat dialog.
                await self.async_run_completions(
                    chat_log,
                    prefix,
                    voice_style(
                        user_input.language,
                        filler=options.get(CONF_TOOL_FILLER, DEFAULT_TOOL_FILLER),
                    ),
                )
            except ModelError as err:
                message = await async_spoken_message(
                    self.hass, err.key, user_input.language
                )
                return await self._async_error_result(user_input, chat_log, message)

        result = conversation.async_get_result_from_chat_log(user_input, chat_log)
        answer = chat_log.content[-1]
        if isinstance(answer, conversation.AssistantContent) and answer.content:
            memory.record_exchange(speaker, user_input.text, answer.content)
        return result

    async def _async_error_result(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        message: str,
    ) -> conversation.ConversationResult:
        """Speak a short error; keep the chat log consistent.

        The message goes through the delta stream: once the pipeline has
        started streaming TTS (long text, or text before a tool call) it
        speaks only streamed deltas, never the final response.
        """

        async def error_delta() -> AsyncIterator[
            conversation.AssistantContentDeltaDict
        ]:
            yield {"role": "assistant", "content": message}

        async for _content in chat_log.async_add_delta_content_stream(
            self.entity_id, error_delta()
        ):
            pass
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_error(intent.IntentResponseErrorCode.UNKNOWN, message)
        return conversation.ConversationResult(
            response=response, conversation_id=chat_log.conversation_id
        )
