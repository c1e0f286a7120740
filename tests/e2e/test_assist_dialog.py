"""A person's first evening with Local Assistant, in a real browser.

The real dev instance (`scripts/develop`, HA 2026.2.3 with its frontend) and headless
Chromium: log in as dev/dev, add "Local Assistant" in Settings > Devices & services
with the fake model server's URL and pick a model, make it the conversation agent of
the Assist pipeline in Settings > Voice assistants, then open the Assist dialog and
type "kitchen light on please, it's dark in here" (a sentence HA's own intents do
not know, so the model gets it). The fake model reads the home (GetLiveContext) and
calls HA's HassTurnOn tool, then streams a reply that starts with a <think> block (a turn
that read something is the model's to answer; one that only changed a device is
answered by what ran, in HA's words: turn/what_ran.py): the dialog must show the reply
as it streams, never any of the reasoning, and the demo kitchen light must be on.

Then, in the integration's Configure dialog, what they remember: pick "Dev" (who just
talked), add two facts, edit one (its text is there to change), remove one, restore it
from the history, clear them all, and count the demo kitchen satellite as Dev. Every
screen on the way is read as a person sees it: no "Translation Error", no
MISSING_VALUE, no raw {placeholder}.

Set LOCAL_ASSISTANT_UPDATE_SCREENSHOT=1 to refresh docs/assist-dialog.png and
docs/remembered-facts.png (the README's screenshots); otherwise the screenshots go to the
test's tmp folder only.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
import re
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.fake_openai import FakeOpenAIServer, Reply, text, tool_calls

from .conftest import PASSWORD, USERNAME, DevInstance, rest_get, ws_command

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

MODEL = "qwen3-4b"  # picked in the form; the server lists qwen3-30b-a3b first
AGENT_NAME = "Local Assistant"
AGENT_ENTITY = "conversation.local_assistant"
LIGHT = "light.kitchen_light"
COMMAND = "kitchen light on please, it's dark in here"
REPLY = "Done! The kitchen light is on now."
THINK = (
    "The user asked for the kitchen light. HassTurnOn worked, so confirm it briefly."
)
# Seconds before each streamed event: the reply takes ~3 s, so the dialog shows it grow.
STREAM_DELAY = 0.1
REPLY_TIMEOUT_MS = 60_000

# Polls the text of the newest Assist reply bubble (through the shadow roots) every
# 10 ms and records each distinct value, so the test sees every state the reply passed
# through on screen, not just the last one.
RECORDER_JS = """
(chat) => {
  const skip = new Set(["STYLE", "SCRIPT", "TEMPLATE"]);
  const deepText = (node) => {
    let out = node.shadowRoot ? deepText(node.shadowRoot) : "";
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) out += child.data;
      else if (child.nodeType === Node.ELEMENT_NODE && !skip.has(child.tagName)) {
        out += deepText(child);
      }
    }
    return out;
  };
  const before = chat.shadowRoot.querySelectorAll(".message.hass").length;
  window.__assistSeen = [];
  window.__assistTimer = setInterval(() => {
    const bubbles = chat.shadowRoot.querySelectorAll(".message.hass");
    if (bubbles.length <= before) return;
    const seen = window.__assistSeen;
    const now = deepText(bubbles[bubbles.length - 1]).replace(/\\s+/g, " ").trim();
    if (seen[seen.length - 1] !== now) seen.push(now);
  }, 10);
}
"""
RECORDER_STOP_JS = (
    "() => { clearInterval(window.__assistTimer); return window.__assistSeen; }"
)


def assist_responder(body: dict[str, Any]) -> Reply:
    """A tiny scripted model: a read and a change for the command, then a thinking
    reply."""
    if not body.get("stream"):
        return text("[]")  # the background fact extraction: nothing to remember
    messages = body.get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return text(REPLY, think=THINK, delay=STREAM_DELAY)
    users = [m for m in messages if m.get("role") == "user"]
    asked = str(users[-1].get("content", "")).lower() if users else ""
    turn_on = _tool_ending_with(body, "HassTurnOn")
    read = _tool_ending_with(body, "GetLiveContext")
    if "kitchen light" not in asked or turn_on is None or read is None:
        return text("This fake model only turns on the kitchen light.")
    # The read first: the last tool result is the change's.
    return tool_calls([(read, {}), (turn_on, {"name": "Kitchen Light"})])


def _tool_ending_with(body: dict[str, Any], suffix: str) -> str | None:
    """The offered tool whose name ends with suffix (names may get a prefix later)."""
    for tool in body.get("tools") or []:
        name = str(tool.get("function", {}).get("name", ""))
        if name.endswith(suffix):
            return name
    return None


# -- what a person does --------------------------------------------------------------


def sidebar_item(page: Page, name: str) -> Locator:
    """An entry of HA's sidebar."""
    return page.locator("ha-sidebar").get_by_text(name, exact=True)


async def log_in(page: Page, url: str) -> None:
    """The login page, as dev / dev."""
    await page.goto(f"{url}/")
    await page.get_by_role("textbox", name="Username").fill(USERNAME)
    await page.get_by_role("textbox", name="Password").fill(PASSWORD)
    await page.get_by_role("button", name="Log in").click()
    await sidebar_item(page, "Settings").wait_for()


async def add_integration(page: Page, base_url: str) -> None:
    """Settings > Devices & services > Add integration > Local Assistant."""
    await sidebar_item(page, "Settings").click()
    await page.get_by_text("Devices & services", exact=True).click()
    await page.get_by_role("button", name="Add integration").click()
    await page.get_by_role("textbox", name="Search for a brand name").fill(AGENT_NAME)
    await page.get_by_text(AGENT_NAME, exact=True).click()

    server_form = page.get_by_role(
        "alertdialog", name="Connect to your local model server"
    )
    await server_form.wait_for()
    await page.get_by_role("textbox", name="Server URL").fill(base_url)
    await page.get_by_role("button", name="Submit").click()

    await page.get_by_role("alertdialog", name="Choose the model").wait_for()
    await page.locator("ha-picker-field[aria-label='Model']").click()
    await page.locator("ha-picker-combo-box").get_by_text(MODEL, exact=True).click()
    await page.get_by_role("button", name="Submit").click()

    # "Device created": name and area are optional.
    finish = page.get_by_role("button", name=re.compile(r"^(Skip and finish|Finish)$"))
    await finish.click()
    await finish.wait_for(state="hidden")


async def use_agent_in_assist(page: Page) -> None:
    """Settings > Voice assistants > Home Assistant > Conversation agent: ours."""
    await sidebar_item(page, "Settings").click()
    await page.get_by_text("Voice assistants", exact=True).click()
    await (
        page.locator("assist-pref ha-list-item")
        .filter(has_text="Home Assistant")
        .click()
    )
    dialog = page.get_by_role("alertdialog", name="Home Assistant")
    await dialog.wait_for()
    await page.get_by_role("combobox", name="Conversation agent").click()
    await page.get_by_role("option", name=AGENT_NAME, exact=True).click()
    # The command must reach our agent, not HA's built-in sentences first.
    prefer_local = page.get_by_role("switch", name="Prefer handling commands locally")
    if await prefer_local.is_checked():
        await prefer_local.click()
    await page.get_by_role("button", name="Update").click()
    await dialog.wait_for(state="hidden")


async def ask_assist(page: Page, url: str, command: str) -> list[str]:
    """Open the Assist dialog on the overview, send the command; the reply's states."""
    await page.goto(f"{url}/")
    assist_tooltip = page.locator("ha-tooltip").filter(
        has_text=re.compile(r"^\s*Assist\b")
    )
    tooltip_id = await assist_tooltip.get_attribute("id")
    await page.locator(f"ha-icon-button[aria-labelledby='{tooltip_id}']").click()
    await page.get_by_role("alertdialog", name="Assist").wait_for()

    chat = page.locator("ha-assist-chat")
    await chat.evaluate(RECORDER_JS)
    request = page.get_by_role("textbox", name="Enter a request")
    await request.fill(command)
    await request.press("Enter")
    await chat.get_by_text(REPLY, exact=True).wait_for(timeout=REPLY_TIMEOUT_MS)
    seen: list[str] = await page.evaluate(RECORDER_STOP_JS)
    return seen


async def light_state(instance: DevInstance, want: str, timeout: float = 10) -> str:
    """The light's state from the REST API, once it is `want` or time is up."""
    deadline = time.monotonic() + timeout
    while True:
        state = str((await rest_get(instance, f"/api/states/{LIGHT}"))["state"])
        if state == want or time.monotonic() > deadline:
            return state
        await asyncio.sleep(0.2)


# -- remembered facts, in the integration's Configure dialog -------------------------------

FACT_KITE = "Kitesurfs at Valdevaqueros on weekends."
FACT_DOG = "Has a dog called Bolt."
FACT_DOG_NOW = "Has a dog called Max."
SATELLITE = "Kitchen Satellite"  # the dev instance's demo voice satellite
OWNER = "Dev"  # the dev user, and the person linked to it
# What a frontend shows when a translation is missing or a placeholder is not filled.
UNREADABLE = re.compile(r"Translation|MISSING_VALUE|\{[a-z_]+\}")

# The text of an element and everything in its shadow roots, as a person reads it.
DEEP_TEXT_JS = """
(el) => {
  const skip = new Set(["STYLE", "SCRIPT", "TEMPLATE"]);
  const text = (node) => {
    let out = node.shadowRoot ? text(node.shadowRoot) : "";
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) out += child.data;
      else if (child.nodeType === Node.ELEMENT_NODE && !skip.has(child.tagName)) {
        out += " " + text(child) + " ";
      }
    }
    return out;
  };
  return text(el).replace(/\\s+/g, " ").trim();
}
"""


def flow_dialog(page: Page) -> Locator:
    """HA's dialog for config, options and subentry flows."""
    return page.locator("dialog-data-entry-flow")


async def readable_screen(page: Page, shows: str, screens: list[str]) -> str:
    """Wait until the dialog shows `shows`; the whole screen must read right."""
    dialog = flow_dialog(page)
    await dialog.get_by_text(shows).first.wait_for()
    shown = str(await page.locator("body").evaluate(DEEP_TEXT_JS))
    assert not UNREADABLE.search(shown), f"unreadable text on screen: {shown}"
    screens.append(str(await dialog.evaluate(DEEP_TEXT_JS)))
    return screens[-1]


async def open_configure(page: Page, url: str) -> None:
    """Settings > Devices & services > Local Assistant > Configure (the gear)."""
    await page.goto(f"{url}/config/integrations/integration/local_assistant")
    await page.get_by_role("button", name="Configure", exact=True).click()


async def choose(page: Page, option: str) -> None:
    """A menu option of the dialog."""
    await flow_dialog(page).get_by_text(option, exact=True).click()


async def submit(page: Page) -> None:
    await flow_dialog(page).get_by_role("button", name="Submit").click()


def counts(facts: int, history: int) -> str:
    """The speaker menu's line, as its description renders it."""
    return f"{OWNER} · facts remembered: {facts} · in the history: {history}"


async def add_fact(page: Page, text: str, screens: list[str]) -> None:
    await choose(page, "Add a fact")
    await readable_screen(page, "Facts you add are pinned", screens)
    await flow_dialog(page).get_by_role("textbox").fill(text)
    await submit(page)


async def manage_facts(
    page: Page, instance: DevInstance, shots: list[Path], screens: list[str]
) -> None:
    """Add, edit, remove, restore and clear facts about Dev, as a person would."""
    await open_configure(page, instance.url)
    await readable_screen(page, "Manage remembered facts", screens)
    await choose(page, "Manage remembered facts")
    await readable_screen(page, "Whose facts", screens)
    # Speakers by name: no "Dev (user:843e…)".
    await page.get_by_role("radio", name=OWNER, exact=True).click()
    await submit(page)
    menu = await readable_screen(page, counts(0, 0), screens)
    assert menu.startswith("Remembered facts")  # the title: no placeholder in it

    await add_fact(page, FACT_KITE, screens)
    await readable_screen(page, counts(1, 0), screens)
    await add_fact(page, FACT_DOG, screens)
    menu = await readable_screen(page, counts(2, 0), screens)
    assert FACT_KITE in menu
    assert FACT_DOG in menu

    # Edit: the current text is in the field; a one-word fix needs one word.
    await choose(page, "Edit a fact")
    await readable_screen(page, "The fact to change.", screens)
    await page.get_by_role("radio", name=FACT_DOG).click()
    await submit(page)
    await readable_screen(page, "Change the wording", screens)
    text = flow_dialog(page).get_by_role("textbox")
    assert await text.input_value() == FACT_DOG
    await text.fill(FACT_DOG.replace("Bolt", "Max"))
    await submit(page)
    menu = await readable_screen(page, counts(2, 1), screens)
    assert FACT_DOG_NOW in menu
    assert FACT_DOG not in menu

    # Remove: nothing is ticked before the person ticks it.
    await choose(page, "Remove facts")
    await readable_screen(page, "Removed facts stay in the history", screens)
    boxes = flow_dialog(page).get_by_role("checkbox")
    assert await boxes.count() == 2
    assert not [i for i in range(2) if await boxes.nth(i).is_checked()]
    await page.get_by_role("checkbox", name=FACT_KITE).check()
    await submit(page)
    menu = await readable_screen(page, counts(1, 2), screens)
    assert FACT_KITE not in menu

    # Restore it from the history (listed with when it left).
    await choose(page, "Restore from history")
    await readable_screen(page, "A fact from the history", screens)
    await page.get_by_role(
        "radio", name=re.compile(f"^{re.escape(FACT_KITE)} · ")
    ).click()
    await submit(page)
    menu = await readable_screen(page, counts(2, 1), screens)
    assert FACT_KITE in menu
    await page.mouse.move(0, 0)  # no hover highlight in the screenshot
    for path in shots:
        await page.screenshot(path=path)
    assert await remembered(instance) == {FACT_DOG_NOW, FACT_KITE}

    # Clear them all (into the history), then close.
    await choose(page, "Clear all facts")
    await readable_screen(page, "Submit to confirm", screens)
    await submit(page)
    await readable_screen(page, counts(0, 3), screens)
    assert await remembered(instance) == set()
    await choose(page, "Done")
    await readable_screen(page, "Options successfully saved", screens)
    await flow_dialog(page).get_by_role("button", name="Finish").click()


async def count_satellite_as_person(
    page: Page, instance: DevInstance, screens: list[str]
) -> None:
    """Configure > Count a satellite as a person: the demo satellite is Dev."""
    await open_configure(page, instance.url)
    await choose(page, "Count a satellite as a person")
    await readable_screen(page, "Satellites counted as a person: 0", screens)
    await page.get_by_role("radio", name=SATELLITE).click()
    await flow_dialog(page).locator("ha-entity-picker ha-picker-field").click()
    await page.locator("ha-picker-combo-box").get_by_text(OWNER, exact=True).click()
    await submit(page)
    await readable_screen(page, "Options successfully saved", screens)
    await flow_dialog(page).get_by_role("button", name="Finish").click()

    # Open it again: the mapping names the satellite and the person, not ids.
    await open_configure(page, instance.url)
    await choose(page, "Count a satellite as a person")
    shown = await readable_screen(page, "Satellites counted as a person: 1", screens)
    assert f"{SATELLITE} → {OWNER}" in shown
    await flow_dialog(page).get_by_role("button", name="Close").click()


async def remembered(instance: DevInstance) -> set[str]:
    """Dev's facts, from the integration's own list_facts action."""
    (entry,) = await ws_command(
        instance, {"type": "config_entries/get", "domain": "local_assistant"}
    )
    result = await ws_command(
        instance,
        {
            "type": "call_service",
            "domain": "local_assistant",
            "service": "list_facts",
            "service_data": {"config_entry_id": entry["entry_id"], "speaker": OWNER},
            "return_response": True,
        },
    )
    return {fact["text"] for fact in result["response"]["facts"]}


# -- the test ---------------------------------------------------------------------------


@pytest.mark.timeout(1200)
async def test_assist_dialog_then_remembered_facts(
    chromium_path: str,  # first: no browser means no need to start HA
    dev_instance: DevInstance,
    model_server: FakeOpenAIServer,
    page: Page,
    screenshot_paths: list[Path],
    facts_screenshot_paths: list[Path],
) -> None:
    """Add the agent in the UI, ask in the Assist dialog, see a clean streamed reply;
    then manage what the assistant remembers about the person, every screen readable."""
    model_server.responder = assist_responder
    assert await light_state(dev_instance, "off", timeout=0) == "off"
    started = time.monotonic()

    await log_in(page, dev_instance.url)
    await add_integration(page, model_server.base_url)
    await use_agent_in_assist(page)

    # The UI really changed the preferred pipeline.
    pipelines = await ws_command(
        dev_instance, {"type": "assist_pipeline/pipeline/list"}
    )
    preferred = next(
        p for p in pipelines["pipelines"] if p["id"] == pipelines["preferred_pipeline"]
    )
    assert preferred["conversation_engine"] == AGENT_ENTITY

    seen = await ask_assist(page, dev_instance.url, COMMAND)
    for path in screenshot_paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=path)
    print(
        f"\nbrowser test: UI part took {time.monotonic() - started:.1f} s; "
        f"reply states seen: {seen}; screenshot: {screenshot_paths[-1]}"
    )

    # What the dialog showed, from the first character on: no reasoning, ever.
    assert seen, "the reply never appeared"
    assert seen[-1] == REPLY
    think_only_words = set(THINK.split()) - set(REPLY.split())
    for shown in seen:
        assert "<think" not in shown, shown
        assert "think>" not in shown, shown
        assert not think_only_words & set(shown.split()), shown
    # It streamed: the dialog showed the reply growing (with a "…" while it streams),
    # every state a start of the reply and nothing else.
    partials = [shown.removesuffix("…").strip() for shown in seen]
    for partial in partials:
        assert REPLY.startswith(partial), f"{partial!r} is not part of the reply"
    growing = {partial for partial in partials if partial}
    assert len(growing) >= 3, f"the reply did not stream into the dialog: {seen}"

    # The demo light is on, through HA's own tool.
    assert await light_state(dev_instance, "on") == "on"

    # The model server saw what the user picked and did.
    chats = [body for body in model_server.requests if body.get("stream")]
    assert chats, "the agent never called the model server"
    assert {body["model"] for body in chats} == {MODEL}
    assert _tool_ending_with(chats[0], "HassTurnOn")
    tool_results = [
        message
        for body in chats
        for message in body["messages"]
        if message.get("role") == "tool"
    ]
    assert tool_results, "the tool result never went back to the model"
    assert "Kitchen Light" in json.dumps(tool_results[-1])

    # What the assistant remembers about the person who just talked.
    started = time.monotonic()
    screens: list[str] = []
    await manage_facts(page, dev_instance, facts_screenshot_paths, screens)
    await count_satellite_as_person(page, dev_instance, screens)
    print(
        f"browser test: fact management took {time.monotonic() - started:.1f} s over "
        f"{len(screens)} screens; menu screenshot: {facts_screenshot_paths[-1]}"
    )
