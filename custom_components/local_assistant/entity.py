"""Base entity: the streaming tool loop against the model server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import replace
import time
from typing import TYPE_CHECKING, Any, cast

from homeassistant.components import conversation
from homeassistant.components.conversation import AssistantContentDeltaDict
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import CONF_MODEL
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.entity import Entity
from homeassistant.util import dt as dt_util
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
from .llm.figures import AgentKind, CompletionFigures, TurnFigures
from .llm.messages import current_turn_messages, to_messages
from .llm.prompt import stable_schema
from .llm.sentences import SpokenKey
from .llm.spoken import VoiceStyle
from .llm.stream import (
    STREAM_ERRORS,
    StreamOutcome,
    observe_stream,
    transform_stream,
)
from .llm.tool_repair import ToolArguments, call_repairer
from .llm.values import message_texts, shown_numbers
from .server.client import error_key, is_auth_error
from .server.health import async_report as async_report_health
from .turn.policy import TurnPolicy

if TYPE_CHECKING:
    from . import LocalAssistantConfigEntry, LocalAssistantData


class ModelError(HomeAssistantError):
    """The turn failed; `key` names the sentence the user hears (llm/sentences.py).

    It is an exception translation too, so an AI task fails with it as is.
    `silent` says that nothing of the failed completion reached the chat log;
    `bad_request`, that the server refused the request as sent (HTTP 400);
    `restated`, an answer that only restated an earlier one or an
    instruction, which the caller may say after all.
    """

    def __init__(
        self,
        key: SpokenKey,
        *,
        silent: bool = False,
        bad_request: bool = False,
        restated: str = "",
    ) -> None:
        """Keep the sentence's key."""
        super().__init__(translation_domain=DOMAIN, translation_key=key)
        self.key: SpokenKey = key
        self.silent = silent
        self.bad_request = bad_request
        # With "no_answer": what the model restated instead (llm/echo.py).
        self.restated = restated


class LocalAssistantEntity(Entity):
    """Shared by the agents of one model server."""

    _attr_has_entity_name = True
    _attr_name = None
    # What kind of turns this agent runs: a conversation's requests start
    # with the prompt the next turn reuses (server/warmth.py); an AI task's
    # replace it in the server's cache.
    _agent_kind: AgentKind = "conversation"

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

    def request_tools(
        self, chat_log: conversation.ChatLog
    ) -> list[dict[str, Any]] | None:
        """The chat log's tools as the request's JSON schemas (None without tools)."""
        if not chat_log.llm_api or not chat_log.llm_api.tools:
            return None
        serializer = chat_log.llm_api.custom_serializer
        return [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description or "",
                    "parameters": stable_schema(
                        schema_to_openapi(tool.parameters, serializer)
                    ),
                },
            }
            for tool in chat_log.llm_api.tools
        ]

    @contextmanager
    def measure_turn(self) -> Iterator[TurnFigures]:
        """Figures of one turn: a debug line and diagnostics (no text)."""
        figures = TurnFigures(
            kind=self._agent_kind,
            at=dt_util.utcnow().timestamp(),
            started=time.monotonic(),
        )
        # The entry may unload while the turn runs (its runtime data goes).
        turns = self.entry.runtime_data.turns
        try:
            yield figures
        finally:
            if figures.completions:
                figures.total_ms = 1000 * (time.monotonic() - figures.started)
                LOGGER.debug("%s", figures.log_line())
                turns.add(figures)

    async def async_run_completions(
        self,
        chat_log: conversation.ChatLog,
        prefix: list[dict[str, Any]],
        voice: VoiceStyle | None = None,
        *,
        response_format: dict[str, Any] | None = None,
        policy: TurnPolicy | None = None,
        turn: list[dict[str, Any]] | None = None,
        tools: list[dict[str, Any]] | None = None,
        figures: TurnFigures | None = None,
        fresh_prefix: list[dict[str, Any]] | None = None,
    ) -> StreamOutcome:
        """Stream answers into the chat log until the model stops calling tools.

        `prefix` is the system message(s) plus the remembered history; `turn`
        the request's own messages (default: the chat log's last user message
        and the tool rounds after it). `voice` makes the text speakable; its
        filler is only for the first completion. `response_format` asks for
        structured output (AI tasks). `policy` refuses changes the user's words
        do not name and holds text while a change was asked or tried and none
        ran (turn/policy.py). `tools` are the request's
        tools when the caller built them already (`request_tools`);
        `figures` collects each completion's figures. `fresh_prefix` is
        `prefix` without the replayed session: an answer that came and showed
        nothing (a repeat, llm/echo.py) is asked for again with it, since a
        small model repeats what the session shows it. A request the server
        refuses (HTTP 400, most often too large for its context: llama.cpp's
        exceed_context_size_error) is sent once more without the replayed
        session; the outcomes after it say so (`session_dropped`).
        Returns the last completion's outcome; raises ModelError, naming a
        short spoken sentence, when the turn cannot finish.
        """
        # The turn's rounds use the server of the set-up it began in: the entry
        # may unload or reload meanwhile (HA then deletes its runtime data).
        data = self.entry.runtime_data
        if turn is None:
            turn = current_turn_messages(chat_log.content)
        messages = [*prefix, *turn]
        options = self.subentry.data
        request: dict[str, Any] = {
            "model": options[CONF_MODEL],
            "temperature": options.get(CONF_TEMPERATURE, DEFAULT_TEMPERATURE),
            "max_tokens": options.get(CONF_MAX_TOKENS, DEFAULT_MAX_TOKENS),
            # OpenAI-style servers report prompt and cached tokens only when
            # asked; llama.cpp and Swama report theirs anyway (llm/figures.py).
            "stream_options": {"include_usage": True},
        }
        if response_format is not None:
            request["response_format"] = response_format
        if tools is None:
            tools = self.request_tools(chat_log)
        if tools:
            request["tools"] = tools

        empty_retries = 0
        session_dropped = False
        for _round in range(MAX_TOOL_ITERATIONS):
            if policy is not None:
                policy.next_round()
            try:
                outcome = await self._async_stream_once(
                    data,
                    chat_log,
                    messages,
                    request,
                    voice
                    if voice is None or _round == 0
                    else replace(voice, filler=None),
                    policy,
                    figures,
                )
            except ModelError as err:
                if (
                    err.bad_request
                    and (without_session := _without_session(prefix)) != prefix
                ):
                    # The session grows turn by turn until the request no
                    # longer fits the server's context; without it, it may.
                    LOGGER.debug(
                        "The server refused the request; sent without the session"
                    )
                    messages = [*without_session, *messages[len(prefix) :]]
                    prefix = without_session
                    session_dropped = True
                    continue
                # llama.cpp ends the stream with an error, before any text,
                # when it cannot read the model's tool call (Swama drops it:
                # an empty answer, below).
                if err.key != "model_broken_answer" or not err.silent or empty_retries:
                    raise
                LOGGER.debug(
                    "The server could not read the model's answer; asking again"
                )
                empty_retries += 1
                continue
            outcome.session_dropped = session_dropped
            if policy is not None and policy.repeated:
                # A change made again right after it ran (turn/policy.py,
                # rule 3): the caller answers from what ran.
                return outcome
            if (
                policy is not None
                and policy.what_ran_answers
                and (not outcome.tool_calls or policy.asked_no_more)
            ):
                # The changes ran and the model added only words (held), or
                # HA read the sentence as that command: what ran answers.
                return outcome
            if outcome.tool_calls and voice is not None and voice.echo_words:
                # After a call, "The garage is open." may say the user's words.
                voice = replace(voice, echo_words=frozenset())
            if outcome.tool_calls and "tool_choice" in request:
                # The required call came; the answer after it is words.
                request = {k: v for k, v in request.items() if k != "tool_choice"}
            if outcome.withheld is not None:
                if tools and policy is not None and policy.require_a_call():
                    # A recognized command answered in words only: the held
                    # answer is dropped and the change asked for once more.
                    request = {**request, "tool_choice": "required"}
                    continue
                if fresh_prefix is None or not _ask_again_without_session(
                    outcome, policy, prefix, fresh_prefix
                ):
                    # Nothing of this answer reached the chat log; the caller decides.
                    return outcome
                # Asked without tools, the bundled model said the user's
                # statement back, which is never shown (memory tuning set:
                # such turns ended "nothing was changed"); what the session
                # replays is what it repeats, so it is asked once more
                # without the session.
                if messages and messages[-1]["role"] == "assistant":
                    messages.pop()
                messages = [*fresh_prefix, *messages[len(prefix) :]]
                prefix = fresh_prefix
                continue
            if policy is not None and policy.stop_after_refusal:
                # The model's next words after a refused change would most
                # likely claim it; the caller decides what is said.
                return outcome
            if outcome.tool_calls and chat_log.unresponded_tool_results:
                if (
                    tools
                    and policy is not None
                    and policy.refused
                    and policy.require_a_call()
                ):
                    # "Turn off" met with HassTurnOn: the correction is a call.
                    request = {**request, "tool_choice": "required"}
                continue
            if outcome.visible_chars or outcome.tool_calls or outcome.placeholder:
                # A copied template slot is no empty answer: the caller says
                # it could not check.
                return outcome
            # What the last answer restated: an empty one after it is no
            # sign that the restatement was the answer.
            restated = outcome.restated
            if empty_retries >= EMPTY_ANSWER_RETRIES:
                LOGGER.warning("The model gave an empty answer twice")
                raise ModelError("no_answer", restated=restated)
            # Swama drops a malformed tool call and leaves an empty answer: ask again.
            empty_retries += 1
            if messages and messages[-1]["role"] == "assistant":
                messages.pop()
            if fresh_prefix is not None and outcome.received and not outcome.wordless:
                # Text came and none of it could be shown: what the session
                # replays is what a small model repeats (a wordless answer
                # repeats nothing: asked again with the session).
                messages = [*fresh_prefix, *messages[len(prefix) :]]
                prefix = fresh_prefix
        LOGGER.warning(
            "The model kept calling tools for %s rounds", MAX_TOOL_ITERATIONS
        )
        raise ModelError("tool_loop")

    async def _async_stream_once(
        self,
        data: LocalAssistantData,
        chat_log: conversation.ChatLog,
        messages: list[dict[str, Any]],
        request: dict[str, Any],
        voice: VoiceStyle | None = None,
        policy: TurnPolicy | None = None,
        figures: TurnFigures | None = None,
    ) -> StreamOutcome:
        """One streamed completion into the chat log; appends what it added."""
        client = data.client
        outcome = StreamOutcome()
        completion = CompletionFigures()
        if figures is not None:
            figures.completions.append(completion)
        note = data.prompt_cache.request_started(
            request["model"],
            messages,
            request.get("tools"),
            conversation=self._agent_kind == "conversation",
        )
        added: list[conversation.AssistantContent | conversation.ToolResultContent] = []
        try:
            # The body goes in extra_body, which the SDK sends as is: its typed
            # arguments first run through a TypedDict transform costing about
            # 0.2 ms per message on the event loop (some 35 ms for a full
            # session buffer, again on every tool round; docs/benchmarks.md).
            # The JSON sent is the same; extra_body wins over messages=[]
            # (tests/test_request_body.py pins it; the manifest bounds openai).
            sent_at = time.monotonic()
            stream = await client.chat.completions.create(
                model=request["model"],
                messages=[],
                stream=True,
                extra_body={**request, "messages": messages},
            )
            deltas = transform_stream(
                observe_stream(stream, completion, sent_at),
                outcome,
                start_in_think=self._prefills_think is not False,
                tools_available=chat_log.llm_api is not None,
                voice=voice,
                policy=policy,
                shown=shown_numbers(message_texts(messages))
                if voice is not None and voice.asked_live_lines
                else frozenset(),
                repair=call_repairer(
                    self.hass,
                    {
                        tool["function"]["name"]: _tool_arguments(
                            tool["function"]["parameters"]
                        )
                        for tool in request.get("tools", ())
                    },
                    policy.named if policy is not None else None,
                    policy.last_targets[0]
                    if policy is not None and policy.last_targets
                    else None,
                ),
            )
            if figures is not None:
                deltas = _note_first_text(deltas, figures)
            try:
                async for content in chat_log.async_add_delta_content_stream(
                    self.entity_id,
                    cast("AsyncIterator[AssistantContentDeltaDict]", deltas),
                ):
                    added.append(content)
            finally:
                await stream.close()
        except STREAM_ERRORS as err:
            LOGGER.warning("Model request failed: %s", _safe_error(err))
            async_report_health(self.hass, self.entry, err)  # repair issue if down
            if is_auth_error(err):  # the key was changed on the server: ask for it
                self.entry.async_start_reauth(self.hass)
            raise ModelError(
                error_key(err),
                silent=not outcome.received,
                bad_request=isinstance(err, openai.BadRequestError),
            ) from err
        finally:
            added_messages = to_messages(added)
            # What the server now holds in its cache: this prompt and its answer.
            data.prompt_cache.request_finished(
                note,
                next((m for m in added_messages if m["role"] == "assistant"), None),
            )
        async_report_health(self.hass, self.entry)
        learned = outcome.prefills_think
        if learned is not None and self._prefills_think is None:
            LOGGER.debug("Server prefills <think>: %s", learned)
            self._prefills_think = learned
        elif learned and not self._prefills_think:
            LOGGER.debug("Server prefills <think>; holding text until </think>")
            self._prefills_think = True
        if outcome.looping:
            LOGGER.debug("The model said the same line a third time; cut there")
        if outcome.made_up:
            LOGGER.debug(
                "Not said: a sentence about the live data with %s, which the "
                "model was not shown",
                outcome.made_up,
            )
        if outcome.reasoning_cut:
            # Nothing of it is said: it counts as an empty answer.
            LOGGER.debug("The answer reached max_tokens while still reasoning")
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
        if policy is not None:
            for content in added:
                if isinstance(content, conversation.ToolResultContent):
                    policy.record_result(content.tool_name, tool_result_data(content))
        messages.extend(added_messages)
        return outcome


def _tool_arguments(schema: dict[str, Any]) -> ToolArguments:
    """The arguments a tool's JSON schema offers, and the required ones."""
    return ToolArguments(
        offered=frozenset(schema.get("properties", {})),
        required=frozenset(schema.get("required", ())),
    )


async def _note_first_text(
    deltas: AsyncIterator[dict[str, Any]], figures: TurnFigures
) -> AsyncIterator[dict[str, Any]]:
    """Pass deltas on; note when the turn's first visible text appears."""
    async for delta in deltas:
        if figures.first_text_ms is None and delta.get("content"):
            figures.first_text_ms = 1000 * (time.monotonic() - figures.started)
        yield delta


def _safe_error(err: BaseException) -> str:
    """The error's class and status, never request bodies (they hold prompts)."""
    if isinstance(err, openai.APIStatusError):
        return f"{type(err).__name__} (HTTP {err.status_code})"
    detail = str(err) if isinstance(err, httpx.HTTPError) else ""
    return type(err).__name__ + (f": {detail}" if detail else "")


def _without_session(prefix: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The prefix's system messages, without the replayed session between them
    (the live data and the time come after it: llm/prompt.py)."""
    return [message for message in prefix if message["role"] == "system"]


def _ask_again_without_session(
    outcome: StreamOutcome,
    policy: TurnPolicy | None,
    prefix: list[dict[str, Any]],
    fresh_prefix: list[dict[str, Any]],
) -> bool:
    """Whether a held answer asked without tools showed nothing, once.

    Text came and none of it could be shown (a repeat, llm/echo.py), and
    the request still carried the session: the answer is asked for again
    without it. Any other held answer goes to the caller.
    """
    return (
        policy is not None
        and policy.without_tools
        and outcome.received
        and not (outcome.withheld or "").strip()
        and fresh_prefix != prefix
    )
