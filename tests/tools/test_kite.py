"""The pure live-data helpers: compass sectors, ages and the kitesurf verdict."""

from __future__ import annotations

import pytest

from custom_components.local_assistant.tools.kite import (
    COMPASS_POINTS,
    VERDICT_GOOD,
    VERDICT_TOO_LIGHT,
    VERDICT_TOO_STRONG,
    VERDICT_UNKNOWN,
    VERDICT_WRONG_DIRECTION,
    KiteSpot,
    angle_between,
    compass_point,
    direction_in_sectors,
    format_age,
    format_number,
    kite_verdict,
    parse_direction,
)

SPOT = KiteSpot(min_kn=12, max_kn=25, directions=("NW", "N", "NE"))


@pytest.mark.parametrize(
    ("degrees", "point"),
    [
        (0, "N"),
        (11.2, "N"),
        (11.3, "NNE"),
        (45, "NE"),
        (225, "SW"),
        (348.8, "N"),
        (359.9, "N"),
        (360, "N"),
        (-90, "W"),
        (337.5, "NNW"),
    ],
)
def test_compass_point(degrees: float, point: str) -> None:
    """Bearings map to the nearest of 16 points, wrapping at north."""
    assert compass_point(degrees) == point


def test_compass_points_are_16_clockwise() -> None:
    """The selector offers all 16 points in compass order."""
    assert len(COMPASS_POINTS) == 16
    assert [compass_point(i * 22.5) for i in range(16)] == list(COMPASS_POINTS)


@pytest.mark.parametrize(
    ("value", "degrees"),
    [
        (225, 225.0),
        (370.0, 10.0),
        ("180", 180.0),
        ("270°", 270.0),
        ("sw", 225.0),
        (" NNE ", 22.5),
        ("north-ish", None),
        (None, None),
        (True, None),
    ],
)
def test_parse_direction(value: object, degrees: float | None) -> None:
    """Degrees or compass names; anything else is unknown."""
    assert parse_direction(value) == degrees


def test_angle_between_wraps_north() -> None:
    """350° and 10° are 20° apart, not 340°."""
    assert angle_between(350, 10) == 20
    assert angle_between(10, 350) == 20
    assert angle_between(0, 180) == 180
    assert angle_between(90, 90) == 0


@pytest.mark.parametrize(
    ("points", "degrees", "inside"),
    [
        # Main points only: each covers 45 degrees, so N,NE,E is 337.5-112.5,
        # judged by the main point the wind is said with (an edge goes to the
        # next point clockwise).
        (("N", "NE", "E"), 22.5, True),
        (("N", "NE", "E"), 337.5, True),
        (("N", "NE", "E"), 112, True),
        (("N", "NE", "E"), 112.5, False),
        (("N", "NE", "E"), 124, False),
        (("N", "NE", "E"), 337, False),
        (("N", "NE", "E"), 326, False),
        (("N", "NE", "E"), 200, False),
        # Wrapping around north.
        (("NW", "N", "NE"), 350, True),
        (("NW", "N", "NE"), 0, True),
        (("NW", "N", "NE"), 10, True),
        (("NW", "N", "NE"), 292.5, True),
        (("NW", "N", "NE"), 180, False),
        (("W", "NW", "N"), 5, True),
        (("W", "NW", "N"), 22, True),
        (("W", "NW", "N"), 23, False),
        (("W", "NW", "N"), 34, False),
        # 16-point lists are precise: each covers 22.5 degrees.
        (("NNW", "N", "NNE"), 33, True),
        (("NNW", "N", "NNE"), 34, False),
        (("NNW", "N", "NNE"), 327, True),
        (("NNW", "N", "NNE"), 326, False),
        (("N", "NNE"), 350, True),
        (("N", "NNE"), 345, False),
        # Case and unknown names.
        (("sw",), 225, True),
        (("SW", "bogus"), 225, True),
        ((), 0, False),
    ],
)
def test_direction_in_sectors(
    points: tuple[str, ...], degrees: float, inside: bool
) -> None:
    """One named point, one verdict; sectors across north work."""
    assert direction_in_sectors(degrees, points) is inside


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "just now"),
        (30, "just now"),
        (60, "1 min"),
        (59 * 60 + 59, "59 min"),
        (3600, "1 h"),
        (3 * 3600 + 5 * 60, "3 h 5 min"),
        (47 * 3600, "47 h"),
        (3 * 86400, "3 days"),
    ],
)
def test_format_age(seconds: float, text: str) -> None:
    """Ages read naturally."""
    assert format_age(seconds) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(12.0, "12"), (12.5, "12.5"), (0.351, "0.35"), (-0.001, "0"), (100, "100")],
)
def test_format_number(value: float, text: str) -> None:
    """No trailing zeros, at most two decimals."""
    assert format_number(value) == text


def test_spot_configured_and_described() -> None:
    """Any of range or directions makes a spot; the window reads as words."""
    assert not KiteSpot().configured
    assert KiteSpot(min_kn=10).configured
    assert KiteSpot(directions=("N",)).configured
    assert SPOT.describe() == "12-25 kn from NW, N, NE"
    assert KiteSpot(min_kn=12).describe() == "at least 12 kn"
    assert KiteSpot(max_kn=30.5).describe() == "at most 30.5 kn"
    assert KiteSpot(directions=("S",)).describe() == "from S"


def test_verdict_good() -> None:
    """In range and in a good sector."""
    verdict = kite_verdict(SPOT, 18, 350)
    assert verdict.verdict == VERDICT_GOOD
    assert verdict.reason == (
        "Wind 18 kn from N (350°) is within the spot's window (12-25 kn from NW, N, NE)."
    )


def test_verdict_good_mentions_gusts() -> None:
    """Gusts are reported, and flagged when above the maximum."""
    calm = kite_verdict(SPOT, 18, 0, gust_kn=22)
    assert calm.verdict == VERDICT_GOOD
    assert calm.reason.endswith("Gusts 22 kn.")
    gusty = kite_verdict(SPOT, 18, 0, gust_kn=31.5)
    assert gusty.verdict == VERDICT_GOOD
    assert gusty.reason.endswith("Gusts 31.5 kn, above the maximum of 25 kn.")


def test_verdict_edges_are_good() -> None:
    """Exactly the minimum or maximum is still good."""
    assert kite_verdict(SPOT, 12, 0).verdict == VERDICT_GOOD
    assert kite_verdict(SPOT, 25, 0).verdict == VERDICT_GOOD


def test_verdict_too_light() -> None:
    """Below the minimum, whatever the direction."""
    verdict = kite_verdict(SPOT, 8.4, 180)
    assert verdict.verdict == VERDICT_TOO_LIGHT
    assert verdict.reason == (
        "Wind 8.4 kn from S (180°) is below the minimum of 12 kn."
    )


def test_verdict_too_strong() -> None:
    """Above the maximum."""
    verdict = kite_verdict(SPOT, 31, 10)
    assert verdict.verdict == VERDICT_TOO_STRONG
    assert verdict.reason == ("Wind 31 kn from N (10°) is above the maximum of 25 kn.")


def test_verdict_wrong_direction() -> None:
    """In range, but blowing from a bad sector."""
    verdict = kite_verdict(SPOT, 18, 200)
    assert verdict.verdict == VERDICT_WRONG_DIRECTION
    assert verdict.reason == (
        "Wind 18 kn from S (200°); good directions here are NW, N, NE."
    )


@pytest.mark.parametrize(("direction", "good"), [(340, True), (20, True), (80, False)])
def test_verdict_sector_wrapping_north(direction: float, good: bool) -> None:
    """NW..NE crosses 0°: 340° and 20° are good, 80° (E) is not."""
    verdict = kite_verdict(SPOT, 15, direction)
    assert verdict.verdict == (VERDICT_GOOD if good else VERDICT_WRONG_DIRECTION)


def test_verdict_unknown_without_wind() -> None:
    """No wind reading: unknown, with the reason given."""
    verdict = kite_verdict(SPOT, None, 0, wind_problem="Beach wind is unavailable")
    assert verdict.verdict == VERDICT_UNKNOWN
    assert verdict.reason == "No current wind speed: Beach wind is unavailable."
    assert kite_verdict(SPOT, None).reason == (
        "No current wind speed: no wind sensor reading."
    )


def test_verdict_unknown_without_direction() -> None:
    """Speed fine but the spot needs a direction we do not have."""
    verdict = kite_verdict(
        SPOT, 15, None, direction_problem="Wind direction reading is 5 h old"
    )
    assert verdict.verdict == VERDICT_UNKNOWN
    assert verdict.reason == (
        "Wind 15 kn is in range, but the direction is unknown: "
        "Wind direction reading is 5 h old."
    )


def test_verdict_speed_decides_before_direction() -> None:
    """Too light is too light, even without a direction."""
    assert kite_verdict(SPOT, 5, None).verdict == VERDICT_TOO_LIGHT


def test_verdict_without_directions_ignores_direction() -> None:
    """A spot with only a wind range never says wrong direction."""
    spot = KiteSpot(min_kn=10, max_kn=30)
    assert kite_verdict(spot, 20, None).verdict == VERDICT_GOOD
    assert kite_verdict(spot, 20, 180).verdict == VERDICT_GOOD


def test_verdict_open_ended_ranges() -> None:
    """Only a minimum, or only a maximum."""
    assert kite_verdict(KiteSpot(min_kn=10), 40).verdict == VERDICT_GOOD
    assert kite_verdict(KiteSpot(max_kn=20), 2).verdict == VERDICT_GOOD
    assert kite_verdict(KiteSpot(max_kn=20), 21).verdict == VERDICT_TOO_STRONG
