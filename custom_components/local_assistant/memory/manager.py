"""Memory of one config entry: session buffers, fact store and extractor, wired to HA."""

from __future__ import annotations

from collections import deque
from contextlib import AbstractAsyncContextManager
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from homeassistant.components import conversation
from homeassistant.const import CONF_MODEL, Platform
from homeassistant.core import CALLBACK_TYPE, HassJob, HomeAssistant, callback
from homeassistant.helpers import device_registry as dr, entity_registry as er, llm
from homeassistant.helpers.event import async_call_later, async_track_time_interval
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey
import openai

from ..compat import tool_result_data
from ..const import (
    CONF_DEVICE_PEOPLE,
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    CONF_MAX_FACTS,
    CONF_SESSION_IDLE_MINUTES,
    CONF_SESSION_MAX_CHARS,
    CONF_SESSION_MAX_MESSAGES,
    DEFAULT_EXTRACTION,
    DEFAULT_MAX_FACTS,
    DEFAULT_SESSION_IDLE_MINUTES,
    DEFAULT_SESSION_MAX_CHARS,
    DEFAULT_SESSION_MAX_MESSAGES,
    DOMAIN,
    EXTRACTION_HOSTED,
    EXTRACTION_LOCAL,
    EXTRACTION_TIMEOUT,
    LOGGER,
    REAUTH_TARGET,
    SESSION_SWEEP_INTERVAL_SECONDS,
    SUBENTRY_CONVERSATION,
)
from ..server.client import async_create_client
from ..server.scheduler import Job
from ..turn.policy import action_targets, intent_of_tool
from .commands import MemoryAction
from .extraction import Exchange, FactExtractor, PendingExchange
from .facts import Fact, HistoryEntry
from .session import Command, SessionBuffers, Turn
from .speaker import is_lasting_speaker, session_key, session_speaker, speaker_key
from .store import FactStore, async_remove_store
from .voice import MemoryTool, memory_tools

if TYPE_CHECKING:
    from .. import LocalAssistantConfigEntry
    from ..server.warmth import PromptCacheKeeper

USER_PREFIX = "user:"
PERSON_PREFIX = "person:"
DEVICE_PREFIX = "device:"
CONVERSATION_PREFIX = "conversation:"
SPEAKER_PREFIXES = (USER_PREFIX, PERSON_PREFIX, DEVICE_PREFIX, CONVERSATION_PREFIX)
# Read-outs (per speaker) and prompts (per turn) whose numbered facts are kept
# for the memory commands and tools (RAM), each this many at most.
MAX_SHOWN_SPEAKERS = 64
# The intents of memory commands our sentences read (memory/voice.py).
_MEMORY_INTENTS = frozenset(action.value for action in MemoryAction)


# Session buffers per entry id, kept across reloads; see _session_buffers.
DATA_SESSIONS: HassKey[dict[str, SessionBuffers]] = HassKey(f"{DOMAIN}_sessions")
# Exchanges waiting for the fact extractor, per entry and speaker: kept, as the
# session buffers are, across a reload (RAM only), freed with them. With each
# entry's, the hosted server they may go to (None: the local one).
DATA_PENDING: HassKey[
    dict[str, tuple[str | None, dict[str, deque[PendingExchange]]]]
] = HassKey(f"{DOMAIN}_extraction_pending")
# Cancels the pending release of an unloaded entry's buffers, per entry id.
DATA_RELEASES: HassKey[dict[str, CALLBACK_TYPE]] = HassKey(f"{DOMAIN}_session_releases")


def _now() -> float:
    # HA's clock, so frozen-time tests and idle resets agree.
    return dt_util.utcnow().timestamp()


class Memory:
    """Short-term sessions (RAM) and long-term facts (Store) per speaker."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: LocalAssistantConfigEntry,
        facts: FactStore,
        extractor: FactExtractor | None,
    ) -> None:
        """Use Memory.async_create."""
        options = entry.options
        self._hass = hass
        self._entry = entry
        self._device_people: dict[str, str] = dict(options.get(CONF_DEVICE_PEOPLE, {}))
        # Devices seen speaking as a satellite: their requests are never a user's.
        self._satellite_devices: set[str] = set()
        self.sessions = _session_buffers(hass, entry)
        self.facts = facts
        self.extractor = extractor
        # Per turn (its context id), whose it is and the fact ids its prompt
        # numbered (RAM only).
        self._shown: dict[str, tuple[str, list[str]]] = {}
        # Per speaker, when their facts were last read out to them, in which order.
        self._read_back: dict[str, tuple[float, list[str]]] = {}
        self.tools: list[MemoryTool] = memory_tools(self)
        self._unsub_sweep = async_track_time_interval(
            hass, self._async_sweep, timedelta(seconds=SESSION_SWEEP_INTERVAL_SECONDS)
        )

    @property
    def live(self) -> Memory:
        """The entry's memory now: this one, or the one a reload set up since."""
        current = getattr(getattr(self._entry, "runtime_data", None), "memory", None)
        return current if isinstance(current, Memory) else self

    @classmethod
    async def async_create(
        cls,
        hass: HomeAssistant,
        entry: LocalAssistantConfigEntry,
        client: openai.AsyncOpenAI,
        prompt_cache: PromptCacheKeeper,
    ) -> Memory:
        """Load facts and set up the extractor the options ask for."""
        # A reload adopts what the last set-up kept: no release may fire now.
        _async_cancel_release(hass, entry.entry_id)
        max_facts = entry.options.get(CONF_MAX_FACTS, DEFAULT_MAX_FACTS)
        facts = FactStore(hass, entry.entry_id, max_facts=max_facts)
        await facts.async_load()
        extractor = await _async_create_extractor(
            hass, entry, client, facts, prompt_cache
        )
        if extractor is None:  # extraction is off: nothing waits for it
            hass.data.get(DATA_PENDING, {}).pop(entry.entry_id, None)
        else:  # what the last set-up kept
            extractor.resume()
        return cls(hass, entry, facts, extractor)

    # --- the reply path -----------------------------------------------------

    @callback
    def resolve_speaker(
        self, user_input: conversation.ConversationInput, conversation_id: str | None
    ) -> str:
        """Who is talking: HA user, else the satellite (or its person), else the conversation."""
        user_id = user_input.context.user_id if user_input.context else None
        if user_input.satellite_id and user_input.device_id:
            # Tool calls of the turn see the device only (llm.LLMContext).
            self._satellite_devices.add(user_input.device_id)
        return self._speaker(
            user_id,
            user_input.device_id,
            conversation_id,
            satellite=bool(user_input.satellite_id),
        )

    @callback
    def context_speaker(self, llm_context: llm.LLMContext) -> str | None:
        """Whose memory a tool call of this request may change, or None.

        The same reading as resolve_speaker, from the request's own context
        (its HA user, its satellite), never from the model's arguments. None
        for a request with neither: its conversation id names nobody lasting.
        """
        context = llm_context.context
        speaker = self._speaker(
            context.user_id if context else None, llm_context.device_id, None
        )
        return speaker if is_lasting_speaker(speaker) else None

    @callback
    def _speaker(
        self,
        user_id: str | None,
        device_id: str | None,
        conversation_id: str | None,
        *,
        satellite: bool = False,
    ) -> str:
        if satellite or (device_id and self._is_satellite(device_id)):
            # A satellite's request may carry the context of the user whose
            # service call started it (assist_satellite.start_conversation,
            # ask_question): whoever answers in that room is the satellite's
            # speaker (its person, if mapped), not that user.
            user_id = None
        people: dict[str, str] = {}
        if device_id and (person := self._device_people.get(device_id)):
            # A satellite mapped to a person with an HA account shares that
            # user's memory with the app and the chat dialog.
            people[device_id] = self.person_key(person)
        return speaker_key(
            user_id=user_id,
            device_id=device_id,
            conversation_id=conversation_id,
            device_people=people,
        )

    @callback
    def _is_satellite(self, device_id: str) -> bool:
        """Whether the device is a voice satellite (has an Assist satellite entity)."""
        if device_id in self._satellite_devices:
            return True
        entities = er.async_entries_for_device(er.async_get(self._hass), device_id)
        if any(entity.domain == Platform.ASSIST_SATELLITE for entity in entities):
            self._satellite_devices.add(device_id)
            return True
        return False

    @callback
    def person_key(self, person_entity_id: str) -> str:
        """The speaker key of a person: its linked user's, else its own."""
        state = self._hass.states.get(person_entity_id)
        if state is not None and (user_id := state.attributes.get("user_id")):
            return f"{USER_PREFIX}{user_id}"
        return f"{PERSON_PREFIX}{person_entity_id}"

    @callback
    def history(self, agent: str, speaker: str) -> list[Turn]:
        """The speaker's recent exchanges with this agent (empty after an idle gap)."""
        return self.sessions.history(session_key(agent, speaker), _now())

    @callback
    def forget_history(self, agent: str, speaker: str) -> None:
        """Drop the speaker's recent exchanges with this agent (too long to send)."""
        self.sessions.forget(session_key(agent, speaker))

    @callback
    def last_action(self, agent: str, speaker: str) -> tuple[str, ...]:
        """What the speaker's latest exchange with this agent acted on, if anything."""
        return self.sessions.last_action(session_key(agent, speaker), _now())

    @callback
    def last_command(self, agent: str, speaker: str) -> Command | None:
        """The speaker's latest exchange with this agent as HA recognized it, if it acted."""
        return self.sessions.last_command(session_key(agent, speaker), _now())

    @callback
    def prompt_facts(self, speaker: str) -> list[Fact]:
        """The speaker's facts for the system prompt, most useful first.

        The prompt numbers them; :meth:`number_facts` keeps those numbers for
        the turn. Being in the prompt is not a use: every fact is in every
        prompt. See record_exchange.
        """
        book = self.facts.get(speaker)
        return book.active() if book is not None else []

    @callback
    def number_facts(self, turn: str, speaker: str, facts: list[Fact]) -> None:
        """Keep whose turn it is and the numbers its prompt gave the speaker's
        facts (RAM only).

        ``turn``: the request's context id, which its tool calls carry. A
        memory tool call of the turn ("forget note 2") acts for the speaker
        the turn resolved (a satellite with no device is no user, whatever
        context it carries) and means the fact the model saw as number 2 in
        that turn, whatever changed meanwhile: also when a second device of
        the same person starts a turn of its own.
        """
        _keep_order(self._shown, turn, (speaker, [fact.id for fact in facts]))

    @callback
    def turn_speaker(self, turn: str) -> str | None:
        """Whose turn it is, as the turn resolved it; None for an unknown turn."""
        shown = self._shown.get(turn)
        return shown[0] if shown is not None else None

    @callback
    def shown_fact_ids(self, turn: str) -> list[str]:
        """The ids of the facts a turn's prompt numbered, in order."""
        shown = self._shown.get(turn)
        return list(shown[1]) if shown is not None else []

    @callback
    def read_back(self, speaker: str, fact_ids: list[str]) -> None:
        """Keep the order the speaker's facts were just read out to them.

        "Forget number 2" said next means the second one they heard ("which
        one? Number 2: ...", or a plain read-out), whatever an extraction
        changed meanwhile; the prompt's numbers are the model's, not theirs.
        """
        _keep_order(self._read_back, speaker, (_now(), list(fact_ids)))

    @callback
    def read_back_ids(self, speaker: str) -> list[str]:
        """The ids of the speaker's facts as last read out to them, in order.

        Empty after the session's idle gap: a read-out then is forgotten with
        the conversation it was part of.
        """
        at, fact_ids = self._read_back.get(speaker, (0.0, []))
        # Either way, as the session buffers (a clock since set back).
        if abs(_now() - at) > self.sessions.idle_seconds:
            return []
        return list(fact_ids)

    @callback
    def active_fact_texts(self, speaker: str) -> list[str]:
        """The texts prompt_facts gives the next turn (the prompt cache keeper's)."""
        book = self.facts.get(speaker)
        return [fact.text for fact in book.active()] if book is not None else []

    @callback
    def record_exchange(
        self,
        speaker: str,
        user_text: str,
        assistant_text: str,
        *,
        agent: str,
        used_tools: bool = False,
        action_targets: tuple[str, ...] = (),
        command: Command | None = None,
        intent: str | None = None,
        acted: bool | None = None,
        counts_use: bool = True,
    ) -> None:
        """Remember the exchange in RAM, count fact use, distil facts in the background.

        A turn that used a tool is replayed as the user's words only (see
        memory/session.py); ``action_targets`` is what a device action changed,
        ``command`` that action as HA recognized it.
        A fact is used when the user's words or the answer share content
        words with it (FactBook.note_use); use counts are written to disk only
        with the next real change (FactStore.async_usage_changed).
        ``acted`` (a tool did the turn's work: a device change or HA's own
        intent handling; default ``used_tools``) and ``intent`` (the Home
        Assistant intent recognised in the sentence) mark exchanges that cannot
        carry a personal fact: they cost no extraction call. A tool call the
        turn policy refused is no such mark: a small model calls tools after
        "My dog is called Bolt." too. ``counts_use`` False: the exchange is
        about the notes themselves ("what do you know about me?" reads them
        all), not a use of them.
        """
        now = _now()
        if intent not in _MEMORY_INTENTS:
            # A read-out numbers the notes for the very next turn only: after
            # any other answer "delete number 2" means what that answered
            # (a shopping list), never a note.
            self._read_back.pop(speaker, None)
        self.sessions.append(
            session_key(agent, speaker),
            user_text,
            None if used_tools else assistant_text,
            now,
            action_targets=action_targets,
            command=command,
        )
        book = self.facts.get(speaker)
        if (
            counts_use
            and book is not None
            and book.note_use((user_text, assistant_text), now)
        ):
            self.facts.async_usage_changed()
        self._schedule_extraction(
            speaker,
            Exchange(
                user_text,
                assistant_text,
                used_tools=used_tools if acted is None else acted,
                intent=intent,
            ),
        )

    @callback
    def record_unanswered(
        self,
        speaker: str,
        user_text: str,
        *,
        acted: bool = False,
        intent: str | None = None,
    ) -> None:
        """The reply failed: nothing joins the buffer, but the words may hold a fact.

        "My parrot is called Kiwi." is worth remembering even when the model
        broke its answer to it. ``acted`` and ``intent`` as for record_exchange.
        """
        self._read_back.pop(speaker, None)
        self._schedule_extraction(
            speaker, Exchange(user_text, "", used_tools=acted, intent=intent)
        )

    @callback
    def _schedule_extraction(self, speaker: str, exchange: Exchange) -> None:
        """Distil facts from an exchange in the background (lasting speakers only).

        By the entry's extractor now: a turn that began before a reload ends
        after it.
        """
        extractor = self.live.extractor
        if extractor is not None and is_lasting_speaker(speaker):
            extractor.schedule(speaker, exchange)

    @callback
    def record_handled_elsewhere(
        self,
        agent: str,
        speaker: str,
        chat_log: conversation.ChatLog,
        own_agent_id: str,
    ) -> int:
        """Add exchanges of this conversation that HA answered without us.

        With "prefer handling commands locally", HA's pipeline answers the
        commands it knows itself and the agent never sees them (HA core
        issue #132392); they are in the conversation's chat log, though. They
        join the buffer as tool turns (the user's words only), so "turn it off
        again" still knows what "it" is. Returns how many were added.
        """
        contents = chat_log.content[:-1]  # the last item is this turn's message
        start = 0
        for index in range(len(contents) - 1, -1, -1):
            item = contents[index]
            if (
                isinstance(item, conversation.AssistantContent)
                and item.agent_id == own_agent_id
                and item.content
            ):
                start = index + 1
                break
        added = 0
        user_text: str | None = None
        calls: dict[str, dict[str, Any]] = {}
        targets: list[str] = []
        # HA's local handling names its tool call after the intent it ran.
        intent: str | None = None
        for item in contents[start:]:
            if isinstance(item, conversation.UserContent):
                user_text, calls, targets, intent = item.content, {}, [], None
            elif isinstance(item, conversation.AssistantContent):
                for call in item.tool_calls or ():
                    calls[call.id] = call.tool_args
                if item.content and user_text is not None:
                    self.record_exchange(
                        speaker,
                        user_text,
                        item.content,
                        agent=agent,
                        used_tools=True,
                        action_targets=tuple(dict.fromkeys(targets)),
                        command=Command(user_text, intent) if intent else None,
                    )
                    added += 1
                    user_text = None
            elif isinstance(item, conversation.ToolResultContent):
                acted_on = action_targets(
                    item.tool_name,
                    calls.get(item.tool_call_id, {}),
                    tool_result_data(item),
                    (),
                )
                if acted_on:
                    targets += acted_on
                    intent = intent_of_tool(item.tool_name)
        return added

    # --- management (services, options flow) ---------------------------------

    def known_speakers(self) -> list[str]:
        """Speakers with facts, history or a live session."""
        return sorted(
            {
                *self.facts.speakers(),
                *(session_speaker(key) for key in self.sessions.speakers()),
            }
        )

    def list_facts(self, speaker: str) -> list[Fact]:
        """Active facts, most useful first."""
        book = self.facts.get(speaker)
        return book.active() if book else []

    def fact_history(self, speaker: str) -> list[HistoryEntry]:
        """Dropped, rewritten and removed facts, oldest first."""
        book = self.facts.get(speaker)
        return list(book.history) if book else []

    async def async_add_fact(self, speaker: str, text: str) -> Fact:
        """Add a pinned fact (ValueError when empty, duplicate or over the limit)."""
        fact = self.facts.book(speaker).add_manual(text, _now())
        self.facts.async_user_changed(speaker)
        return fact

    async def async_remember_fact(self, speaker: str, text: str) -> Fact:
        """Add a pinned fact asked for by voice, or pin the same one already kept.

        Raises FactRefused as :meth:`async_add_fact` does, but not for a fact
        remembered in the same words already (``FactBook.duplicate_of``): that
        one is pinned and returned.
        """
        book = self.facts.book(speaker)
        fact = book.pin_text(text, _now()) or book.add_manual(text, _now())
        self.facts.async_user_changed(speaker)
        return fact

    async def async_update_fact(self, speaker: str, fact_id: str, text: str) -> Fact:
        """Rewrite a fact; the old wording goes to the history."""
        fact = self.facts.book(speaker).update_text(fact_id, text, _now())
        self.facts.async_user_changed(speaker)
        return fact

    async def async_remove_fact(self, speaker: str, fact_id: str) -> Fact:
        """Remove a fact into the history (KeyError when unknown)."""
        fact = self.facts.book(speaker).remove(fact_id, _now())
        self.facts.async_user_changed(speaker)
        return fact

    async def async_clear_facts(
        self, speaker: str, *, include_history: bool = False
    ) -> int:
        """Move every fact of the speaker to the history (or erase both)."""
        book = self.facts.book(speaker)
        count = book.clear(_now())
        if include_history:
            # A real "forget me": the audit trail, the conversation buffer and
            # exchanges still waiting for the extractor go too.
            book.clear_history()
            self.forget_session(speaker)
            if self.extractor is not None:
                self.extractor.forget(speaker)
        self.facts.async_user_changed(speaker)
        return count

    async def async_restore_fact(self, speaker: str, fact_id: str) -> Fact:
        """Bring a fact back from the history."""
        fact = self.facts.book(speaker).restore(fact_id, _now())
        self.facts.async_user_changed(speaker)
        return fact

    @callback
    def forget_session(self, speaker: str) -> bool:
        """Drop the speaker's short-term buffers (with every agent) now."""
        keys = [
            key for key in self.sessions.speakers() if session_speaker(key) == speaker
        ]
        for key in keys:
            self.sessions.forget(key)
        return bool(keys)

    async def async_speaker_label(self, speaker: str) -> str:
        """A name a person recognises for a speaker key (the key if it has none)."""
        kind, _, ident = speaker.partition(":")
        name: str | None = None
        if kind == "user":
            user = await self._hass.auth.async_get_user(ident)
            name = user.name if user else None
        elif kind == "person" and (state := self._hass.states.get(ident)):
            name = state.name
        elif kind == "device" and (device := dr.async_get(self._hass).async_get(ident)):
            name = device.name_by_user or device.name
        return name or speaker

    async def async_resolve_speaker_ref(self, ref: str) -> str | None:
        """A speaker key from a key, a person entity id, or a user's or person's name.

        None when the reference names nobody: a key is accepted when memory
        holds something for it (facts, history, a session) or when what it
        names exists (the HA user, the device, the person), so a typo such as
        ``user:typo`` is refused instead of storing facts for nobody.
        """
        ref = ref.strip()
        if not ref:
            return None
        person = ref.removeprefix(PERSON_PREFIX)
        if person != ref and person.startswith("person."):
            # A person linked to a user talks as that user: their key.
            ref = self.person_key(person)
        if ref in self.known_speakers():
            return ref
        if ref.startswith(SPEAKER_PREFIXES):
            return ref if await self._async_key_exists(ref) else None
        if ref.startswith("person.") and self._hass.states.get(ref) is not None:
            return self.person_key(ref)
        wanted = ref.casefold()
        for user in await self._hass.auth.async_get_users():
            if not user.system_generated and (user.name or "").casefold() == wanted:
                return f"{USER_PREFIX}{user.id}"
        for state in self._hass.states.async_all("person"):
            if state.name.casefold() == wanted:
                return self.person_key(state.entity_id)
        return None

    async def _async_key_exists(self, key: str) -> bool:
        """Whether the user, device or person a speaker key names exists.

        A conversation key is never taken on trust: it names nobody lasting,
        and is known only while its session lives.
        """
        kind, _, ident = key.partition(":")
        if not ident:
            return False
        if kind == "user":
            user = await self._hass.auth.async_get_user(ident)
            return user is not None and not user.system_generated
        if kind == "device":
            return dr.async_get(self._hass).async_get(ident) is not None
        if kind == "person":
            return (
                ident.startswith("person.") and self._hass.states.get(ident) is not None
            ) or ident in self._device_people.values()
        return False

    @callback
    def people_speakers(self) -> list[str]:
        """Speaker keys of every person, whether they talked yet or not."""
        return [
            self.person_key(state.entity_id)
            for state in self._hass.states.async_all("person")
        ]

    # --- lifecycle ------------------------------------------------------------

    @callback
    def _async_sweep(self, _now_dt: Any = None) -> None:
        dropped = self.sessions.sweep(_now())
        if dropped:
            LOGGER.debug("Freed %s idle session buffer(s)", dropped)

    async def async_shutdown(self) -> None:
        """Stop the sweep and extraction; write facts now; let the buffers go."""
        self._unsub_sweep()
        if self.extractor is not None:
            await self.extractor.async_shutdown()
        await self.facts.async_close()
        _async_release_sessions(self._hass, self._entry)

    def diagnostics(self) -> dict[str, Any]:
        """Counts only: no transcript, no fact text."""
        data: dict[str, Any] = {
            "sessions": self.sessions.stats(),
            "facts": self.facts.stats(),
        }
        if self.extractor is not None:
            stats = self.extractor.stats
            data["extraction"] = {
                "pending_exchanges": self.extractor.pending_total(),
                "runs": stats.runs,
                "skipped": stats.skipped,
                "calls": stats.calls,
                "call_seconds": round(stats.call_seconds, 3),
                "updated": stats.updated,
                "added": stats.added,
                "rewritten": stats.rewritten,
                "dropped": stats.dropped,
                "copied_examples": stats.copied_examples,
                "over_limit": stats.over_limit,
                "refused_edits": stats.refused_edits,
                "failed": stats.failed,
                "given_up": stats.given_up,
                "rejected_answers": stats.rejected_answers,
                "repeats": stats.repeats,
                "removals_not_taken": stats.removals_not_taken,
            }
        return data


async def _async_create_extractor(
    hass: HomeAssistant,
    entry: LocalAssistantConfigEntry,
    client: openai.AsyncOpenAI,
    facts: FactStore,
    prompt_cache: PromptCacheKeeper,
) -> FactExtractor | None:
    """The extractor the options ask for, or None when extraction is off."""
    options = entry.options
    mode = options.get(CONF_EXTRACTION, DEFAULT_EXTRACTION)
    if mode == EXTRACTION_HOSTED and options.get(CONF_EXTRACTION_BASE_URL):
        hosted = await async_create_client(
            hass,
            options[CONF_EXTRACTION_BASE_URL],
            options.get(CONF_EXTRACTION_API_KEY),
            EXTRACTION_TIMEOUT,
        )
        return FactExtractor(
            hass,
            client=hosted,
            model=options[CONF_EXTRACTION_MODEL],
            facts=facts,
            timeout=EXTRACTION_TIMEOUT,
            local_turn=None,
            pending=_kept_pending(hass, entry, options[CONF_EXTRACTION_BASE_URL]),
            # Its own key: the reauth flow asks for the extractor's key.
            on_auth_error=partial(
                entry.async_start_reauth, hass, data={REAUTH_TARGET: EXTRACTION_HOSTED}
            ),
        )
    if mode == EXTRACTION_HOSTED:
        LOGGER.warning(
            "Hosted fact extraction is selected but has no server URL; "
            "extraction is off until it is configured"
        )
        return None
    if mode != EXTRACTION_LOCAL:
        return None
    model = next(
        (
            sub.data[CONF_MODEL]
            for sub in entry.subentries.values()
            if sub.subentry_type == SUBENTRY_CONVERSATION and sub.data.get(CONF_MODEL)
        ),
        None,
    )
    if model is None:
        return None
    local_model: str = model

    def local_turn(messages: list[dict[str, Any]]) -> AbstractAsyncContextManager[None]:
        # Each call waits for its turn on the agent's own server.
        return prompt_cache.background_request(local_model, messages, Job.EXTRACTION)

    return FactExtractor(
        hass,
        client=client,
        model=model,
        facts=facts,
        timeout=EXTRACTION_TIMEOUT,
        local_turn=local_turn,
        on_auth_error=partial(entry.async_start_reauth, hass),
        pending=_kept_pending(hass, entry, None),
    )


def _kept_pending(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry, hosted: str | None
) -> dict[str, deque[PendingExchange]]:
    """The entry's exchanges waiting for extraction, as the last set-up left them.

    ``hosted``: the hosted server the new extractor sends to, None for the
    local one. Words said while they went to the local server (or another
    hosted one) never go to a hosted server chosen since: those are dropped.
    """
    kept = hass.data.setdefault(DATA_PENDING, {})
    before, pending = kept.get(entry.entry_id, (None, {}))
    if hosted is not None and before != hosted:
        pending = {}
    kept[entry.entry_id] = (hosted, pending)
    return pending


def _session_buffers(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry
) -> SessionBuffers:
    """The entry's session buffers, kept in RAM across reloads of the entry.

    Changing an option or adding an agent reloads the entry; that must not
    make the assistant forget the previous sentence. New limits apply from
    the next exchange on. A restart of HA still starts empty (RAM only).
    """
    options = entry.options
    idle_seconds = 60 * options.get(
        CONF_SESSION_IDLE_MINUTES, DEFAULT_SESSION_IDLE_MINUTES
    )
    max_messages = options.get(CONF_SESSION_MAX_MESSAGES, DEFAULT_SESSION_MAX_MESSAGES)
    max_chars = options.get(CONF_SESSION_MAX_CHARS, DEFAULT_SESSION_MAX_CHARS)
    _async_cancel_release(hass, entry.entry_id)
    kept = hass.data.setdefault(DATA_SESSIONS, {})
    if (sessions := kept.get(entry.entry_id)) is None:
        sessions = kept[entry.entry_id] = SessionBuffers(
            idle_seconds=idle_seconds, max_messages=max_messages, max_chars=max_chars
        )
    else:
        sessions.idle_seconds = idle_seconds
        sessions.max_messages = max_messages
        sessions.max_chars = max_chars
    return sessions


@callback
def _async_drop_kept(hass: HomeAssistant, entry_id: str) -> None:
    """Free what an entry keeps across reloads: its session buffers and the
    exchanges waiting for the extractor."""
    hass.data.get(DATA_SESSIONS, {}).pop(entry_id, None)
    hass.data.get(DATA_PENDING, {}).pop(entry_id, None)


@callback
def _async_cancel_release(hass: HomeAssistant, entry_id: str) -> None:
    if cancel := hass.data.get(DATA_RELEASES, {}).pop(entry_id, None):
        cancel()


@callback
def _async_release_sessions(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry
) -> None:
    """The entry unloaded: free its buffers now if it is disabled, else once idle.

    A reload adopts the buffers again (_session_buffers cancels the release).
    An entry that stays unloaded (disabled, unloaded, or failing to set up
    again) takes no more exchanges, so every buffer is idle, and swept, at
    most `idle_seconds` after the unload.
    """
    kept = hass.data.get(DATA_SESSIONS, {})
    if (sessions := kept.get(entry.entry_id)) is None:
        return
    if entry.disabled_by is not None:
        _async_drop_kept(hass, entry.entry_id)
        return
    releases = hass.data.setdefault(DATA_RELEASES, {})

    @callback
    def _async_release(_now_dt: datetime) -> None:
        releases.pop(entry.entry_id, None)
        if kept.get(entry.entry_id) is not sessions:
            return  # removed meanwhile
        sessions.sweep(_now())
        if len(sessions):
            _schedule()
        else:
            _async_drop_kept(hass, entry.entry_id)
            LOGGER.debug("Freed the session buffers of unloaded %s", entry.title)

    def _schedule() -> None:
        releases[entry.entry_id] = async_call_later(
            hass,
            sessions.idle_seconds + 1,
            HassJob(_async_release, cancel_on_shutdown=True),
        )

    _schedule()


async def async_remove_memory(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry
) -> None:
    """Delete the entry's stored facts and its session buffers."""
    _async_cancel_release(hass, entry.entry_id)
    _async_drop_kept(hass, entry.entry_id)
    await async_remove_store(hass, entry.entry_id)


def _keep_order[T](orders: dict[str, T], key: str, order: T) -> None:
    """Keep one order of facts (a speaker's, a turn's), for at most
    MAX_SHOWN_SPEAKERS of them."""
    orders[key] = order
    while len(orders) > MAX_SHOWN_SPEAKERS:
        del orders[next(iter(orders))]
