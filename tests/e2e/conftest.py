"""Fixtures for the browser test: the real dev instance, a fake model server, Chromium.

Nothing here runs Home Assistant in-process: `scripts/develop` starts the real dev
instance (HA 2026.2.3 with the frontend) in a config folder of its own on a free
loopback port, and Debian's Chromium, driven by Playwright's Python package, talks to it
like a person would. No browser is downloaded: Playwright uses the system Chromium.

Chromium missing: the test fails when it could be installed (`apt-get` exists), when
`CI` is set or when LOCAL_ASSISTANT_REQUIRE_BROWSER=1; elsewhere (say, a Mac without
Chromium) it is skipped with a message. LOCAL_ASSISTANT_CHROMIUM=/path/to/chromium
picks another Chromium or Chrome binary.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
import os
from pathlib import Path
import shutil
import signal
import socket
import subprocess
import time
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest

from tests.helpers.fake_openai import FakeOpenAIServer

if TYPE_CHECKING:
    from playwright.async_api import Page

REPO = Path(__file__).resolve().parents[2]
DEVELOP = REPO / "scripts" / "develop"
USERNAME = "dev"
PASSWORD = "dev"  # the dev instance's documented login

REQUIRE_ENV = "LOCAL_ASSISTANT_REQUIRE_BROWSER"
CHROMIUM_ENV = "LOCAL_ASSISTANT_CHROMIUM"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium",)
# As the machine notes say: no first-run, sync, update or other background traffic.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}

# Until HA answers: scripts/develop installs requirements_dev.txt (the frontend) first,
# on its first run in a clone (a minute or two); HA itself then starts in ~15 s.
HA_UP_TIMEOUT = 900.0
HA_START_TIMEOUT = 180.0
HA_STOP_TIMEOUT = 30.0
POLL = 0.25


@dataclass(frozen=True)
class DevInstance:
    """A running `scripts/develop` instance."""

    url: str
    config_dir: Path
    output: Path  # what scripts/develop printed
    token: str  # an access token from HA's own login flow, for REST/websocket checks

    @property
    def log(self) -> Path:
        """Home Assistant's log file."""
        return self.config_dir / "home-assistant.log"


# -- no in-process Home Assistant here --------------------------------------------


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations() -> None:
    """Override tests/conftest.py: this test needs no in-process `hass`."""


@pytest.fixture(autouse=True)
def setup_ha() -> None:
    """Override tests/conftest.py: this test needs no in-process `hass`."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Remember each phase's report on the item, for the failure screenshot."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def _failed(request: pytest.FixtureRequest) -> bool:
    report = getattr(request.node, "rep_call", None)
    return report is None or report.failed


# -- Chromium and Playwright --------------------------------------------------------


def _browser_required() -> bool:
    return bool(os.environ.get("CI")) or os.environ.get(REQUIRE_ENV) == "1"


def _find_chromium() -> str | None:
    if override := os.environ.get(CHROMIUM_ENV):
        return override if os.access(override, os.X_OK) else None
    for candidate in (*CHROMIUM_CANDIDATES, shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """The system Chromium; missing is a failure wherever it can be installed."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        pytest.fail(
            "the playwright package is missing: run scripts/setup (it installs "
            "requirements_test.txt)",
            pytrace=False,
        )
    if path := _find_chromium():
        return path
    install = (
        "install it with `apt-get install chromium` (scripts/setup does, run as root)"
    )
    if _browser_required():
        pytest.fail(
            f"Chromium is required here (CI or {REQUIRE_ENV}=1) but not found: {install}",
            pytrace=False,
        )
    if shutil.which("apt-get"):
        pytest.fail(f"Chromium is not installed: {install}", pytrace=False)
    pytest.skip(
        "browser test skipped: no Chromium at /usr/bin/chromium and no apt-get to "
        f"install it; set {CHROMIUM_ENV} to a Chromium or Chrome binary to run it"
    )


@pytest.fixture
async def page(
    chromium_path: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncGenerator[Page]:
    """A page in a fresh headless Chromium profile; screenshot kept on failure."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            tmp_path / "chromium-profile",
            executable_path=chromium_path,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport=VIEWPORT,  # type: ignore[arg-type]
        )
        try:
            context.set_default_timeout(30_000)
            page = context.pages[0] if context.pages else await context.new_page()
            yield page
            if _failed(request):
                shot = tmp_path / "failure.png"
                await page.screenshot(path=shot)
                print(f"\nbrowser test: screenshot at failure: {shot} ({page.url})")
        finally:
            await context.close()


# -- the fake model server ------------------------------------------------------------


@pytest.fixture
async def model_server(socket_enabled: None) -> AsyncGenerator[FakeOpenAIServer]:
    """A fake OpenAI-compatible server on a free loopback port."""
    async with FakeOpenAIServer(models=["qwen3-30b-a3b", "qwen3-4b"]) as server:
        yield server


# -- the real dev instance ----------------------------------------------------------


def _free_port() -> int:
    """A loopback port nothing listens on (now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"({path} not readable)"


async def _wait_for(
    condition: Any, timeout: float, what: str, proc: subprocess.Popen[bytes]
) -> Any:
    """Poll an async condition until it returns a truthy value, HA dies, or time's up."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise AssertionError(
                f"scripts/develop exited with {proc.returncode} while waiting for {what}"
            )
        if result := await condition():
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(POLL)


async def _login(session: aiohttp.ClientSession, url: str) -> str | None:
    """HA's own login flow (what the login page does): an access token, or None."""
    client_id = f"{url}/"
    try:
        async with session.post(
            f"{url}/auth/login_flow",
            json={
                "client_id": client_id,
                "handler": ["homeassistant", None],
                "redirect_uri": client_id,
            },
        ) as resp:
            if resp.status != 200:
                return None
            flow = await resp.json()
        async with session.post(
            f"{url}/auth/login_flow/{flow['flow_id']}",
            json={"client_id": client_id, "username": USERNAME, "password": PASSWORD},
        ) as resp:
            step = await resp.json()
        if step.get("type") != "create_entry":
            raise AssertionError(f"login as {USERNAME} failed: {step}")
        async with session.post(
            f"{url}/auth/token",
            data={
                "grant_type": "authorization_code",
                "code": step["result"],
                "client_id": client_id,
            },
        ) as resp:
            resp.raise_for_status()
            return str((await resp.json())["access_token"])
    except (aiohttp.ClientConnectionError, TimeoutError):
        return None


async def rest_get(instance: DevInstance, path: str) -> Any:
    """GET a REST API path with the instance's token."""
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session,
        session.get(
            f"{instance.url}{path}",
            headers={"Authorization": f"Bearer {instance.token}"},
        ) as resp,
    ):
        resp.raise_for_status()
        return await resp.json()


async def ws_command(instance: DevInstance, command: dict[str, Any]) -> Any:
    """One websocket API command with the instance's token; its result."""
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session,
        session.ws_connect(f"{instance.url}/api/websocket") as ws,
    ):
        assert (await ws.receive_json())["type"] == "auth_required"
        await ws.send_json({"type": "auth", "access_token": instance.token})
        assert (await ws.receive_json())["type"] == "auth_ok"
        await ws.send_json({"id": 1, **command})
        message = await ws.receive_json()
        assert message.get("success"), message
        return message["result"]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the scripts/develop process group (HA stops cleanly), then SIGKILL."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(HA_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    except ProcessLookupError:
        proc.wait(10)


@pytest.fixture
async def dev_instance(
    tmp_path: Path, socket_enabled: None, request: pytest.FixtureRequest
) -> AsyncGenerator[DevInstance]:
    """`scripts/develop --reset` on a free port, in a config folder of its own.

    LOCAL_ASSISTANT_BASE_URL points at a closed port, so the dev bootstrap adds no agent
    (it logs that no server answers) and the test adds it through the UI.
    """
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    config_dir = tmp_path / "config"
    output = tmp_path / "develop.log"
    env = {
        **os.environ,
        "LOCAL_ASSISTANT_DEV_PORT": str(port),
        "LOCAL_ASSISTANT_DEV_CONFIG": str(config_dir),
        "LOCAL_ASSISTANT_BASE_URL": f"http://127.0.0.1:{_free_port()}/v1",
    }
    env.pop("LOCAL_ASSISTANT_DEV_DEBUG", None)
    env.pop("LOCAL_ASSISTANT_MODEL", None)
    with output.open("wb") as out:
        proc = subprocess.Popen(  # noqa: ASYNC220 - returns at once; waits are polled
            [str(DEVELOP), "--reset"],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, stopped as a whole
        )
    try:
        async with aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=10)
        ) as session:

            async def logged_in() -> str | None:
                return await _login(session, url)

            token = await _wait_for(logged_in, HA_UP_TIMEOUT, "HA's login flow", proc)
        instance = DevInstance(url, config_dir, output, token)

        async def running() -> bool:
            try:
                config = await rest_get(instance, "/api/config")
            except aiohttp.ClientResponseError:  # the API is not set up yet
                return False
            return config["state"] == "RUNNING"

        await _wait_for(running, HA_START_TIMEOUT, "HA to be running", proc)

        async def exposed() -> bool:
            # The dev bootstrap exposes the demo entities once HA has started.
            result = await ws_command(
                instance, {"type": "homeassistant/expose_entity/list"}
            )
            return bool(
                result["exposed_entities"]
                .get("light.kitchen_light", {})
                .get("conversation")
            )

        await _wait_for(exposed, 60, "the kitchen light to be exposed", proc)
        yield instance
    finally:
        _stop(proc)
        if _failed(request):
            print(f"\n--- scripts/develop output ({output}):\n{_tail(output, 20)}")
            print(f"\n--- HA log ({config_dir / 'home-assistant.log'}):")
            print(_tail(config_dir / "home-assistant.log"))


def _screenshot_paths(tmp_path: Path, name: str) -> list[Path]:
    """Where a screenshot goes: tmp, and docs/ when asked to update it."""
    paths = [tmp_path / name]
    if os.environ.get("LOCAL_ASSISTANT_UPDATE_SCREENSHOT") == "1":
        paths.append(REPO / "docs" / name)
    return paths


@pytest.fixture
def screenshot_paths(tmp_path: Path) -> list[Path]:
    """The Assist dialog's last screen."""
    return _screenshot_paths(tmp_path, "assist-dialog.png")


@pytest.fixture
def facts_screenshot_paths(tmp_path: Path) -> list[Path]:
    """The speaker's menu of remembered facts."""
    return _screenshot_paths(tmp_path, "remembered-facts.png")
