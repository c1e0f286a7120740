"""The Assist conversation agent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, cast

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT, MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent, llm
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .compat import tool_result_data, tool_result_delta
from .const import (
    CONF_LOCAL_INTENTS,
    CONF_TOOL_BIAS,
    CONF_TOOL_FILLER,
    DEFAULT_LOCAL_INTENTS,
    DEFAULT_TOOL_BIAS,
    DEFAULT_TOOL_FILLER,
    DOMAIN,
    LOGGER,
    SUBENTRY_CONVERSATION,
)
from .entity import LocalAssistantEntity, ModelError
from .llm.figures import TurnFigures
from .llm.messages import history_messages
from .llm.prompt import Prompt, build_prompt
from .llm.sentences import async_spoken_message
from .llm.spoken import VoiceStyle, voice_style
from .llm.stream import StreamOutcome
from .memory.session import Command
from .tools.api import async_build_llm_api, live_tools
from .turn import fast_path
from .turn.guard import Said, TurnGuard, TurnKind, action_targets, honest_key
from .turn.understand import Understanding, async_understand

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

    async def async_prepare(self, language: str | None = None) -> None:
        """A voice pipeline started: have the prompt cached while the user talks.

        HA calls this before the text exists. The warm-up runs in the
        background and never delays the reply (server/warmth.py).
        """
        self.entry.runtime_data.prompt_cache.warm_up(self.subentry.subentry_id)

    async def _async_handle_message(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> conversation.ConversationResult:
        """Answer one request, remembering the exchange for this speaker."""
        options = self.subentry.data
        data = self.entry.runtime_data
        memory = data.memory
        agent = self.subentry.subentry_id
        speaker = memory.resolve_speaker(user_input, chat_log.conversation_id)
        memory.record_handled_elsewhere(agent, speaker, chat_log, self.entity_id)
        llm_context = user_input.as_llm_context(DOMAIN)
        try:
            await chat_log.async_provide_llm_data(
                llm_context,
                async_build_llm_api(self.hass, options),
                options.get(CONF_PROMPT),
                user_input.extra_system_prompt,
            )
        except conversation.ConverseError as err:
            return err.as_conversation_result()

        tools = live_tools(options)
        if tools and (fast := await self._async_fast_answer(user_input, tools)):
            # No model request: the next turn's prefix (with this exchange) is
            # sent once the server idles (server/warmth.py).
            data.prompt_cache.reply_finished(options[CONF_MODEL])
            memory.record_exchange(
                speaker, user_input.text, fast.text, agent=agent, used_tools=True
            )
            return await self._async_fast_reply(user_input, chat_log, fast)

        understanding = await self._async_understand(
            user_input, chat_log, agent, speaker
        )
        if (
            understanding is not None
            and understanding.kind in (TurnKind.ACTION, TurnKind.QUESTION)
            and options.get(CONF_LOCAL_INTENTS, DEFAULT_LOCAL_INTENTS)
            and (
                handled := await self._async_local_intent(
                    user_input, understanding, chat_log
                )
            )
        ):
            _, targets = _tools_of_turn(chat_log, None)
            data.prompt_cache.reply_finished(options[CONF_MODEL])
            memory.record_exchange(
                speaker,
                user_input.text,
                _speech(handled),
                agent=agent,
                used_tools=True,
                action_targets=targets,
                command=_command(user_input, understanding),
                intent=understanding.intent,
            )
            return conversation.ConversationResult(
                response=handled, conversation_id=chat_log.conversation_id
            )
        guard = (
            TurnGuard(
                understanding.kind,
                live_tools=frozenset(tool.name for tool in tools),
                targets=understanding.targets,
                scope=understanding.scope,
                home_names=understanding.home_names,
                said=Said(user_input.text, user_input.language),
                intent=understanding.intent,
            )
            if understanding is not None
            else None
        )
        prompt = build_prompt(
            _system_text(chat_log),
            memory.prompt_facts(speaker),
            tool_bias=options.get(CONF_TOOL_BIAS, DEFAULT_TOOL_BIAS),
            live_tool_names=[tool.name for tool in tools],
            volatile_lines=await self._async_volatile_lines(llm_context, chat_log),
        )
        history = history_messages(memory.history(agent, speaker))
        request_tools = self.request_tools(chat_log)
        # Always speakable: the same text goes to TTS and the chat dialog.
        voice = voice_style(
            user_input.language,
            filler=options.get(CONF_TOOL_FILLER, DEFAULT_TOOL_FILLER),
        )
        model = options[CONF_MODEL]

        def model_done() -> None:
            # Before anything is recorded: that starts the fact extraction,
            # which may build on this prompt and which the cache keeper
            # watches to send the prefix again. Withheld and failed answers
            # too: their extraction also replaces the server's cached prompt.
            data.prompt_cache.remember(agent, speaker, model, prompt, request_tools)
            data.prompt_cache.reply_finished(model)

        data.prompt_cache.reply_starting()
        async with data.reply_gate.reply():
            with self.measure_turn() as figures:
                try:
                    try:
                        outcome = await self.async_run_completions(
                            chat_log,
                            prompt.messages(history),
                            voice,
                            guard=guard,
                            tools=request_tools,
                            figures=figures,
                        )
                    except ModelError as err:
                        # llama.cpp ends the stream with an error when it cannot
                        # read the model's tool call: a small model's slip in a
                        # turn that needs a tool, worth the one retry.
                        if not (
                            err.key == "model_broken_answer"
                            and guard is not None
                            and guard.hold_text
                        ):
                            raise
                        outcome = StreamOutcome(withheld="")
                    if outcome.withheld is not None and guard is not None:
                        outcome = await self._async_retry(
                            user_input,
                            chat_log,
                            prompt,
                            history,
                            voice,
                            guard,
                            request_tools,
                            figures,
                        )
                except ModelError as err:
                    model_done()
                    # No answer, so nothing joins the buffer; what the user said
                    # may still be worth remembering.
                    memory.record_unanswered(
                        speaker,
                        user_input.text,
                        **_extraction_marks(understanding, guard),
                    )
                    message = await async_spoken_message(
                        self.hass, err.key, user_input.language
                    )
                    return await self._async_error_result(user_input, chat_log, message)
        model_done()
        if outcome.withheld is not None and guard is not None:
            LOGGER.info(
                "The model answered a %s without the tool it needs, twice; "
                "said so instead of its answer",
                guard.kind,
            )
            if guard.kind in (TurnKind.FOLLOW_UP, TurnKind.OTHER):
                # A sentence that named nothing may be a statement: the bundled
                # model meets "My dog is called Bolt." with a device call. A
                # withheld device turn ("Play some music in the living room.")
                # was a request; the bundled extractor made "The user plays
                # bass in the living room." of it.
                memory.record_unanswered(
                    speaker, user_input.text, **_extraction_marks(understanding, guard)
                )
            message = await async_spoken_message(
                self.hass, honest_key(guard.kind), user_input.language
            )
            return await self._async_error_result(user_input, chat_log, message)

        result = conversation.async_get_result_from_chat_log(user_input, chat_log)
        answer_content = chat_log.content[-1]
        if (
            isinstance(answer_content, conversation.AssistantContent)
            and answer_content.content
        ):
            used_tools, targets = _tools_of_turn(chat_log, guard)
            memory.record_exchange(
                speaker,
                user_input.text,
                answer_content.content,
                agent=agent,
                used_tools=used_tools,
                action_targets=targets,
                command=_command(user_input, understanding),
                **_extraction_marks(understanding, guard),
            )
        return result

    async def _async_fast_answer(
        self, user_input: conversation.ConversationInput, tools: list[llm.Tool]
    ) -> fast_path.FastAnswer | None:
        """A live question our sentence templates know, answered from the tools."""
        question = await fast_path.async_match(
            self.hass, user_input.text, user_input.language
        )
        if question is None:
            return None
        answer = await fast_path.async_answer(
            self.hass, question, tools, user_input.language
        )
        if answer is not None:
            LOGGER.debug("Answered %s from the live-data tools", question.intent)
        return answer

    async def _async_understand(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        agent: str,
        speaker: str,
    ) -> Understanding | None:
        """What this turn asks for, from HA's own reading (None without tools)."""
        if chat_log.llm_api is None or not chat_log.llm_api.tools:
            return None
        memory = self.entry.runtime_data.memory
        understanding = await async_understand(
            self.hass,
            user_input,
            memory.last_action(agent, speaker),
            memory.last_command(agent, speaker),
        )
        LOGGER.debug(
            "Turn understood as %s (intent %s)",
            understanding.kind,
            understanding.intent,
        )
        return understanding

    async def _async_local_intent(
        self,
        user_input: conversation.ConversationInput,
        understanding: Understanding,
        chat_log: conversation.ChatLog,
    ) -> intent.IntentResponse | None:
        """Let HA's own intent handling carry out and answer a recognized sentence.

        Exactly what the pipeline's "prefer handling commands locally" does,
        here so it works whatever the pipeline says: HA's strict match, its
        tool call and result in the chat log, its answer. A follow-up is
        handled as HA recognized it ("turn Kitchen Light off again"). None
        when HA does not handle it (then the model does).
        """
        if understanding.resolved is not None:
            user_input = replace(user_input, text=understanding.resolved)
        response = await conversation.async_handle_intents(
            self.hass, user_input, chat_log
        )
        if response is None:
            return None
        await self._async_add_text(chat_log, _speech(response))
        LOGGER.debug("Home Assistant handled the sentence itself")
        return response

    async def _async_retry(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        prompt: Prompt,
        history: list[dict[str, Any]],
        voice: VoiceStyle,
        guard: TurnGuard,
        tools: list[dict[str, Any]] | None,
        figures: TurnFigures,
    ) -> StreamOutcome:
        """Ask once more, the way small models act most reliably.

        Without the replayed history (except for a follow-up, which needs it
        to know what "it" is), and, for a request HA recognized, with
        `tool_choice: required` for servers that honour it (llama.cpp; Swama
        ignores it).
        """
        LOGGER.debug("The answer to a %s used no tool; asking again", guard.kind)
        tool_choice = guard.retry_tool_choice
        guard.retrying()
        return await self.async_run_completions(
            chat_log,
            prompt.messages(history if guard.retry_keeps_history else []),
            replace(voice, filler=None),
            guard=guard,
            tool_choice=tool_choice,
            turn=[{"role": "user", "content": user_input.text}],
            tools=tools,
            figures=figures,
        )

    async def _async_volatile_lines(
        self, llm_context: llm.LLMContext, chat_log: conversation.ChatLog
    ) -> set[str]:
        """The lines of HA's prompt that belong to this request only.

        HA's API prompt names the satellite's area (and whether it can set
        timers); a pipeline may add an extra system prompt. They go after the
        tools, so the prompt before them stays the same for every satellite.
        """
        lines: set[str] = set()
        if chat_log.extra_system_prompt:
            lines.update(chat_log.extra_system_prompt.split("\n"))
        api = chat_log.llm_api
        if api is not None and llm_context.device_id:
            neutral = await api.api.async_get_api_instance(
                replace(llm_context, device_id=None)
            )
            lines.update(
                set(api.api_prompt.split("\n")) - set(neutral.api_prompt.split("\n"))
            )
        return {line for line in lines if line.strip()}

    async def _async_fast_reply(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        fast: fast_path.FastAnswer,
    ) -> conversation.ConversationResult:
        """Say the fast path's answer, with the tool it read in the chat log.

        The tool call is marked external (we ran it) like HA's own sentence
        triggers, so HA's trace shows where the answer came from.
        """
        call = llm.ToolInput(
            tool_name=fast.tool_name, tool_args=fast.tool_args, external=True
        )

        async def deltas() -> AsyncIterator[dict[str, Any]]:
            yield {"role": "assistant", "tool_calls": [call]}
            yield tool_result_delta(
                call.id, call.tool_name, {"summary": fast.text}, error=False
            )
            yield {"role": "assistant", "content": fast.text}

        async for _content in chat_log.async_add_delta_content_stream(
            self.entity_id,
            cast("AsyncIterator[conversation.AssistantContentDeltaDict]", deltas()),
        ):
            pass
        response = intent.IntentResponse(language=user_input.language)
        response.response_type = intent.IntentResponseType.QUERY_ANSWER
        response.async_set_speech(fast.text)
        return conversation.ConversationResult(
            response=response, conversation_id=chat_log.conversation_id
        )

    async def _async_add_text(self, chat_log: conversation.ChatLog, text: str) -> None:
        """Stream one assistant message into the chat log.

        Through the delta stream: once the pipeline has started streaming TTS
        (long text, or text before a tool call) it speaks only streamed
        deltas, never the final response.
        """

        async def delta() -> AsyncIterator[conversation.AssistantContentDeltaDict]:
            yield {"role": "assistant", "content": text}

        async for _content in chat_log.async_add_delta_content_stream(
            self.entity_id, delta()
        ):
            pass

    async def _async_error_result(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        message: str,
    ) -> conversation.ConversationResult:
        """Speak a short error; keep the chat log consistent."""
        await self._async_add_text(chat_log, message)
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_error(intent.IntentResponseErrorCode.UNKNOWN, message)
        return conversation.ConversationResult(
            response=response, conversation_id=chat_log.conversation_id
        )


def _extraction_marks(
    understanding: Understanding | None, guard: TurnGuard | None
) -> dict[str, Any]:
    """What tells memory that a turn holds no personal fact (no extraction call).

    HA recognized an intent in the sentence (a command or a question), or a
    device change ran in a turn that named the device. A change in a turn that
    named nothing does not count: the bundled 0.5B model, right after a
    command, "turns the front door on" again after "My wife Elena works as a
    pilot.", and a call the guard refused ran nothing at all.
    """
    acted = guard is not None and guard.acted and guard.kind is not TurnKind.FOLLOW_UP
    return {
        "acted": acted,
        "intent": understanding.intent if understanding is not None else None,
    }


def _command(
    user_input: conversation.ConversationInput, understanding: Understanding | None
) -> Command | None:
    """The turn's command as HA recognized it (kept only when it acted).

    An elliptical follow-up ("and the living room?") is read against it.
    """
    if understanding is None or understanding.kind is not TurnKind.ACTION:
        return None
    if understanding.intent is None:
        return None
    return Command(understanding.resolved or user_input.text, understanding.intent)


def _speech(response: intent.IntentResponse) -> str:
    """What an intent response says."""
    return str(response.speech.get("plain", {}).get("speech", ""))


def _system_text(chat_log: conversation.ChatLog) -> str:
    """HA's rendered system prompt (instructions, API prompt, extras)."""
    rendered = chat_log.content[0]
    return rendered.content if isinstance(rendered, conversation.SystemContent) else ""


def _tools_of_turn(
    chat_log: conversation.ChatLog, guard: TurnGuard | None
) -> tuple[bool, tuple[str, ...]]:
    """Whether this turn called a tool, and what its device actions acted on."""
    calls: dict[str, dict[str, Any]] = {}
    targets: list[str] = []
    used = False
    live = guard.live_tools if guard is not None else frozenset()
    for content in reversed(chat_log.content):
        if isinstance(content, conversation.UserContent):
            break
        if isinstance(content, conversation.AssistantContent):
            for call in content.tool_calls or ():
                used = True
                calls[call.id] = call.tool_args
        elif isinstance(content, conversation.ToolResultContent):
            targets[:0] = action_targets(
                content.tool_name,
                calls.get(content.tool_call_id, {}),
                tool_result_data(content),
                live,
            )
    return used, tuple(dict.fromkeys(targets))
