"""What the live-data tools share: argument checking and value formatting."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Self

from homeassistant.const import UnitOfSpeed
from homeassistant.core import HomeAssistant, State
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.util.json import JsonObjectType
from homeassistant.util.unit_conversion import SpeedConverter
import voluptuous as vol

from ..compat import tool_result
from ..const import DOMAIN, LOGGER
from .kite import compass_point, format_number, parse_direction, unit_after

# Spellings of speed units seen in the wild, mapped to HA's.
_SPEED_ALIASES = {
    "kt": UnitOfSpeed.KNOTS,
    "kts": UnitOfSpeed.KNOTS,
    "knot": UnitOfSpeed.KNOTS,
    "knots": UnitOfSpeed.KNOTS,
    "kph": UnitOfSpeed.KILOMETERS_PER_HOUR,
    "km/hr": UnitOfSpeed.KILOMETERS_PER_HOUR,
    "m/sec": UnitOfSpeed.METERS_PER_SECOND,
    "mi/h": UnitOfSpeed.MILES_PER_HOUR,
    "beaufort": UnitOfSpeed.BEAUFORT,
}
_SPEED_UNITS = frozenset(unit.value for unit in UnitOfSpeed)


def speed_unit(unit: str | None) -> str | None:
    """HA's spelling of a speed unit ("kts" -> "kn"), or None for no speed."""
    if unit is None:
        return None
    unit = _SPEED_ALIASES.get(unit.strip().lower(), unit.strip())
    return unit if unit in _SPEED_UNITS else None


def to_knots(value: float, unit: str | None) -> float | None:
    """A speed in knots as it is said, or None when ``unit`` is not a speed.

    The kitesurf verdict judges this number, so it must be the one the user
    hears: a reading in knots is said as read (to the 0.01 numbers are
    written with: "11.96 kn", never judged as 12), one in another unit
    beside its knots to 0.1 ("18 km/h (9.7 kn)").
    """
    knots = convert_speed(value, unit, UnitOfSpeed.KNOTS)
    if knots is None:
        return None
    return round(knots, 2 if speed_unit(unit) == UnitOfSpeed.KNOTS else 1)


def convert_speed(value: float, unit: str | None, to_unit: str | None) -> float | None:
    """A speed in another speed unit, or None when either is not one."""
    source, target = speed_unit(unit), speed_unit(to_unit)
    if source is None or target is None:
        return None
    return SpeedConverter.convert(value, source, target)


def with_unit(value: Any, unit: str | None) -> str:
    """Value and unit as one string ("21.5 °C", "60%"): the unit cannot get lost."""
    text = format_number(value) if isinstance(value, int | float) else str(value)
    return unit_after(text, unit)


def wind_text(
    speed: Any, unit: str | None, bearing: Any = None, gust: Any = None
) -> str | None:
    """Wind in words: "18 km/h (9.7 kn) from SW, gusts 30 km/h (16.2 kn)"."""
    if not isinstance(speed, int | float):
        return None
    text = _speed_with_knots(speed, unit)
    # A calm blows from nowhere; a bearing written as text ("180", "SW") is
    # read as one, never given as a bare number.
    if speed and (degrees := parse_direction(bearing)) is not None:
        text += f" from {compass_point(degrees)}"
    if isinstance(gust, int | float):
        text += f", gusts {_speed_with_knots(gust, unit)}"
    return text


def _speed_with_knots(speed: float, unit: str | None) -> str:
    text = with_unit(speed, unit)
    knots = to_knots(speed, unit)
    if knots is not None and speed_unit(unit) != UnitOfSpeed.KNOTS:
        text += f" ({format_number(knots)} kn)"
    return text


def state_name(state: State) -> str:
    """The entity's friendly name, else its id."""
    return str(state.attributes.get("friendly_name") or state.entity_id)


class LiveTool(llm.Tool):
    """A tool of ours: validates its arguments, returns a version-safe result.

    HA passes the model's arguments unchecked, so ``async_call`` validates them
    against ``parameters``: a wrong value raises ``vol.Invalid``, which HA turns
    into a tool error the model reads (and can correct). Argument names the
    tool does not know are ignored and listed in the result: small models
    invent them often, and a failed round costs a whole prompt on a local
    server.
    """

    integration = DOMAIN  # 2026.11 warns about tools without it
    topics: str = ""  # what it is for, in the API prompt: "weather and forecasts"

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        """The tool itself: HA's conversation trace deep-copies the request's
        tools, and ours hold the entry's memory (and through it HA), which
        cannot be copied and must not be."""
        return self

    async def async_call(
        self,
        hass: HomeAssistant,
        tool_input: llm.ToolInput,
        llm_context: llm.LLMContext,
    ) -> JsonObjectType:
        """Validate, run, and wrap the result."""
        args, ignored = self.validate(tool_input.tool_args)
        try:
            data = await self.async_run(hass, args, llm_context.language or "en")
        except HomeAssistantError:
            raise
        except Exception as err:
            # Anything else would end the whole turn; the model can still answer.
            LOGGER.exception("Tool %s failed", self.name)
            raise HomeAssistantError(
                f"{self.name} failed: {type(err).__name__}. Tell the user the "
                "live data is not available right now."
            ) from err
        if ignored:
            data["ignored_arguments"] = ignored
        # A ToolResult on 2026.11, the dict itself on 2026.2.
        return tool_result(data)

    def validate(self, tool_args: Any) -> tuple[dict[str, Any], list[str]]:
        """Checked arguments, and the names that were ignored."""
        if tool_args is None:
            tool_args = {}
        if not isinstance(tool_args, dict):
            raise vol.Invalid(
                f"Arguments for {self.name} must be a JSON object, got {tool_args!r}"
            )
        known = {str(getattr(key, "schema", key)) for key in self.parameters.schema}
        ignored = sorted(str(key) for key in tool_args if key not in known)
        args = {key: value for key, value in tool_args.items() if key in known}
        try:
            checked: dict[str, Any] = self.parameters(args)
        except vol.Invalid as err:
            got = args.get(err.path[0]) if err.path else args
            raise vol.Invalid(
                f"Invalid arguments for {self.name}: {err} (got {got!r}). {self.usage}"
            ) from err
        return checked, ignored

    @property
    def usage(self) -> str:
        """How to call the tool right; appended to argument errors."""
        return "Call it again with valid arguments, or with none for the defaults."

    @abstractmethod
    async def async_run(
        self, hass: HomeAssistant, args: dict[str, Any], language: str
    ) -> dict[str, Any]:
        """Read the live data; ``summary`` sentences in ``language``."""
