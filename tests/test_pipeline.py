"""The agent inside HA's real Assist pipeline: text (or audio) in, streamed TTS out.

HA's own `assist_pipeline` runs with our agent as its conversation engine, a
speech-to-text and a streaming text-to-speech entity from a tiny test
integration (core's MockSTTProvider/MockTTSEntity are not in the plugin), and
the fake server streaming one token every 20 ms, so the timings below are
the pipeline's real behaviour: HA starts streaming TTS once more than 60
characters arrived, or once text is followed by a tool call.

Run with `-s` to see the measured times (recorded in docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass, field
import time
from typing import Any
from unittest.mock import patch

from homeassistant.components import stt, tts
from homeassistant.components.assist_pipeline import (
    AudioSettings,
    PipelineEvent,
    PipelineEventType,
    PipelineInput,
    PipelineRun,
    PipelineStage,
    async_create_default_pipeline,
    async_get_pipeline,
    async_pipeline_from_audio_stream,
    async_update_pipeline,
)
from homeassistant.config_entries import ConfigEntry, ConfigFlow
from homeassistant.const import STATE_ON, Platform
from homeassistant.core import Context, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import chat_session, device_registry as dr
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockModule,
    MockPlatform,
    MockUser,
    mock_config_flow,
    mock_integration,
    mock_platform,
)

from custom_components.local_assistant.const import CONF_DEVICE_PEOPLE
from tests.helpers import fake_openai as fake
from tests.helpers.ha import AGENT_ID, async_setup_exposed_lights

VOICE_DOMAIN = "voice_test"
STT_ENTITY = "stt.fake_stt"
TTS_ENTITY = "tts.fake_tts"
TOKEN_DELAY = 0.02  # seconds per streamed token, a slow local model
THINK = (
    "The user wants to know the weather. I should answer briefly and in a "
    "friendly way without any markdown at all."
)
# Long enough (> 60 characters) that HA streams it to TTS while it arrives.
ANSWER = (
    "It is sunny and warm today, about twenty four degrees, with a light "
    "breeze from the west and no rain expected before the evening."
)


# --- a tiny voice integration: one STT and one streaming TTS entity ------------------


class FakeSTT(stt.SpeechToTextEntity):
    """Hears whatever the test says it heard."""

    _attr_name = "Fake STT"

    def __init__(self) -> None:
        """Nothing heard yet."""
        self.heard = "describe a sunny day in one sentence"
        self.audio_bytes = 0

    @property
    def supported_languages(self) -> list[str]:
        """English only."""
        return ["en"]

    @property
    def supported_formats(self) -> list[stt.AudioFormats]:
        """WAV."""
        return [stt.AudioFormats.WAV]

    @property
    def supported_codecs(self) -> list[stt.AudioCodecs]:
        """PCM."""
        return [stt.AudioCodecs.PCM]

    @property
    def supported_bit_rates(self) -> list[stt.AudioBitRates]:
        """16 bit."""
        return [stt.AudioBitRates.BITRATE_16]

    @property
    def supported_sample_rates(self) -> list[stt.AudioSampleRates]:
        """16 kHz."""
        return [stt.AudioSampleRates.SAMPLERATE_16000]

    @property
    def supported_channels(self) -> list[stt.AudioChannels]:
        """Mono."""
        return [stt.AudioChannels.CHANNEL_MONO]

    async def async_process_audio_stream(
        self, metadata: stt.SpeechMetadata, stream: AsyncIterable[bytes]
    ) -> stt.SpeechResult:
        """Consume the audio, return the scripted text."""
        async for chunk in stream:
            self.audio_bytes += len(chunk)
        return stt.SpeechResult(self.heard, stt.SpeechResultState.SUCCESS)


class FakeTTS(tts.TextToSpeechEntity):
    """A streaming TTS engine that records when each piece of text reached it."""

    _attr_name = "Fake TTS"
    _attr_default_language = "en"

    def __init__(self) -> None:
        """One list of (perf_counter, text) per synthesized message."""
        self._attr_supported_languages = ["en"]
        self.messages: list[list[tuple[float, str]]] = []

    async def async_stream_tts_audio(
        self, request: tts.TTSAudioRequest
    ) -> tts.TTSAudioResponse:
        """Turn each text piece into a bit of "audio" as soon as it arrives."""
        received: list[tuple[float, str]] = []
        self.messages.append(received)

        async def audio() -> AsyncGenerator[bytes]:
            async for text in request.message_gen:
                received.append((time.perf_counter(), text))
                yield text.encode()

        return tts.TTSAudioResponse("mp3", audio())


@dataclass
class Voice:
    """The voice side of the test: engines, pipeline and a satellite device."""

    stt: FakeSTT
    tts: FakeTTS
    pipeline_id: str
    entry: ConfigEntry


@dataclass
class Turn:
    """Everything one pipeline run produced, with perf_counter timestamps."""

    events: list[tuple[float, PipelineEvent]] = field(default_factory=list)

    def of(self, kind: PipelineEventType) -> list[tuple[float, dict[str, Any]]]:
        return [(t, e.data or {}) for t, e in self.events if e.type == kind]

    def one(self, kind: PipelineEventType) -> dict[str, Any]:
        (found,) = self.of(kind)
        return found[1]

    @property
    def deltas(self) -> list[dict[str, Any]]:
        """The chat log deltas the pipeline forwarded (intent-progress)."""
        return [
            data["chat_log_delta"]
            for _, data in self.of(PipelineEventType.INTENT_PROGRESS)
            if "chat_log_delta" in data
        ]

    @property
    def content_deltas(self) -> list[str]:
        return [d["content"] for d in self.deltas if d.get("content")]

    @property
    def tts_started_at(self) -> float | None:
        """When HA handed the agent's stream to TTS (tts_start_streaming)."""
        for t, data in self.of(PipelineEventType.INTENT_PROGRESS):
            if data.get("tts_start_streaming"):
                return t
        return None

    @property
    def intent_output(self) -> dict[str, Any]:
        return self.one(PipelineEventType.INTENT_END)["intent_output"]

    @property
    def speech(self) -> str:
        return str(self.intent_output["response"]["speech"]["plain"]["speech"])

    @property
    def error(self) -> dict[str, Any] | None:
        errors = self.of(PipelineEventType.ERROR)
        return errors[0][1] if errors else None


@pytest.fixture
async def voice(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, tmp_path: Any
) -> AsyncGenerator[Voice]:
    """assist_pipeline with our agent, a fake STT and a streaming fake TTS."""
    stt_entity, tts_entity = FakeSTT(), FakeTTS()

    async def setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        await hass.config_entries.async_forward_entry_setups(
            entry, [Platform.STT, Platform.TTS]
        )
        return True

    async def unload_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        return await hass.config_entries.async_unload_platforms(
            entry, [Platform.STT, Platform.TTS]
        )

    def adds(entity: Any) -> Any:
        async def setup(
            hass: HomeAssistant,
            entry: ConfigEntry,
            async_add_entities: AddConfigEntryEntitiesCallback,
        ) -> None:
            async_add_entities([entity])

        return setup

    mock_integration(
        hass,
        MockModule(
            VOICE_DOMAIN, async_setup_entry=setup_entry, async_unload_entry=unload_entry
        ),
    )
    mock_platform(hass, f"{VOICE_DOMAIN}.config_flow")
    mock_platform(
        hass, f"{VOICE_DOMAIN}.stt", MockPlatform(async_setup_entry=adds(stt_entity))
    )
    mock_platform(
        hass, f"{VOICE_DOMAIN}.tts", MockPlatform(async_setup_entry=adds(tts_entity))
    )
    # No file cache: nothing is written outside tmp_path. There is no ffmpeg
    # binary here and none is needed (the fake TTS answers in the requested mp3),
    # so skip ffmpeg's version probe, which would log a traceback.
    with (
        patch("homeassistant.components.tts.DEFAULT_CACHE", False),
        patch("homeassistant.components.tts.DEFAULT_CACHE_DIR", str(tmp_path)),
        patch("homeassistant.components.ffmpeg.is_official_image", return_value=True),
    ):
        assert await async_setup_component(hass, "assist_pipeline", {})
    voice_entry = MockConfigEntry(domain=VOICE_DOMAIN)
    voice_entry.add_to_hass(hass)
    with mock_config_flow(VOICE_DOMAIN, ConfigFlow):
        assert await hass.config_entries.async_setup(voice_entry.entry_id)
    await hass.async_block_till_done()

    pipeline = await async_create_default_pipeline(
        hass, STT_ENTITY, TTS_ENTITY, pipeline_name="Kitchen voice"
    )
    assert pipeline is not None
    await async_update_pipeline(
        hass, pipeline, conversation_engine=AGENT_ID, prefer_local_intents=False
    )
    yield Voice(stt_entity, tts_entity, pipeline.id, voice_entry)
    await hass.async_block_till_done(wait_background_tasks=True)
    await hass.config_entries.async_unload(voice_entry.entry_id)
    await hass.async_block_till_done()


async def say(
    hass: HomeAssistant,
    voice: Voice,
    text: str,
    *,
    device_id: str | None = None,
    conversation_id: str | None = None,
) -> Turn:
    """Run the pipeline from text (intent stage) to TTS; wait for the TTS to finish."""
    turn = Turn()

    def record(event: PipelineEvent) -> None:
        turn.events.append((time.perf_counter(), event))

    with chat_session.async_get_chat_session(hass, conversation_id) as session:
        pipeline_input = PipelineInput(
            session=session,
            intent_input=text,
            device_id=device_id,
            run=PipelineRun(
                hass,
                context=Context(),
                pipeline=async_get_pipeline(hass, voice.pipeline_id),
                start_stage=PipelineStage.INTENT,
                end_stage=PipelineStage.TTS,
                event_callback=record,
            ),
        )
        await pipeline_input.validate()
        await pipeline_input.execute()
    # The TTS engine runs as a background task fed by the pipeline.
    await hass.async_block_till_done(wait_background_tasks=True)
    assert turn.error is None, turn.error
    return turn


def spoken_text(voice: Voice) -> str:
    """What the TTS engine was given for the last message."""
    return "".join(text for _, text in voice.tts.messages[-1])


def first_visible_at(server: fake.FakeOpenAIServer, since: int = 0) -> float:
    """When the server sent the first answer token (after any think block)."""
    in_think = False
    for sent_at, content in server.events_sent_at[since:]:
        if content.startswith("<think>"):
            in_think = True
        if in_think:
            in_think = "</think>" not in content
            continue
        if content.strip():
            return sent_at
    raise AssertionError("the server sent no visible text")


# --- (a) + (b): streamed deltas and time to TTS start ---------------------------------


@pytest.mark.parametrize(
    ("think", "warm"),
    [
        pytest.param(THINK, False, id="think_block"),
        pytest.param(None, True, id="no_think"),
        pytest.param(None, False, id="no_think_first_turn"),
    ],
)
async def test_tts_starts_before_the_model_finishes(
    hass: HomeAssistant,
    voice: Voice,
    fake_server: fake.FakeOpenAIServer,
    think: str | None,
    warm: bool,
) -> None:
    """Deltas flow through intent-progress without think text; TTS starts early."""
    if warm:
        # The agent learns from one answer that the server does not prefill
        # <think>; until then it holds text that could still be reasoning.
        fake_server.queue(fake.text("Hello."))
        await say(hass, voice, "hi")
    since = len(fake_server.events_sent_at)
    fake_server.queue(fake.text(ANSWER, think=think, delay=TOKEN_DELAY))

    # Not a live question: those must come from a tool (turn/guard.py).
    turn = await say(hass, voice, "describe a sunny day in one sentence")

    # (a) Our streamed deltas reach the pipeline; none of their text is reasoning.
    assert turn.deltas[0] == {"role": "assistant"}
    assert "".join(turn.content_deltas) == ANSWER
    for delta in turn.deltas:
        assert "<think>" not in delta.get("content", "")
        assert "</think>" not in delta.get("content", "")
        if think:
            assert "markdown" not in delta.get("content", "")
    if think:
        thinking = "".join(d.get("thinking_content", "") for d in turn.deltas)
        assert think in thinking  # kept apart, never handed to TTS
    assert turn.speech == ANSWER
    assert spoken_text(voice) == ANSWER

    # (b) TTS streaming starts before the model has finished.
    first_visible = first_visible_at(fake_server, since)
    model_done = fake_server.events_sent_at[-1][0]
    tts_start = turn.tts_started_at
    assert tts_start is not None, "HA did not stream this answer to TTS"
    tts_first_text = voice.tts.messages[-1][0][0]
    intent_start = turn.of(PipelineEventType.INTENT_START)[0][0]
    label = {
        (True, False): "think block",
        (False, True): "no think block",
        (False, False): "no think block, first turn",
    }[(think is not None, warm)]
    # The measurement this test exists to show (run with -s).
    print(
        f"\n[voice pipeline, {label}, {TOKEN_DELAY * 1000:.0f} ms/token] "
        f"first visible token at server -> TTS stream start: "
        f"{(tts_start - first_visible) * 1000:.0f} ms; "
        f"-> TTS engine got text: {(tts_first_text - first_visible) * 1000:.0f} ms; "
        f"intent start -> TTS stream start: {(tts_start - intent_start) * 1000:.0f} ms; "
        f"model finished {(model_done - first_visible) * 1000:.0f} ms after its "
        f"first visible token"
    )
    if warm or think:
        assert len(turn.content_deltas) > 10  # word by word, not one block
        assert tts_start < model_done
        assert tts_first_text < model_done
        assert len(voice.tts.messages[-1]) > 1  # the TTS engine got it in pieces
    else:
        # The first answer of a fresh agent is held until the server shows
        # whether it prefills <think> (see entity.py); it still arrives whole.
        assert tts_start >= first_visible


async def test_audio_in_streamed_tts_out(
    hass: HomeAssistant, voice: Voice, fake_server: fake.FakeOpenAIServer
) -> None:
    """From microphone audio through STT, our agent and streaming TTS."""
    fake_server.queue(fake.text(ANSWER, think=THINK, delay=TOKEN_DELAY))
    turn = Turn()

    async def microphone() -> AsyncGenerator[bytes]:
        for _ in range(5):
            yield bytes(640)  # 20 ms of 16 kHz 16-bit silence

    await async_pipeline_from_audio_stream(
        hass,
        context=Context(),
        event_callback=lambda event: turn.events.append((time.perf_counter(), event)),
        stt_metadata=stt.SpeechMetadata(
            language="en",
            format=stt.AudioFormats.WAV,
            codec=stt.AudioCodecs.PCM,
            bit_rate=stt.AudioBitRates.BITRATE_16,
            sample_rate=stt.AudioSampleRates.SAMPLERATE_16000,
            channel=stt.AudioChannels.CHANNEL_MONO,
        ),
        stt_stream=microphone(),
        pipeline_id=voice.pipeline_id,
        audio_settings=AudioSettings(is_vad_enabled=False),
    )
    await hass.async_block_till_done(wait_background_tasks=True)

    assert turn.error is None, turn.error
    assert voice.stt.audio_bytes == 5 * 640
    stt_output = turn.one(PipelineEventType.STT_END)["stt_output"]
    assert stt_output["text"] == "describe a sunny day in one sentence"
    assert fake_server.last_request["messages"][-1] == {
        "role": "user",
        "content": "describe a sunny day in one sentence",
    }
    assert turn.tts_started_at is not None
    assert turn.tts_started_at < fake_server.events_sent_at[-1][0]
    assert spoken_text(voice) == ANSWER
    assert turn.one(PipelineEventType.TTS_END)["tts_output"]["url"]


# --- (c) a device command ---------------------------------------------------------------


@pytest.fixture
async def kitchen_light(hass: HomeAssistant) -> str:
    """A template light (backed by an input_boolean), exposed to Assist."""
    [entity_id] = await async_setup_exposed_lights(hass, "Kitchen light")
    return entity_id


TURN_ON_KITCHEN = ("HassTurnOn", {"name": "Kitchen light"})
READ_HOME: tuple[str, dict[str, Any]] = ("GetLiveContext", {})
# A change the model goes on to say (the call also reads the home, so what
# ran does not answer: turn/policy.py, what_ran_answers).
COMMAND_AND_QUESTION = "turn on the kitchen light, is anything else on?"
LIGHT_ANSWER = (
    "The kitchen light is on now. Everything else in the house stays just the "
    "way it was."
)


async def test_tool_round_trip_still_streams_the_answer(
    hass: HomeAssistant,
    voice: Voice,
    fake_server: fake.FakeOpenAIServer,
    kitchen_light: str,
) -> None:
    """Turn on a light by voice and ask about the rest: the tools run, then the
    answer streams to TTS.

    The first round also reads the home, so the model answers after its tool
    results (a change alone is answered by what ran, with no second request).
    """
    fake_server.queue(
        fake.tool_calls(
            [TURN_ON_KITCHEN, READ_HOME], think="Use the tools.", delay=TOKEN_DELAY
        ),
        fake.text(LIGHT_ANSWER, think="", delay=TOKEN_DELAY),
    )
    turn = await say(hass, voice, COMMAND_AND_QUESTION)

    assert hass.states.get(kitchen_light).state == STATE_ON
    kinds = [
        "tool_calls" if d.get("tool_calls") else d.get("role") or "content"
        for d in turn.deltas
        if d.get("tool_calls") or d.get("role") or d.get("content")
    ]
    # assistant (tool calls), the tools' results, then the streamed answer.
    assert kinds[:4] == ["assistant", "tool_calls", "tool_result", "tool_result"]
    assert kinds[4] == "assistant"
    assert kinds.count("content") > 5
    results = [d for d in turn.deltas if d.get("role") == "tool_result"]
    assert [result["tool_name"] for result in results] == [
        "HassTurnOn",
        "GetLiveContext",
    ]
    assert "".join(turn.content_deltas) == LIGHT_ANSWER
    assert turn.speech == LIGHT_ANSWER
    # The second completion got the tool results and streamed into TTS.
    assert len(fake_server.requests) == 2
    assert fake_server.requests[1]["messages"][-1]["role"] == "tool"
    assert turn.tts_started_at is not None
    assert turn.tts_started_at < fake_server.events_sent_at[-1][0]
    assert spoken_text(voice) == LIGHT_ANSWER
    assert len(voice.tts.messages[-1]) > 1


# --- (d) follow-up questions keep the satellite listening -------------------------------


@pytest.mark.parametrize(
    ("answer", "follow_up"),
    [
        ("Which room do you mean, the kitchen or the hall?", True),
        ("The hall light is off.", False),
    ],
)
async def test_question_continues_the_conversation(
    hass: HomeAssistant,
    voice: Voice,
    fake_server: fake.FakeOpenAIServer,
    answer: str,
    follow_up: bool,
) -> None:
    """An answer ending in "?" sets continue_conversation in intent-end."""
    fake_server.queue(fake.text(answer, think="", delay=TOKEN_DELAY))
    turn = await say(hass, voice, "turn off the light")
    assert turn.speech == answer
    assert turn.intent_output["continue_conversation"] is follow_up
    assert spoken_text(voice) == answer


# --- (e) the satellite selects the speaker's memory ---------------------------------------


async def test_satellite_device_selects_the_mapped_persons_memory(
    hass: HomeAssistant,
    voice: Voice,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    device_registry: dr.DeviceRegistry,
) -> None:
    """device_id reaches the agent; a satellite mapped to a person uses their memory."""
    anna = MockUser(name="Anna").add_to_hass(hass)
    assert await async_setup_component(
        hass, "person", {"person": [{"id": "anna", "name": "Anna", "user_id": anna.id}]}
    )
    kitchen, hall = (
        device_registry.async_get_or_create(
            config_entry_id=voice.entry.entry_id,
            identifiers={(VOICE_DOMAIN, name)},
            name=f"{name} satellite",
        )
        for name in ("kitchen", "hall")
    )
    hass.config_entries.async_update_entry(
        loaded_entry,
        options={
            **loaded_entry.options,
            CONF_DEVICE_PEOPLE: {kitchen.id: "person.anna"},
        },
    )
    await hass.async_block_till_done()  # the update listener reloads the entry

    fake_server.queue(
        fake.text("Nice to meet you, Anna.", think=""),
        fake.text("Your name is Anna.", think=""),
        fake.text("I don't know your name yet.", think=""),
    )
    await say(hass, voice, "my name is Anna", device_id=kitchen.id)
    # A new pipeline run gets a new conversation id: only our memory links them.
    await say(hass, voice, "what is my name", device_id=kitchen.id)
    await say(hass, voice, "what is my name", device_id=hall.id)

    first, second, other = fake_server.requests
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert second["messages"][1:] == [
        {"role": "user", "content": "my name is Anna"},
        {"role": "assistant", "content": "Nice to meet you, Anna."},
        {"role": "user", "content": "what is my name"},
    ]
    # The unmapped satellite is another speaker with its own (empty) memory.
    assert [m["role"] for m in other["messages"]] == ["system", "user"]
    memory = loaded_entry.runtime_data.memory
    assert f"user:{anna.id}" in memory.known_speakers()
    assert f"device:{hall.id}" in memory.known_speakers()


# --- (f) the spoken-style guard -------------------------------------------------------------


MARKDOWN_ANSWER = (
    "## Today\n**Sunny** and warm ☀️, about *24 degrees*.\n"
    "- Wind: light, from the west 🌬️\n"
    "- Details: [the forecast](https://weather.example/today) or https://x.example/a?b=1.\n"
    '```json\n{"temp": 24}\n```\nEnjoy 😊!'
)
MARKDOWN_SPOKEN = (
    "Today\nSunny and warm, about 24 degrees.\n"
    "Wind: light, from the west\n"
    "Details: the forecast or the link.\n"
    "Enjoy!"
)


@pytest.mark.parametrize(
    ("think", "chunk_size"),
    [
        pytest.param(THINK, None, id="think_words"),
        pytest.param(THINK, 3, id="think_3_chars"),  # constructs split across chunks
        pytest.param(None, None, id="first_answer"),  # held whole (see entity.py)
    ],
)
async def test_markdown_urls_and_emoji_never_reach_tts(
    hass: HomeAssistant,
    voice: Voice,
    fake_server: fake.FakeOpenAIServer,
    think: str | None,
    chunk_size: int | None,
) -> None:
    """Streamed (long) answers are rewritten on the fly, chunk by chunk."""
    fake_server.queue(
        fake.text(
            MARKDOWN_ANSWER,
            think=think,
            chunk_size=chunk_size,
            delay=0 if chunk_size else TOKEN_DELAY,
        )
    )
    turn = await say(hass, voice, "weather please")
    assert turn.tts_started_at is not None  # it was streamed
    if think:
        # Its first SPEECH_STREAM_CHARS come as one piece (llm/stream.py).
        assert len(turn.content_deltas) > 5
    said = spoken_text(voice)
    assert said == MARKDOWN_SPOKEN
    assert "".join(turn.content_deltas) == MARKDOWN_SPOKEN
    assert turn.speech == MARKDOWN_SPOKEN
    for forbidden in ("#", "*", "`", "](", "http", "☀", "😊", "{"):
        assert forbidden not in said


async def test_short_answer_is_clean_too(
    hass: HomeAssistant, voice: Voice, fake_server: fake.FakeOpenAIServer
) -> None:
    """A short answer goes to TTS in one piece at the end; it is clean as well."""
    fake_server.queue(fake.text("**Done** ✅ see www.example.com", think=""))
    turn = await say(hass, voice, "turn it on")
    assert turn.tts_started_at is None  # too short to stream
    assert spoken_text(voice) == "Done see the link"
    assert turn.speech == "Done see the link"


# --- (g) the optional filler -------------------------------------------------------------------


async def _set_filler(
    hass: HomeAssistant, entry: MockConfigEntry, enabled: bool
) -> None:
    """Switch the option through the agent's reconfigure form, like a user."""
    (subentry_id,) = entry.subentries
    result = await entry.start_subentry_reconfigure_flow(hass, subentry_id)
    assert result["type"] is FlowResultType.FORM
    assert "tool_filler" in result["data_schema"].schema
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {**entry.subentries[subentry_id].data, "tool_filler": enabled},
    )
    assert result["type"] is FlowResultType.ABORT
    await hass.async_block_till_done()  # reload with the new agent settings
    assert entry.subentries[subentry_id].data["tool_filler"] is enabled


@pytest.mark.parametrize("enabled", [True, False])
async def test_filler_before_a_silent_tool_call(
    hass: HomeAssistant,
    voice: Voice,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen_light: str,
    enabled: bool,
) -> None:
    """With the option, the satellite hears "One moment." while the tools run.

    The call also reads the home, so the model answers after the tool results
    and the filler covers that second completion too (a change alone is
    answered by what ran, with no second request).
    """
    await _set_filler(hass, loaded_entry, enabled)
    fake_server.queue(
        fake.tool_calls(
            [TURN_ON_KITCHEN, READ_HOME], think="Use the tools.", delay=TOKEN_DELAY
        ),
        fake.text("Only the kitchen light is on.", think="", delay=TOKEN_DELAY),
        fake.text("You asked me to turn on the kitchen light.", think=""),
    )
    turn = await say(hass, voice, COMMAND_AND_QUESTION, device_id="satellite")
    assert hass.states.get(kitchen_light).state == STATE_ON

    tool_call_index = next(i for i, d in enumerate(turn.deltas) if d.get("tool_calls"))
    before_tool = [d.get("content") for d in turn.deltas[:tool_call_index]]
    intent_start = turn.of(PipelineEventType.INTENT_START)[0][0]
    first_text_at = voice.tts.messages[-1][0][0]
    print(
        f"\n[voice pipeline, device command, filler {'on' if enabled else 'off'}, "
        f"{TOKEN_DELAY * 1000:.0f} ms/token] intent start -> TTS engine got its "
        f"first text: {(first_text_at - intent_start) * 1000:.0f} ms"
    )
    if enabled:
        assert "One moment. " in before_tool
        # Text then a tool call: HA starts streaming TTS at once, so the filler
        # is spoken while the tools and the second completion run.
        assert turn.tts_started_at is not None
        first_audio_at, first_text = voice.tts.messages[-1][0]
        assert first_text == "One moment. "
        answer_started = next(
            sent_at
            for sent_at, content in fake_server.events_sent_at
            if content.strip() == "Only"
        )
        assert first_audio_at < answer_started
        assert spoken_text(voice) == "One moment. Only the kitchen light is on."
    else:
        assert not any(before_tool)
        assert turn.tts_started_at is None
        assert spoken_text(voice) == "Only the kitchen light is on."
    # The filler is never the answer: not in the result, not in the memory.
    assert turn.speech == "Only the kitchen light is on."
    await say(hass, voice, "what did I ask", device_id="satellite")
    history = fake_server.requests[-1]["messages"]
    # A tool turn is replayed as the user's words only (memory/session.py).
    assert {"role": "user", "content": COMMAND_AND_QUESTION} in history
    assert not any(
        "One moment" in (m.get("content") or "") or m["role"] == "assistant"
        for m in history
    )


async def _say_handled_by_ha(hass: HomeAssistant, voice: Voice, text: str) -> str:
    """Say ``text`` with "prefer handling commands locally" on; its conversation id."""
    await async_update_pipeline(
        hass, async_get_pipeline(hass, voice.pipeline_id), prefer_local_intents=True
    )
    turn = await say(hass, voice, text, device_id="satellite")
    return str(
        turn.one(PipelineEventType.INTENT_END)["intent_output"]["conversation_id"]
    )


async def _say_again(
    hass: HomeAssistant, voice: Voice, text: str, conversation_id: str
) -> Turn:
    """Say ``text`` from the satellite, in the conversation ``conversation_id``."""
    return await say(
        hass, voice, text, device_id="satellite", conversation_id=conversation_id
    )


async def test_commands_ha_handled_join_the_buffer(
    hass: HomeAssistant,
    voice: Voice,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
    kitchen_light: str,
) -> None:
    """With "prefer handling commands locally", HA answers a command itself.

    The agent never saw it, but it is in the conversation's chat log: the next
    turn the agent handles replays it (the user's words), and "turn it off
    again" is read by HA with that action's light in it.
    """
    conversation_id = await _say_handled_by_ha(hass, voice, "turn on the kitchen light")
    assert hass.states.get(kitchen_light).state == STATE_ON
    assert fake_server.requests == []  # HA handled it, no model call

    fake_server.queue(
        fake.tool_calls([("HassTurnOff", {"name": "Kitchen light"})]),
        fake.text("It is off again."),
    )
    await _say_again(hass, voice, "turn it off again", conversation_id)
    first_request = fake_server.requests[0]
    history = [m for m in first_request["messages"] if m["role"] != "system"]
    assert history == [
        {"role": "user", "content": "turn on the kitchen light"},
        {"role": "user", "content": "turn it off again"},
    ]
    assert hass.states.get(kitchen_light).state == "off"


async def test_an_ellipsis_follows_a_command_ha_handled(
    hass: HomeAssistant,
    voice: Voice,
    loaded_entry: MockConfigEntry,
    fake_server: fake.FakeOpenAIServer,
) -> None:
    """HA carried out "turn on the kitchen light" before the agent saw anything;
    "and the porch light?" is still that command with the porch light in it."""
    _, porch_light = await async_setup_exposed_lights(
        hass, "Kitchen light", "Porch light"
    )
    conversation_id = await _say_handled_by_ha(hass, voice, "turn on the kitchen light")
    # HA's own intents are off for this agent (tests/conftest.py): the model has
    # the turn, read as HA's HassTurnOn of the porch light. Turning it off is
    # refused as not what the user asked (as a mere mention of the porch light
    # it would have run).
    fake_server.queue(
        fake.tool_calls([("HassTurnOff", {"name": "Porch light"})]),
        fake.tool_calls([("HassTurnOn", {"name": "Porch light"})]),
        fake.text("The porch light is on."),
    )
    await _say_again(hass, voice, "and the porch light?", conversation_id)
    assert hass.states.get(porch_light).state == STATE_ON
    refusal = fake_server.requests[1]["messages"][-1]
    assert refusal["role"] == "tool"
    assert "NotWhatTheUserAsked" in refusal["content"]
