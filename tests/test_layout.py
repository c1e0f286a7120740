"""The package's layout stays readable, and its "pure module" marks stay true.

A module is pure when it imports nothing from Home Assistant, neither
directly nor through another module of this package that does (anywhere in
the file: under ``TYPE_CHECKING`` and inside functions too). Every pure
module says so in its docstring with a line ``Pure module: ...no Home
Assistant imports.``, and no other module may carry that line. A mark that
also claims "standard library only" must be true as well. A package's
``__init__.py`` that holds nothing but a docstring is neither (it describes
its package). Importing a module also runs its parent packages'
``__init__.py``; those implicit imports do not count: pure means the module's
own code needs no Home Assistant, so it is tested directly and fast.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
import re
import sys
import textwrap

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "custom_components" / "local_assistant"
PACKAGE_NAME = "custom_components.local_assistant"
MAX_TOP_LEVEL_MODULES = 12
MARK = re.compile(r"^Pure module: .*no Home Assistant imports\.$", re.MULTILINE)
STDLIB_CLAIM = "standard library only"


@dataclass
class Module:
    """One file of the package, as the checker sees it."""

    name: str  # dotted, relative to the package; "" for its __init__.py
    path: Path
    shown: str  # the path inside the package, for messages
    is_package: bool
    docstring: str
    docstring_only: bool
    homeassistant: list[int] = field(default_factory=list)  # lines importing HA
    third_party: dict[str, int] = field(default_factory=dict)  # top name -> line
    siblings: dict[str, int] = field(default_factory=dict)  # module -> line

    @property
    def marked(self) -> bool:
        return bool(MARK.search(self.docstring))


def scan(package: Path, package_name: str) -> dict[str, Module]:
    """Every module of `package` with its imports, by dotted name."""
    modules: dict[str, Module] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        docstring = ast.get_docstring(tree) or ""
        body = tree.body[1:] if docstring else tree.body
        modules[".".join(parts)] = Module(
            name=".".join(parts),
            path=path,
            shown=path.relative_to(package).as_posix(),
            is_package=is_package,
            docstring=docstring,
            docstring_only=is_package and not body,
        )
    for module in modules.values():
        tree = ast.parse(module.path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    _record(module, alias.name, [], node.lineno, modules, package_name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    here = module.name.split(".") if module.name else []
                    if not module.is_package:
                        here = here[:-1]
                    here = here[: len(here) - (node.level - 1)]
                    base = ".".join([*here, *([node.module] if node.module else [])])
                    _add_sibling(module, base, node, modules)
                else:
                    _record(
                        module,
                        node.module or "",
                        [a.name for a in node.names],
                        node.lineno,
                        modules,
                        package_name,
                    )
    return modules


def _record(
    module: Module,
    imported: str,
    names: list[str],
    line: int,
    modules: dict[str, Module],
    package_name: str,
) -> None:
    top = imported.split(".")[0]
    if top == "homeassistant":
        module.homeassistant.append(line)
    elif imported == package_name or imported.startswith(package_name + "."):
        base = imported.removeprefix(package_name).lstrip(".")
        node = ast.ImportFrom(module=None, names=[ast.alias(n) for n in names])
        node.lineno = line
        _add_sibling(module, base, node, modules)
    elif top != "__future__" and top not in sys.stdlib_module_names:
        module.third_party.setdefault(top, line)


def _add_sibling(
    module: Module, base: str, node: ast.ImportFrom, modules: dict[str, Module]
) -> None:
    """`from <base> import a, b`: a and b may be modules themselves."""
    found = False
    for alias in node.names:
        name = f"{base}.{alias.name}" if base else alias.name
        if name in modules:
            module.siblings.setdefault(name, node.lineno)
            found = True
    if not found or any(
        (f"{base}.{a.name}" if base else a.name) not in modules for a in node.names
    ):
        module.siblings.setdefault(base, node.lineno)


def impurity(modules: dict[str, Module]) -> dict[str, str]:
    """Module name -> why it is not pure (absent when it is pure)."""
    reasons: dict[str, str] = {}
    for name, module in modules.items():
        if module.homeassistant:
            reasons[name] = f"imports homeassistant (line {module.homeassistant[0]})"
    changed = True
    while changed:  # an import of a module that is not pure makes one impure too
        changed = False
        for name, module in modules.items():
            if name in reasons:
                continue
            for sibling, line in module.siblings.items():
                if sibling in reasons and sibling != name:
                    reasons[name] = (
                        f"imports {sibling or '__init__'} (line {line}), which is not "
                        f"pure: {reasons[sibling]}"
                    )
                    changed = True
                    break
    return reasons


def problems(package: Path, package_name: str) -> list[str]:
    """Every mark that is missing or false, in words."""
    modules = scan(package, package_name)
    impure = impurity(modules)
    found: list[str] = []
    for name, module in modules.items():
        if module.docstring_only:
            continue
        if module.marked and name in impure:
            found.append(f"{module.shown} is marked pure but {impure[name]}")
        elif not module.marked and name not in impure:
            found.append(
                f"{module.shown} imports nothing from Home Assistant: say so in its "
                'docstring ("Pure module: standard library only, no Home Assistant '
                'imports.")'
            )
        if module.marked and STDLIB_CLAIM in MARK.search(module.docstring)[0]:
            found.extend(
                f"{module.shown} claims {STDLIB_CLAIM!r} but imports {top} (line {line})"
                for top, line in module.third_party.items()
            )
    return found


# --- the real package ------------------------------------------------------------------


def test_pure_marks_are_true_both_ways() -> None:
    assert problems(PACKAGE, PACKAGE_NAME) == []


def test_known_pure_and_glue_modules() -> None:
    """A sample, so the checker cannot pass by seeing nothing."""
    modules = scan(PACKAGE, PACKAGE_NAME)
    impure = impurity(modules)
    for name in ("llm.think", "llm.spoken", "tools.kite", "memory.facts", "const"):
        assert modules[name].marked, name
        assert name not in impure, name
    for name in ("memory.manager", "memory.store", "memory.extraction", "entity"):
        assert name in impure, name


def test_top_level_holds_what_home_assistant_looks_for() -> None:
    """HA's own files at the top (at most 12 modules); the rest in role subpackages."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
    for required in ("__init__.py", "const.py", "config_flow.py", "conversation.py"):
        assert required in top


def test_every_subpackage_says_what_it_holds() -> None:
    folders = {p.parent for p in PACKAGE.rglob("*.py")}
    for folder in folders:
        init = folder / "__init__.py"
        assert init.is_file(), f"{folder} has no __init__.py"
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert docstring, f"{init} needs a docstring saying what the package holds"


# --- the checker itself ---------------------------------------------------------------


def write_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for name, text in {"__init__.py": '"""A package."""\n', **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return package


PURE = '"""Something.\n\nPure module: standard library only, no Home Assistant imports.\n"""\n'


def test_checker_accepts_true_marks(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "a.py": PURE + "import json\n",
            "b.py": PURE + "from .a import x\n",
            "glue.py": '"""Glue."""\nfrom homeassistant.core import HomeAssistant\n',
            "sub/__init__.py": '"""Sub."""\n',
            "sub/c.py": PURE + "from .. import a\nfrom ..b import y\n",
        },
    )
    assert problems(package, "pkg") == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"a.py": PURE + "from homeassistant.core import HomeAssistant\n"},
            "a.py is marked pure but imports homeassistant (line 5)",
            id="direct",
        ),
        pytest.param(
            {
                "a.py": PURE
                + "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                + "    import homeassistant.core\n"
            },
            "a.py is marked pure but imports homeassistant (line 7)",
            id="type_checking",
        ),
        pytest.param(
            {
                "glue.py": '"""Glue."""\nimport homeassistant\n',
                "sub/__init__.py": '"""Sub."""\n',
                "sub/a.py": PURE + "from ..glue import x\n",
            },
            "sub/a.py is marked pure but imports glue (line 5), which is not pure",
            id="through_a_sibling",
        ),
        pytest.param(
            {
                "glue.py": '"""Glue."""\nimport homeassistant\n',
                "a.py": PURE + "from . import glue\n",
            },
            "a.py is marked pure but imports glue",
            id="sibling_as_a_name",
        ),
        pytest.param(
            {
                "glue.py": '"""Glue."""\nimport homeassistant\n',
                "a.py": PURE + "from pkg.glue import x\n",
            },
            "a.py is marked pure but imports glue",
            id="absolute_sibling",
        ),
        pytest.param(
            {"a.py": '"""Not marked."""\nimport json\n'},
            "a.py imports nothing from Home Assistant: say so",
            id="unmarked",
        ),
        pytest.param(
            {"a.py": PURE + "import openai\n"},
            "a.py claims 'standard library only' but imports openai (line 5)",
            id="stdlib_claim",
        ),
    ],
)
def test_checker_finds_false_or_missing_marks(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    found = problems(write_package(tmp_path, files), "pkg")
    assert len(found) == 1, found
    assert found[0].startswith(expected), found
