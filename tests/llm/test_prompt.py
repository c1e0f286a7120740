"""The prompt's layout: what stays first, what varies after the tools (pure)."""

from __future__ import annotations

import json

from custom_components.local_assistant.llm.prompt import (
    CONTEXT_HEADING,
    FACTS_HEADING,
    build_prompt,
    split_ha_prompt,
    stable_schema,
    tool_bias_prompt,
)

HA_TEXT = (
    "You are a voice assistant for Home Assistant.\n"
    "When controlling Home Assistant always call the intent tools.\n"
    "You are in area Kitchen and all generic commands like 'turn on the lights' "
    "should target this area.\n"
    "Static Context: An overview of the areas and the devices in this smart home:\n"
    "- names: Kitchen Light"
)
AREA_LINE = HA_TEXT.split("\n")[2]


def test_area_and_time_lines_move_to_the_varying_part() -> None:
    text = HA_TEXT + "\nCurrent time is 10:42:07. Today's date is 2026-11-30."
    stable, varying = split_ha_prompt(text, {AREA_LINE})
    assert AREA_LINE not in stable
    assert "Current time" not in stable
    assert varying == [
        AREA_LINE,
        "Current time is 10:42:07. Today's date is 2026-11-30.",
    ]
    assert stable.startswith("You are a voice assistant")
    assert stable.endswith("- names: Kitchen Light")


def test_the_stable_part_is_the_same_for_every_speaker_and_satellite() -> None:
    kitchen_ada = build_prompt(
        HA_TEXT, ["The user has a dog."], tool_bias=True, volatile_lines={AREA_LINE}
    )
    chat_kai = build_prompt(
        HA_TEXT.replace(AREA_LINE + "\n", ""),
        ["The user is vegetarian.", "The user works nights."],
        tool_bias=True,
    )
    nobody = build_prompt(HA_TEXT.replace(AREA_LINE + "\n", ""), [], tool_bias=True)
    assert kitchen_ada.stable == chat_kai.stable == nobody.stable
    assert kitchen_ada.stable.endswith(tool_bias_prompt())
    assert kitchen_ada.stable.endswith("/no_think")
    assert nobody.volatile == ""
    assert kitchen_ada.volatile == (
        f"{FACTS_HEADING}\n1. {json.dumps('The user has a dog.')}\n\n"
        f"{CONTEXT_HEADING}\n{AREA_LINE}"
    )


def test_messages_put_the_varying_part_after_the_stable_one() -> None:
    """HA's own area line is known to vary, even when no comparison found it."""
    prompt = build_prompt(HA_TEXT, ["The user has a dog."], tool_bias=False)
    history = [{"role": "user", "content": "hi"}]
    without_area = HA_TEXT.replace(AREA_LINE + "\n", "")
    assert prompt.messages(history) == [
        {"role": "system", "content": without_area},
        {"role": "system", "content": prompt.volatile},
        {"role": "user", "content": "hi"},
    ]
    assert AREA_LINE in prompt.volatile
    plain = HA_TEXT.replace(AREA_LINE + "\n", "")
    assert build_prompt(plain, [], tool_bias=False).messages([]) == [
        {"role": "system", "content": plain}
    ]


def test_live_tool_names_go_into_the_override() -> None:
    prompt = build_prompt(
        "Hi.", [], tool_bias=True, live_tool_names=["local_sea_conditions"]
    )
    assert "(such as local_sea_conditions)" in prompt.stable


def test_a_stable_schema_sorts_enums_and_keeps_each_value_once() -> None:
    schema = {
        "type": "object",
        "properties": {
            "domain": {
                "type": "array",
                "items": {"type": "string", "enum": ["switch", "fan", "light", "fan"]},
            },
            "level": {"type": "integer", "enum": [10, 2, 25, 2, 100]},
            "name": {"type": "string"},
        },
        "required": ["name", "domain"],
    }
    assert stable_schema(schema) == {
        "type": "object",
        "properties": {
            "domain": {
                "type": "array",
                "items": {"type": "string", "enum": ["fan", "light", "switch"]},
            },
            "level": {"type": "integer", "enum": [2, 10, 25, 100]},
            "name": {"type": "string"},
        },
        # Only enums: the order of other lists may mean something.
        "required": ["name", "domain"],
    }


def test_a_stable_schema_keeps_values_json_tells_apart() -> None:
    """1, True and 1.0 are equal in Python, three values in JSON."""
    enum = stable_schema({"enum": [1, True, 0, False, 1.0, "1", 1]})["enum"]
    assert [(type(value), value) for value in enum] == [
        (int, 0),
        (int, 1),
        (float, 1.0),
        (bool, False),
        (bool, True),
        (str, "1"),
    ]


def test_the_static_context_lists_aliases_in_one_order() -> None:
    """HA keeps aliases in sets: the same home gave another prompt after a restart."""
    lines = (
        "Static Context: An overview of the areas and the devices in this smart home:\n"
        "- names: Big Light, {names}\n"
        "  domain: light\n"
        "  areas: Bedroom, {areas}\n"
        "- names: 'Odd: name, b, a'\n"
    )
    one = lines.format(
        names="bedroom light, Ceiling", areas="our bedroom, main bedroom"
    )
    other = lines.format(
        names="Ceiling, bedroom light", areas="main bedroom, our bedroom"
    )
    stable, _ = split_ha_prompt(one, ())
    assert split_ha_prompt(other, ())[0] == stable
    assert "- names: Big Light, bedroom light, Ceiling\n" in stable
    assert "  areas: Bedroom, main bedroom, our bedroom\n" in stable
    # A quoted value is HA's YAML escaping: left as written.
    assert "- names: 'Odd: name, b, a'" in stable
