"""The Assist conversation agent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT, MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent, llm
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util import dt as dt_util

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
from .llm.echo import (
    echo_key,
    echo_keys,
    echo_labels,
    echo_lines,
    echo_words,
    live_readout,
    reads_out_live_lines,
    restatement_keys,
)
from .llm.messages import history_messages
from .llm.prompt import Prompt, build_prompt
from .llm.sentences import (
    SpokenKey,
    async_answer_language,
    async_phrases,
    async_spoken_message,
    async_voice_style,
)
from .llm.spoken import slot_leads, speakable, template_slots
from .llm.values import named_lines
from .memory.commands import MemoryCommand
from .memory.session import Command
from .memory.voice import async_read_command, async_run_command
from .tools.api import async_build_llm_api, live_tools
from .tools.live_now import async_live_lines, live_line_tools
from .turn.policy import (
    CHAT_INTENTS,
    Named,
    TurnPolicy,
    is_read_only,
    names_a_tool,
    written_tool_call,
)
from .turn.reading import (
    async_continuation,
    async_named,
    async_named_reading,
    async_recognize_intent,
)
from .turn.targets import said_names
from .turn.what_ran import async_what_ran, targets_of, turn_calls
from .wording import numbers_in

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
        if subentry.subentry_type == SUBENTRY_CONVERSATION:
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
        """Answer one request, remembering the exchange for this speaker.

        HA's own intents first (what HA reads strictly it carries out and
        answers, in every language it speaks), then the model, with the live
        data in its prompt, whose changes run only where the user's words
        name what they act on (turn/policy.py).
        """
        options = self.subentry.data
        memory = self.entry.runtime_data.memory
        agent = self.subentry.subentry_id
        speaker = memory.resolve_speaker(user_input, chat_log.conversation_id)
        memory.record_handled_elsewhere(agent, speaker, chat_log, self.entity_id)
        llm_context = user_input.as_llm_context(DOMAIN)
        live = live_tools(self.hass, options)
        try:
            await chat_log.async_provide_llm_data(
                llm_context,
                async_build_llm_api(self.hass, options, live, memory.tools),
                options.get(CONF_PROMPT),
                user_input.extra_system_prompt,
            )
        except conversation.ConverseError as err:
            return err.as_conversation_result()

        reading = await self._async_read(user_input, chat_log, agent, speaker)
        if reading.intent is None and (
            command := await async_read_command(
                self.hass, user_input.text, user_input.language
            )
        ):
            handled = await self._async_memory_command(
                user_input, chat_log, agent, speaker, command
            )
            if handled is not None:
                return handled
        if (
            reading.recognized is not None
            and chat_log.llm_api is not None
            and options.get(CONF_LOCAL_INTENTS, DEFAULT_LOCAL_INTENTS)
        ):
            handled = await self._async_home_assistant_handles(
                user_input, chat_log, agent, speaker, reading
            )
            if handled is not None:
                return handled
        policy = TurnPolicy(
            reading.named,
            live_tools=frozenset(tool.name for tool in live),
            memory_tools={tool.name: tool.does for tool in memory.tools},
            last_targets=memory.last_action(agent, speaker),
            # HA read a command it did not carry out (it could not, or its
            # intents are off): only that change, run, may answer it.
            asked_intent=reading.recognized
            if reading.recognized and not is_read_only(reading.recognized, ())
            else None,
        )
        return await self._async_model_turn(
            user_input,
            chat_log,
            llm_context,
            agent,
            speaker,
            policy,
            reading.intent,
            live,
        )

    async def _async_read(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        agent: str,
        speaker: str,
    ) -> TurnReading:
        """HA's reading of the words: its intent, a continuation, what they name.

        A follow-up of the session's last command that HA reads with that
        command's target in it ("turn it off again": turn/reading.py) is read
        as that sentence: HA carries it out, or, with HA's intents off, the
        model may change what it names. Else a phrase that points to one
        device in words HA's sentences do not use ("the living room smart
        curtain") is read with HA's name for it in its place, when HA reads
        that sentence strictly (turn/targets.py).
        """
        memory = self.entry.runtime_data.memory
        named = await async_named(self.hass, user_input)
        intent_name = await async_recognize_intent(self.hass, user_input)
        if intent_name is not None or chat_log.llm_api is None:
            # "Hello", "never mind": HA answers nothing, the model chats.
            recognized = None if intent_name in CHAT_INTENTS else intent_name
            return TurnReading(named, intent_name, recognized, user_input.text)
        continued = await async_continuation(
            self.hass,
            user_input,
            memory.last_action(agent, speaker),
            memory.last_command(agent, speaker),
            named,
        ) or await async_named_reading(self.hass, user_input)
        if continued is None:
            return TurnReading(named, None, None, user_input.text)
        as_read = replace(user_input, text=continued)
        recognized = await async_recognize_intent(self.hass, as_read)
        return TurnReading(
            await async_named(self.hass, as_read), recognized, recognized, continued
        )

    async def _async_home_assistant_handles(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        agent: str,
        speaker: str,
        reading: TurnReading,
    ) -> conversation.ConversationResult | None:
        """Let HA's own intents carry out and answer what HA reads strictly.

        Exactly what the pipeline's "prefer handling commands locally" does,
        here so it works whatever the pipeline says, and also for a follow-up
        HA reads. None when HA recognized the sentence but could not carry it
        out (two devices with the name): then the model tries, and only a
        change that runs answers it.
        """
        memory = self.entry.runtime_data.memory
        response = await conversation.async_handle_intents(
            self.hass, replace(user_input, text=reading.text), chat_log
        )
        if response is None:
            LOGGER.debug(
                "HA recognized %s but could not carry it out", reading.recognized
            )
            return None
        speech = str(response.speech.get("plain", {}).get("speech", ""))
        await self._async_add_text(chat_log, speech)
        LOGGER.debug("Home Assistant handled the sentence (%s)", reading.recognized)
        targets = targets_of(turn_calls(chat_log, frozenset())[1])
        self.entry.runtime_data.prompt_cache.reply_finished(
            self.subentry.data[CONF_MODEL]
        )
        memory.record_exchange(
            speaker,
            user_input.text,
            speech,
            agent=agent,
            used_tools=True,
            action_targets=targets,
            command=Command(reading.text, reading.recognized)
            if targets and reading.recognized
            else None,
            intent=reading.recognized,
        )
        return conversation.ConversationResult(
            response=response, conversation_id=chat_log.conversation_id
        )

    async def _async_memory_command(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        agent: str,
        speaker: str,
        command: MemoryCommand,
    ) -> conversation.ConversationResult | None:
        """Carry out a memory command our sentences read: no model call.

        The same every time and in each of our languages, where a small
        model would have to choose a tool and the right note
        (memory/voice.py). None when the words turn out to touch no note:
        the model answers them.
        """
        memory = self.entry.runtime_data.memory
        answer = await async_run_command(
            self.hass, memory, speaker, command, user_input.language
        )
        if answer is None:
            return None
        await self._async_add_text(chat_log, answer)
        LOGGER.debug("A memory command was read by our sentences (%s)", command.action)
        self.entry.runtime_data.prompt_cache.reply_finished(
            self.subentry.data[CONF_MODEL]
        )
        # Our own true answer is replayed ("which one?" needs it); carried
        # out already, nothing in it for the extractor, and no use of a note.
        memory.record_exchange(
            speaker,
            user_input.text,
            answer,
            agent=agent,
            acted=True,
            counts_use=False,
            intent=command.action.value,
        )
        return conversation.async_get_result_from_chat_log(user_input, chat_log)

    async def _async_model_turn(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        llm_context: llm.LLMContext,
        agent: str,
        speaker: str,
        policy: TurnPolicy,
        intent_name: str | None,
        live: list[llm.Tool],
    ) -> conversation.ConversationResult:
        """One model answer, streamed; "nothing was changed" when the policy says so.

        ``intent_name`` is what HA recognized in the words, if anything: such
        a turn (a command, a question, "never mind") holds no personal fact,
        so it costs no extraction call.
        """
        options = self.subentry.data
        data = self.entry.runtime_data
        memory = data.memory
        shown_facts = memory.prompt_facts(speaker)
        facts = [fact.text for fact in shown_facts]
        # The memory tools' numbers are those of this prompt (memory/voice.py).
        policy.notes = tuple(facts)
        system_text = _content_of(chat_log.content[0], conversation.SystemContent)
        prompt = build_prompt(
            system_text,
            facts,
            tool_bias=options.get(CONF_TOOL_BIAS, DEFAULT_TOOL_BIAS),
            live_tool_names=[tool.name for tool in live],
            volatile_lines=await self._async_volatile_lines(llm_context, chat_log),
            live_lines=await async_live_lines(
                self.hass,
                live_line_tools(self.hass, options, live),
                user_input.language,
            ),
            answer_language=await async_answer_language(self.hass, user_input.language),
        )
        # The live lines as the speakable filter gives them back when the
        # model reads them out ("Mercredi :" is said "Mercredi:").
        spoken_live = [speakable(line) for line in prompt.live]
        policy.live_lines = frozenset(echo_key(line) for line in spoken_live)
        history = history_messages(memory.history(agent, speaker))
        earlier_answers = _contents(history, "assistant")
        request_tools = self.request_tools(chat_log)
        # Always speakable: the same text goes to TTS and the chat dialog.
        instructions = _instruction_lines(prompt)
        aliases = (
            (await async_phrases(self.hass, user_input.language)).weekday_aliases(
                dt_util.now().date()
            )
            if spoken_live
            else {}
        )
        voice = replace(
            await async_voice_style(
                self.hass,
                user_input.language,
                filler=options.get(CONF_TOOL_FILLER, DEFAULT_TOOL_FILLER),
            ),
            slots=template_slots(system_text),
            slot_leads=slot_leads(system_text),
            echoes=echo_keys(
                user_input.text,
                instructions,
                # A small model in a long session repeats an earlier request
                # ("Deckenlampe im Wohnzimmer auf 20 Prozent." to 40 turns).
                earlier=_contents(history, "user"),
            ),
            # Its own short earlier answers may be said again ("The light is
            # on."); a long one only when asking again brings nothing else
            # ("Say that again?"), never replayed (llm/echo.py).
            restatements=restatement_keys(earlier_answers),
            # Where HA read a command or the words name a device or a device
            # word, the user's words made into an answer are a claim;
            # elsewhere and in questions ("Il va pleuvoir demain ?" - "Oui,
            # il va pleuvoir demain.", "Is the porch light on?" - "Yes, the
            # porch light is on.") they are an answer.
            echo_words=echo_words(user_input.text)
            if policy.words_may_claim
            else frozenset(),
            echo_lines=echo_lines(instructions),
            unsaid_lines=echo_lines([prompt.answer_language]),
            echo_labels=echo_labels([*spoken_live, *earlier_answers]),
            # Only where the words ask (and say no command word): "Tell me a
            # joke about Friday." is no question about Friday's weather.
            live_readout=live_readout(
                spoken_live,
                user_input.text if policy.named.asks else "",
                # "Will it rain on Tuesday?" on Monday: the "Tomorrow" line.
                aliases=aliases,
            ),
            asked_live_lines=tuple(named_lines(spoken_live, user_input.text, aliases)),
            live_aliases=tuple(aliases.items()),
        )
        failure: ModelError | None = None
        data.prompt_cache.reply_starting()
        # The memory tools' numbers are this turn's (its tool calls carry its
        # context): another device of the same person may start a turn now.
        memory.number_facts(user_input.context.id, speaker, shown_facts)
        async with data.scheduler.reply():
            with self.measure_turn() as figures:
                try:
                    outcome = await self.async_run_completions(
                        chat_log,
                        prompt.messages(history),
                        voice,
                        policy=policy,
                        tools=request_tools,
                        figures=figures,
                        # Only where the words ask for no change: asked
                        # without the session, a command was answered with
                        # a claim ("Los farolillos deben estar encendidos.",
                        # nothing ran) where the session made it repeat.
                        fresh_prefix=prompt.messages([])
                        if policy.asks_no_change
                        else None,
                    )
                    if outcome.session_dropped:
                        # Too long for the server's context: every later turn
                        # would be refused with it too.
                        memory.forget_history(agent, speaker)
                        history = []
                    if policy.ask_again_without_tools or policy.answer_from_results:
                        # Once more without tools (turn/policy.py, rules 2
                        # and 3): to the user's words, or from the results.
                        from_results = policy.answer_from_results
                        policy.ask_without_tools()
                        outcome = await self.async_run_completions(
                            chat_log,
                            prompt.messages(history),
                            replace(voice, filler=None, echo_words=frozenset()),
                            policy=policy,
                            turn=None
                            if from_results
                            else [{"role": "user", "content": user_input.text}],
                            tools=[],
                            figures=figures,
                            fresh_prefix=prompt.messages([]),
                        )
                except ModelError as err:
                    failure = err
        # Before anything is recorded: that starts the fact extraction, which
        # the cache keeper watches to send the prefix again.
        model = options[CONF_MODEL]
        data.prompt_cache.remember(agent, speaker, model, prompt, request_tools)
        data.prompt_cache.reply_finished(model)
        if (
            failure is not None
            and failure.restated
            # Only a question is answered by what was said before ("Who are
            # you?", "Say that again?"): a command or a statement is not.
            and policy.named.asks
            and not (policy.asked_or_tried or policy.changed or policy.words_may_claim)
            # A number said earlier may be stale now: only one the prompt
            # still holds (the live data, the time) may be said again.
            and set(numbers_in(failure.restated))
            <= set(numbers_in(prompt.stable + "\n" + prompt.varying))
        ):
            # Asked again, the model only restated an earlier answer or an
            # instruction ("Say that again?", "Who are you?"): that is its
            # answer, said and never replayed (the session would teach a loop).
            await self._async_add_text(chat_log, failure.restated)
            memory.record_unanswered(speaker, user_input.text, intent=intent_name)
            return conversation.async_get_result_from_chat_log(user_input, chat_log)
        if failure is not None and not (
            policy.changed_cleanly
            # After another change was refused or failed, only what ran by
            # name answers: a bare "Done." would say all of it ran.
            or (
                policy.changed
                and targets_of(turn_calls(chat_log, policy.live_tools)[1])
            )
        ):
            # No answer, so nothing joins the buffer; what the user said
            # may still be worth remembering.
            memory.record_unanswered(speaker, user_input.text, intent=intent_name)
            message = await async_spoken_message(
                self.hass, failure.key, user_input.language
            )
            return await self._async_error_result(user_input, chat_log, message)
        if (
            failure is not None
            or policy.what_ran_answers
            or ((outcome.placeholder or policy.repeated) and policy.changed_cleanly)
        ):
            # The model's changes ran (and then it asked nothing more, made
            # one again, gave no answer, kept calling tools, repeated a
            # template slot or lost its server; also after another change was
            # refused or failed: "try again" would hide what ran, and invite
            # a repeat): what ran answers (rule 3), and joins the session.
            await self._async_add_text(
                chat_log, await self._async_what_ran(chat_log, policy, user_input)
            )
            return self._record_answer(
                user_input, chat_log, agent, speaker, policy, intent_name
            )
        held = outcome.withheld
        # A question's refused change, then an answer read from the live data
        # (what was read answers it), or an answer asked without tools (held
        # whole, never a tool call written as text, nor naming a device whose
        # change was refused: "The garden sprinkler is on now."), is said.
        sayable = bool(held) and (
            policy.reads_live_data(held or "")
            or (
                policy.without_tools
                and not written_tool_call(held or "")
                and not said_names(held or "", policy.refused_devices)
            )
        )
        key: SpokenKey | None = None
        if not sayable and (held is not None or policy.hold_text):
            # Where the model met a statement with a refused change and then
            # only said it back ("Ich bin Diabetiker."), it is acknowledged;
            # any other held answer may claim the change that was asked or
            # tried and did not run ("Forget my bicycle." - "I forgot it.").
            # Where a change ran, or none was asked or tried, it is no answer.
            key = (
                "acknowledged"
                if policy.acknowledges and outcome.repeated
                else "nothing_changed"
                if policy.asked_or_tried and not policy.changed
                else "no_answer"
            )
        elif outcome.placeholder:
            # The answer repeated a template slot of its prompt.
            key = "could_not_check"
        elif sayable:
            await self._async_add_text(chat_log, held or "")
        if key is not None:
            LOGGER.debug("The model's answer is not spoken: said %s", key)
            # A statement the model met with a change ("I work at the desk
            # lamp until midnight.") may still hold a fact.
            memory.record_unanswered(speaker, user_input.text, intent=intent_name)
            message = await async_spoken_message(self.hass, key, user_input.language)
            if key != "acknowledged":
                return await self._async_error_result(user_input, chat_log, message)
            await self._async_add_text(chat_log, message)
            return conversation.async_get_result_from_chat_log(user_input, chat_log)

        said = _content_of(chat_log.content[-1], conversation.AssistantContent)
        if not policy.changed and (
            outcome.looping or names_a_tool(said, _tool_names(request_tools))
        ):
            # Said up to its third repeat, or naming a tool; replayed, such an
            # answer teaches the next ones to do the same (seen on the bundled
            # model). A turn whose change ran is recorded below: it replays
            # the user's words only.
            memory.record_unanswered(speaker, user_input.text, intent=intent_name)
            return conversation.async_get_result_from_chat_log(user_input, chat_log)
        if not policy.changed and reads_out_live_lines(said, policy.live_lines):
            # The live data read out: the next answers would copy it, and its
            # values go stale. Replayed as the user's words only, as a turn
            # that read the data with a tool is ("And on Wednesday?" follows).
            memory.record_exchange(
                speaker,
                user_input.text,
                said,
                agent=agent,
                used_tools=True,
                acted=False,
                intent=intent_name,
            )
            return conversation.async_get_result_from_chat_log(user_input, chat_log)
        return self._record_answer(
            user_input, chat_log, agent, speaker, policy, intent_name
        )

    def _record_answer(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        agent: str,
        speaker: str,
        policy: TurnPolicy,
        intent_name: str | None,
    ) -> conversation.ConversationResult:
        """The turn's result; its answer joins the speaker's session.

        The memory is the entry's now (after a reload, the new one); unloaded
        meanwhile, the entry keeps nothing.
        """
        result = conversation.async_get_result_from_chat_log(user_input, chat_log)
        if (data := getattr(self.entry, "runtime_data", None)) is None:
            return result
        if said := _content_of(chat_log.content[-1], conversation.AssistantContent):
            used_tools, changes = turn_calls(chat_log, policy.live_tools)
            data.memory.record_exchange(
                speaker,
                user_input.text,
                said,
                agent=agent,
                used_tools=used_tools,
                action_targets=targets_of(changes),
                acted=policy.changed,
                intent=intent_name,
            )
        return result

    async def _async_what_ran(
        self,
        chat_log: conversation.ChatLog,
        policy: TurnPolicy,
        user_input: conversation.ConversationInput,
    ) -> str:
        """What this turn's changes did: HA's words for them, or "Done: Fan."."""
        _, changes = turn_calls(chat_log, policy.live_tools)
        return await async_what_ran(
            self.hass,
            changes,
            policy.named,
            user_input.language,
            cleanly=policy.changed_cleanly,
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


@dataclass(frozen=True, slots=True)
class TurnReading:
    """HA's reading of one turn's words."""

    named: Named
    # The intent HA recognized in the words (chat intents included), and the
    # one that HA may carry out (not "hello", "never mind").
    intent: str | None
    recognized: str | None
    # The sentence HA read: the user's own, or a follow-up with the target in it.
    text: str


def _instruction_lines(prompt: Prompt) -> list[str]:
    """The lines of the request's system messages that are not data.

    The live data, the facts and HA's overview of the home (YAML: a list
    item and its indented lines, "- names: Desk Lamp" / "  areas: Office")
    may be repeated as they are: "In the office." answers where the desk lamp
    is. An instruction ("Réponds en français.") may not be the answer
    (llm/echo.py).
    """
    data = set(prompt.live)
    return [
        line
        for line in (prompt.stable + "\n" + prompt.varying).splitlines()
        if line not in data and not line.startswith(("- ", " ", "\t"))
    ]


def _contents(messages: list[dict[str, Any]], role: str) -> list[str]:
    """The texts of the messages of one role."""
    return [str(m.get("content") or "") for m in messages if m.get("role") == role]


def _content_of[Said: (conversation.SystemContent, conversation.AssistantContent)](
    content: conversation.Content, kind: type[Said]
) -> str:
    """The text of a chat log message of one kind (HA's system prompt, an answer)."""
    return (content.content or "") if isinstance(content, kind) else ""


def _tool_names(tools: list[dict[str, Any]] | None) -> list[str]:
    """The names of a request's tools."""
    return [str(tool["function"]["name"]) for tool in tools or ()]
