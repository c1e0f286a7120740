"""The Assist conversation agent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import CONF_LLM_HASS_API, CONF_PROMPT, MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import CONF_TOOL_BIAS, DEFAULT_TOOL_BIAS, DOMAIN, SUBENTRY_CONVERSATION
from .entity import LocalAssistantEntity, ModelError
from .messages import history_messages
from .prompt import build_system_prompt

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
                options.get(CONF_LLM_HASS_API) or None,
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
        )
        prefix = [
            {"role": "system", "content": system},
            *history_messages(memory.history(speaker)),
        ]
        async with data.reply_gate.reply():
            try:
                await self.async_run_completions(chat_log, prefix)
            except ModelError as err:
                return self._error_result(user_input, chat_log, err.message)

        result = conversation.async_get_result_from_chat_log(user_input, chat_log)
        answer = chat_log.content[-1]
        if isinstance(answer, conversation.AssistantContent) and answer.content:
            memory.record_exchange(speaker, user_input.text, answer.content)
        return result

    def _error_result(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        message: str,
    ) -> conversation.ConversationResult:
        """Speak a short error; keep the chat log consistent."""
        chat_log.async_add_assistant_content_without_tools(
            conversation.AssistantContent(agent_id=self.entity_id, content=message)
        )
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_error(intent.IntentResponseErrorCode.UNKNOWN, message)
        return conversation.ConversationResult(
            response=response, conversation_id=chat_log.conversation_id
        )
