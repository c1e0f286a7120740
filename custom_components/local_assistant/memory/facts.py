"""Long-term memory: a short list of distilled fact records per speaker.

Long-term memory is not chat logs: it is a handful of stable facts
(preferences, people, pets, places, devices, recurring activities) that a
background extractor keeps up to date after each exchange. A :class:`FactBook`
holds one speaker's facts and merges each extractor answer into them:

* facts are records, not bare strings, so an unchanged fact keeps its id,
  times and use count across extractor runs;
* manual facts (and anything the user pinned, edited or restored) are
  *protected*: the extractor can never remove or rewrite them;
* nothing is silently destroyed: a fact that is dropped, rewritten, removed,
  cleared or pushed out by the limit moves to a bounded history (an audit
  trail with reason and time) from which it can be restored;
* the number of active facts is capped (protected facts count first) so the
  prompt of a small model stays small.

Times are floats of epoch seconds supplied by the caller.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
import math
import re
from typing import Any, Literal, cast, get_args
import uuid

from .session import truncate

__all__ = [
    "REWRITE_SIMILARITY",
    "ExtractionChange",
    "Fact",
    "FactBook",
    "FactRefusal",
    "FactRefused",
    "HistoryEntry",
    "Reason",
    "Source",
    "clean_text",
    "fact_key",
    "new_fact_id",
    "text_similarity",
    "usefulness",
]

Source = Literal["extracted", "manual"]
Reason = Literal["dropped", "rewritten", "removed", "cleared", "over_limit"]
_SOURCES: frozenset[str] = frozenset(get_args(Source))
_REASONS: frozenset[str] = frozenset(get_args(Reason))
# Why a person's change was refused; also the translation key that says so.
FactRefusal = Literal[
    "fact_empty", "fact_too_long", "fact_duplicate", "fact_limit", "fact_active"
]


class FactRefused(ValueError):
    """A person's change to the facts was refused; `reason` says why.

    `limit` is the number the reason names (characters or facts), if any.
    """

    def __init__(self, reason: FactRefusal, message: str, limit: int = 0) -> None:
        """Keep the reason and the limit for the translated message."""
        super().__init__(message)
        self.reason: FactRefusal = reason
        self.limit = limit


# Token-set similarity at or above which a new extractor text is taken as a
# rewrite of an old fact it replaced ("lives in Berlin" -> "lives in Munich").
REWRITE_SIMILARITY = 0.5

# Ranking: doubling a fact's use count is worth as much as one week of
# recency. Only differences matter, so absolute epoch values are fine.
_RECENCY_UNIT_SECONDS = 7 * 24 * 3600.0

_WORD = re.compile(r"\w+")
# Words every fact shares ("The user's ...") would make unrelated facts look
# similar; leave them out of the similarity. English only: for other
# languages the similarity is merely a little more generous.
_STOP_WORDS = frozenset(
    """
    a an and are as at be by for from had has have he her his in is it its of
    on or s she that the their them they this to user was were who with
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def new_fact_id() -> str:
    """Return a short random id for a fact record."""
    return uuid.uuid4().hex[:12]


def clean_text(text: str) -> str:
    """Trim and collapse whitespace: a fact is one line of prompt text."""
    return " ".join(text.split())


def fact_key(text: str) -> str:
    """Return the case- and whitespace-insensitive identity of a fact text."""
    return clean_text(text).casefold()


def _stem(word: str) -> str:
    # Crude plural folding so "dogs" matches "dog"; good enough for a ratio.
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _content_tokens(text: str) -> frozenset[str]:
    words = (_stem(word) for word in _WORD.findall(text.casefold()))
    return frozenset(word for word in words if word not in _STOP_WORDS)


def text_similarity(first: str, second: str) -> float:
    """Return the Dice coefficient of the two texts' content-word sets (0..1).

    Character-level ratios (difflib) rate "The user likes tea" and "The user
    likes jazz" as near-identical because the template dominates; comparing
    the sets of content words does not.
    """
    a, b = _content_tokens(first), _content_tokens(second)
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


# --- record (de)serialization helpers -------------------------------------------
# from_dict raises ValueError for every kind of bad data, wrong types included
# (hence the TRY004 waivers): to the caller a corrupt store is one kind of error.


def _number(value: object, key: str) -> float:
    # bool is an int subclass; a JSON true is never a valid time or count.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} must be a number")  # noqa: TRY004
    if not math.isfinite(value):
        raise ValueError(f"{key} must be finite")
    return float(value)


def _required(data: Mapping[str, object], key: str) -> object:
    if key not in data:
        raise ValueError(f"missing {key}")
    return data[key]


def _non_empty_str(value: object, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} must be a non-empty string")
    return value


def _mapping(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be an object")  # noqa: TRY004
    return cast(Mapping[str, object], value)


@dataclass(slots=True)
class Fact:
    """One remembered fact and the bookkeeping used to rank and audit it.

    ``created`` is when the fact's lineage was first learned (a rewrite
    inherits it), ``updated`` when its text last changed or was confirmed by
    the user, ``last_used``/``use_count`` when and how often it went into a
    prompt.
    """

    id: str
    text: str
    created: float
    updated: float
    last_used: float | None = None
    use_count: int = 0
    source: Source = "extracted"
    pinned: bool = False

    @property
    def protected(self) -> bool:
        """Return True if the extractor may neither remove nor rewrite this fact."""
        return self.pinned or self.source == "manual"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict."""
        return {
            "id": self.id,
            "text": self.text,
            "created": self.created,
            "updated": self.updated,
            "last_used": self.last_used,
            "use_count": self.use_count,
            "source": self.source,
            "pinned": self.pinned,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Fact:
        """Build a fact from :meth:`to_dict` output.

        ``id``, ``text`` and ``created`` are required; the rest default
        (``pinned`` defaults to True for manual facts). Raises ValueError on
        missing or malformed values; messages name the key, never the text.
        """
        data = _mapping(data, "fact")
        created = _number(_required(data, "created"), "created")
        last_used = data.get("last_used")
        use_count = data.get("use_count", 0)
        if (
            isinstance(use_count, bool)
            or not isinstance(use_count, int)
            or use_count < 0
        ):
            raise ValueError("use_count must be a non-negative integer")
        source = data.get("source", "extracted")
        if source not in _SOURCES:
            raise ValueError("source must be 'extracted' or 'manual'")
        pinned = data.get("pinned", source == "manual")
        if not isinstance(pinned, bool):
            raise ValueError("pinned must be a boolean")  # noqa: TRY004
        return cls(
            id=_non_empty_str(_required(data, "id"), "id"),
            text=clean_text(_non_empty_str(_required(data, "text"), "text")),
            created=created,
            updated=_number(data.get("updated", created), "updated"),
            last_used=None if last_used is None else _number(last_used, "last_used"),
            use_count=use_count,
            source=cast(Source, source),
            pinned=pinned,
        )


def usefulness(fact: Fact) -> float:
    """Return the ranking score of an unpinned fact (higher is more useful)."""
    last_touch = (
        fact.updated if fact.last_used is None else max(fact.updated, fact.last_used)
    )
    return math.log2(1 + fact.use_count) + last_touch / _RECENCY_UNIT_SECONDS


@dataclass(slots=True)
class HistoryEntry:
    """A fact that left the active list, why and when."""

    fact: Fact
    reason: Reason
    at: float
    replaced_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict."""
        return {
            "fact": self.fact.to_dict(),
            "reason": self.reason,
            "at": self.at,
            "replaced_by": self.replaced_by,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> HistoryEntry:
        """Build an entry from :meth:`to_dict` output; ValueError when malformed."""
        data = _mapping(data, "history entry")
        reason = _required(data, "reason")
        if reason not in _REASONS:
            raise ValueError("unknown history reason")
        replaced_by = data.get("replaced_by")
        if replaced_by is not None and not isinstance(replaced_by, str):
            raise ValueError("replaced_by must be a string or null")
        return cls(
            fact=Fact.from_dict(_mapping(_required(data, "fact"), "fact")),
            reason=cast(Reason, reason),
            at=_number(_required(data, "at"), "at"),
            replaced_by=replaced_by,
        )


@dataclass(slots=True)
class ExtractionChange:
    """What one :meth:`FactBook.apply_extraction` did, for logging and saving.

    ``dropped`` are old extracted facts missing from the extractor's list;
    ``over_limit`` are old facts the extractor still listed but beyond the
    cap; ``rewritten`` pairs (old, new); ``rejected`` counts extractor texts
    not added (blank, or beyond the cap).
    """

    added: list[Fact] = field(default_factory=list)
    kept: list[Fact] = field(default_factory=list)
    dropped: list[Fact] = field(default_factory=list)
    rewritten: list[tuple[Fact, Fact]] = field(default_factory=list)
    over_limit: list[Fact] = field(default_factory=list)
    rejected: int = 0

    @property
    def changed(self) -> bool:
        """Return True if the active facts or the history changed (save needed)."""
        return bool(self.added or self.dropped or self.rewritten or self.over_limit)


@dataclass(slots=True)
class _Selection:
    """Extractor texts after cleaning, de-duplication and the cap."""

    accepted: list[str]
    overflow_keys: set[str]
    rejected: int


def _match_unchanged(texts: list[str], olds: list[Fact]) -> list[Fact | None]:
    """Return, per text, the old fact with the same key (each used once) or None."""
    by_key: dict[str, Fact] = {}
    for fact in reversed(olds):  # of duplicate records the first one wins
        by_key[fact_key(fact.text)] = fact
    return [by_key.pop(fact_key(text), None) for text in texts]


def _pair_rewrites(new_texts: list[str], olds: list[Fact]) -> dict[int, Fact]:
    """Pair new texts with the old facts they most likely rewrite.

    Greedy by descending similarity, each side used at most once; ties go
    to the earlier text and the earlier fact, so the result is deterministic.
    """
    candidates: list[tuple[float, int, int]] = []
    for new_index, text in enumerate(new_texts):
        for old_index, old in enumerate(olds):
            score = text_similarity(text, old.text)
            if score >= REWRITE_SIMILARITY:
                candidates.append((-score, new_index, old_index))
    candidates.sort()
    pairs: dict[int, Fact] = {}
    used_olds: set[int] = set()
    for _, new_index, old_index in candidates:
        if new_index not in pairs and old_index not in used_olds:
            pairs[new_index] = olds[old_index]
            used_olds.add(old_index)
    return pairs


class FactBook:
    """The facts of one speaker, their history, and the rules that change them.

    ``facts`` is in storage order: the extractor's importance order for
    extracted facts, insertion order otherwise. Use :meth:`active` for the
    ranked view that goes into a prompt.
    """

    __slots__ = ("facts", "history", "max_fact_chars", "max_facts", "max_history")

    def __init__(
        self, *, max_facts: int, max_history: int = 50, max_fact_chars: int = 200
    ) -> None:
        """Create an empty book with the given limits."""
        if max_facts < 0 or max_history < 0:
            raise ValueError("limits must not be negative")
        if max_fact_chars < 2:
            raise ValueError("max_fact_chars must be at least 2")
        self.max_facts = max_facts
        self.max_history = max_history
        self.max_fact_chars = max_fact_chars
        self.facts: list[Fact] = []
        self.history: list[HistoryEntry] = []

    # --- reading --------------------------------------------------------------

    def active(self) -> list[Fact]:
        """Return the active facts, most useful first.

        Protected (pinned/manual) facts come first; the rest by
        :func:`usefulness`. The sort is stable, so ties keep storage order
        (the extractor's importance order).
        """
        return sorted(
            self.facts, key=lambda fact: (not fact.protected, -usefulness(fact))
        )

    def get(self, fact_id: str) -> Fact:
        """Return the active fact with this id; KeyError if there is none."""
        return self.facts[self._index(fact_id)]

    # --- user actions ---------------------------------------------------------

    def add_manual(self, text: str, now: float) -> Fact:
        """Add a pinned fact the user asked to remember.

        Raises ValueError when the text is blank, longer than
        ``max_fact_chars``, duplicates an active fact, or protected facts
        already fill ``max_facts``. A user's fact beats the extractor's
        guesses: when the book is full, the least important extracted fact
        moves to history as "over_limit" to make room.
        """
        cleaned = self._user_text(text)
        self._check_unique(cleaned)
        self._check_room_for_protected()
        self._evict_for_room(now)
        fact = Fact(self._new_id(), cleaned, now, now, None, 0, "manual", True)
        self.facts.append(fact)
        return fact

    def update_text(self, fact_id: str, text: str, now: float) -> Fact:
        """Replace a fact's text on the user's behalf and return the new record.

        The new record gets a new id (so every version in history stays
        restorable by its own id), inherits creation time and usage, and
        becomes manual and pinned: the user took ownership, so the extractor
        must not undo the correction. The old version goes to history as
        "rewritten". KeyError if unknown; ValueError as for :meth:`add_manual`.
        """
        index = self._index(fact_id)
        old = self.facts[index]
        cleaned = self._user_text(text)
        if cleaned == old.text:
            return old
        self._check_unique(cleaned, ignore=old)
        new = replace(
            old,
            id=self._new_id(),
            text=cleaned,
            updated=now,
            source="manual",
            pinned=True,
        )
        self.facts[index] = new
        self._push_history(old, "rewritten", now, replaced_by=new.id)
        return new

    def remove(self, fact_id: str, now: float) -> Fact:
        """Move one fact to history as "removed"; KeyError if unknown."""
        fact = self.facts.pop(self._index(fact_id))
        self._push_history(fact, "removed", now)
        return fact

    def clear(self, now: float, *, include_manual: bool = True) -> int:
        """Move facts to history as "cleared" and return how many.

        With ``include_manual=False`` protected facts (manual, pinned) stay.
        Note the history bound: clearing many facts evicts old history.
        """
        gone = [fact for fact in self.facts if include_manual or not fact.protected]
        self.facts = [
            fact for fact in self.facts if fact.protected and not include_manual
        ]
        for fact in gone:
            self._push_history(fact, "cleared", now)
        return len(gone)

    def clear_history(self) -> int:
        """Erase the audit trail (for a real "forget me") and return its size."""
        count = len(self.history)
        self.history.clear()
        return count

    def restore(self, fact_id: str, now: float) -> Fact:
        """Bring a fact back from history (its latest entry) and pin it.

        It is pinned because the user explicitly wanted it back: otherwise the
        next extractor run could drop it again. KeyError if the id is not in
        history; ValueError when it duplicates an active fact or protected
        facts already fill ``max_facts`` (extracted facts make room as for
        :meth:`add_manual`).
        """
        position = self._history_position(fact_id)
        fact = self.history[position].fact
        if any(active.id == fact.id for active in self.facts):
            raise FactRefused("fact_active", "a fact with this id is active")
        self._check_unique(fact.text)
        self._check_room_for_protected()
        # Take the entry out before evicting: eviction appends to history and
        # may shift positions through the history bound.
        del self.history[position]
        self._evict_for_room(now)
        restored = replace(fact, pinned=True, updated=now)
        self.facts.append(restored)
        return restored

    # --- prompt and extractor -----------------------------------------------------

    def mark_used(self, now: float, fact_ids: Iterable[str] | None = None) -> None:
        """Record that facts went into a prompt (all active ones by default)."""
        wanted = None if fact_ids is None else set(fact_ids)
        for fact in self.facts:
            if wanted is None or fact.id in wanted:
                fact.use_count += 1
                fact.last_used = now

    def apply_extraction(self, texts: list[str], now: float) -> ExtractionChange:
        """Merge the extractor's full updated list of facts into the book.

        Protected facts are never touched (texts equal to one are ignored).
        Unchanged texts keep their record; a new text similar enough to an old
        fact it replaced supersedes it (history "rewritten", replaced_by set,
        use count inherited); old facts missing from the list go to history as
        "dropped", old facts still listed but beyond the cap as "over_limit".
        Texts beyond the free slots are not added: the extractor orders by
        importance, so the first ones win.
        """
        protected = [fact for fact in self.facts if fact.protected]
        olds = [fact for fact in self.facts if not fact.protected]
        selection = self._select(texts, protected)
        change = ExtractionChange(rejected=selection.rejected)

        # One entry per accepted text, in the extractor's order: the old
        # record when the text is unchanged, else None until filled below.
        merged = _match_unchanged(selection.accepted, olds)
        change.kept = [fact for fact in merged if fact is not None]
        kept_ids = {fact.id for fact in change.kept}
        leftover = [fact for fact in olds if fact.id not in kept_ids]
        overflow = selection.overflow_keys
        change.over_limit = [f for f in leftover if fact_key(f.text) in overflow]
        candidates = [f for f in leftover if fact_key(f.text) not in overflow]

        replaced_by = self._fill_new(
            merged, selection.accepted, candidates, change, now
        )
        change.dropped = [f for f in candidates if f.id not in replaced_by]
        self.facts = protected + [fact for fact in merged if fact is not None]
        self._archive(olds, change, replaced_by, now)
        return change

    def enforce_limits(self, now: float) -> list[Fact]:
        """Apply (possibly lowered) limits; return the facts moved out.

        Extracted facts beyond the free slots move to history as
        "over_limit", least important (last in storage order) first.
        Protected facts are never moved: if they alone exceed ``max_facts``
        they all stay, and the prompt builder must cope. Call after loading a
        book or changing the options.
        """
        free = max(self.max_facts - self._protected_count(), 0)
        extracted = [fact for fact in self.facts if not fact.protected]
        extra = extracted[free:]
        if extra:
            extra_ids = {fact.id for fact in extra}
            self.facts = [fact for fact in self.facts if fact.id not in extra_ids]
            for fact in extra:
                self._push_history(fact, "over_limit", now)
        self._trim_history()
        return extra

    # --- persistence ----------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict (the caller versions the store)."""
        return {
            "facts": [fact.to_dict() for fact in self.facts],
            "history": [entry.to_dict() for entry in self.history],
        }

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, object],
        *,
        max_facts: int,
        max_history: int = 50,
        max_fact_chars: int = 200,
    ) -> FactBook:
        """Build a book from :meth:`to_dict` output.

        Raises ValueError on malformed data (messages give the position and
        key, never fact text). History beyond ``max_history`` is trimmed,
        oldest first; facts beyond ``max_facts`` are kept until
        :meth:`enforce_limits` is called, which needs the current time.
        """
        data = _mapping(data, "fact book")
        raw_facts = _required(data, "facts")
        raw_history = data.get("history", [])
        if not isinstance(raw_facts, list) or not isinstance(raw_history, list):
            raise ValueError("facts and history must be lists")  # noqa: TRY004
        book = cls(
            max_facts=max_facts, max_history=max_history, max_fact_chars=max_fact_chars
        )
        for index, raw in enumerate(raw_facts):
            try:
                book.facts.append(Fact.from_dict(raw))
            except ValueError as err:
                raise ValueError(f"facts[{index}]: {err}") from None
        if len({fact.id for fact in book.facts}) != len(book.facts):
            raise ValueError("duplicate fact ids")
        for index, raw in enumerate(raw_history):
            try:
                book.history.append(HistoryEntry.from_dict(raw))
            except ValueError as err:
                raise ValueError(f"history[{index}]: {err}") from None
        book._trim_history()
        return book

    # --- internals ------------------------------------------------------------

    def _index(self, fact_id: str) -> int:
        for index, fact in enumerate(self.facts):
            if fact.id == fact_id:
                return index
        raise KeyError(fact_id)

    def _history_position(self, fact_id: str) -> int:
        for position in range(len(self.history) - 1, -1, -1):
            if self.history[position].fact.id == fact_id:
                return position
        raise KeyError(fact_id)

    def _new_id(self) -> str:
        taken = {fact.id for fact in self.facts} | {
            entry.fact.id for entry in self.history
        }
        while (fact_id := new_fact_id()) in taken:
            pass  # 48 random bits: a collision is rare, but ids must stay unique
        return fact_id

    def _protected_count(self) -> int:
        return sum(1 for fact in self.facts if fact.protected)

    def _user_text(self, text: str) -> str:
        # A user's words are never silently cut: refuse instead.
        cleaned = clean_text(text)
        if not cleaned:
            raise FactRefused("fact_empty", "fact text is empty")
        if len(cleaned) > self.max_fact_chars:
            raise FactRefused(
                "fact_too_long",
                f"fact text is longer than {self.max_fact_chars} characters",
                self.max_fact_chars,
            )
        return cleaned

    def _check_unique(self, text: str, *, ignore: Fact | None = None) -> None:
        key = fact_key(text)
        if any(
            fact is not ignore and fact_key(fact.text) == key for fact in self.facts
        ):
            raise FactRefused(
                "fact_duplicate", "an identical fact is already remembered"
            )

    def _check_room_for_protected(self) -> None:
        if self._protected_count() >= self.max_facts:
            raise FactRefused(
                "fact_limit",
                f"the limit of {self.max_facts} facts is reached",
                self.max_facts,
            )

    def _evict_for_room(self, now: float) -> None:
        """Move the last extracted facts out until one more fact fits."""
        while len(self.facts) >= self.max_facts:
            index = max(i for i, fact in enumerate(self.facts) if not fact.protected)
            self._push_history(self.facts.pop(index), "over_limit", now)

    def _select(self, texts: list[str], protected: list[Fact]) -> _Selection:
        """Clean, de-duplicate and cap the extractor's texts, keeping order."""
        seen = {fact_key(fact.text) for fact in protected}
        free = max(self.max_facts - len(protected), 0)
        accepted: list[str] = []
        overflow_keys: set[str] = set()
        rejected = 0
        for raw in texts:
            text = truncate(clean_text(raw), self.max_fact_chars)
            key = fact_key(text)
            if not key:
                rejected += 1
            elif key in seen:
                continue
            elif len(accepted) < free:
                accepted.append(text)
            else:
                overflow_keys.add(key)
                rejected += 1
            seen.add(key)
        return _Selection(accepted, overflow_keys, rejected)

    def _fill_new(
        self,
        merged: list[Fact | None],
        accepted: list[str],
        candidates: list[Fact],
        change: ExtractionChange,
        now: float,
    ) -> dict[str, str]:
        """Create records for the new texts; return old id -> new id of rewrites."""
        unmatched = [index for index, fact in enumerate(merged) if fact is None]
        pairs = _pair_rewrites([accepted[index] for index in unmatched], candidates)
        replaced_by: dict[str, str] = {}
        for pair_index, index in enumerate(unmatched):
            old = pairs.get(pair_index)
            new = merged[index] = self._extracted(accepted[index], now, inherit=old)
            if old is None:
                change.added.append(new)
            else:
                change.rewritten.append((old, new))
                replaced_by[old.id] = new.id
        return replaced_by

    def _extracted(self, text: str, now: float, *, inherit: Fact | None) -> Fact:
        """Create a record for an extractor text, inheriting from a rewritten fact."""
        if inherit is None:
            return Fact(self._new_id(), text, now, now, None, 0, "extracted", False)
        return replace(inherit, id=self._new_id(), text=text, updated=now)

    def _archive(
        self,
        olds: list[Fact],
        change: ExtractionChange,
        replaced_by: dict[str, str],
        now: float,
    ) -> None:
        """Move the old facts that left the active list to history, in storage order."""
        dropped = {fact.id for fact in change.dropped}
        over_limit = {fact.id for fact in change.over_limit}
        for fact in olds:
            if fact.id in replaced_by:
                self._push_history(
                    fact, "rewritten", now, replaced_by=replaced_by[fact.id]
                )
            elif fact.id in dropped:
                self._push_history(fact, "dropped", now)
            elif fact.id in over_limit:
                self._push_history(fact, "over_limit", now)

    def _push_history(
        self, fact: Fact, reason: Reason, now: float, *, replaced_by: str | None = None
    ) -> None:
        self.history.append(HistoryEntry(fact, reason, now, replaced_by))
        self._trim_history()

    def _trim_history(self) -> None:
        excess = len(self.history) - self.max_history
        if excess > 0:
            del self.history[:excess]
