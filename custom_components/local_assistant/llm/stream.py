"""Turn a streamed chat completion into HA chat log deltas.

Reasoning is split off by the think filter before anything reaches the chat
log (the pipeline speaks `content` as it arrives). Tool calls are assembled
from fragments and released at the finish chunk and again at stream end,
because some servers send them after the finish chunk.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass, field
import json
import time
from typing import Any

from homeassistant.helpers import llm
import httpx
import openai
from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import (
    Choice,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
)

from ..compat import tool_result_delta
from ..const import LOGGER, MAX_TOOL_CALLS_PER_ROUND
from ..turn.policy import INVALID_ARGUMENTS, NO_TOOLS, TurnPolicy, tool_error
from .echo import EchoHold
from .figures import CompletionFigures
from .spoken import SpokenFilter, VoiceStyle
from .think import ThinkFilter
from .tool_calls import AssembledToolCall, ToolCallAssembler, parse_arguments
from .values import ValueCheck

THINK_OPEN = "<think>"
# HA's voice pipeline starts speaking a streamed answer once it holds more
# than this many characters, or text and then a tool call
# (assist_pipeline.pipeline.STREAM_RESPONSE_CHARS). Text up to it waits for
# the completion's end: before a call it may claim a change that is then
# refused or fails, and is dropped; held no longer, a long answer is spoken
# as early as it would be anyway.
SPEECH_STREAM_CHARS = 60
# What reading a streamed answer may raise: the server or the connection failed
# (httpx, the SDK), or a line of it is no JSON.
STREAM_ERRORS = (openai.OpenAIError, httpx.HTTPError, ValueError)
# The delta of a choice that has none: servers send null, or leave it out of
# the finish chunk.
_NO_DELTA = ChoiceDelta()
NO_TOOLS_ERROR = tool_error(
    NO_TOOLS, "No tools are available here. Answer without calling a tool."
)


@dataclass(slots=True)
class StreamOutcome:
    """What one completion produced, for the loop's decisions."""

    visible_chars: int = 0
    tool_calls: int = 0
    # What this completion shows about the chat template: True if it prefills
    # `<think>` (a `</think>` closed reasoning that had no opening tag), False
    # if it does not (an explicit `<think>` first, or text and no tag at all),
    # None when it shows nothing (e.g. a bare tool call).
    prefills_think: bool | None = None
    invalid_calls: list[str] = field(default_factory=list)
    # Calls beyond MAX_TOOL_CALLS_PER_ROUND: not run (see _release_calls).
    skipped_calls: int = 0
    # Whether the server sent any text or tool call at all (held text too).
    received: bool = False
    # The server cut the completion (max_tokens) inside a think block:
    # nothing of it was shown, it is no answer.
    reasoning_cut: bool = False
    # The answer repeated a template slot of the prompt ("[value from tool]"):
    # nothing of it after the slot was shown (llm/spoken.py).
    placeholder: bool = False
    # An answer kept from the user: a change was asked or tried in this turn
    # and none ran, so it cannot be spoken (turn/policy.py).
    withheld: str | None = None
    # The answer was only a repeat (the user's words, an earlier answer, a
    # line of the prompt) and nothing of it was shown (llm/echo.py).
    repeated: bool = False
    # The answer said one line or sentence a third time: cut there, its
    # stream closed (LoopGuard).
    looping: bool = False
    # The answer had no word in it ("...", "¿?"): nothing of it was shown.
    wordless: bool = False
    # The answer only restated an earlier answer or an instruction and was
    # not shown (llm/echo.py): said when asking again brings nothing else.
    restated: str = ""
    # Numbers a sentence naming a live line stated that the model was not
    # shown: that sentence was not said (llm/values.py).
    made_up: list[str] = field(default_factory=list)
    # The server refused the turn's request with the replayed session (HTTP
    # 400, too large for its context): this completion was sent without it.
    session_dropped: bool = False


class LoopGuard:
    """Ends an answer where it says the same thing over and over.

    Seen on the bundled model: "Cherry tomatoes\nSpinach\nSpinach..." until
    max_tokens, 97 s of it; and inside one line, "Ich kann das momentan drin
    drin drin ..." for 250 words. Two kinds of run count:

    * the same line or sentence three times in a row. A line ends at a
      newline, a sentence at ".", "!" or "?" before a space (not inside
      "12.5"); compared loosely (case, spacing, the closing mark);
    * the same one to four words ten times in a row, compared by their
      letters (case and the marks around them do not count). Words with a
      digit are data, which may repeat ("0 mm, 0 mm, 0 mm, 0 mm, then 4 mm");
      ten lets a spelled code or word play pass ("zero zero zero zero",
      "Buffalo buffalo ...": review of the first version, which cut at four).

    Very short ones ("No.", "ha ha") do not count, nor repeats with
    something else between them ("Stir well." in a recipe). Nothing is held
    back: the last repeat is the last thing said.
    """

    __slots__ = ("_last", "_line", "_run", "_word", "_words", "looping")

    REPEATS = 3
    WORD_REPEATS = 10
    MAX_RUN_WORDS = 4
    MIN_CHARS = 4
    MARKS = ".!?。！？"

    def __init__(self) -> None:
        """Start with nothing said."""
        self._line = ""
        self._last = ""
        self._run = 0
        self._word = ""
        self._words: list[str] = []
        self.looping = False

    def feed(self, text: str) -> str:
        """The part of ``text`` up to the end of the last repeat (all of it, usually)."""
        if self.looping:
            return ""
        for index, char in enumerate(text):
            ends = char == "\n" or (
                char.isspace() and self._line[-1:] in tuple(self.MARKS)
            )
            self._line += char
            word_ends = char.isspace() and self._word_repeats()
            if (ends and self._count(self._line)) or word_ends:
                self.looping = True
                return text[: index + 1]
            if ends:
                self._line = ""
            self._word = "" if char.isspace() else self._word + char
        return text

    def _count(self, line: str) -> bool:
        """Note a finished line; whether it is the third of a run."""
        key = " ".join(line.casefold().split()).strip(self.MARKS + " ")
        if len(key) < self.MIN_CHARS:
            return False
        self._run = self._run + 1 if key == self._last else 1
        self._last = key
        return self._run >= self.REPEATS

    def _word_repeats(self) -> bool:
        """Note a finished word; whether it ends a tenth run of the same words."""
        word = self._word.casefold()
        if not word:
            return False
        # A mark said as a word ("+", "=") is a word: it breaks a run.
        key = "".join(char for char in word if char.isalnum()) or word
        words = self._words
        words.append(key)
        del words[: -self.WORD_REPEATS * self.MAX_RUN_WORDS]
        for size in range(1, self.MAX_RUN_WORDS + 1):
            run = words[-size:]
            if (
                len(words) >= size * self.WORD_REPEATS
                and sum(map(len, run)) >= self.MIN_CHARS
                and not any(char.isdigit() for part in run for char in part)
                and all(
                    words[-size * (n + 1) : len(words) - size * n] == run
                    for n in range(1, self.WORD_REPEATS)
                )
            ):
                return True
        return False


async def observe_stream(
    stream: AsyncIterable[ChatCompletionChunk],
    figures: CompletionFigures,
    sent_at: float,
) -> AsyncIterator[ChatCompletionChunk]:
    """Pass chunks on unchanged; note the first token's time and the server's figures.

    ``sent_at`` is ``time.monotonic()`` when the request was sent. The figures
    come on the last chunks (llama.cpp's ``timings``, a ``usage`` object; see
    figures.py), some of them without choices.

    Events that are no chunk (a keep-alive a proxy writes as data: ``"ping"``,
    ``[]``) are skipped. Once the answer's finish chunk came, the answer is
    whole: a connection dropped before ``[DONE]``, or a broken line or an
    error event after it, ends the stream there instead of failing the turn
    (HA may already be running the answer's tool calls). A chunk whose
    answer fields have a shape no server sends (``"content": 42``) is a
    broken line too.
    """
    finished = False
    chunks = aiter(stream)
    while True:
        try:
            # The SDK builds chunks without validating them: any JSON may come.
            chunk: object = await anext(chunks)
            _check_shape(chunk)
        except StopAsyncIteration:
            break
        except STREAM_ERRORS as err:
            if not finished:
                raise
            LOGGER.debug(
                "The stream broke after its answer was complete (%s)",
                type(err).__name__,
            )
            break
        if not isinstance(chunk, ChatCompletionChunk):
            continue
        if timings := (chunk.model_extra or {}).get("timings"):
            figures.read_timings(timings)
        if isinstance(usage := getattr(chunk, "usage", None), openai.BaseModel):
            figures.read_usage(usage.model_dump())
        if (choice := first_choice(chunk)) is not None:
            answers = _carries_answer(choice_delta(choice))
            if figures.first_token_ms is None and answers:
                figures.first_token_ms = 1000 * (time.monotonic() - sent_at)
            # A finish reason, then more of the answer (some proxies send one
            # on every chunk): that was not the end.
            finished = bool(getattr(choice, "finish_reason", None)) or (
                finished and not answers
            )
        yield chunk
    figures.total_ms = 1000 * (time.monotonic() - sent_at)


def _check_shape(chunk: object) -> None:
    """Raise ValueError where the answer's fields are of a type no server sends.

    ValueError, as for a line that is no JSON: the stream is broken
    (STREAM_ERRORS), while a TypeError stays a bug of ours.
    """
    if not isinstance(chunk, ChatCompletionChunk):
        return
    if (choice := first_choice(chunk)) is None:
        return
    delta = choice_delta(choice)
    if not isinstance(delta.content, str | None) or not isinstance(
        delta.tool_calls, list | None
    ):
        raise ValueError("a chunk's content or tool_calls has the wrong type")  # noqa: TRY004
    for fragment in delta.tool_calls or ():
        function = getattr(fragment, "function", None)
        if not (
            isinstance(fragment, ChoiceDeltaToolCall)
            and isinstance(fragment.index, int | None)
            and isinstance(fragment.id, str | None)
            and (
                function is None
                or (
                    isinstance(function, ChoiceDeltaToolCallFunction)
                    and isinstance(function.name, str | None)
                )
            )
        ):
            raise ValueError("a chunk's tool call has the wrong shape")


def first_choice(chunk: ChatCompletionChunk) -> Choice | None:
    """The chunk's choice (we ask for one), if it holds one."""
    choices = getattr(chunk, "choices", None)
    if not isinstance(choices, list) or not choices:
        return None
    choice = choices[0]
    return choice if isinstance(choice, Choice) else None


def _carries_answer(delta: ChoiceDelta) -> bool:
    """Whether a delta holds any of the answer: text, a call, or reasoning."""
    return bool(
        delta.content
        or delta.tool_calls
        or (delta.model_extra or {}).get("reasoning_content")
    )


def choice_delta(choice: Choice) -> ChoiceDelta:
    """The choice's delta; an empty one where the server sent none."""
    delta = getattr(choice, "delta", None)
    return delta if isinstance(delta, ChoiceDelta) else _NO_DELTA


def _written_calls(spoken: SpokenFilter, policy: TurnPolicy | None) -> list[str]:
    """The tools of the turn named by calls written out as text.

    A JSON object that names no tool ({"name": "Ada Lovelace", ...}, an
    example the user asked for) is no call: the filter drops it, the words
    around it are said.
    """
    if policy is None:
        return []
    return [name for name in spoken.written_calls if policy.is_tool_name(name)]


async def transform_stream(
    stream: AsyncIterable[ChatCompletionChunk],
    outcome: StreamOutcome,
    *,
    start_in_think: bool = False,
    voice: VoiceStyle | None = None,
    tools_available: bool = True,
    policy: TurnPolicy | None = None,
    repair: Callable[[llm.ToolInput], llm.ToolInput] | None = None,
    shown: frozenset[float] = frozenset(),
) -> AsyncIterator[dict[str, Any]]:
    """Yield chat log deltas for one streamed completion.

    With `voice`, visible text is made speakable (spoken.py) after the think
    filter, and `voice.filler` is said before tool calls that come first.
    With `policy`, tool calls the turn may not run are refused, and while a
    change was asked or tried and none ran (`policy.hold_text`) visible text
    is held: dropped before this completion's tool calls (the answer after
    their results is the one that counts), kept in `outcome.withheld` at the
    end and never shown. Otherwise, until a change ran, its first
    SPEECH_STREAM_CHARS wait for the completion's end, and are dropped the
    same way if tool calls come ("I turned on the kitchen light." before a
    call that is refused). Until a change ran, a tool call written as text
    (a server without a tool-call parser) is a call that did not run: the
    policy notes it as refused, and the completion's text is held and
    dropped, none of it withheld to be said. `repair` mends a call's arguments before the
    policy sees them. `shown`: the numbers of the request's messages; a
    sentence naming a live line the words ask about with another number is
    replaced (llm/values.py).
    """
    # The pipeline forwards content to TTS only after an assistant role delta.
    yield {"role": "assistant"}
    think = ThinkFilter(start_in_think=start_in_think)
    spoken = (
        SpokenFilter(
            link_text=voice.link_text, slots=voice.slots, slot_leads=voice.slot_leads
        )
        if voice
        else None
    )
    echo = (
        EchoHold(
            voice.echoes,
            voice.echo_words,
            voice.echo_lines,
            voice.live_readout,
            labels=voice.echo_labels,
            restatements=voice.restatements,
            unsaid_lines=voice.unsaid_lines,
        )
        if voice
        else EchoHold(frozenset())
    )
    loop = LoopGuard()
    values = ValueCheck(
        shown,
        voice.asked_live_lines if voice else (),
        dict(voice.live_aliases) if voice else None,
    )
    filler = voice.filler if voice else None
    calls = ToolCallAssembler()
    error_results: list[dict[str, Any]] = []
    head = ""  # the first raw characters: does the model open `<think>` itself?
    released = False  # text came out before the end (a prefilled block closed)
    hold = policy is not None and policy.hold_text
    held: list[str] = []
    # Text that waits to see whether tool calls follow (SPEECH_STREAM_CHARS):
    # until a change ran (after it, words before a call say what ran). Also
    # where no tools are offered: a model may call one all the same.
    waiting: list[str] | None = (
        [] if policy is not None and not (hold or policy.changed) else None
    )
    # This completion called tools: words held before them are not said.
    called = False
    # A call written as text did not run; after a change ran, the words
    # around it say what ran, as they do around a real call.
    written_counts = policy is not None and not policy.changed
    # The server stopped at max_tokens: an open think block never closes.
    cut = False

    async for chunk in stream:
        if (choice := first_choice(chunk)) is None:
            continue
        delta = choice_delta(choice)
        finish_reason = getattr(choice, "finish_reason", None)
        out: dict[str, Any] = {}
        if delta.content or delta.tool_calls:
            outcome.received = True
        if finish_reason == "length":
            cut = True
        if delta.content:
            if len(head) < len(THINK_OPEN):
                head = (head + delta.content).lstrip()
            visible, thinking = think.feed(delta.content)
            released = released or bool(visible or thinking)
            if spoken:
                visible = _speakable(spoken, visible, outcome)
                if written_counts and _written_calls(spoken, policy) and not hold:
                    # A call came, written out: hold all text from here.
                    _drop(waiting, outcome)
                    hold, waiting = True, None
            _put_text(
                out, values.feed(echo.feed(loop.feed(visible))), thinking, outcome
            )
            if hold and "content" in out:
                held.append(out.pop("content"))
            elif waiting is not None and "content" in out:
                waiting.append(out.pop("content"))
                if sum(map(len, waiting)) > SPEECH_STREAM_CHARS:
                    # Long: the pipeline speaks it now however it goes on.
                    out["content"], waiting = "".join(waiting), None
            if loop.looping and not calls:
                # The rest would be more of the same: stop reading (the
                # stream is closed, so the server stops writing).
                outcome.looping = True
                _release(out, waiting)
                if out:
                    yield out
                break
        if reasoning := (delta.model_extra or {}).get("reasoning_content"):
            out["thinking_content"] = out.get("thinking_content", "") + str(reasoning)
        for fragment in delta.tool_calls or ():
            function = fragment.function
            calls.add(
                fragment.index,
                fragment.id,
                function.name if function else None,
                _arguments_text(function.arguments) if function else None,
            )
        if finish_reason and calls:
            if rest := values.flush():
                # The sentence still held is words before a call, as any.
                if hold:
                    held.append(rest)
                elif waiting is not None:
                    waiting.append(rest)
                else:
                    out["content"] = out.get("content", "") + rest
                    outcome.visible_chars += len(rest.strip())
            _drop(waiting, outcome)
            if filler and not outcome.visible_chars:
                # Before the calls: the pipeline starts streaming TTS when a
                # tool call follows text, so the satellite speaks while it runs.
                yield {"content": filler}
            filler = None
            # Held words before a tool call are dropped: the answer after the
            # call's result says what happened.
            held.clear()
            echo.drop()
            called = True
            out["tool_calls"] = _release_calls(
                calls, outcome, error_results, tools_available, policy, repair
            )
        if out:
            yield out

    tail: dict[str, Any] = {}
    outcome.reasoning_cut = cut and think.in_think
    end_visible, end_thinking = think.flush(cut=cut)
    spoken_end = (
        _speakable(
            spoken, end_visible, outcome, end=True, before_calls=called or bool(calls)
        )
        if spoken
        else end_visible
    )
    if calls:
        echo.drop()
    written = _written_calls(spoken, policy) if spoken and written_counts else []
    if written and not hold:
        _drop(waiting, outcome)
        hold, waiting = True, None
    said_end = values.feed(echo.feed(loop.feed(spoken_end)) + echo.flush())
    _put_text(tail, said_end + values.flush(), end_thinking, outcome)
    outcome.looping = loop.looping
    outcome.made_up = values.made_up
    outcome.repeated = echo.echoed and not outcome.visible_chars
    outcome.restated = echo.restated
    if hold and "content" in tail:
        held.append(tail.pop("content"))
    elif waiting is not None and "content" in tail:
        waiting.append(tail.pop("content"))
    if calls:
        _drop(waiting, outcome)
        if filler and not outcome.visible_chars:
            yield {"content": filler}
        held.clear()
        tail["tool_calls"] = _release_calls(
            calls, outcome, error_results, tools_available, policy, repair
        )
    elif hold and not outcome.tool_calls:
        # Words around a written call are words before a call: never said.
        outcome.withheld = "" if written else "".join(held)
        for name in written:
            if policy is not None:
                policy.refuse(name)
    elif outcome.tool_calls:
        _drop(waiting, outcome)
    elif waiting and not any(char.isalnum() for text in waiting for char in text):
        # "...", "¿?", "。": an answer with no word in it is no answer (the
        # loop asks again), as an empty one is.
        _drop(waiting, outcome)
        outcome.wordless = True
    else:
        _release(tail, waiting)
    if tail:
        yield tail
    if think.saw_bare_close:
        outcome.prefills_think = True
    elif start_in_think and head:
        if head.startswith(THINK_OPEN):
            outcome.prefills_think = False
        elif released:
            outcome.prefills_think = True
        elif end_visible.strip():
            # An answer without reasoning. Cut at max_tokens inside the
            # block it shows nothing (the model may not have got to its
            # </think>): the filter returned none of it.
            outcome.prefills_think = False
    # Answered after the assistant message is complete: a role delta closes it.
    for result in error_results:
        yield result


def _speakable(
    spoken: SpokenFilter,
    visible: str,
    outcome: StreamOutcome,
    *,
    end: bool = False,
    before_calls: bool = False,
) -> str:
    """Visible text made speakable; nothing after a template slot it repeats.

    ``before_calls``: tool calls follow, so words that may still be a copied
    example of the prompt are not said (the answer after the calls counts).
    """
    if outcome.placeholder:
        return ""
    text = spoken.feed(visible)
    if before_calls:
        spoken.drop_lead()
    text += spoken.flush() if end else ""
    if spoken.placeholder:
        outcome.placeholder = True
    return text


def _arguments_text(arguments: object) -> str | None:
    """A call's arguments as the JSON text the API specifies: some servers send
    the object itself."""
    if arguments is None or isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def _release(out: dict[str, Any], waiting: list[str] | None) -> None:
    """Put text that waited for the completion's end before ``out``'s own."""
    if waiting:
        out["content"] = "".join(waiting) + out.get("content", "")
        waiting.clear()


def _drop(waiting: list[str] | None, outcome: StreamOutcome) -> None:
    """Tool calls follow: text that waited is not said (nor counted as said)."""
    if waiting:
        outcome.visible_chars -= sum(len(text.strip()) for text in waiting)
        waiting.clear()


def _put_text(
    out: dict[str, Any], visible: str, thinking: str, outcome: StreamOutcome
) -> None:
    if visible:
        out["content"] = visible
        outcome.visible_chars += len(visible.strip())
    if thinking:
        out["thinking_content"] = thinking


def _release_calls(
    calls: ToolCallAssembler,
    outcome: StreamOutcome,
    error_results: list[dict[str, Any]],
    tools_available: bool,
    policy: TurnPolicy | None = None,
    repair: Callable[[llm.ToolInput], llm.ToolInput] | None = None,
) -> list[llm.ToolInput]:
    """Hand complete calls to HA; answer unusable ones ourselves with an error.

    A call with broken arguments, any call when the agent has no tools
    (HA would raise), or a change the policy refuses (the user's words do not
    name what it acts on), is marked external so HA does not run it, and the
    model gets a tool error instead of the turn failing. Calls are mended by
    `repair` first (llm/tool_repair.py), so the policy judges what would run.

    Only the first MAX_TOOL_CALLS_PER_ROUND calls of a completion are handed
    on. The next one is answered with an error saying how many were not run;
    the rest are dropped, so a model stuck repeating a call a thousand times
    neither runs a thousand tools nor floods its next prompt with results.
    """
    inputs: list[llm.ToolInput] = []
    popped = calls.pop_all()
    room = max(MAX_TOOL_CALLS_PER_ROUND - outcome.tool_calls, 0)
    outcome.tool_calls += len(popped)
    if extra := popped[room:]:
        outcome.skipped_calls += len(extra)
        popped = popped[: room + 1]

    def refuse(
        call: AssembledToolCall, args: dict[str, Any] | None, error: dict[str, str]
    ) -> None:
        inputs.append(
            llm.ToolInput(
                id=call.id, tool_name=call.name, tool_args=args or {}, external=True
            )
        )
        error_results.append(tool_result_delta(call.id, call.name, error))

    for number, call in enumerate(popped):
        parsed = parse_arguments(call.arguments)
        over_cap = bool(extra) and number == room
        if not over_cap and (parsed.args is None or not tools_available):
            outcome.invalid_calls.append(call.name)
        if not tools_available:
            refuse(call, parsed.args, NO_TOOLS_ERROR)
            if policy is not None:
                policy.refuse(call.name)
        elif over_cap:
            error = tool_error(
                "TooManyToolCalls",
                f"Only the first {MAX_TOOL_CALLS_PER_ROUND} tool calls of an answer "
                f"are run: this call and the {len(extra) - 1} after it were not. "
                "Call fewer tools at once.",
            )
            refuse(call, parsed.args, error)
        elif parsed.args is None:
            refuse(
                call,
                None,
                tool_error(
                    INVALID_ARGUMENTS,
                    f"{parsed.error}. Call {call.name} again with a JSON object.",
                ),
            )
        else:
            tool_input = llm.ToolInput(
                id=call.id, tool_name=call.name, tool_args=parsed.args
            )
            if repair is not None:
                tool_input = repair(tool_input)
            if policy is not None and (
                refusal := policy.check_call(call.name, tool_input.tool_args)
            ):
                refuse(call, tool_input.tool_args, refusal)
            else:
                inputs.append(tool_input)
    return inputs
