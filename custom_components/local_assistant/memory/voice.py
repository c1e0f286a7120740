"""Memory managed by voice: sentences we read, and the model's tools.

In the languages of our sentence files (memory/commands.py) a memory
command is read by sentence matching and carried out here
(:func:`async_run_command`): no model call, the same result every time.
Everywhere else the speaker's facts are in every prompt, numbered, and the
model reads them out; changing them is a change like a device command, so
it is a tool call whose result says what ran, in any language the model
speaks:

* ``local_memory_remember`` adds a fact to the speaker's memory at once,
  pinned, as a person's own facts are (the extractor never removes it);
* ``local_memory_forget`` moves one of the facts the prompt numbered into the
  history, where it can be restored under *Configure → Manage remembered
  facts*.

A tool works in every language, and what it acts on is a number the prompt
gave, never words.

Whose memory it is comes from the request's context (its HA user, or its
satellite, as ``Memory.resolve_speaker`` reads them), never from the model's
arguments: a tool has no way to name another speaker, and a number means a
fact of the speaker's own list as the prompt showed it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.util.json import JsonObjectType
import voluptuous as vol

from ..compat import tool_result
from ..llm.sentences import async_spoken_message, best_language
from ..tools.base import LiveTool
from ..turn.policy import FORGET, REMEMBER
from ..turn.vocabulary import load_vocabulary
from ..wording import comparable, words
from .commands import (
    COMMAND_LANGUAGES,
    MemoryAction,
    MemoryCommand,
    load_command_sentences,
    notes_about,
    notes_named,
    notes_touched,
    read_command,
    says_the_note,
    says_the_topic,
)
from .facts import Fact, FactRefused
from .speaker import is_lasting_speaker

if TYPE_CHECKING:
    from .manager import Memory

REMEMBER_TOOL_NAME = "local_memory_remember"
FORGET_TOOL_NAME = "local_memory_forget"
MEMORY_TOOL_NAMES = frozenset({REMEMBER_TOOL_NAME, FORGET_TOOL_NAME})


class MemoryTool(LiveTool):
    """A tool that changes the current speaker's memory, and only theirs."""

    topics = "the user's own notes"
    # What it does, for the turn policy (turn/policy.py: FORGET, REMEMBER).
    does: str

    def __init__(self, memory: Memory) -> None:
        """Act on this entry's memory."""
        self._own = memory

    @property
    def _memory(self) -> Memory:
        """The entry's memory now: a call of a turn that began before a reload
        changes the memory that replaced this one, not the closed one."""
        return self._own.live

    async def async_call(
        self,
        hass: HomeAssistant,
        tool_input: llm.ToolInput,
        llm_context: llm.LLMContext,
    ) -> JsonObjectType:
        """Validate, find whose memory it is from the request, act."""
        args, _ignored = self.validate(tool_input.tool_args)
        turn = llm_context.context.id if llm_context.context else None
        # Whose memory it is: as the turn read it (a satellite's context may
        # carry the user whose call started it), else from the request.
        speaker = (self._memory.turn_speaker(turn) if turn else None) or (
            self._memory.context_speaker(llm_context)
        )
        if speaker is None or not is_lasting_speaker(speaker):
            raise HomeAssistantError(
                f"{self.name} was not run: this conversation has no lasting "
                "memory (no user or satellite). Tell the user so."
            )
        data = await self.async_act(hass, speaker, args, llm_context.language, turn)
        return tool_result(data)

    async def async_run(
        self, hass: HomeAssistant, args: dict[str, Any], language: str
    ) -> dict[str, Any]:
        """Not used: a memory tool needs the request's context (async_act)."""
        raise NotImplementedError

    async def async_act(
        self,
        hass: HomeAssistant,
        speaker: str,
        args: dict[str, Any],
        language: str | None,
        turn: str | None = None,
    ) -> dict[str, Any]:
        """Change the speaker's memory; the result has a ``summary`` to say."""
        raise NotImplementedError


class RememberTool(MemoryTool):
    """Add a fact the user asked to be remembered, pinned."""

    name = REMEMBER_TOOL_NAME
    does = REMEMBER
    description = (
        "Save a lasting fact about the user when they ask you to remember it "
        '("remember that my mother\'s birthday is on 4 May"). The fact in the '
        "user's own words and language. Not for reminders, alarms, timers or "
        "shopping lists."
    )
    parameters = vol.Schema(
        {
            vol.Required(
                "fact", description="the fact to remember, one short sentence"
            ): vol.All(str, vol.Length(min=1))
        }
    )

    @property
    def usage(self) -> str:
        """How to call it right."""
        return 'Valid: {"fact": "<one short sentence>"}.'

    async def async_act(
        self,
        hass: HomeAssistant,
        speaker: str,
        args: dict[str, Any],
        language: str | None,
        turn: str | None = None,
    ) -> dict[str, Any]:
        """Add the fact, pinned; a refusal is an error the model can say."""
        text = str(args["fact"]).strip()
        try:
            text = (await self._memory.async_remember_fact(speaker, text)).text
        except FactRefused as err:
            raise HomeAssistantError(
                f"{self.name} was not run: {err}. Nothing was changed."
            ) from err
        return {
            "remembered": text,
            "summary": await async_spoken_message(
                hass, "memory_remembered", language, {"fact": text}
            ),
        }


class ForgetTool(MemoryTool):
    """Move one of the speaker's numbered facts to the history."""

    name = FORGET_TOOL_NAME
    does = FORGET
    description = (
        "Delete one of the numbered notes about the user when they ask you to "
        'forget it ("forget that I like jazz"). Give the note\'s number. Not '
        'for "forget it" meaning never mind.'
    )
    parameters = vol.Schema(
        {
            vol.Required("number", description="the number of the note"): vol.Any(
                vol.All(vol.Coerce(int), vol.Range(min=1)), str
            )
        }
    )

    @property
    def usage(self) -> str:
        """How to call it right."""
        return 'Valid: {"number": <the number of the note about the user>}.'

    async def async_act(
        self,
        hass: HomeAssistant,
        speaker: str,
        args: dict[str, Any],
        language: str | None,
        turn: str | None = None,
    ) -> dict[str, Any]:
        """Remove the fact the number (or the exact text) names."""
        fact_id = self._fact_id(speaker, args["number"], turn)
        fact = await self._memory.async_remove_fact(speaker, fact_id)
        return {
            "forgotten": fact.text,
            "summary": await async_spoken_message(
                hass, "memory_forgotten", language, {"fact": fact.text}
            ),
        }

    def _fact_id(self, speaker: str, wanted: int | str, turn: str | None) -> str:
        # The numbers of this turn's prompt, which this memory built.
        shown = self._own.shown_fact_ids(turn) if turn else []
        if isinstance(wanted, str):
            # A small model may give the note's text, or its number as text.
            if wanted.strip().isdigit():
                wanted = int(wanted.strip())
            else:
                key = comparable(wanted)
                for fact in self._memory.list_facts(speaker):
                    if fact.id in shown and comparable(fact.text) == key:
                        return fact.id
                raise HomeAssistantError(
                    f"{self.name} was not run: no note reads {wanted!r}. Give the "
                    "note's number. Nothing was changed."
                )
        if not 1 <= wanted <= len(shown):
            raise HomeAssistantError(
                f"{self.name} was not run: there is no note number {wanted} "
                f"(the notes are numbered 1 to {len(shown)}). Nothing was changed."
            )
        fact_id = shown[wanted - 1]
        if fact_id not in {fact.id for fact in self._memory.list_facts(speaker)}:
            raise HomeAssistantError(
                f"{self.name} was not run: note {wanted} is already gone. "
                "Nothing was changed."
            )
        return fact_id


def memory_tools(memory: Memory) -> list[MemoryTool]:
    """The memory tools of an entry, in a fixed order (the prompt cache)."""
    return [RememberTool(memory), ForgetTool(memory)]


async def async_read_command(
    hass: HomeAssistant, text: str, language: str | None
) -> MemoryCommand | None:
    """The memory command our sentences read in the words, if any."""
    code = best_language(language, COMMAND_LANGUAGES)
    if code is None:  # no sentences: the model's tools
        return None
    sentences = await hass.async_add_executor_job(load_command_sentences, code)
    return read_command(text, sentences) if sentences is not None else None


async def async_run_command(
    hass: HomeAssistant,
    memory: Memory,
    speaker: str,
    command: MemoryCommand,
    language: str | None,
) -> str | None:
    """Carry out a memory command the sentences read; what to say.

    Only the speaker's own facts are read or changed: whose memory it is
    comes from the request (``speaker``), never from the words. None when
    the words are about no note after all ("forget about the weather",
    "forget that I asked", "what do you know about my kitchen light?", a
    number when no notes were read out in the turn before): the model
    answers them.
    """
    if not is_lasting_speaker(speaker):
        return await async_spoken_message(hass, "memory_unavailable", language)
    facts = memory.list_facts(speaker)
    texts = [fact.text for fact in facts]
    if command.action is MemoryAction.READ:
        if not facts:
            return await async_spoken_message(hass, "memory_read_empty", language)
        memory.read_back(speaker, [fact.id for fact in facts])
        return await async_spoken_message(
            hass, "memory_read", language, {"facts": _spoken_notes(texts)}
        )
    if command.action is MemoryAction.READ_TOPIC:
        about = notes_about(texts, command.words)
        if not about:  # "my kitchen light": no note's topic, the model's
            return None
        memory.read_back(speaker, [facts[index].id for index in about])
        return await async_spoken_message(
            hass,
            "memory_read",
            language,
            {"facts": _spoken_notes([texts[index] for index in about])},
        )
    if command.action is MemoryAction.REMEMBER:
        return await _async_remember(hass, memory, speaker, command.words, language)
    if command.action is MemoryAction.FORGET_NUMBER:
        if not (read_out := memory.read_back_ids(speaker)):
            return None  # no notes read out just before: "number 2" of what?
        chosen = _numbered(read_out, facts, int(command.words))
        if chosen is None:
            return await async_spoken_message(hass, "memory_not_found", language)
        return await _async_forget(hass, memory, speaker, chosen, language)
    named = (
        notes_touched(texts, command.words, command.sentence_stems) or None
        if command.action is MemoryAction.FORGET_ABOUT
        else notes_named(texts, command.words)
    )
    if named is None:  # about no note ("forget that I asked"): the model's
        return None
    if not named:
        return await async_spoken_message(hass, "memory_not_found", language)
    if command.action is MemoryAction.FORGET_ABOUT:
        # "Forget about my birthday" touches "My wife's birthday is in May."
        # too: only a note that says the topic goes at once.
        left_out = await _async_left_out(hass, language)
        said = [
            index
            for index in named
            if says_the_topic(texts[index], command.words, left_out)
        ]
        if len(said) == 1:
            return await _async_forget(hass, memory, speaker, facts[said[0]], language)
        named = said or named
    elif len(named) == 1 and says_the_note(texts[named[0]], command.words):
        # "Forget that ..." states the note.
        return await _async_forget(hass, memory, speaker, facts[named[0]], language)
    # Several notes fit, or one that says other words than those stated ("My
    # wife is allergic to nuts." for "forget that I'm allergic to nuts"):
    # read back, numbered as the notes are everywhere, and kept: "forget
    # number 3" next means the note read as number 3, even if an extraction
    # lands between.
    memory.read_back(speaker, [fact.id for fact in facts])
    numbered = [
        await async_spoken_message(
            hass,
            "memory_numbered_note",
            language,
            {"number": str(index + 1), "fact": _as_note(texts[index])},
        )
        for index in named
    ]
    return await async_spoken_message(
        hass,
        "memory_which" if len(named) > 1 else "memory_confirm",
        language,
        {"facts": " ".join(numbered)},
    )


async def _async_left_out(hass: HomeAssistant, language: str | None) -> frozenset[str]:
    """The words HA's sentences of the language leave out ("the", "die"),
    folded as a note's words are; none where HA has no sentences."""
    vocabulary = (
        await hass.async_add_executor_job(load_vocabulary, language)
        if language
        else None
    )
    if vocabulary is None:
        return frozenset()
    return frozenset(words(" ".join(vocabulary.phrase_words | vocabulary.stop_words)))


def _numbered(read_out: list[str], facts: list[Fact], number: int) -> Fact | None:
    """The fact read out as number ``number`` in the speaker's last turn.

    ``read_out``: the ids in the order of that read-out (``Memory.read_back``).
    None when no such fact is active any more.
    """
    if not 1 <= number <= len(read_out):
        return None
    return next((fact for fact in facts if fact.id == read_out[number - 1]), None)


async def _async_forget(
    hass: HomeAssistant, memory: Memory, speaker: str, fact: Fact, language: str | None
) -> str:
    """Move the note to the history; say which."""
    removed = await memory.async_remove_fact(speaker, fact.id)
    return await async_spoken_message(
        hass, "memory_forgotten", language, {"fact": removed.text}
    )


async def _async_remember(
    hass: HomeAssistant, memory: Memory, speaker: str, said: str, language: str | None
) -> str:
    """Add what was said as a pinned note, as a sentence."""
    try:
        text = (await memory.async_remember_fact(speaker, _as_note(said))).text
    except FactRefused as err:
        if err.reason == "fact_too_long":
            return await async_spoken_message(hass, "memory_too_long", language)
        # No room for another pinned note.
        return await async_spoken_message(hass, "memory_full", language)
    return await async_spoken_message(
        hass, "memory_remembered", language, {"fact": text}
    )


def _as_note(said: str) -> str:
    """The words as a sentence: a capital first, a full stop last."""
    text = " ".join(said.split()).rstrip(" ,;:")
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _spoken_notes(texts: list[str]) -> str:
    """Notes one after the other, each a sentence."""
    return " ".join(_as_note(text) for text in texts)
