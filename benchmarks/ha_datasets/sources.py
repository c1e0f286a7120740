"""The leaderboard's repositories, read from local clones (never copied here).

Four clones, by default side by side in `~/.cache/local_assistant/ha_datasets/`:

- `home-assistant-datasets`: the datasets and the leaderboard's own Python package
  (`home_assistant_datasets`), whose record loader, task expansion and entity-state diff
  we import from the clone;
- `synthetic-home`: the `synthetic_home` library that turns an inventory into devices;
- `home-assistant-synthetic-home`: the `synthetic_home` custom component (HA side);
- `hass-openai-custom-conversation`: the `vicuna_conversation` custom component, the
  leaderboard's agent for OpenAI-compatible servers (its `models/*.yaml` with
  `domain: vicuna_conversation`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import subprocess
import sys

CACHE = Path.home() / ".cache" / "local_assistant" / "ha_datasets"
URLS = {
    "datasets": "https://github.com/allenporter/home-assistant-datasets",
    "synthetic_home": "https://github.com/allenporter/synthetic-home",
    "synthetic_home_component": "https://github.com/allenporter/home-assistant-synthetic-home",
    "openai_custom": "https://github.com/allenporter/hass-openai-custom-conversation",
}


@dataclass(frozen=True)
class Sources:
    """Where each clone is."""

    datasets: Path
    synthetic_home: Path
    synthetic_home_component: Path
    openai_custom: Path

    def paths(self) -> dict[str, Path]:
        """Each clone by name."""
        return {
            "datasets": self.datasets,
            "synthetic_home": self.synthetic_home,
            "synthetic_home_component": self.synthetic_home_component,
            "openai_custom": self.openai_custom,
        }

    def check(self) -> None:
        """Exit with the clone commands when a clone is missing."""
        wanted = {
            "datasets": "home_assistant_datasets",
            "synthetic_home": "synthetic_home",
            "synthetic_home_component": "custom_components/synthetic_home",
            "openai_custom": "custom_components/vicuna_conversation",
        }
        missing = [
            f"  git clone {URLS[name]} {path}"
            for name, path in self.paths().items()
            if not (path / wanted[name]).is_dir()
        ]
        if missing:
            sys.exit(
                "ha_datasets: missing local copies; get them with\n"
                + "\n".join(missing)
                + "\n(see benchmarks/ha_datasets/__init__.py for the commits)"
            )

    def commits(self) -> dict[str, str]:
        """The commit each clone has checked out ('?' when not a git clone)."""
        result = {}
        for name, path in self.paths().items():
            done = subprocess.run(
                ["git", "-C", str(path), "rev-parse", "HEAD"],
                capture_output=True,
                text=True,
                check=False,
            )
            result[name] = done.stdout.strip() if done.returncode == 0 else "?"
        return result

    def install(self) -> None:
        """Make the clones importable; call after `code_path` set our code up.

        `home_assistant_datasets` and `synthetic_home` go on `sys.path`; the two
        custom components join our `custom_components` package, whose `__path__`
        HA's loader scans for integrations.
        """
        for path in (self.datasets, self.synthetic_home):
            if str(path) not in sys.path:
                sys.path.append(str(path))
        import custom_components

        for path in (self.synthetic_home_component, self.openai_custom):
            folder = str(path / "custom_components")
            if folder not in custom_components.__path__:
                custom_components.__path__.append(folder)


def sources(
    cache: str | None,
    datasets: str | None = None,
    synthetic_home: str | None = None,
    synthetic_home_component: str | None = None,
    openai_custom: str | None = None,
) -> Sources:
    """The clones: each given path, else its folder under `cache` (or CACHE)."""
    root = Path(cache).expanduser() if cache else CACHE

    def pick(given: str | None, name: str) -> Path:
        return (Path(given).expanduser() if given else root / name).resolve()

    return Sources(
        datasets=pick(datasets, "home-assistant-datasets"),
        synthetic_home=pick(synthetic_home, "synthetic-home"),
        synthetic_home_component=pick(
            synthetic_home_component, "home-assistant-synthetic-home"
        ),
        openai_custom=pick(openai_custom, "hass-openai-custom-conversation"),
    )
