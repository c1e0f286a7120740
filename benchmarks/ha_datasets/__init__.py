"""The Home LLM Leaderboard's assist datasets as a benchmark of this integration.

The leaderboard (allenporter/home-assistant-datasets) scores conversation agents on
`assist-mini` (49 device commands in small synthetic homes, each run 4 times: 196)
and `questions` (37 state questions, each run 10 times: 370). This runs its collect
and eval in process, on three systems, all on one model server:

- `ours`: this integration's agent as `benchmarks/_real_home.py` configures it, with
  HA's Assist API only (no live-data tools); from `--code CHECKOUT` (default: this one);
- `ha`: HA's built-in agent, `conversation.home_assistant` (no model);
- `plain`: the leaderboard's own agent for OpenAI-compatible servers,
  `vicuna_conversation`, configured as its `models/*.yaml` do.

Get the four repositories (nothing of theirs is copied into this repository):

    mkdir -p ~/.cache/local_assistant/ha_datasets && cd ~/.cache/local_assistant/ha_datasets
    git clone https://github.com/allenporter/home-assistant-datasets
    git -C home-assistant-datasets checkout d5ebbf09893d5753e051cdda76c6dbba479fa116
    git clone https://github.com/allenporter/synthetic-home
    git -C synthetic-home checkout 16164d5d72c321a6d85ccb273f8845830b33c733      # 5.0.3
    git clone https://github.com/allenporter/home-assistant-synthetic-home
    git -C home-assistant-synthetic-home checkout 421cdd91badcc8fedfa63ac156f409772b316e14
    git clone https://github.com/allenporter/hass-openai-custom-conversation
    git -C hass-openai-custom-conversation checkout 73731d4f12cd2fd9f3c82b980a720a703b75a74a

(`synthetic-home` is the library, `home-assistant-synthetic-home` the HA custom
component that loads its homes, `hass-openai-custom-conversation` holds
`vicuna_conversation`. Their only Python needs beyond `.venv` are `mashumaro`, PyYAML
and python-slugify, which HA already brings.) Then, from the repository root:

    .venv/bin/python -m benchmarks.ha_datasets --systems ha            # no model: 4 min
    flock /tmp/local-model.lock .venv/bin/python -m benchmarks.ha_datasets \\
        --set assist-mini --systems ours,plain --json OUT.json

Options: `--set` (default `assist-mini,questions`), `--systems` (default
`ours,ha,plain`), `--cache DIR` (the folder of the four clones) or each clone on its
own (`--datasets`, `--synthetic-home`, `--synthetic-home-component`,
`--openai-custom`), `--count N` (runs per sentence; default the dataset card's),
`--limit N` (the first N sentences of each category), `--match TEXT` (task ids
containing TEXT), `--timeout S` / `--tries N` (the leaderboard's 40 s and 3),
`--base-url URL` (a running server; default: the bundled model started on a free
port; `LOCAL_ASSISTANT_MODEL_CACHE_RAM=0` in the environment starts it keeping one
cached prompt, as Swama does), `--swama` (requests rewritten as Swama passes them on,
through `benchmarks/_swama_filter.py`), `--code CHECKOUT`, `--baseline REF` (also
`ours` on a git ref, same server) and `--json OUT` (every case: sentence, expectation,
answer, tool calls from the trace, the chat log with prompt and tool results, the
state diff, the rules and the verdict).

How the leaderboard is reproduced: `cases.py` (the records, expanded by the
leaderboard's own loader), `collect.py` (a fresh HA per case, as its pytest collect),
`judge.py` (its eval rules: deterministic, no LLM judge), `report.py` (passed / total
as its `reports-by-category.yaml` counts, and the median seconds per case).
"""
