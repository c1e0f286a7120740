"""Constants for the Local Assistant integration.

Pure module: standard library only, no Home Assistant imports.
"""

from __future__ import annotations

import logging
from typing import Final

DOMAIN: Final = "local_assistant"
LOGGER = logging.getLogger(__package__)

DEFAULT_TITLE: Final = "Local Assistant"
DEFAULT_AI_TASK_TITLE: Final = "Local Assistant AI Task"
SUBENTRY_CONVERSATION: Final = "conversation"
SUBENTRY_AI_TASK: Final = "ai_task_data"
# AI tasks write summaries and JSON, usually longer than a spoken answer.
DEFAULT_AI_TASK_MAX_TOKENS: Final = 1024

# Config entry data (one entry per server).
CONF_BASE_URL: Final = "base_url"
DEFAULT_BASE_URL: Final = "http://127.0.0.1:28100/v1"  # Swama's default
# Reauth data: which key the server refused (EXTRACTION_HOSTED: the hosted
# extractor's, in the options); absent for the server's own key.
REAUTH_TARGET: Final = "reauth_target"

# Conversation subentry data (one agent per subentry). CONF_MODEL, CONF_PROMPT and
# CONF_LLM_HASS_API come from homeassistant.const.
CONF_TOOL_BIAS: Final = "tool_bias"
CONF_TEMPERATURE: Final = "temperature"
CONF_MAX_TOKENS: Final = "max_tokens"
DEFAULT_TOOL_BIAS: Final = True
# Say a short filler ("One moment.") before a tool runs when the model has said
# nothing yet, so a voice satellite is not silent during the tool round trip.
CONF_TOOL_FILLER: Final = "tool_filler"
DEFAULT_TOOL_FILLER: Final = False
# Let HA's own intents carry out (and answer) what HA recognizes exactly: the
# same as the pipeline's "prefer handling commands locally", inside the agent.
CONF_LOCAL_INTENTS: Final = "local_intents"
DEFAULT_LOCAL_INTENTS: Final = True
DEFAULT_TEMPERATURE: Final = 0.6
DEFAULT_MAX_TOKENS: Final = 512

# Live-data tools (conversation subentry data; each optional).
CONF_WEATHER_ENTITY: Final = "weather_entity"
# The sea sensors, one option per kind: the user says what each measures.
CONF_SEA_WIND: Final = "sea_wind"
CONF_SEA_GUSTS: Final = "sea_gusts"
CONF_SEA_WIND_DIRECTION: Final = "sea_wind_direction"
CONF_SEA_WAVE_HEIGHT: Final = "sea_wave_height"
CONF_SEA_WAVE_PERIOD: Final = "sea_wave_period"
CONF_SEA_WATER_TEMPERATURE: Final = "sea_water_temperature"
CONF_SEA_TIDE: Final = "sea_tide"
# Sea sensors of no kind above (a current, a swell direction): said by name.
CONF_SEA_OTHER: Final = "sea_other"
# Agents set up before the options by kind: one list of every sea sensor
# (read as old_options.py says until the agent is saved).
CONF_SEA_ENTITIES: Final = "sea_entities"
ISSUE_SEA_SENSORS: Final = "sea_sensors_by_kind"
CONF_KITE_MIN_WIND_KN: Final = "kite_min_wind_kn"
CONF_KITE_MAX_WIND_KN: Final = "kite_max_wind_kn"
CONF_KITE_DIRECTIONS: Final = "kite_directions"
# A sea reading older than this is flagged stale (and not used for the verdict).
SEA_STALE_AFTER_SECONDS: Final = 3 * 3600
DEFAULT_FORECAST_DAILY_PERIODS: Final = 3
DEFAULT_FORECAST_HOURLY_PERIODS: Final = 8
MAX_FORECAST_PERIODS: Final = 48

# Entry options (settings shared by every agent of a server).
CONF_TIMEOUT: Final = "timeout"
CONF_SESSION_IDLE_MINUTES: Final = "session_idle_minutes"
CONF_SESSION_MAX_MESSAGES: Final = "session_max_messages"
CONF_SESSION_MAX_CHARS: Final = "session_max_chars"
CONF_MAX_FACTS: Final = "max_facts"
CONF_EXTRACTION: Final = "extraction"
CONF_EXTRACTION_BASE_URL: Final = "extraction_base_url"
CONF_EXTRACTION_API_KEY: Final = "extraction_api_key"
CONF_EXTRACTION_MODEL: Final = "extraction_model"
CONF_DEVICE_PEOPLE: Final = "device_people"
# Send a tiny request every few minutes while someone talked recently, so the
# server does not unload the model (Swama unloads one idle for 5 minutes).
CONF_KEEP_MODEL_LOADED: Final = "keep_model_loaded"

# A 4B model on a Mac mini may have to load the model and read a long prompt
# (a prompt the server has not cached): give it time.
DEFAULT_TIMEOUT: Final = 60.0
DEFAULT_SESSION_IDLE_MINUTES: Final = 120
DEFAULT_SESSION_MAX_MESSAGES: Final = 200
# About 6k tokens: leaves room for the system prompt and tools in a 16k context.
DEFAULT_SESSION_MAX_CHARS: Final = 24_000
DEFAULT_MAX_FACTS: Final = 30
DEFAULT_KEEP_MODEL_LOADED: Final = False

EXTRACTION_LOCAL: Final = "local"
EXTRACTION_HOSTED: Final = "hosted"
EXTRACTION_OFF: Final = "off"
DEFAULT_EXTRACTION: Final = EXTRACTION_LOCAL
# The extractor's answer is small; never let it hold the local server for long.
EXTRACTION_TIMEOUT: Final = 120.0
# Each extractor answer is a few short sentences or one; a bounded answer keeps
# a rambling model from holding the server.
EXTRACTION_MAX_TOKENS: Final = 256

# Conversation loop.
MAX_TOOL_ITERATIONS: Final = 10
# Tool calls run per answer; the rest get a tool error asking for fewer (a
# model stuck in a repetition loop can emit a thousand calls in one answer).
MAX_TOOL_CALLS_PER_ROUND: Final = 20
EMPTY_ANSWER_RETRIES: Final = 1
MODELS_LIST_TIMEOUT: Final = 10.0

# How often idle session buffers are freed.
SESSION_SWEEP_INTERVAL_SECONDS: Final = 300

# Facts storage.
FACTS_STORAGE_VERSION: Final = 1
FACTS_STORAGE_MINOR_VERSION: Final = 1
FACTS_SAVE_DELAY_SECONDS: Final = 5.0
# Use counts alone change with every reply: they are written with the next
# real change of the facts, on unload and shutdown, or at the latest after
# this long (a day), so the SD card of a Raspberry Pi is not worn by replies.
FACTS_USAGE_SAVE_DELAY_SECONDS: Final = 24 * 3600.0
# After the disk refused a write (full, read-only), the facts are written again,
# first after this long, then twice as long each time, up to the maximum.
FACTS_RETRY_SAVE_DELAY_SECONDS: Final = 60.0
FACTS_MAX_RETRY_SAVE_DELAY_SECONDS: Final = 3600.0

# Services.
SERVICE_FORGET_SESSION: Final = "forget_session"
SERVICE_LIST_FACTS: Final = "list_facts"
SERVICE_ADD_FACT: Final = "add_fact"
SERVICE_REMOVE_FACT: Final = "remove_fact"
SERVICE_CLEAR_FACTS: Final = "clear_facts"
SERVICE_RESTORE_FACT: Final = "restore_fact"
ATTR_CONFIG_ENTRY_ID: Final = "config_entry_id"
ATTR_SPEAKER: Final = "speaker"
ATTR_TEXT: Final = "text"
ATTR_FACT_ID: Final = "fact_id"
ATTR_INCLUDE_HISTORY: Final = "include_history"
