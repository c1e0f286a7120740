"""Memory of one config entry: session buffers, fact store and extractor, wired to HA."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from homeassistant.components import conversation
from homeassistant.const import CONF_MODEL
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.event import async_track_time_interval
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey
import openai

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
    SESSION_SWEEP_INTERVAL_SECONDS,
    SUBENTRY_CONVERSATION,
)
from ..server.client import async_create_client
from ..server.reply_gate import ReplyGate
from .extraction import Exchange, FactExtractor
from .facts import Fact, HistoryEntry
from .session import SessionBuffers, Turn
from .speaker import speaker_key
from .store import FactStore, async_remove_store

if TYPE_CHECKING:
    from .. import LocalAssistantConfigEntry

USER_PREFIX = "user:"
PERSON_PREFIX = "person:"
DEVICE_PREFIX = "device:"
CONVERSATION_PREFIX = "conversation:"
SPEAKER_PREFIXES = (USER_PREFIX, PERSON_PREFIX, DEVICE_PREFIX, CONVERSATION_PREFIX)


def is_lasting_speaker(speaker: str) -> bool:
    """Whether facts about the speaker can ever be used again.

    A speaker known only by its conversation id (no user, no satellite) gets a
    new key with the next conversation: its session buffer already holds what
    was said, and distilled facts would only pile up on disk, never read.
    """
    return speaker.startswith((USER_PREFIX, PERSON_PREFIX, DEVICE_PREFIX))


# Session buffers per entry id; see _session_buffers.
DATA_SESSIONS: HassKey[dict[str, SessionBuffers]] = HassKey(f"{DOMAIN}_sessions")


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
        self._device_people: dict[str, str] = dict(options.get(CONF_DEVICE_PEOPLE, {}))
        self.sessions = _session_buffers(hass, entry)
        self.facts = facts
        self.extractor = extractor
        self._unsub_sweep = async_track_time_interval(
            hass, self._async_sweep, timedelta(seconds=SESSION_SWEEP_INTERVAL_SECONDS)
        )

    @classmethod
    async def async_create(
        cls,
        hass: HomeAssistant,
        entry: LocalAssistantConfigEntry,
        client: openai.AsyncOpenAI,
        reply_gate: ReplyGate,
    ) -> Memory:
        """Load facts and set up the extractor the options ask for."""
        max_facts = entry.options.get(CONF_MAX_FACTS, DEFAULT_MAX_FACTS)
        facts = FactStore(hass, entry.entry_id, max_facts=max_facts)
        await facts.async_load()
        extractor = await _async_create_extractor(
            hass, entry, client, facts, reply_gate
        )
        return cls(hass, entry, facts, extractor)

    # --- the reply path -----------------------------------------------------

    @callback
    def resolve_speaker(
        self, user_input: conversation.ConversationInput, conversation_id: str | None
    ) -> str:
        """Who is talking: HA user, else the satellite (or its person), else the conversation."""
        user_id = user_input.context.user_id if user_input.context else None
        device_id = user_input.device_id
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
    def person_key(self, person_entity_id: str) -> str:
        """The speaker key of a person: its linked user's, else its own."""
        state = self._hass.states.get(person_entity_id)
        if state is not None and (user_id := state.attributes.get("user_id")):
            return f"{USER_PREFIX}{user_id}"
        return f"{PERSON_PREFIX}{person_entity_id}"

    @callback
    def history(self, speaker: str) -> list[Turn]:
        """The speaker's recent exchanges (empty after an idle gap)."""
        return self.sessions.history(speaker, _now())

    @callback
    def prompt_facts(self, speaker: str) -> list[str]:
        """Fact texts for the system prompt, most useful first.

        Being in the prompt is not a use: every fact is in every prompt. See
        record_exchange.
        """
        book = self.facts.get(speaker)
        if book is None or not book.facts:
            return []
        return [fact.text for fact in book.active()]

    @callback
    def record_exchange(
        self,
        speaker: str,
        user_text: str,
        assistant_text: str,
        *,
        used_tools: bool = False,
        intent: str | None = None,
    ) -> None:
        """Remember the exchange in RAM, count fact use, distil facts in the background.

        A fact is used when the user's words or the answer share content
        words with it (FactBook.note_use); use counts are written to disk only
        with the next real change (FactStore.async_usage_changed).
        ``used_tools`` (the turn made a tool call) and ``intent`` (the Home
        Assistant intent recognised in the sentence) mark exchanges that cannot
        carry a personal fact: they cost no extraction call.
        """
        now = _now()
        self.sessions.append(speaker, user_text, assistant_text, now)
        book = self.facts.get(speaker)
        if book is not None and book.note_use((user_text, assistant_text), now):
            self.facts.async_usage_changed()
        if self.extractor is not None and is_lasting_speaker(speaker):
            self.extractor.schedule(
                speaker,
                Exchange(
                    user_text, assistant_text, used_tools=used_tools, intent=intent
                ),
            )

    # --- management (services, options flow) ---------------------------------

    def known_speakers(self) -> list[str]:
        """Speakers with facts, history or a live session."""
        return sorted({*self.facts.speakers(), *self.sessions.speakers()})

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
            self.sessions.forget(speaker)
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
        """Drop the speaker's short-term buffer now."""
        return self.sessions.forget(speaker)

    async def async_speaker_label(self, speaker: str) -> str:
        """A name a person recognises for a speaker key."""
        kind, _, ident = speaker.partition(":")
        name: str | None = None
        if kind == "user":
            user = await self._hass.auth.async_get_user(ident)
            name = user.name if user else None
        elif kind == "person" and (state := self._hass.states.get(ident)):
            name = state.name
        elif kind == "device" and (device := dr.async_get(self._hass).async_get(ident)):
            name = device.name_by_user or device.name
        return f"{name} ({speaker})" if name else speaker

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
        """Stop the sweep and extraction; write facts now."""
        self._unsub_sweep()
        if self.extractor is not None:
            await self.extractor.async_shutdown()
        await self.facts.async_flush()

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
                "ungrounded": stats.ungrounded,
                "failed": stats.failed,
                "given_up": stats.given_up,
                "rejected_answers": stats.rejected_answers,
            }
        return data


async def _async_create_extractor(
    hass: HomeAssistant,
    entry: LocalAssistantConfigEntry,
    client: openai.AsyncOpenAI,
    facts: FactStore,
    reply_gate: ReplyGate,
) -> FactExtractor | None:
    """The extractor the options ask for, or None when extraction is off."""
    options = entry.options
    mode = options.get(CONF_EXTRACTION, DEFAULT_EXTRACTION)
    max_facts = options.get(CONF_MAX_FACTS, DEFAULT_MAX_FACTS)
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
            max_facts=max_facts,
            timeout=EXTRACTION_TIMEOUT,
            reply_gate=None,
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
    return FactExtractor(
        hass,
        client=client,
        model=model,
        facts=facts,
        max_facts=max_facts,
        timeout=EXTRACTION_TIMEOUT,
        reply_gate=reply_gate,
    )


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


async def async_remove_memory(
    hass: HomeAssistant, entry: LocalAssistantConfigEntry
) -> None:
    """Delete the entry's stored facts and its session buffers."""
    hass.data.get(DATA_SESSIONS, {}).pop(entry.entry_id, None)
    await async_remove_store(hass, entry.entry_id)
