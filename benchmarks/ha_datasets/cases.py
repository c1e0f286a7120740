"""The cases of a dataset, expanded as the leaderboard's collect expands them.

A record file (e.g. `assist-mini/home5-cn-light/light.yaml`) holds tests; each test
has sentences, a `setup` (entity states that override the folder's `_fixtures.yaml`
inventory) and what is expected. Every sentence is one task, run `count` times (the
dataset card's `count`: 4 for assist-mini, 10 for questions), each time in a fresh
Home Assistant. The leaderboard's own code does the expansion
(`read_dataset_records`, `generate_assist_eval_tasks`, imported from the local
clone); the inventory merge is its `pytest_data_loader.mock_synthetic_home_content`
fixture, restated here because pytest fixtures cannot be called directly.

Two tests of one record with the same sentence make the same task id: the
leaderboard's collect writes both to the same output file and the second one
overwrites the first, so only the second is judged. `load_cases` keeps only that
one, so the totals match the leaderboard's (assist-mini 49 x 4 = 196, questions
37 x 10 = 370).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Case:
    """One run of one sentence in its home."""

    dataset: str
    task: Any  # home_assistant_datasets.datasets.assist_eval_task.EvalTask
    home_yaml: str

    @property
    def task_id(self) -> str:
        return str(self.task.task_id)

    @property
    def sentence(self) -> str:
        return str(self.task.input_text)

    @property
    def categories(self) -> list[str]:
        return list(self.task.categories)

    def expected(self) -> dict[str, Any]:
        """The task as the leaderboard's collect records it (`task` in its output)."""
        import dataclasses

        action = self.task.action
        task: dict[str, Any] = {"input_text": self.sentence}
        if action.expect_changes:
            task["expect_changes"] = {
                k: dataclasses.asdict(v) for k, v in action.expect_changes.items()
            }
        if action.expect_response:
            task["expect_response"] = action.expect_response
        if action.expect_tool_call:
            task["expect_tool_call"] = action.expect_tool_call.to_dict()
        return task


def home_yaml(task: Any) -> str:
    """The record folder's `_fixtures.yaml` with the test's `setup` states merged in."""
    fixture_path = task.record_source.record_path.parent / "_fixtures.yaml"
    home = yaml.load(
        fixture_path.read_text(), Loader=yaml.Loader
    )  # as the leaderboard reads it
    entities = {entity["id"]: entity for entity in home.get("entities", [])}
    for entity_id, state in (task.action.setup or {}).items():
        if (found := entities.get(entity_id)) is None:
            raise ValueError(f"setup entity {entity_id} not in {fixture_path}")
        if state.state is not None:
            found["state"] = state.state
        if state.attributes is not None:
            found["attributes"] = {**found.get("attributes", {}), **state.attributes}
    home["entities"] = list(entities.values())
    return str(yaml.dump(home, explicit_start=True, sort_keys=False))


def dataset_dir(datasets: Path, name: str) -> Path:
    """The folder of a dataset (`assist-mini`, `questions`, ...) in the clone."""
    path = datasets / "datasets" / name
    if not (path / "dataset_card.yaml").is_file():
        raise SystemExit(f"ha_datasets: no dataset {name!r} in {datasets}/datasets")
    return path


def load_cases(
    datasets: Path, name: str, count: int | None = None, limit: int | None = None
) -> list[Case]:
    """The dataset's cases in the leaderboard's order.

    `count` overrides the card's runs per sentence; `limit` keeps the first N
    sentences of each category (by a record's first category), each with all its runs.
    """
    from home_assistant_datasets.datasets.assist_data_loader import (
        read_dataset_records,
    )
    from home_assistant_datasets.datasets.assist_eval_task import (
        generate_assist_eval_tasks,
    )
    from home_assistant_datasets.datasets.dataset_card import read_dataset_card

    card = read_dataset_card(dataset_dir(datasets, name))
    runs = count if count is not None else card.count
    tasks = [
        task
        for record in read_dataset_records(card)
        for task in generate_assist_eval_tasks(record, runs)
    ]
    # The last task with an id wins (its output file overwrites the earlier ones).
    last = {task.task_id: index for index, task in enumerate(tasks)}
    tasks = [task for index, task in enumerate(tasks) if last[task.task_id] == index]
    if limit is not None:
        sentences: dict[str, list[str]] = defaultdict(list)
        kept = []
        for task in tasks:
            seen = sentences[task.categories[0]]
            key = f"{task.record_source.record_id}/{task.input_text}"
            if key not in seen:
                seen.append(key)
            if seen.index(key) < limit:
                kept.append(task)
        tasks = kept
    return [Case(dataset=name, task=task, home_yaml=home_yaml(task)) for task in tasks]
