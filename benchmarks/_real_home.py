"""The dev instance's home, in process, with the agent on the real local model.

What the real-model benchmarks share: `scripts/dev/configuration.yaml`'s lights,
switches, script, weather and sea sensors (with its areas and exposure), the agent
configured as `scripts/develop` configures it (live-data tools, kitesurf spot), an
admin user "Dev", and one turn through HA's conversation API with what it did:
speech, tool calls and results, and every state change of an exposed entity.

`--code DIR` (see `code_path`) loads `custom_components` from another checkout, so a
benchmark can run today's code and an older commit in the same run (the older one in
a subprocess, on the same model server).
"""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass, field
import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "local-model"
DEV_CONFIG = REPO / "scripts" / "dev" / "configuration.yaml"
DEV_BOOTSTRAP = (
    REPO
    / "scripts"
    / "dev"
    / "custom_components"
    / "local_assistant_dev"
    / "__init__.py"
)
MODEL_ALIAS = "qwen2.5-coder-0.5b-instruct"
# `--base-url never-acts`: a fake server that answers "OK" to everything and
# never calls a tool, so a run measures what HA's own reading carries out.
NEVER_ACTS = "never-acts"
AGENT_ID = "conversation.local_assistant"


def code_path(argv: list[str]) -> Path:
    """Where `custom_components` comes from: `--code DIR`, else this checkout.

    Must run before anything imports `custom_components` (or HA's loader).
    A runner started as `python -m benchmarks.X` first starts again with a
    fixed string hashing (`_fixed_hash_seed`).
    """
    _fixed_hash_seed()
    import tests.helpers  # noqa: F401  (this checkout's test helpers, not the code's)

    path = REPO
    if "--code" in argv:
        path = Path(argv[argv.index("--code") + 1]).resolve()
    sys.path.insert(0, str(path))
    if path != REPO:
        sys.path.insert(1, str(REPO))
    return path


def _fixed_hash_seed() -> None:
    """Start this runner again with PYTHONHASHSEED=0, once.

    HA writes set-ordered values into the model's prompt (an area's aliases
    in its static context): with the per-start hashing, two runs of the same
    code at a frozen clock and temperature 0 sent different prompts.
    """
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = getattr(spec, "name", "")
    if os.environ.get("PYTHONHASHSEED") == "0" or not name.startswith("benchmarks."):
        return
    sys.stdout.flush()
    os.execve(sys.executable, sys.orig_argv, {**os.environ, "PYTHONHASHSEED": "0"})


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """--base-url, --code, --json, --baseline."""
    parser.add_argument("--base-url", help="a running server (default: start one)")
    parser.add_argument("--code", help="load custom_components from this checkout")
    parser.add_argument("--json", help="write the results here as JSON")
    parser.add_argument(
        "--baseline",
        help="also run a git ref of this repo (in a temporary worktree) for comparison",
    )


def local_model(*args: str, env: dict[str, str] | None = None) -> str:
    """Run `scripts/local-model ARGS` (`env` added to ours); its stdout, or exit."""
    done = subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if done.returncode != 0:
        sys.exit(f"scripts/local-model {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout.strip()


def free_port() -> int:
    """A loopback port nothing listens on (now)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def started_server(base_url: str | None, env: dict[str, str] | None = None) -> Any:
    """(base URL, port): the given server (port None), or a llama-server started here.

    `env` goes to `scripts/local-model start` (LOCAL_ASSISTANT_MODEL_CACHE_RAM=0:
    one cached prompt, as Swama keeps).
    """
    if base_url == NEVER_ACTS:
        from benchmarks._server_process import answering_ok

        with answering_ok([MODEL_ALIAS]) as url:
            yield url, None
        return
    if base_url:
        yield base_url, None
        return
    local_model("check")
    port = free_port()
    url = local_model("start", str(port), env=env).splitlines()[-1]
    try:
        yield url, port
    finally:
        local_model("stop", str(port))


@contextlib.contextmanager
def model_server(base_url: str | None) -> Any:
    """A base URL: the given one, or a llama-server started for this run."""
    with started_server(base_url) as (url, _port):
        yield url


@contextlib.contextmanager
def baseline_checkout(ref: str) -> Any:
    """A temporary git worktree of `ref` (removed afterwards)."""
    with tempfile.TemporaryDirectory(prefix="local-assistant-baseline-") as tmp:
        path = Path(tmp) / "code"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), ref],
            check=True,
            capture_output=True,
        )
        try:
            yield path
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)],
                check=False,
                capture_output=True,
            )


def run_baseline(module: str, ref: str, base_url: str, extra: list[str]) -> Any:
    """Run `python -m module` against `ref`'s code on the same server; its JSON."""
    with (
        baseline_checkout(ref) as path,
        tempfile.NamedTemporaryFile(suffix=".json") as out,
    ):
        subprocess.run(
            [
                sys.executable,
                "-m",
                module,
                "--code",
                str(path),
                "--base-url",
                base_url,
                "--json",
                out.name,
                *extra,
            ],
            cwd=REPO,
            check=True,
        )
        return json.loads(Path(out.name).read_text(encoding="utf-8"))


@dataclass
class Turn:
    """One turn and what it did to the home."""

    text: str
    speech: str
    seconds: float
    response_type: str
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    tool_results: list[tuple[str, Any]] = field(default_factory=list)
    changed: dict[str, tuple[str, str]] = field(default_factory=dict)
    # HA's own intent handling ran a call this turn (a call marked external
    # whose result is HA's, not one of the agent's refusals).
    by_home_assistant: bool = False

    @property
    def tool_names(self) -> list[str]:
        return [name for name, _ in self.tool_calls]


def _ran_by_home_assistant(turn_content: list[Any]) -> bool:
    """Whether HA's own intent handling ran a call among these chat log entries.

    HA marks its calls external; so does the agent for a call it never runs
    (a refusal, broken arguments, one call too many), answered with its own
    {"error": "<code>"} (under "data" on HA 2026.11, whose results all carry
    an "error" flag). HA's result is an intent response, with no such code.
    """
    from homeassistant.components import conversation

    from custom_components.local_assistant.compat import tool_result_data

    external = {
        call.id
        for c in turn_content
        if isinstance(c, conversation.AssistantContent)
        for call in c.tool_calls or ()
        if call.external
    }
    return any(
        isinstance(c, conversation.ToolResultContent)
        and c.tool_call_id in external
        and not _agent_error(tool_result_data(c))
        for c in turn_content
    )


def _agent_error(data: Any) -> bool:
    """Whether a tool result is one of the agent's own errors (a string code)."""
    inner = data.get("data") if isinstance(data, dict) else None
    return any(
        isinstance(level, dict) and isinstance(level.get("error"), str)
        for level in (data, inner)
    )


class RealHome:
    """A running HA with the dev home and the agent on `base_url`."""

    def __init__(self, hass: Any, entry: Any, user_id: str) -> None:
        self.hass = hass
        self.entry = entry
        self.user_id = user_id

    async def converse(
        self,
        text: str,
        *,
        language: str = "en",
        user_id: str | None = None,
        device_id: str | None = None,
        conversation_id: str | None = None,
        prefer_local: bool = False,
    ) -> Turn:
        """One turn through HA's conversation API, as the pipeline runs it.

        `prefer_local`: like the pipeline option "prefer handling commands
        locally", HA's own intents answer what they match first (state
        questions excepted, as the pipeline does for agents that control).
        """
        from homeassistant.components import conversation
        from homeassistant.core import Context
        from homeassistant.helpers import chat_session, intent

        from custom_components.local_assistant.compat import tool_result_data

        before = self.exposed_states()
        # The loop's clock: freezegun may hold `time`'s still (_homes.home_clock).
        start = self.hass.loop.time()
        context = Context(user_id=user_id or self.user_id)
        with chat_session.async_get_chat_session(self.hass, conversation_id) as session:
            user_input = conversation.ConversationInput(
                text=text,
                context=context,
                conversation_id=session.conversation_id,
                device_id=device_id,
                satellite_id=None,
                language=language,
                agent_id=AGENT_ID,
            )
            with conversation.async_get_chat_log(
                self.hass, session, user_input
            ) as chat_log:
                local = None
                if prefer_local:
                    local = await conversation.async_handle_intents(
                        self.hass,
                        user_input,
                        chat_log,
                        intent_filter=lambda r: r.intent.name
                        == intent.INTENT_GET_STATE,
                    )
                if local is not None:
                    chat_log.async_add_assistant_content_without_tools(
                        conversation.AssistantContent(
                            agent_id=conversation.HOME_ASSISTANT_AGENT,
                            content=local.speech.get("plain", {}).get("speech", ""),
                        )
                    )
                    result = conversation.ConversationResult(
                        response=local, conversation_id=session.conversation_id
                    )
                else:
                    result = await conversation.async_converse(
                        self.hass,
                        text,
                        session.conversation_id,
                        context,
                        language=language,
                        agent_id=AGENT_ID,
                        device_id=device_id,
                    )
        seconds = self.hass.loop.time() - start
        await self.hass.async_block_till_done()
        after = self.exposed_states()
        start_index = max(
            (
                i
                for i, c in enumerate(chat_log.content)
                if isinstance(c, conversation.UserContent)
            ),
            default=0,
        )
        turn_content = chat_log.content[start_index:]
        return Turn(
            text=text,
            speech=str(result.response.speech.get("plain", {}).get("speech", "")),
            seconds=seconds,
            response_type=str(result.response.response_type.value),
            tool_calls=[
                (call.tool_name, dict(call.tool_args))
                for c in turn_content
                if isinstance(c, conversation.AssistantContent)
                for call in c.tool_calls or ()
            ],
            tool_results=[
                (c.tool_name, tool_result_data(c))
                for c in turn_content
                if isinstance(c, conversation.ToolResultContent)
            ],
            by_home_assistant=_ran_by_home_assistant(turn_content),
            changed={
                entity_id: (before.get(entity_id, "?"), state)
                for entity_id, state in after.items()
                if before.get(entity_id) != state
            },
        )

    def exposed_states(self) -> dict[str, str]:
        """State (and brightness) of every exposed light, switch and script."""
        from homeassistant.components.homeassistant.exposed_entities import (
            async_should_expose,
        )

        states: dict[str, str] = {}
        for state in self.hass.states.async_all(("light", "switch", "script")):
            if async_should_expose(self.hass, "conversation", state.entity_id):
                brightness = state.attributes.get("brightness")
                states[state.entity_id] = (
                    f"{state.state}@{brightness}" if brightness else state.state
                )
        return states

    async def set_state(self, entity_id: str, on: bool) -> None:
        """Switch a device directly (not through the agent)."""
        await self.hass.services.async_call(
            entity_id.split(".")[0],
            "turn_on" if on else "turn_off",
            {"entity_id": entity_id},
            blocking=True,
        )
        # Template entities follow their input_boolean a moment later.
        await self.hass.async_block_till_done()

    async def forget_session(self) -> None:
        """The `forget_session` service for the Dev user (buffer off)."""
        from custom_components.local_assistant.const import DOMAIN

        await self.hass.services.async_call(
            DOMAIN,
            "forget_session",
            {"config_entry_id": self.entry.entry_id, "speaker": f"user:{self.user_id}"},
            blocking=True,
        )


def agent_entry(
    base_url: str,
    *,
    agent: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> Any:
    """Our config entry with `scripts/develop`'s settings and HA's Assist API only.

    `agent` adds to (or overrides) the conversation subentry, `options` the entry's.
    """
    from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_PROMPT
    from homeassistant.helpers import llm
    from pytest_homeassistant_custom_component.common import MockConfigEntry

    from custom_components.local_assistant.const import DOMAIN

    data = {
        CONF_MODEL: MODEL_ALIAS,
        CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
        CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
        "tool_bias": True,
        "temperature": 0.6,
        "max_tokens": 512,
        **(agent or {}),
    }
    return MockConfigEntry(
        domain=DOMAIN,
        title="Local Assistant",
        data={"base_url": base_url, "api_key": ""},
        options={"extraction": "off", "timeout": 600, **(options or {})},
        subentries_data=[
            {
                "subentry_type": "conversation",
                "data": data,
                "title": "Local Assistant",
                "unique_id": None,
            }
        ],
    )


@contextlib.asynccontextmanager
async def real_home(
    base_url: str,
    *,
    agent: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> Any:
    """HA with the dev home; the agent on `base_url` with `scripts/develop`'s settings."""
    from homeassistant import loader
    from homeassistant.setup import async_setup_component
    from pytest_homeassistant_custom_component.common import async_test_home_assistant

    import custom_components.local_assistant  # noqa: F401
    from tests.helpers.dev_home import async_setup_dev_home, live_data_options

    with tempfile.TemporaryDirectory(prefix="local-assistant-home-") as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)  # allow custom_components
            assert await async_setup_component(hass, "homeassistant", {})
            await async_setup_dev_home(hass)
            user = await hass.auth.async_create_user("Dev", group_ids=["system-admin"])

            entry = agent_entry(
                base_url,
                agent={**live_data_options(), **(agent or {})},
                options=options,
            )
            entry.add_to_hass(hass)
            assert await hass.config_entries.async_setup(entry.entry_id)
            await hass.async_block_till_done()
            try:
                yield RealHome(hass, entry, user.id)
            finally:
                await hass.config_entries.async_unload(entry.entry_id)
                await hass.async_block_till_done()


def run_and_report(
    module: str,
    args: argparse.Namespace,
    extra: list[str],
    main: Any,
    report: Any,
    describe: str,
) -> None:
    """A real-model benchmark's command line: server, baseline, this code, report.

    `main(base_url)` returns this checkout's results (JSON-able);
    `report(label, results)` prints one code's figures.
    """
    from benchmarks._harness import machine, run

    with model_server(args.base_url) as base_url:
        print(machine())
        print(f"server: {base_url} (bundled model), {describe}")
        baseline = (
            run_baseline(module, args.baseline, base_url, extra)
            if args.baseline
            else None
        )
        results = run(lambda: main(base_url))
        if args.json:
            Path(args.json).write_text(json.dumps(results), encoding="utf-8")
            return
        if baseline is not None:
            report(f"baseline {args.baseline}", baseline)
        report("this checkout", results)
