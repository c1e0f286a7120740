"""Pure helpers for the live-data tools: compass points, ages, kitesurf verdicts, units.

The verdict logic is tested directly and fast. Wind speeds here are always knots.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final

# The 16 points of the compass rose, clockwise from north.
COMPASS_POINTS: Final = (
    "N",
    "NNE",
    "NE",
    "ENE",
    "E",
    "ESE",
    "SE",
    "SSE",
    "S",
    "SSW",
    "SW",
    "WSW",
    "W",
    "WNW",
    "NW",
    "NNW",
)
_POINT_DEGREES: Final = {point: i * 22.5 for i, point in enumerate(COMPASS_POINTS)}
# The 8 main points: when a spot lists only these, each covers 45 degrees.
_MAIN_POINTS: Final = frozenset(COMPASS_POINTS[::2])

VERDICT_GOOD: Final = "good"
VERDICT_TOO_LIGHT: Final = "too light"
VERDICT_TOO_STRONG: Final = "too strong"
VERDICT_WRONG_DIRECTION: Final = "wrong direction"
VERDICT_UNKNOWN: Final = "unknown"


def compass_point(degrees: float) -> str:
    """The nearest of the 16 compass points (0 = N, 90 = E)."""
    return COMPASS_POINTS[round((degrees % 360) / 22.5) % 16]


def spot_point(degrees: float, points: Iterable[str]) -> str:
    """The compass point a spot's verdict names and judges the wind by.

    As precise as the spot: of the 8 main points where it lists only those
    (each covers its 45 degrees, and the point named is the sector judged),
    else of the 16.
    """
    if all(p.upper() in _MAIN_POINTS for p in points):
        return COMPASS_POINTS[2 * (int((degrees % 360) / 45 + 0.5) % 8)]
    return compass_point(degrees)


def parse_direction(value: object) -> float | None:
    """Degrees from a number, a numeric string or a compass point ("SW")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) % 360
    if not isinstance(value, str):
        return None
    text = value.strip().upper()
    if text in _POINT_DEGREES:
        return _POINT_DEGREES[text]
    try:
        return float(text.removesuffix("°")) % 360
    except ValueError:
        return None


def angle_between(a: float, b: float) -> float:
    """The smaller angle between two bearings, 0-180 (wraps around north)."""
    diff = abs(a - b) % 360
    return min(diff, 360 - diff)


def direction_in_sectors(degrees: float, points: Iterable[str]) -> bool:
    """Whether a bearing falls in any of the compass sectors.

    Judged on the compass point the verdict names (``spot_point``), not the
    exact degrees: one named direction always gets one verdict.
    """
    known = [p.upper() for p in points if p.upper() in _POINT_DEGREES]
    said = _POINT_DEGREES[spot_point(degrees, known)]
    return any(angle_between(said, _POINT_DEGREES[p]) < 1 for p in known)


def format_age(seconds: float) -> str:
    """A reading's age the way people say it: "just now", "12 min", "3 h 5 min"."""
    minutes = int(max(seconds, 0) // 60)
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{hours // 24} days"


def format_number(value: float) -> str:
    """A number without noise: 12, 12.5, 0.35."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def unit_after(text: str, unit: str | None) -> str:
    """A written number and its unit: "21.5 °C", "2.1 m"; "%" and "°" are glued on."""
    if not unit:
        return text
    return f"{text}{unit}" if unit in ("%", "°") else f"{text} {unit}"


@dataclass(frozen=True, slots=True)
class KiteSpot:
    """A spot's kitesurf window: wind range in knots and good directions."""

    min_kn: float | None = None
    max_kn: float | None = None
    directions: tuple[str, ...] = ()

    @property
    def configured(self) -> bool:
        """Whether anything is set, so a verdict makes sense."""
        return (
            self.min_kn is not None or self.max_kn is not None or bool(self.directions)
        )

    def describe(self) -> str:
        """The window in words, for the model and for reasons."""
        parts = []
        if self.min_kn is not None and self.max_kn is not None:
            parts.append(
                f"{format_number(self.min_kn)}-{format_number(self.max_kn)} kn"
            )
        elif self.min_kn is not None:
            parts.append(f"at least {format_number(self.min_kn)} kn")
        elif self.max_kn is not None:
            parts.append(f"at most {format_number(self.max_kn)} kn")
        if self.directions:
            parts.append("from " + ", ".join(self.directions))
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A plain verdict and why, so a small model need not do the arithmetic."""

    verdict: str
    reason: str
    # The readings it was judged on (knots, degrees), for spoken summaries.
    wind_kn: float | None = None
    direction: float | None = None
    gust_kn: float | None = None


def _wind_text(wind_kn: float, direction: float | None, points: Iterable[str]) -> str:
    text = f"Wind {format_number(wind_kn)} kn"
    if direction is not None:
        point = spot_point(direction, points)
        text += f" from {point} ({format_number(direction)}°)"
    return text


def kite_verdict(
    spot: KiteSpot,
    wind_kn: float | None,
    direction: float | None = None,
    *,
    gust_kn: float | None = None,
    wind_problem: str | None = None,
    direction_problem: str | None = None,
) -> Verdict:
    """Judge the current wind for kitesurfing at ``spot``.

    ``wind_problem``/``direction_problem`` say why a reading is missing (for
    instance "the wind sensor is unavailable"); they become the reason.
    Speed is checked before direction: too little wind is too little wind
    whatever its direction.
    """
    verdict = _judge(
        spot,
        wind_kn,
        direction,
        gust_kn=gust_kn,
        wind_problem=wind_problem,
        direction_problem=direction_problem,
    )
    return replace(verdict, wind_kn=wind_kn, direction=direction, gust_kn=gust_kn)


def _judge(
    spot: KiteSpot,
    wind_kn: float | None,
    direction: float | None,
    *,
    gust_kn: float | None,
    wind_problem: str | None,
    direction_problem: str | None,
) -> Verdict:
    if wind_kn is None:
        return Verdict(
            VERDICT_UNKNOWN,
            f"No current wind speed: {wind_problem or 'no wind sensor reading'}.",
        )
    wind = _wind_text(wind_kn, direction, spot.directions)
    if spot.min_kn is not None and wind_kn < spot.min_kn:
        return Verdict(
            VERDICT_TOO_LIGHT,
            f"{wind} is below the minimum of {format_number(spot.min_kn)} kn.",
        )
    if spot.max_kn is not None and wind_kn > spot.max_kn:
        return Verdict(
            VERDICT_TOO_STRONG,
            f"{wind} is above the maximum of {format_number(spot.max_kn)} kn.",
        )
    if spot.directions:
        if direction is None:
            problem = direction_problem or "no wind direction reading"
            return Verdict(
                VERDICT_UNKNOWN,
                f"{wind} is in range, but the direction is unknown: {problem}.",
            )
        if not direction_in_sectors(direction, spot.directions):
            return Verdict(
                VERDICT_WRONG_DIRECTION,
                f"{wind}; good directions here are {', '.join(spot.directions)}.",
            )
    reason = f"{wind} is within the spot's window ({spot.describe()})."
    if gust_kn is not None:
        reason += f" Gusts {format_number(gust_kn)} kn"
        if spot.max_kn is not None and gust_kn > spot.max_kn:
            reason += f", above the maximum of {format_number(spot.max_kn)} kn"
        reason += "."
    return Verdict(VERDICT_GOOD, reason)
