"""scripts/check-ha-compat: a synthetic "new HA" tree proves it fails on real breaks.

The last tests run it on our real code: against the installed HA (always) and
against the newest HA wheel (downloaded without installing; skipped only when
the package index cannot be reached).
"""

from __future__ import annotations

from collections.abc import Callable
import json
from pathlib import Path
import textwrap

import homeassistant
import pytest

from scripts import ha_compat

# --- a tiny Home Assistant ----------------------------------------------------------

NEW_HA: dict[str, str] = {
    "homeassistant/__init__.py": """
        from probatio.compat import install_as_voluptuous

        install_as_voluptuous()
    """,
    "homeassistant/const.py": """
        from enum import StrEnum
        from functools import partial
        from typing import Final

        from .helpers.deprecation import DeprecatedConstant, check_if_deprecated_constant

        MAJOR_VERSION: Final = 2099
        MINOR_VERSION: Final = 1
        PATCH_VERSION: Final = "0"
        CONF_MODEL: Final = "model"


        class Platform(StrEnum):
            AI_TASK = "ai_task"
            CONVERSATION = "conversation"


        __getattr__ = partial(check_if_deprecated_constant, module_globals=globals())
    """,
    "homeassistant/package_constraints.txt": """
        openai==3.26.0
    """,
    "homeassistant-2099.1.0.dist-info/METADATA": """
        Name: homeassistant
        Requires-Dist: probatio==0.13.0
        Requires-Dist: aiohttp==3.14.5
    """,
    "homeassistant/helpers/__init__.py": "",
    "homeassistant/helpers/deprecation.py": """
        def deprecated_function(replacement, *, breaks_in_ha_version=None):
            return lambda func: func

        def check_if_deprecated_constant(name, module_globals):
            raise AttributeError(name)

        class DeprecatedConstant:
            pass
    """,
    "homeassistant/helpers/frame.py": """
        def report_usage(what, **kwargs):
            pass
    """,
    "homeassistant/helpers/llm.py": """
        from dataclasses import dataclass
        from typing import Any

        from . import frame


        @dataclass(slots=True)
        class ToolInput:
            tool_name: str
            tool_args: dict[str, Any]


        @dataclass
        class ToolResult:
            data: dict[str, Any]
            error: bool = False


        class Tool:
            name: str
            integration: str | None = None

            async def async_call(self, hass, tool_input, llm_context) -> ToolResult:
                raise NotImplementedError


        async def async_get_api(hass, api_id, llm_context):
            return None
    """,
    "homeassistant/components/__init__.py": "",
    "homeassistant/components/conversation/__init__.py": """
        from .chat_log import ChatLog, ToolResultContent

        __all__ = ["ChatLog", "ToolResultContent"]
    """,
    "homeassistant/components/conversation/chat_log.py": """
        from dataclasses import dataclass, field

        from homeassistant.helpers import frame, llm


        @dataclass(frozen=True)
        class ToolResultContent:
            agent_id: str
            tool_call_id: str
            tool_name: str
            result: llm.ToolResult
            role: str = field(init=False, default="tool_result")


        @dataclass
        class ChatLog:
            conversation_id: str
            content: list

            async def async_provide_llm_data(self, llm_context, user_llm_hass_api=None):
                return None

            @property
            def unresponded_tool_results(self) -> bool:
                return False
    """,
}

OUR_CODE: dict[str, str] = {
    "manifest.json": json.dumps({"domain": "x", "requirements": ["openai>=2.8"]}),
    "__init__.py": """
        from homeassistant.const import CONF_MODEL, Platform
        import openai
        import voluptuous as vol

        PLATFORMS = (Platform.AI_TASK, Platform.CONVERSATION)
    """,
    "agent.py": """
        from homeassistant.components import conversation
        from homeassistant.helpers import llm


        async def handle(chat_log: conversation.ChatLog, ctx: object) -> None:
            await chat_log.async_provide_llm_data(ctx, user_llm_hass_api="assist")
            if chat_log.unresponded_tool_results:
                return
            await llm.async_get_api(None, "assist", ctx)
            llm.ToolInput(tool_name="x", tool_args={})


        def result(data: dict) -> conversation.ToolResultContent:
            return conversation.ToolResultContent(
                agent_id="a", tool_call_id="b", tool_name="c", result=llm.ToolResult(data)
            )
    """,
    "tools.py": """
        from homeassistant.helpers import llm


        class BaseTool(llm.Tool):
            integration = "x"


        class WeatherTool(BaseTool):
            name = "weather"

            async def async_call(self, hass, tool_input, llm_context):
                return llm.ToolResult({"sunny": True})
    """,
}

type Files = dict[str, str]

NEW_HA = {name: textwrap.dedent(text).lstrip("\n") for name, text in NEW_HA.items()}
OUR_CODE = {name: textwrap.dedent(text).lstrip("\n") for name, text in OUR_CODE.items()}


def write(root: Path, files: Files) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run_check(
    tmp_path: Path,
    change_ha: Callable[[Files], None] | None = None,
    change_ours: Callable[[Files], None] | None = None,
) -> ha_compat.Report:
    ha, ours = dict(NEW_HA), dict(OUR_CODE)
    if change_ha:
        change_ha(ha)
    if change_ours:
        change_ours(ours)
    tree = ha_compat.HATree(write(tmp_path / "ha", ha))
    return ha_compat.check(tree, write(tmp_path / "pkg", ours))


def failures(report: ha_compat.Report) -> list[str]:
    return [f.render(Path("/")) for f in report.failures]


def edit(files: Files, name: str, old: str, new: str) -> None:
    assert old in files[name], f"{old!r} not in {name}"
    files[name] = files[name].replace(old, new)


# --- the synthetic tree ---------------------------------------------------------------


def test_clean_code_passes(tmp_path: Path) -> None:
    report = run_check(tmp_path)
    assert report.version == "2099.1.0"
    assert failures(report) == []
    assert report.checked > 15


BREAKS: dict[str, tuple[Callable[[Files], None], str, str]] = {
    "removed function": (
        lambda ha: edit(
            ha,
            "homeassistant/helpers/llm.py",
            "async def async_get_api(",
            "async def async_get_api_v2(",
        ),
        "agent.py:9: homeassistant.helpers.llm.async_get_api",
        "not found in HA 2099.1.0",
    ),
    "removed module": (
        lambda ha: ha.pop("homeassistant/helpers/llm.py"),
        "agent.py:2: homeassistant.helpers.llm",
        "not found",
    ),
    "removed re-export": (
        lambda ha: edit(
            ha,
            "homeassistant/components/conversation/__init__.py",
            "from .chat_log import ChatLog, ToolResultContent",
            "from .chat_log import ChatLog",
        ),
        "agent.py:14: homeassistant.components.conversation.ToolResultContent",
        "not found",
    ),
    "removed enum member": (
        lambda ha: edit(ha, "homeassistant/const.py", 'AI_TASK = "ai_task"\n', ""),
        "__init__.py:5: homeassistant.const.Platform.AI_TASK",
        "not found",
    ),
    "removed method used on an annotated parameter": (
        lambda ha: edit(
            ha,
            "homeassistant/components/conversation/chat_log.py",
            "async def async_provide_llm_data(",
            "async def async_provide_llm_data_v2(",
        ),
        "agent.py:6: ChatLog.async_provide_llm_data",
        "no member 'async_provide_llm_data'",
    ),
    "renamed dataclass field": (
        lambda ha: edit(
            ha, "homeassistant/helpers/llm.py", "tool_args: dict", "arguments: dict"
        ),
        "agent.py:10: ToolInput(tool_args=...)",
        "keyword 'tool_args' is not accepted",
    ),
    "removed keyword": (
        lambda ha: edit(
            ha,
            "homeassistant/components/conversation/chat_log.py",
            "llm_context, user_llm_hass_api=None)",
            "llm_context, user_llm_api=None)",
        ),
        "agent.py:6: ChatLog.async_provide_llm_data(user_llm_hass_api=...)",
        "not accepted",
    ),
    "deprecated by decorator": (
        lambda ha: edit(
            ha,
            "homeassistant/helpers/llm.py",
            "async def async_get_api(",
            "from .deprecation import deprecated_function\n\n\n"
            '@deprecated_function("x", breaks_in_ha_version="2100.1")\n'
            "async def async_get_api(",
        ),
        "agent.py:9: homeassistant.helpers.llm.async_get_api",
        "decorated with @deprecated_function",
    ),
    "deprecated by report_usage": (
        lambda ha: edit(
            ha,
            "homeassistant/helpers/llm.py",
            "    return None",
            '    frame.report_usage("calls async_get_api")\n    return None',
        ),
        "agent.py:9: homeassistant.helpers.llm.async_get_api",
        "reports its use",
    ),
    "deprecated member by docstring": (
        lambda ha: edit(
            ha,
            "homeassistant/components/conversation/chat_log.py",
            "        return False",
            '        """Deprecated, read content instead."""\n        return False',
        ),
        "agent.py:7: ChatLog.unresponded_tool_results",
        "docstring says it is deprecated",
    ),
    "deprecated by a report message naming it": (
        lambda ha: edit(
            ha,
            "homeassistant/helpers/llm.py",
            "@dataclass(slots=True)\nclass ToolInput:",
            'frame.report_usage("uses `ToolInput`, which is deprecated; use X")\n\n\n'
            "@dataclass(slots=True)\nclass ToolInput:",
        ),
        "agent.py:10: homeassistant.helpers.llm.ToolInput",
        "reported as deprecated",
    ),
    "deprecated constant": (
        lambda ha: edit(
            ha,
            "homeassistant/const.py",
            'CONF_MODEL: Final = "model"',
            '_DEPRECATED_CONF_MODEL = DeprecatedConstant("model", "CONF_X", "2100.1")',
        ),
        "__init__.py:1: homeassistant.const.CONF_MODEL",
        "deprecated constant",
    ),
    "import no longer installed": (
        lambda ha: edit(
            ha, "homeassistant/__init__.py", "install_as_voluptuous()", "pass"
        ),
        "__init__.py:3: import voluptuous",
        "neither installs nor aliases 'voluptuous'",
    ),
    "requirement outside the new pin": (
        lambda ha: edit(
            ha,
            "homeassistant/package_constraints.txt",
            "openai==3.26.0",
            "openai==2.5.0",
        ),
        "manifest.json:1: openai>=2.8",
        "pins openai==2.5.0",
    ),
}


@pytest.mark.parametrize("name", BREAKS)
def test_each_break_fails_with_file_and_line(tmp_path: Path, name: str) -> None:
    change, where, why = BREAKS[name]
    report = run_check(tmp_path, change_ha=change)
    found = failures(report)
    assert any(where in f and why in f for f in found), found


SECTION_7: dict[str, tuple[Callable[[Files], None], str]] = {
    "tool result built with tool_result=": (
        lambda ours: edit(
            ours, "agent.py", "result=llm.ToolResult(data)", "tool_result=data"
        ),
        "ToolResultContent(tool_result=...)",
    ),
    "tool returns a plain dict": (
        lambda ours: edit(
            ours, "tools.py", 'llm.ToolResult({"sunny": True})', '{"sunny": True}'
        ),
        "WeatherTool.async_call: returns a plain dict",
    ),
    "tool without integration": (
        lambda ours: edit(ours, "tools.py", '    integration = "x"', '    topic = "x"'),
        "BaseTool.integration",
    ),
    "voluptuous_openapi import": (
        lambda ours: edit(
            ours,
            "__init__.py",
            "import openai",
            "from voluptuous_openapi import convert",
        ),
        "import voluptuous_openapi",
    ),
}


@pytest.mark.parametrize("name", SECTION_7)
def test_section_7_patterns(tmp_path: Path, name: str) -> None:
    change, symbol = SECTION_7[name]
    found = failures(run_check(tmp_path, change_ours=change))
    assert any(symbol in f for f in found), found


def test_tool_result_deltas_need_a_result_field(tmp_path: Path) -> None:
    """The delta rule follows the tree: only when ToolResultContentDeltaDict has `result`."""

    def with_delta(ha: Files) -> None:
        ha["homeassistant/components/conversation/chat_log.py"] += textwrap.dedent(
            """

            class ToolResultContentDeltaDict(dict):
                result: llm.ToolResult
                tool_result: dict
            """
        )

    def add_delta(ours: Files) -> None:
        ours["delta.py"] = 'DELTA = {"role": "tool_result", "tool_result": {}}\n'

    report = run_check(tmp_path, with_delta, add_delta)
    assert any('delta.py:1: "tool_result" delta key' in f for f in failures(report))


def test_compat_marker_allows_a_use(tmp_path: Path) -> None:
    """A `# compat:` marker (same line, line above, or enclosing def) allows it."""

    def old_api(ours: Files) -> None:
        ours["compat.py"] = textwrap.dedent(
            """
            from homeassistant.helpers import llm


            def one():
                return llm.Gone1  # compat: 2026.2


            def two():
                # compat: 2026.2 (removed later)
                return llm.Gone2


            def three():  # compat: 2026.2
                x = 1
                return llm.Gone3 if x else None


            def four():
                return llm.Gone4
            """
        )

    report = run_check(tmp_path, change_ours=old_api)
    allowed = {f.symbol.rsplit(".", 1)[-1] for f in report.allowed}
    assert allowed == {"Gone1", "Gone2", "Gone3"}
    assert all(f.allowed_by == "2026.2" for f in report.allowed)
    assert [f.symbol for f in report.failures] == ["homeassistant.helpers.llm.Gone4"]


def test_newer_python_syntax_in_the_tree(tmp_path: Path) -> None:
    """A 3.14 tree (PEP 758 `except A, B:`) is parsed by this 3.13."""

    def py314(ha: Files) -> None:
        ha["homeassistant/helpers/llm.py"] += textwrap.dedent(
            """

            def parse(text):
                try:
                    return int(text)
                except ValueError, TypeError:
                    return None
            """
        )

    assert failures(run_check(tmp_path, change_ha=py314)) == []


def test_command_line_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 1 and `file:line` on a break, 0 when clean, 2 without a tree."""
    ha = write(tmp_path / "ha", NEW_HA)
    pkg = write(tmp_path / "pkg", OUR_CODE)
    assert ha_compat.main(["--tree", str(ha), "--package", str(pkg)]) == 0
    assert "OK" in capsys.readouterr().out

    (ha / "homeassistant/helpers/llm.py").write_text("", encoding="utf-8")
    assert ha_compat.main(["--tree", str(ha), "--package", str(pkg)]) == 1
    captured = capsys.readouterr()
    assert f"{pkg}/agent.py:9: homeassistant.helpers.llm.async_get_api" in captured.out
    assert "FAIL" in captured.err

    empty = tmp_path / "empty"
    empty.mkdir()
    assert ha_compat.main(["--tree", str(empty), "--package", str(pkg)]) == 2


def test_unpack_wheel_keeps_python_files(tmp_path: Path) -> None:
    """Only the Python files and metadata are unpacked, once."""
    import zipfile

    wheel = tmp_path / "homeassistant-2099.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in NEW_HA.items():
            archive.writestr(name, textwrap.dedent(text))
        archive.writestr("homeassistant/components/frontend/big.js", "x" * 1000)
    root = ha_compat.unpack_wheel(wheel)
    assert (root / "homeassistant/helpers/llm.py").is_file()
    assert not (root / "homeassistant/components/frontend/big.js").exists()
    assert ha_compat.HATree(root).version == "2099.1.0"
    assert ha_compat.unpack_wheel(wheel) == root


# --- our real code --------------------------------------------------------------------


def test_our_code_against_installed_ha() -> None:
    """The minimum supported HA: everything exists; 2026.11-only uses are marked."""
    tree = ha_compat.HATree(Path(homeassistant.__file__).parent.parent)
    assert tree.version == homeassistant.const.__version__
    report = ha_compat.check(tree)
    assert failures(report) == []
    assert report.checked > 300


def test_our_code_against_the_newest_ha_wheel() -> None:
    """The newest HA on the package index: nothing we use is gone or deprecated."""
    try:
        wheel = ha_compat.download_wheel(timeout=300)
    except ha_compat.DownloadError as err:
        pytest.skip(f"no HA wheel (package index unreachable?): {err}")
    tree = ha_compat.HATree(ha_compat.unpack_wheel(wheel))
    report = ha_compat.check(tree)
    assert failures(report) == [], f"HA {report.version}"
    # The shims' old-API lines are the only allowed ones.
    assert {f.path.name for f in report.allowed} <= {"compat.py"}
