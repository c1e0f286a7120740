"""Options flow: memory settings, hosted extractor, satellites, and the facts themselves.

Settings steps end by saving options (the entry reloads). Fact steps change
the fact store directly and go back to the speaker's menu; "Done" closes the
flow without touching the options, so no reload happens.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import (
    ConfigEntryState,
    ConfigFlowResult,
    OptionsFlow,
)
from homeassistant.data_entry_flow import AbortFlow
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.selector import (
    BooleanSelector,
    EntitySelector,
    EntitySelectorConfig,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
from homeassistant.util import dt as dt_util
import voluptuous as vol

from ..const import (
    CONF_DEVICE_PEOPLE,
    CONF_EXTRACTION,
    CONF_EXTRACTION_API_KEY,
    CONF_EXTRACTION_BASE_URL,
    CONF_EXTRACTION_MODEL,
    CONF_KEEP_MODEL_LOADED,
    CONF_MAX_FACTS,
    CONF_SESSION_IDLE_MINUTES,
    CONF_SESSION_MAX_CHARS,
    CONF_SESSION_MAX_MESSAGES,
    CONF_TIMEOUT,
    DEFAULT_EXTRACTION,
    DEFAULT_KEEP_MODEL_LOADED,
    DEFAULT_MAX_FACTS,
    DEFAULT_SESSION_IDLE_MINUTES,
    DEFAULT_SESSION_MAX_CHARS,
    DEFAULT_SESSION_MAX_MESSAGES,
    DEFAULT_TIMEOUT,
    EXTRACTION_HOSTED,
    EXTRACTION_LOCAL,
    EXTRACTION_OFF,
)
from ..memory.facts import MAX_FACTS_LIMIT, FactRefused
from ..memory.speaker import is_lasting_speaker
from ..server.url import normalize_base_url
from .server_check import async_check_server

if TYPE_CHECKING:
    from ..memory.manager import Memory

# Marks a fact added or corrected by hand (pinned): extraction never changes it.
PINNED_MARK = " ★"

CONF_SPEAKER = "speaker"
CONF_FACT_TEXT = "text"
CONF_FACT_ID = "fact_id"
CONF_FACT_IDS = "fact_ids"
CONF_DEVICE = "device"
CONF_PERSON = "person"
CONF_INCLUDE_HISTORY = "include_history"

SECRET_TEXT = TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))
LONG_TEXT = TextSelector(TextSelectorConfig(multiline=True))


def _box(minimum: float, maximum: float, step: float = 1) -> NumberSelector:
    return NumberSelector(
        NumberSelectorConfig(
            min=minimum, max=maximum, step=step, mode=NumberSelectorMode.BOX
        )
    )


SETTINGS_SCHEMA = vol.Schema(
    {
        vol.Required(
            CONF_SESSION_IDLE_MINUTES, default=DEFAULT_SESSION_IDLE_MINUTES
        ): _box(1, 10_080),
        vol.Required(
            CONF_SESSION_MAX_MESSAGES, default=DEFAULT_SESSION_MAX_MESSAGES
        ): _box(2, 2_000),
        vol.Required(CONF_SESSION_MAX_CHARS, default=DEFAULT_SESSION_MAX_CHARS): _box(
            500, 500_000
        ),
        vol.Required(CONF_MAX_FACTS, default=DEFAULT_MAX_FACTS): _box(
            1, MAX_FACTS_LIMIT
        ),
        vol.Required(CONF_EXTRACTION, default=DEFAULT_EXTRACTION): SelectSelector(
            SelectSelectorConfig(
                options=[EXTRACTION_LOCAL, EXTRACTION_HOSTED, EXTRACTION_OFF],
                mode=SelectSelectorMode.LIST,
                translation_key=CONF_EXTRACTION,
            )
        ),
        vol.Required(CONF_TIMEOUT, default=DEFAULT_TIMEOUT): _box(5, 600),
        vol.Required(
            CONF_KEEP_MODEL_LOADED, default=DEFAULT_KEEP_MODEL_LOADED
        ): BooleanSelector(),
    }
)
INT_SETTINGS = (
    CONF_SESSION_IDLE_MINUTES,
    CONF_SESSION_MAX_MESSAGES,
    CONF_SESSION_MAX_CHARS,
    CONF_MAX_FACTS,
)


class LocalAssistantOptionsFlow(OptionsFlow):
    """Settings and fact management for one model server."""

    def __init__(self) -> None:
        """Start with nothing picked."""
        self._options: dict[str, Any] = {}
        self._speaker: str | None = None
        self._fact_id: str | None = None

    @property
    def _memory(self) -> Memory:
        # Facts live in the loaded entry's memory; it can unload while a form
        # is open (disabled elsewhere, a reload left retrying).
        if self.config_entry.state is not ConfigEntryState.LOADED:
            raise AbortFlow("not_loaded")
        return self.config_entry.runtime_data.memory

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Top-level menu."""
        self._options = dict(self.config_entry.options)
        return self.async_show_menu(
            step_id="init", menu_options=["settings", "people", "pick_speaker"]
        )

    # --- settings -----------------------------------------------------------------

    async def async_step_settings(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Memory, extraction, timeout and keep-loaded settings."""
        if user_input is not None:
            self._options.update(user_input)
            for key in INT_SETTINGS:
                self._options[key] = int(self._options[key])
            if user_input[CONF_EXTRACTION] == EXTRACTION_HOSTED:
                return await self.async_step_hosted()
            # No hosted extractor: its key is kept nowhere.
            self._options.pop(CONF_EXTRACTION_API_KEY, None)
            return self.async_create_entry(data=self._options)
        return self.async_show_form(
            step_id="settings",
            data_schema=self.add_suggested_values_to_schema(
                SETTINGS_SCHEMA, self._options
            ),
        )

    async def async_step_hosted(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Endpoint of the hosted extractor; checked before it is saved."""
        errors: dict[str, str] = {}
        if user_input is not None:
            base_url = normalize_base_url(user_input[CONF_EXTRACTION_BASE_URL])
            api_key = (user_input.get(CONF_EXTRACTION_API_KEY) or "").strip()
            if not api_key and base_url == self._options.get(CONF_EXTRACTION_BASE_URL):
                # The form never shows the stored key: left empty, it stays.
                api_key = self._options.get(CONF_EXTRACTION_API_KEY) or ""
            models, error = await async_check_server(self.hass, base_url, api_key)
            if error:
                errors["base"] = error
            else:
                model = user_input[CONF_EXTRACTION_MODEL].strip()
                if models and model not in models:
                    errors[CONF_EXTRACTION_MODEL] = "model_not_found"
                else:
                    self._options.update(
                        {
                            CONF_EXTRACTION_BASE_URL: base_url,
                            CONF_EXTRACTION_API_KEY: api_key,
                            CONF_EXTRACTION_MODEL: model,
                        }
                    )
                    return self.async_create_entry(data=self._options)
        return self.async_show_form(
            step_id="hosted",
            data_schema=self.add_suggested_values_to_schema(
                vol.Schema(
                    {
                        vol.Required(CONF_EXTRACTION_BASE_URL): str,
                        vol.Optional(CONF_EXTRACTION_API_KEY): SECRET_TEXT,
                        vol.Required(CONF_EXTRACTION_MODEL): str,
                    }
                ),
                {
                    key: value
                    for key, value in (user_input or self._options).items()
                    if key != CONF_EXTRACTION_API_KEY
                },
            ),
            errors=errors,
        )

    # --- satellites counted as a person ----------------------------------------

    async def async_step_people(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Map a satellite device to a person, or clear its mapping."""
        mapping: dict[str, str] = dict(self._options.get(CONF_DEVICE_PEOPLE, {}))
        if user_input is not None:
            device_id = user_input[CONF_DEVICE]
            if person := user_input.get(CONF_PERSON):
                mapping[device_id] = person
            else:
                mapping.pop(device_id, None)
            self._options[CONF_DEVICE_PEOPLE] = mapping
            return self.async_create_entry(data=self._options)

        registry = dr.async_get(self.hass)
        devices = [
            SelectOptionDict(
                value=device.id, label=device.name_by_user or device.name or device.id
            )
            for device in registry.devices.values()
            if not device.entry_type  # services (like our agents) are not satellites
        ]
        if not devices:
            return self.async_abort(reason="no_devices")
        current = "\n".join(
            f"- {_device_label(registry, device_id)} → {self._person_name(person)}"
            for device_id, person in mapping.items()
        )
        return self.async_show_form(
            step_id="people",
            data_schema=vol.Schema(
                {
                    vol.Required(CONF_DEVICE): SelectSelector(
                        SelectSelectorConfig(options=devices, sort=True)
                    ),
                    vol.Optional(CONF_PERSON): EntitySelector(
                        EntitySelectorConfig(domain="person")
                    ),
                }
            ),
            description_placeholders={
                "mapping": current,
                "mapping_count": str(len(mapping)),
            },
        )

    # --- facts ---------------------------------------------------------------------

    async def async_step_pick_speaker(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Choose whose facts to manage."""
        memory = self._memory  # aborts unless loaded
        if user_input is not None:
            self._speaker = user_input[CONF_SPEAKER]
            return await self.async_step_speaker()
        # Everyone who talked, and every person (facts can be added before
        # someone first talks to the assistant). A speaker known only by a
        # conversation id gets no facts, so it is listed only if it has some.
        keys = [
            key
            for key in dict.fromkeys(
                [*memory.known_speakers(), *memory.people_speakers()]
            )
            if is_lasting_speaker(key) or memory.list_facts(key)
        ]
        labels = [await memory.async_speaker_label(key) for key in keys]
        speakers = [
            SelectOptionDict(
                value=key,
                # The name; the key only to tell two of the same name apart.
                label=label if labels.count(label) == 1 else f"{label} ({key})",
            )
            for key, label in zip(keys, labels, strict=True)
        ]
        if not speakers:
            return self.async_abort(reason="no_speakers")
        return self.async_show_form(
            step_id="pick_speaker",
            data_schema=vol.Schema(
                {
                    vol.Required(CONF_SPEAKER): SelectSelector(
                        SelectSelectorConfig(options=speakers)
                    )
                }
            ),
        )

    async def async_step_speaker(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Show a speaker's facts and what can be done with them."""
        speaker = self._require_speaker()
        facts = self._memory.list_facts(speaker)
        history = self._memory.fact_history(speaker)
        lines = [
            f"{index}. {fact.text}{PINNED_MARK if fact.protected else ''}"
            for index, fact in enumerate(facts, 1)
        ]
        options = ["add_fact"]
        if facts:
            options += ["edit_fact", "remove_facts", "clear_facts"]
        if history:
            options.append("restore_fact")
        options.append("done")
        return self.async_show_menu(
            step_id="speaker",
            menu_options=options,
            # The frontend fills no placeholders in a menu's title: the
            # speaker is named in the description.
            description_placeholders={
                "speaker": await self._memory.async_speaker_label(speaker),
                "fact_count": str(len(facts)),
                "facts": "\n".join(lines),
                "history_count": str(len(history)),
            },
        )

    async def async_step_add_fact(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Add a fact by hand (pinned: extraction never removes it)."""
        errors: dict[str, str] = {}
        if user_input is not None:
            try:
                await self._memory.async_add_fact(
                    self._require_speaker(), user_input[CONF_FACT_TEXT]
                )
            except FactRefused as err:
                errors[CONF_FACT_TEXT] = err.reason
            else:
                return await self.async_step_speaker()
        return self.async_show_form(
            step_id="add_fact",
            data_schema=vol.Schema({vol.Required(CONF_FACT_TEXT): LONG_TEXT}),
            errors=errors,
        )

    async def async_step_edit_fact(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Pick the fact to rewrite."""
        speaker = self._require_speaker()
        if user_input is not None:
            self._fact_id = user_input[CONF_FACT_ID]
            return await self.async_step_edit_fact_text()
        return self.async_show_form(
            step_id="edit_fact",
            data_schema=vol.Schema(
                {vol.Required(CONF_FACT_ID): self._fact_selector(speaker)}
            ),
        )

    async def async_step_edit_fact_text(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Rewrite it, starting from its current text; the old one goes to the history."""
        speaker = self._require_speaker()
        current = next(
            (f for f in self._memory.list_facts(speaker) if f.id == self._fact_id),
            None,
        )
        if current is None:  # gone meanwhile (extraction, a service): pick again
            return await self.async_step_edit_fact()
        errors: dict[str, str] = {}
        if user_input is not None:
            try:
                await self._memory.async_update_fact(
                    speaker, current.id, user_input[CONF_FACT_TEXT]
                )
            except FactRefused as err:
                errors[CONF_FACT_TEXT] = err.reason
            else:
                return await self.async_step_speaker()
        return self.async_show_form(
            step_id="edit_fact_text",
            data_schema=self.add_suggested_values_to_schema(
                vol.Schema({vol.Required(CONF_FACT_TEXT): LONG_TEXT}),
                user_input or {CONF_FACT_TEXT: current.text},
            ),
            errors=errors,
        )

    async def async_step_remove_facts(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Remove facts (kept in the history, restorable)."""
        speaker = self._require_speaker()
        if user_input is not None:
            for fact_id in user_input.get(CONF_FACT_IDS, []):
                # Already gone (an extractor run or a service): nothing to do.
                with suppress(KeyError):
                    await self._memory.async_remove_fact(speaker, fact_id)
            return await self.async_step_speaker()
        return self.async_show_form(
            step_id="remove_facts",
            # Optional: HA's frontend ticks the first option of a required
            # multiple select, and ticking another would then remove two.
            data_schema=vol.Schema(
                {
                    vol.Optional(CONF_FACT_IDS): self._fact_selector(
                        speaker, multiple=True
                    )
                }
            ),
        )

    async def async_step_clear_facts(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Forget every fact of the speaker (kept in the history)."""
        if user_input is not None:
            await self._memory.async_clear_facts(
                self._require_speaker(),
                include_history=user_input.get(CONF_INCLUDE_HISTORY, False),
            )
            return await self.async_step_speaker()
        return self.async_show_form(
            step_id="clear_facts",
            data_schema=vol.Schema(
                {vol.Optional(CONF_INCLUDE_HISTORY, default=False): bool}
            ),
        )

    async def async_step_restore_fact(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Bring back a fact from the history."""
        speaker = self._require_speaker()
        errors: dict[str, str] = {}
        if user_input is not None:
            try:
                await self._memory.async_restore_fact(speaker, user_input[CONF_FACT_ID])
            except KeyError:
                errors[CONF_FACT_ID] = "fact_not_found"
            except FactRefused as err:
                errors[CONF_FACT_ID] = err.reason
            else:
                return await self.async_step_speaker()
        history = [
            SelectOptionDict(
                value=entry.fact.id,
                # When it left, in the home's time zone: no English reason code.
                label=f"{entry.fact.text} · {_local_time(entry.at)}",
            )
            for entry in reversed(self._memory.fact_history(speaker))
        ]
        return self.async_show_form(
            step_id="restore_fact",
            data_schema=vol.Schema(
                {
                    vol.Required(CONF_FACT_ID): SelectSelector(
                        SelectSelectorConfig(options=history)
                    )
                }
            ),
            errors=errors,
        )

    async def async_step_done(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Close without changing options (facts are already saved)."""
        return self.async_create_entry(data=dict(self.config_entry.options))

    def _person_name(self, entity_id: str) -> str:
        state = self.hass.states.get(entity_id)
        return state.name if state is not None else entity_id

    def _require_speaker(self) -> str:
        if self._speaker is None:
            raise vol.Invalid("no speaker picked")
        return self._speaker

    def _fact_selector(self, speaker: str, *, multiple: bool = False) -> SelectSelector:
        return SelectSelector(
            SelectSelectorConfig(
                options=[
                    SelectOptionDict(value=fact.id, label=fact.text)
                    for fact in self._memory.list_facts(speaker)
                ],
                multiple=multiple,
            )
        )


def _local_time(timestamp: float) -> str:
    return dt_util.as_local(dt_util.utc_from_timestamp(timestamp)).strftime(
        "%Y-%m-%d %H:%M"
    )


def _device_label(registry: dr.DeviceRegistry, device_id: str) -> str:
    device = registry.async_get(device_id)
    if device is None:
        return device_id
    return device.name_by_user or device.name or device_id
