"""AI Task: text and structured data from the local model, for automations.

HA's AI Task entity has already rendered the system prompt (with the task's
LLM API, if any) and added the instructions as the user message when
``_async_generate_data`` runs; we run the same streaming tool loop as the
conversation agent (reasoning stripped), without per-speaker memory.

For a structured task the request carries ``response_format`` with the JSON
schema, and because many local servers ignore it, the system prompt also
asks for only JSON and gives the schema. The answer is parsed leniently
(llm/json_answer.py): reasoning, code fences and a preface are tolerated.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from homeassistant.components import ai_task, conversation
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .compat import schema_to_openapi
from .const import DOMAIN, LOGGER, SUBENTRY_AI_TASK
from .entity import LocalAssistantEntity
from .llm.json_answer import JsonAnswerError, parse_json_answer

if TYPE_CHECKING:
    from . import LocalAssistantConfigEntry

# Entities only call the server; HA's own locking is not needed.
PARALLEL_UPDATES = 0

# Qwen3 reasons at length unless told not to; the reasoning is stripped
# anyway, but on a local server it costs seconds and eats max_tokens.
NO_THINK = "/no_think"
JSON_INSTRUCTIONS = (
    "Answer with ONLY one JSON value that matches this JSON schema: no other "
    "text, no explanation and no code fence.\nJSON schema: {schema}"
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: LocalAssistantConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One AI Task entity per ai_task_data subentry."""
    for subentry_id, subentry in entry.subentries.items():
        if subentry.subentry_type != SUBENTRY_AI_TASK:
            continue
        async_add_entities(
            [LocalAssistantAITaskEntity(entry, subentry)],
            config_subentry_id=subentry_id,
        )


def build_task_prompt(system: str, schema: dict[str, Any] | None) -> str:
    """HA's rendered system prompt, the JSON instructions, then /no_think."""
    parts = [system.strip()] if system.strip() else []
    if schema is not None:
        parts.append(
            JSON_INSTRUCTIONS.format(schema=json.dumps(schema, ensure_ascii=False))
        )
    parts.append(NO_THINK)
    return "\n\n".join(parts)


def response_format(task_name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's json_schema response format (llama.cpp turns it into a grammar)."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", task_name).strip("_")[:64] or "result"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


class LocalAssistantAITaskEntity(LocalAssistantEntity, ai_task.AITaskEntity):
    """Generates text or JSON with the local model."""

    _attr_supported_features = ai_task.AITaskEntityFeature.GENERATE_DATA
    _agent_kind = "ai_task"

    async def _async_generate_data(
        self,
        task: ai_task.GenDataTask,
        chat_log: conversation.ChatLog,
    ) -> ai_task.GenDataTaskResult:
        """Run the loop, then return the answer's text or its JSON."""
        schema: dict[str, Any] | None = None
        if task.structure is not None:
            serializer = (
                chat_log.llm_api.custom_serializer
                if chat_log.llm_api is not None
                else llm.selector_serializer
            )
            schema = schema_to_openapi(task.structure, serializer)
        rendered = chat_log.content[0]
        system = (
            rendered.content if isinstance(rendered, conversation.SystemContent) else ""
        )
        prefix = [{"role": "system", "content": build_task_prompt(system, schema)}]

        # A task is a reply: background fact extraction waits for it. A failure
        # raises ModelError, a HomeAssistantError with its own translation: the
        # sentence a voice user would hear.
        async with self.entry.runtime_data.scheduler.reply():
            with self.measure_turn() as figures:
                await self.async_run_completions(
                    chat_log,
                    prefix,
                    response_format=(
                        response_format(task.name, schema)
                        if schema is not None
                        else None
                    ),
                    figures=figures,
                )

        answer = chat_log.content[-1]
        if not isinstance(answer, conversation.AssistantContent):
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="task_no_answer",
                translation_placeholders={"task": task.name},
            )
        text = answer.content or ""
        if schema is None:
            return ai_task.GenDataTaskResult(
                conversation_id=chat_log.conversation_id, data=text
            )
        try:
            data = parse_json_answer(text)
        except JsonAnswerError as err:
            LOGGER.debug("AI task %s: the answer is not JSON: %s", task.name, err)
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="invalid_json",
                translation_placeholders={"task": task.name},
            ) from err
        return ai_task.GenDataTaskResult(
            conversation_id=chat_log.conversation_id, data=data
        )
