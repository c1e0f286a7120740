"""Prepare a fresh dev_config so the browser opens to a login page, not onboarding.

Usage: .venv/bin/python scripts/dev/provision.py CONFIG_DIR [USERNAME PASSWORD]

Does what the onboarding wizard's user step does, with HA's own auth classes: creates
the owner (the first non-system user, group system-admin) with a login on the
"homeassistant" auth provider, then marks every onboarding step done. The person
for the owner is created by the local_assistant_dev bootstrap once HA runs.
Idempotent: an existing owner or finished onboarding is left alone. Run it while
Home Assistant is NOT running on CONFIG_DIR (it writes .storage directly).
"""

from __future__ import annotations

import asyncio
import os
import sys

from homeassistant import runner
from homeassistant.auth import auth_manager_from_config
from homeassistant.auth.const import GROUP_ID_ADMIN
from homeassistant.auth.providers.homeassistant import HassAuthProvider
from homeassistant.components.onboarding import (
    STORAGE_KEY as ONBOARDING_KEY,
    STORAGE_VERSION as ONBOARDING_VERSION,
    OnboardingStoreData,
)
from homeassistant.components.onboarding.const import STEPS
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.helpers.storage import Store

OWNER_NAME = "Dev"


async def _async_provision(config_dir: str, username: str, password: str) -> None:
    hass = HomeAssistant(config_dir)
    # Same start as HA's own `--script auth`: the auth store needs the registries.
    await asyncio.gather(dr.async_load(hass), er.async_load(hass))
    hass.auth = await auth_manager_from_config(hass, [{"type": "homeassistant"}], [])
    provider = hass.auth.auth_providers[0]
    assert isinstance(provider, HassAuthProvider)
    await provider.async_initialize()

    if (owner := await hass.auth.async_get_owner()) is not None:
        print(f"provision: owner {owner.name!r} exists, leaving users alone")
    else:
        # async_create_user makes the first non-system user the owner.
        user = await hass.auth.async_create_user(OWNER_NAME, group_ids=[GROUP_ID_ADMIN])
        assert user.is_owner
        await provider.async_add_auth(username, password)
        credentials = await provider.async_get_or_create_credentials(
            {"username": username}
        )
        await hass.auth.async_link_user(user, credentials)
        print(f"provision: created owner {username!r} (group {GROUP_ID_ADMIN})")

    store: Store[OnboardingStoreData] = Store(
        hass, ONBOARDING_VERSION, ONBOARDING_KEY, private=True
    )
    data = await store.async_load() or OnboardingStoreData(done=[])
    if missing := [step for step in STEPS if step not in data["done"]]:
        data["done"].extend(missing)
        await store.async_save(data)
        print(f"provision: marked onboarding steps done: {', '.join(missing)}")

    # The auth store saves with a delay; stopping fires the final write that flushes it.
    # force=True: this hass never started, and a plain async_stop() returns at once then.
    await hass.async_stop(force=True)


def main(argv: list[str]) -> int:
    """Entry point."""
    if len(argv) not in (1, 3):
        print(__doc__, file=sys.stderr)
        return 2
    config_dir = os.path.abspath(argv[0])
    username, password = argv[1:] if len(argv) == 3 else ("dev", "dev")
    os.makedirs(config_dir, exist_ok=True)
    asyncio.set_event_loop_policy(runner.HassEventLoopPolicy(False))
    asyncio.run(_async_provision(config_dir, username, password))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
