"""The AI Task entity: HA's ai_task service and helper against the fake server."""

from __future__ import annotations

from homeassistant.components import ai_task
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import (
    device_registry as dr,
    entity_registry as er,
    llm,
    selector,
)
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
import voluptuous as vol

from custom_components.local_assistant.ai_task import NO_THINK
from custom_components.local_assistant.const import (
    DOMAIN,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, TASK_ENTITY, task_subentry_id

PERSON = vol.Schema(
    {
        vol.Required("name"): selector.TextSelector(),
        vol.Optional("age"): selector.NumberSelector(),
    }
)


async def generate(
    hass: HomeAssistant, instructions: str, structure: vol.Schema | None = None
) -> ai_task.GenDataTaskResult:
    return await ai_task.async_generate_data(
        hass,
        task_name="Test task",
        entity_id=TASK_ENTITY,
        instructions=instructions,
        structure=structure,
    )


async def test_entity_appears_with_its_device(
    hass: HomeAssistant,
    task_entry: MockConfigEntry,
    entity_registry: er.EntityRegistry,
    device_registry: dr.DeviceRegistry,
) -> None:
    """One AI Task entity per ai_task_data subentry, on its own service device."""
    subentry_id = task_subentry_id(task_entry)
    state = hass.states.get(TASK_ENTITY)
    assert state is not None
    assert (
        state.attributes["supported_features"]
        == ai_task.AITaskEntityFeature.GENERATE_DATA
    )
    entity = entity_registry.async_get(TASK_ENTITY)
    assert entity is not None
    assert entity.unique_id == subentry_id
    assert entity.config_subentry_id == subentry_id
    device = device_registry.async_get_device(identifiers={(DOMAIN, subentry_id)})
    assert device is not None
    assert device.name == "Local Assistant AI Task"
    assert device.entry_type is dr.DeviceEntryType.SERVICE
    # The conversation agent is still there, next to it.
    assert hass.states.get("conversation.local_assistant") is not None


async def test_plain_text_without_reasoning(
    hass: HomeAssistant, task_entry: MockConfigEntry, fake_server: fake.FakeOpenAIServer
) -> None:
    """Text tasks return the visible answer; <think> never leaks; settings are used."""
    fake_server.queue(
        fake.text("The garage door is open.", think="The user wants a note.")
    )
    result = await generate(hass, "Write a one-line note about the garage.")
    assert result.data == "The garage door is open."
    assert result.conversation_id

    body = fake_server.last_request
    assert body["model"] == MODEL
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 700
    assert "response_format" not in body
    system, user = body["messages"][0], body["messages"][-1]
    assert system["role"] == "system"
    assert system["content"].endswith(NO_THINK)
    assert "JSON" not in system["content"]
    assert user == {
        "role": "user",
        "content": "Write a one-line note about the garage.",
    }
    state = hass.states.get(TASK_ENTITY)
    assert state is not None
    assert state.state not in ("unknown", "unavailable")  # last activity time


async def test_structured_data_through_the_service(
    hass: HomeAssistant, task_entry: MockConfigEntry, fake_server: fake.FakeOpenAIServer
) -> None:
    """ai_task.generate_data with a structure returns the parsed JSON object."""
    fake_server.queue(fake.text('{"name": "Ada", "age": 36}'))
    response = await hass.services.async_call(
        "ai_task",
        "generate_data",
        {
            "task_name": "Person card",
            "entity_id": TASK_ENTITY,
            "instructions": "Invent a person.",
            "structure": {
                "name": {"selector": {"text": None}, "required": True},
                "age": {"selector": {"number": None}},
            },
        },
        blocking=True,
        return_response=True,
    )
    assert response is not None
    assert response["data"] == {"name": "Ada", "age": 36}

    body = fake_server.last_request
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Person_card"
    schema = fmt["json_schema"]["schema"]
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"name", "age"}
    assert schema["required"] == ["name"]
    # The schema is in the prompt too, for servers that ignore response_format.
    system = body["messages"][0]["content"]
    assert "ONLY one JSON value" in system
    assert '"properties"' in system
    assert system.endswith(NO_THINK)


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(
            fake.text('```json\n{"name": "Ada", "age": 36}\n```', think="Let me see."),
            id="think-and-fence",
        ),
        pytest.param(
            fake.text('Here is the JSON:\n{"name": "Ada", "age": 36}'),
            id="preface",
        ),
        pytest.param(
            fake.text('{"name": "Ada", "age": 36}', think="a", chunk_size=3),
            id="split-tags",
        ),
        pytest.param(
            fake.reasoning(
                "Thinking in reasoning_content.", '{"name": "Ada", "age": 36}'
            ),
            id="reasoning-content",
        ),
    ],
)
async def test_structured_data_tolerates_wrapping(
    hass: HomeAssistant,
    task_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    reply: fake.Reply,
) -> None:
    """Reasoning, code fences and a preface around the JSON are removed."""
    fake_server.queue(reply)
    result = await generate(hass, "Invent a person.", PERSON)
    assert result.data == {"name": "Ada", "age": 36}


async def test_invalid_json_is_a_clear_error(
    hass: HomeAssistant, task_entry: MockConfigEntry, fake_server: fake.FakeOpenAIServer
) -> None:
    """An answer without JSON raises HomeAssistantError naming the task."""
    fake_server.queue(fake.text("Sorry, I cannot help with {that request."))
    with pytest.raises(HomeAssistantError) as err:
        await generate(hass, "Invent a person.", PERSON)
    assert err.value.translation_key == "invalid_json"
    assert err.value.translation_placeholders is not None
    assert err.value.translation_placeholders["task"] == "Test task"
    message = str(err.value)
    assert "Test task" in message
    assert "JSON" in message
    # The answer itself (possibly private) is not in the message.
    assert "Sorry" not in message


async def test_server_error_is_a_clear_error(
    hass: HomeAssistant, task_entry: MockConfigEntry, fake_server: fake.FakeOpenAIServer
) -> None:
    """A failing server raises a HomeAssistantError whose own translation key is
    the sentence a voice user would hear; no English sentence is wrapped."""
    fake_server.queue(fake.error(500))
    with pytest.raises(HomeAssistantError) as err:
        await generate(hass, "Write something.")
    assert err.value.translation_domain == DOMAIN
    assert err.value.translation_key == "model_error"
    assert not err.value.translation_placeholders
    assert "reported an error" in str(err.value)


async def test_tools_of_the_task_api_run(
    hass: HomeAssistant, task_entry: MockConfigEntry, fake_server: fake.FakeOpenAIServer
) -> None:
    """With an LLM API the loop runs tools, then returns the final answer."""
    assert await async_setup_component(hass, "intent", {})
    fake_server.queue(
        fake.tool_calls([("GetDateTime", {})]),
        fake.text('{"name": "Ada"}'),
    )
    assist = next(api for api in llm.async_get_apis(hass) if api.id == "assist")
    result = await ai_task.async_generate_data(
        hass,
        task_name="Dated",
        entity_id=TASK_ENTITY,
        instructions="Use the date.",
        structure=PERSON,
        llm_api=assist,
    )
    assert result.data == {"name": "Ada"}
    first, second = fake_server.requests[-2:]
    assert any(t["function"]["name"] == "GetDateTime" for t in first["tools"])
    assert second["response_format"] == first["response_format"]
    assert second["messages"][-1]["role"] == "tool"
