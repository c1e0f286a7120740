"""HACS and HA hygiene: manifest, hacs.json, brand icons, quality scale."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
import re

import homeassistant
import homeassistant.components
from packaging.requirements import Requirement
from PIL import Image
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "custom_components" / "local_assistant"
MANIFEST = json.loads((PACKAGE / "manifest.json").read_text(encoding="utf-8"))
QUALITY = yaml.safe_load((PACKAGE / "quality_scale.yaml").read_text(encoding="utf-8"))
# HA's own rule list, as a core AI integration of the same HA version fills it in.
CORE_RULES = yaml.safe_load(
    (
        Path(homeassistant.components.__file__).parent
        / "open_router"
        / "quality_scale.yaml"
    ).read_text(encoding="utf-8")
)["rules"]
BRONZE = [
    "action-setup", "appropriate-polling", "brands", "common-modules",
    "config-flow-test-coverage", "config-flow", "dependency-transparency",
    "docs-actions", "docs-high-level-description", "docs-installation-instructions",
    "docs-removal-instructions", "entity-event-setup", "entity-unique-id",
    "has-entity-name", "runtime-data", "test-before-configure", "test-before-setup",
    "unique-config-entry",
]  # fmt: skip
SILVER = [
    "action-exceptions", "config-entry-unloading", "docs-configuration-parameters",
    "docs-installation-parameters", "entity-unavailable", "integration-owner",
    "log-when-unavailable", "parallel-updates", "reauthentication-flow", "test-coverage",
]  # fmt: skip


def test_manifest_is_complete() -> None:
    for key in (
        "domain", "name", "version", "documentation", "issue_tracker", "codeowners",
        "config_flow", "dependencies", "iot_class", "integration_type", "loggers",
        "requirements",
    ):  # fmt: skip
        assert MANIFEST.get(key), key
    assert MANIFEST["domain"] == PACKAGE.name
    assert MANIFEST["iot_class"] == "local_polling"
    assert MANIFEST["integration_type"] == "service"
    assert MANIFEST["documentation"].startswith("https://")
    assert MANIFEST["issue_tracker"].startswith("https://")
    assert all(owner.startswith("@") for owner in MANIFEST["codeowners"])
    assert "openai" in MANIFEST["loggers"]
    for line in MANIFEST["requirements"]:
        requirement = Requirement(line)
        # HA pins its own version through package constraints: never pin here.
        assert not any(s.operator == "==" for s in requirement.specifier), line
        assert requirement.specifier, f"{line} needs a lower bound"


# The openai versions HA pins through package_constraints: the one we test with
# (HA 2026.2, read from the installed HA) and the newest HA's (2026.11, checked by
# scripts/check-ha-compat). Both must be inside the manifest's range.
HA_2026_11_OPENAI = "3.26.0"


def test_openai_requirement_is_a_bounded_range_we_test() -> None:
    """The agent hands the SDK a body it builds itself (extra_body; tests/
    test_request_body.py pins what is sent). A new major SDK version may change
    that silently, so the range stops before the next major version."""
    (line,) = [r for r in MANIFEST["requirements"] if Requirement(r).name == "openai"]
    specifier = Requirement(line).specifier
    assert any(s.operator in {"<", "<="} for s in specifier), f"{line}: no upper bound"
    assert not specifier.contains("4.0.0"), line
    constraints = (
        Path(homeassistant.__file__).parent / "package_constraints.txt"
    ).read_text(encoding="utf-8")
    pinned = re.search(r"^openai==(\S+)$", constraints, re.MULTILINE)
    assert pinned is not None
    for version in (pinned[1], HA_2026_11_OPENAI, importlib.metadata.version("openai")):
        assert specifier.contains(version), (line, version)


def test_hacs_json() -> None:
    hacs = json.loads((ROOT / "hacs.json").read_text(encoding="utf-8"))
    assert hacs["name"] == MANIFEST["name"]
    assert hacs["homeassistant"] == "2026.2.0"
    assert hacs["render_readme"] is True


@pytest.mark.parametrize(("name", "size"), [("icon.png", 256), ("icon@2x.png", 512)])
def test_brand_icons(name: str, size: int) -> None:
    """HA serves custom integrations' brand/ images (HACS and the UI show them)."""
    with Image.open(PACKAGE / "brand" / name) as image:
        assert image.format == "PNG"
        assert image.size == (size, size)
        assert image.mode == "RGBA"
        alpha = image.getchannel("A")
        assert alpha.getextrema() == (0, 255)  # a transparent background
        assert alpha.getbbox() is not None


def test_quality_scale_lists_every_rule_honestly() -> None:
    rules = QUALITY["rules"]
    assert set(rules) == set(CORE_RULES)
    for rule, value in rules.items():
        status = value if isinstance(value, str) else value["status"]
        assert status in {"done", "exempt", "todo"}, rule
        if status == "exempt":
            assert isinstance(value, dict), f"{rule}: an exemption needs a comment"
            assert len(value.get("comment", "")) > 20, rule


@pytest.mark.parametrize("rule", [*BRONZE, *SILVER])
def test_silver_reached(rule: str) -> None:
    value = QUALITY["rules"][rule]
    status = value if isinstance(value, str) else value["status"]
    assert status in {"done", "exempt"}, rule


def _rule(name: str) -> tuple[str, str]:
    value = QUALITY["rules"][name]
    if isinstance(value, str):
        return value, ""
    return value["status"], value.get("comment", "")


def _package_sources() -> dict[str, str]:
    return {
        path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
        for path in PACKAGE.rglob("*.py")
    }


def test_quality_scale_claims() -> None:
    """What quality_scale.yaml claims and the code can show, the code does."""
    sources = _package_sources()
    code = "\n".join(sources.values())

    # runtime-data: every hass.data key the package keeps is named, with its reason.
    status, comment = _rule("runtime-data")
    assert status == "done"
    keys = re.findall(r"^(DATA_\w+): HassKey", code, re.MULTILINE)
    assert keys
    for key in keys:
        assert key in comment, f"runtime-data does not say why {key} is in hass.data"

    # Stateless agents: availability rules are exempt together (as open_router).
    assert _rule("entity-unavailable")[0] == _rule("log-when-unavailable")[0]
    assert _rule("log-when-unavailable")[0] == "exempt"
    assert "_attr_available" not in code

    # reauthentication-flow: not only at set-up.
    status, comment = _rule("reauthentication-flow")
    assert status == "done"
    assert "ConfigEntryAuthFailed" in sources["__init__.py"]
    assert "async_start_reauth" in sources["entity.py"]
    assert "reply" in comment
    assert "extract" in comment

    # parallel-updates: every platform says it.
    for platform in ("conversation.py", "ai_task.py"):
        assert "PARALLEL_UPDATES = 0" in sources[platform], platform

    # dependency-transparency: the comment quotes each of the manifest's requirements.
    for requirement in MANIFEST["requirements"]:
        assert requirement in _rule("dependency-transparency")[1], requirement

    # diagnostics: they do not read runtime_data of an entry that is not loaded.
    assert "ConfigEntryState.LOADED" in sources["diagnostics.py"]
