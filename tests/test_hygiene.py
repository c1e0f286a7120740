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
