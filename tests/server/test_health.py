"""Repair issue and log lines when the model server stays unreachable (server/health.py)."""

from __future__ import annotations

from datetime import timedelta
import logging
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryDisabler, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.local_assistant.const import (
    DOMAIN,
)
from custom_components.local_assistant.server.health import (
    ISSUE_UNREACHABLE,
    UNREACHABLE_AFTER,
    UNREACHABLE_MIN_FAILURES,
    issue_id,
)
from tests.helpers import fake_openai as fake
from tests.helpers.ha import MODEL, converse, free_port, make_entry, speech

HEALTH_LOGGER = "custom_components.local_assistant"

pytestmark = pytest.mark.usefixtures("unload_entries")


async def entry_down_ten_minutes(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, agent_options: dict[str, Any]
) -> MockConfigEntry:
    """An entry whose server has not answered its set-up for 15 minutes."""
    port = free_port()
    entry = make_entry(hass, f"http://127.0.0.1:{port}/v1", agent_options)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    for _ in range(3):
        await retry_after(hass, freezer, 5)
    return entry


def health_lines(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == HEALTH_LOGGER and text in r.getMessage()
    ]


async def retry_after(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, minutes: float
) -> None:
    """Let time pass and let HA run the entry's scheduled set-up retry."""
    freezer.tick(timedelta(minutes=minutes))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)


def test_rule_constants() -> None:
    """The documented rule: 10 minutes and 3 failures in a row."""
    assert timedelta(minutes=10) == UNREACHABLE_AFTER
    assert UNREACHABLE_MIN_FAILURES == 3


async def test_issue_while_setup_keeps_failing_then_cleared(
    hass: HomeAssistant,
    socket_enabled: None,
    agent_options: dict[str, Any],
    freezer: FrozenDateTimeFactory,
    issue_registry: ir.IssueRegistry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Set-up retries over 10 minutes raise the issue; the first success clears it."""
    caplog.set_level(logging.INFO, logger=HEALTH_LOGGER)
    port = free_port()
    entry = make_entry(hass, f"http://127.0.0.1:{port}/v1", agent_options)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.SETUP_RETRY
    key = (DOMAIN, issue_id(entry.entry_id))

    # Failures 2 and 3 come within 10 minutes of the first: not yet an issue.
    await retry_after(hass, freezer, 4)
    await retry_after(hass, freezer, 4)
    assert entry.state is ConfigEntryState.SETUP_RETRY
    assert issue_registry.async_get_issue(*key) is None

    # 12 minutes and 4 failures: the issue is there, with what the user needs.
    await retry_after(hass, freezer, 4)
    issue = issue_registry.async_get_issue(*key)
    assert issue is not None
    assert issue.translation_key == ISSUE_UNREACHABLE
    assert issue.severity is ir.IssueSeverity.ERROR
    assert not issue.is_fixable
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["base_url"] == f"http://127.0.0.1:{port}/v1"
    assert int(issue.translation_placeholders["minutes"]) >= 10
    assert int(issue.translation_placeholders["failures"]) >= 3
    # Logged once when it went down, whatever the number of failures.
    assert len(health_lines(caplog, "is unreachable")) == 1

    async with fake.FakeOpenAIServer(models=[MODEL], port=port) as server:
        await retry_after(hass, freezer, 5)
        assert entry.state is ConfigEntryState.LOADED
        assert issue_registry.async_get_issue(*key) is None
        assert len(health_lines(caplog, "answers again")) == 1
        server.queue(fake.text("Back online."))
        assert speech(await converse(hass, "hello")) == "Back online."
        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()


async def test_issue_when_replies_keep_failing_then_cleared(
    hass: HomeAssistant,
    socket_enabled: None,
    agent_options: dict[str, Any],
    freezer: FrozenDateTimeFactory,
    issue_registry: ir.IssueRegistry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server that dies after set-up: three failed replies over 10 minutes."""
    caplog.set_level(logging.INFO, logger=HEALTH_LOGGER)
    port = free_port()
    entry = make_entry(hass, f"http://127.0.0.1:{port}/v1", agent_options)
    key = (DOMAIN, issue_id(entry.entry_id))
    async with fake.FakeOpenAIServer(models=[MODEL], port=port):
        assert await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()
    # The server is gone now. Two failed replies 6 minutes apart: no issue yet.
    for minutes in (0, 6):
        freezer.tick(timedelta(minutes=minutes))
        assert "can't reach" in speech(await converse(hass, "hello"))
    assert issue_registry.async_get_issue(*key) is None
    # The third, 12 minutes after the first: the issue.
    freezer.tick(timedelta(minutes=6))
    assert "can't reach" in speech(await converse(hass, "hello"))
    assert issue_registry.async_get_issue(*key) is not None
    assert len(health_lines(caplog, "is unreachable")) == 1

    async with fake.FakeOpenAIServer(models=[MODEL], port=port) as server:
        server.queue(fake.text("I'm back."))
        assert speech(await converse(hass, "hello")) == "I'm back."
    assert issue_registry.async_get_issue(*key) is None
    assert len(health_lines(caplog, "answers again")) == 1


async def test_no_issue_for_quick_failures_or_http_errors(
    hass: HomeAssistant,
    socket_enabled: None,
    agent_options: dict[str, Any],
    freezer: FrozenDateTimeFactory,
    issue_registry: ir.IssueRegistry,
) -> None:
    """Many failures within minutes, or long-running HTTP errors: no issue."""
    port = free_port()
    entry = make_entry(hass, f"http://127.0.0.1:{port}/v1", agent_options)
    key = (DOMAIN, issue_id(entry.entry_id))
    async with fake.FakeOpenAIServer(models=[MODEL], port=port):
        assert await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()
    for _ in range(5):  # five failures in under 10 minutes
        freezer.tick(timedelta(minutes=1))
        await converse(hass, "hello")
    assert issue_registry.async_get_issue(*key) is None

    # The server answers, but with errors, for a long time: it is reachable.
    async with fake.FakeOpenAIServer(models=[MODEL], port=port) as server:
        for _ in range(4):
            freezer.tick(timedelta(minutes=5))
            server.queue(fake.error(500))
            await converse(hass, "hello")
    assert issue_registry.async_get_issue(*key) is None


async def test_removing_the_entry_removes_the_issue(
    hass: HomeAssistant,
    socket_enabled: None,
    agent_options: dict[str, Any],
    freezer: FrozenDateTimeFactory,
    issue_registry: ir.IssueRegistry,
) -> None:
    """No orphan repair issue after the entry is deleted."""
    entry = await entry_down_ten_minutes(hass, freezer, agent_options)
    assert issue_registry.async_get_issue(DOMAIN, issue_id(entry.entry_id))
    assert await hass.config_entries.async_remove(entry.entry_id)
    await hass.async_block_till_done()
    assert issue_registry.async_get_issue(DOMAIN, issue_id(entry.entry_id)) is None


async def test_disabling_an_entry_still_retrying_deletes_the_issue(
    hass: HomeAssistant,
    socket_enabled: None,
    agent_options: dict[str, Any],
    freezer: FrozenDateTimeFactory,
    issue_registry: ir.IssueRegistry,
) -> None:
    """Found by review: a disabled entry never calls the server, so "disappears
    by itself once the server answers again" could never happen; the issue
    stayed until the entry was deleted. HA never unloads an entry still
    retrying its set-up."""
    entry = await entry_down_ten_minutes(hass, freezer, agent_options)
    assert issue_registry.async_get_issue(DOMAIN, issue_id(entry.entry_id))
    assert entry.state is ConfigEntryState.SETUP_RETRY

    assert await hass.config_entries.async_set_disabled_by(
        entry.entry_id, ConfigEntryDisabler.USER
    )
    await hass.async_block_till_done()
    assert issue_registry.async_get_issue(DOMAIN, issue_id(entry.entry_id)) is None


async def test_disabling_a_loaded_entry_deletes_its_issue(
    hass: HomeAssistant,
    loaded_entry: MockConfigEntry,
    issue_registry: ir.IssueRegistry,
) -> None:
    """The replies failed for ten minutes (the issue is up), then the user
    disables the entry; another entry's issue stays."""
    for entry_id in (loaded_entry.entry_id, "another_entry"):
        ir.async_create_issue(
            hass,
            DOMAIN,
            issue_id(entry_id),
            is_fixable=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key=ISSUE_UNREACHABLE,
        )
    assert await hass.config_entries.async_set_disabled_by(
        loaded_entry.entry_id, ConfigEntryDisabler.USER
    )
    await hass.async_block_till_done()
    assert (
        issue_registry.async_get_issue(DOMAIN, issue_id(loaded_entry.entry_id)) is None
    )
    assert issue_registry.async_get_issue(DOMAIN, issue_id("another_entry"))
