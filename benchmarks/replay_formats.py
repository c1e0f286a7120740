"""How a replayed command should look, measured with direct requests to the bundled model.

    .venv/bin/python -m benchmarks.replay_formats [--tries 8]

The system prompt and tools are the agent's own (captured from one real turn in the
dev home); the history holds 1 or 3 earlier light commands in one of these forms, then
comes the next command. Counted: how often the model answers it with a tool call
(temperature 0.6, the default), and for three follow-ups ("Turn it on again", "And the
bedroom light?", "And the living room?") how often it calls the right tool for the
right device.

  text          user, assistant's confirmation (the buffer before the fix)
  full          user, assistant tool call, tool result, confirmation (HA core's chat log)
  swama         the same as Swama renders it: the assistant's tool_calls dropped
  user only     the user's words alone (the buffer now)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from benchmarks._real_home import code_path

CODE = code_path(sys.argv)

from benchmarks._harness import machine, run  # noqa: E402
from benchmarks._real_home import model_server, real_home  # noqa: E402

DEVICES = (
    ("Kitchen Light", "kitchen light"),
    ("Living Room Light", "living room light"),
    ("Bedroom Light", "bedroom light"),
)
FORMATS = ("text", "full", "swama", "user only")
FOLLOW_UPS = (  # (earlier command index, text, tool, device words)
    (1, "Turn it on again", "HassTurnOn", "living"),
    (0, "And the bedroom light?", "HassTurnOn", "bedroom"),
    (2, "And the living room?", "HassTurnOn", "living"),
)


def exchange(index: int, form: str) -> list[dict[str, Any]]:
    """The index-th earlier command (alternately on and off), replayed in `form`."""
    name, spoken = DEVICES[index % 3]
    verb = "on" if index % 2 == 0 else "off"
    tool = "HassTurnOn" if verb == "on" else "HassTurnOff"
    args = {"name": name, "domain": "light"}
    user = {"role": "user", "content": f"Turn {verb} the {spoken}"}
    answer = {"role": "assistant", "content": f"The {spoken} was turned {verb}."}
    result = {
        "role": "tool",
        "tool_call_id": f"call{index}",
        "content": f"Result of {tool}({json.dumps(args, sort_keys=True)}): "
        + json.dumps(
            {
                "speech": {},
                "response_type": "action_done",
                "data": {"targets": [], "success": [{"name": name}], "failed": []},
            }
        ),
    }
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"call{index}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(args)},
            }
        ],
    }
    if form == "text":
        return [user, answer]
    if form == "full":
        return [user, call, result, answer]
    if form == "swama":
        return [user, {"role": "assistant", "content": ""}, result, answer]
    return [user]


async def capture_prompt(base_url: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """The agent's system message(s) and tools, from one real turn."""
    async with real_home(base_url, agent={"local_intents": False}) as home:
        completions = home.entry.runtime_data.client.chat.completions
        original = completions.create
        seen: list[dict[str, Any]] = []

        async def spy(**kwargs: Any) -> Any:
            seen.append(kwargs.get("extra_body") or kwargs)
            return await original(**kwargs)

        completions.create = spy
        await home.converse("hello")
    body = seen[0]
    system = [m for m in body["messages"] if m["role"] == "system"]
    return system, body["tools"]


async def ask(client: Any, messages: list[Any], tools: list[Any]) -> list[Any]:
    import openai

    try:
        reply = await client.chat.completions.create(
            model="local",
            messages=messages,
            tools=tools,
            temperature=0.6,
            max_tokens=120,
        )
    except openai.APIError:
        return []  # llama.cpp's error for tool JSON it cannot parse: no call
    return list(reply.choices[0].message.tool_calls or [])


async def main(args: argparse.Namespace, base_url: str) -> None:
    import openai

    system, tools = await capture_prompt(base_url)
    client = openai.AsyncOpenAI(base_url=base_url, api_key="none", max_retries=0)
    print("\nnext command answered with a tool call, and follow-ups right:")
    for form in FORMATS:
        cells = []
        for earlier in (1, 3):
            calls = 0
            for _ in range(args.tries):
                history = [m for i in range(earlier) for m in exchange(i, form)]
                _, spoken = DEVICES[earlier % 3]
                verb = "on" if earlier % 2 == 0 else "off"
                nxt = {"role": "user", "content": f"Turn {verb} the {spoken}"}
                calls += bool(await ask(client, [*system, *history, nxt], tools))
            cells.append(f"after {earlier}: {calls}/{args.tries}")
        right = 0
        for index, text, tool, words in FOLLOW_UPS:
            for _ in range(args.tries):
                messages = [
                    *system,
                    *exchange(index, form),
                    {"role": "user", "content": text},
                ]
                made = await ask(client, messages, tools)
                right += any(
                    c.function.name == tool and words in c.function.arguments.lower()
                    for c in made
                )
        print(
            f"  {form:>10}: {', '.join(cells)}; follow-ups right "
            f"{right}/{len(FOLLOW_UPS) * args.tries}"
        )


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url")
    parser.add_argument("--code")
    parser.add_argument("--tries", type=int, default=8)
    args = parser.parse_args()
    with model_server(args.base_url) as base_url:
        print(machine())
        print(f"server: {base_url} (bundled model), {args.tries} tries per cell")
        run(lambda: main(args, base_url))


if __name__ == "__main__":
    cli()
