"""Check the integration against a newer Home Assistant without installing it.

The newest HA may need a Python this machine lacks (2026.11 needs 3.14.2), so
the check is static: download the HA wheel (no install, no dependencies),
unpack its Python files into a cache outside the repo, and compare every
``homeassistant`` name our code uses with the new tree:

* modules and names we import, and the attribute chains we read from them
  (``llm.ToolInput``, ``conversation.ChatLog``, ``Platform.AI_TASK``), follow
  the new tree's re-exports and class bases, and must exist;
* members read from parameters annotated with an HA class
  (``chat_log: conversation.ChatLog`` then ``chat_log.content``) and from
  ``self`` in our subclasses of HA classes must exist;
* keyword arguments we pass to HA callables must still be accepted
  (``ToolResultContent(tool_result=...)`` is a TypeError on 2026.11);
* none of it may be deprecated there: ``DeprecatedConstant`` and friends
  (``_DEPRECATED_<NAME>``), ``@deprecated_class``/``@deprecated_function``
  (any decorator named like ``deprecat*``), an unconditional
  ``report_usage``/``frame.report`` in the definition, a report message of the
  defining module that names it, "deprecated" in its docstring, and
  deprecated enum members;
* third-party modules we import must still be installed by HA, by its
  aliases (``httpx``, ``voluptuous``) or by our manifest, and our manifest
  requirements must fit HA's package constraints;
* the changes listed in ../shared/ha_api_guide.md section 7 that are
  patterns rather than names: tool result deltas setting ``tool_result``,
  ``Tool.async_call`` returning a plain dict, tools without ``integration``,
  ``async_get_chat_session`` without ``context=``.

Lines that deliberately use an old API behind a version check carry a
``# compat: <version>`` comment (on the line, on the comment line above the
statement, or on the enclosing ``def``); their findings are listed as allowed.

Usage::

    scripts/check-ha-compat                 # the newest HA wheel for Python 3.14.2
    scripts/check-ha-compat 2026.11.0       # a pinned version
    scripts/check-ha-compat --tree DIR      # an unpacked tree (DIR/homeassistant/...)

Exit status: 0 when nothing breaks, 1 when something does, 2 when the wheel
could not be downloaded.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
import importlib
import io
import json
import os
from pathlib import Path
import re
import subprocess
import sys
import tokenize
from typing import Literal
import zipfile

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

REPO = Path(__file__).resolve().parent.parent
PACKAGE_DIR = REPO / "custom_components" / "local_assistant"
PACKAGE_NAME = "custom_components.local_assistant"
DEFAULT_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "local_assistant"
    / "ha-wheels"
)
DEFAULT_PYTHON = "3.14.2"
COMPAT_MARKER = re.compile(r"#\s*compat:\s*(\S+)")
REPORT_FUNCS = frozenset(
    {
        "report_usage",
        "report",
        "_print_deprecation_warning",
        "_print_deprecation_warning_internal",
    }
)
# Import names that differ from their distribution name.
DIST_IMPORT_NAMES = {
    "pyyaml": "yaml",
    "pyjwt": "jwt",
    "pillow": "PIL",
    "python_slugify": "slugify",
    "beautifulsoup4": "bs4",
    "pyturbojpeg": "turbojpeg",
    "home_assistant_intents": "home_assistant_intents",
}
_NOT_DEFINED = object()


# ---------------------------------------------------------------------------
# The new HA tree
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class Binding:
    """What a module-level name is bound to."""

    kind: Literal["def", "class", "value", "module", "from"]
    node: ast.AST
    target: str = ""  # imported module
    target_name: str = ""  # imported name ("from" only)


@dataclass(slots=True)
class Symbol:
    """A resolved name in the HA tree (or outside it: ``external``)."""

    kind: Literal["module", "def", "class", "value", "external"]
    module: str
    name: str
    node: ast.AST | None = None
    deprecated: str | None = None


class ModuleInfo:
    """The module-level names of one HA module, parsed once."""

    def __init__(self, name: str, path: Path, is_package: bool) -> None:
        """Parse the module and index its top level."""
        self.name = name
        self.path = path
        self.is_package = is_package
        self.tree = parse_newer_python(path.read_text(encoding="utf-8"), str(path))
        self.bindings: dict[str, Binding] = {}
        self.star_imports: list[str] = []
        self.deprecated_constants: set[str] = set()
        self.has_getattr = False
        self._index(self.tree.body)
        self.report_messages = [
            msg
            for call in ast.walk(self.tree)
            if isinstance(call, ast.Call) and _is_report_call(call)
            for msg in _call_strings(call)
        ]

    def _index(self, body: Sequence[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self.bindings[stmt.name] = Binding("def", stmt)
                if stmt.name == "__getattr__":
                    self.has_getattr = True
            elif isinstance(stmt, ast.ClassDef):
                self.bindings[stmt.name] = Binding("class", stmt)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = (
                    stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                )
                for target in targets:
                    for name in _target_names(target):
                        self.bindings.setdefault(name, Binding("value", stmt))
                        self._note_deprecated_constant(name, stmt)
            elif isinstance(stmt, ast.TypeAlias) and isinstance(stmt.name, ast.Name):
                self.bindings[stmt.name.id] = Binding("value", stmt)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        self.bindings[alias.asname] = Binding(
                            "module", stmt, alias.name
                        )
                    else:
                        top = alias.name.split(".")[0]
                        self.bindings[top] = Binding("module", stmt, top)
            elif isinstance(stmt, ast.ImportFrom):
                source = _absolute(self.name, self.is_package, stmt)
                for alias in stmt.names:
                    if alias.name == "*":
                        self.star_imports.append(source)
                    else:
                        self.bindings[alias.asname or alias.name] = Binding(
                            "from", stmt, source, alias.name
                        )
            elif isinstance(stmt, ast.If):
                if not _is_type_checking(stmt.test):  # not there at run time
                    self._index(stmt.body)
                self._index(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                for block in (stmt.body, stmt.orelse, stmt.finalbody):
                    self._index(block)
                for handler in stmt.handlers:
                    self._index(handler.body)
            elif isinstance(stmt, ast.With):
                self._index(stmt.body)

    def _note_deprecated_constant(self, name: str, stmt: ast.stmt) -> None:
        if name == "__getattr__":
            self.has_getattr = True
        value = getattr(stmt, "value", None)
        if (
            name.startswith("_DEPRECATED_")
            and isinstance(value, ast.Call)
            and "Deprecated" in _call_name(value)
        ):
            self.deprecated_constants.add(name.removeprefix("_DEPRECATED_"))


class HATree:
    """An unpacked Home Assistant: ``root/homeassistant/...``."""

    def __init__(self, root: Path) -> None:
        """Point at the folder that holds ``homeassistant/``."""
        self.root = root
        self._modules: dict[str, ModuleInfo | None] = {}

    def module(self, dotted: str) -> ModuleInfo | None:
        """The parsed module, or None when the tree has no such module."""
        if dotted not in self._modules:
            base = self.root.joinpath(*dotted.split("."))
            info = None
            for path, is_package in (
                (base / "__init__.py", True),
                (base.with_suffix(".py"), False),
            ):
                if path.is_file():
                    info = ModuleInfo(dotted, path, is_package)
                    break
            self._modules[dotted] = info
        return self._modules[dotted]

    @cached_property
    def version(self) -> str:
        """The HA version, read from ``homeassistant/const.py``."""
        const = self.module("homeassistant.const")
        values: dict[str, object] = {}
        if const is not None:
            for key in ("MAJOR_VERSION", "MINOR_VERSION", "PATCH_VERSION"):
                binding = const.bindings.get(key)
                value = getattr(binding.node, "value", None) if binding else None
                if isinstance(value, ast.Constant):
                    values[key] = value.value
        if len(values) < 3:
            return "unknown"
        return f"{values['MAJOR_VERSION']}.{values['MINOR_VERSION']}.{values['PATCH_VERSION']}"

    @cached_property
    def requirements(self) -> list[Requirement]:
        """HA's own requirements, from the wheel's METADATA (if unpacked)."""
        reqs: list[Requirement] = []
        for metadata in self.root.glob("homeassistant-*.dist-info/METADATA"):
            for line in metadata.read_text(encoding="utf-8").splitlines():
                if line.startswith("Requires-Dist:"):
                    try:
                        reqs.append(Requirement(line.split(":", 1)[1].strip()))
                    except InvalidRequirement:
                        continue
        return reqs

    @cached_property
    def constraints(self) -> dict[str, Requirement]:
        """``homeassistant/package_constraints.txt`` by normalized name."""
        path = self.root / "homeassistant" / "package_constraints.txt"
        found: dict[str, Requirement] = {}
        if path.is_file():
            for raw in path.read_text(encoding="utf-8").splitlines():
                line = raw.split("#", 1)[0].strip()
                if not line:
                    continue
                try:
                    req = Requirement(line)
                except InvalidRequirement:
                    continue
                found[_normalize(req.name)] = req
        return found

    @cached_property
    def aliased_modules(self) -> set[str]:
        """Modules HA puts in place at import (``httpx2.alias_httpx()``)."""
        init = self.module("homeassistant")
        names: set[str] = set()
        if init is None:
            return names
        for node in ast.walk(init.tree):
            if isinstance(node, ast.Call):
                match = re.fullmatch(r"(?:alias|install_as)_(\w+)", _call_name(node))
                if match:
                    names.add(match.group(1))
        return names

    def provided_imports(self) -> set[str]:
        """Top-level import names HA installs or aliases."""
        names = {_import_name(req.name) for req in self.requirements}
        return names | self.aliased_modules

    # -- resolving names ----------------------------------------------------

    def resolve(
        self, module: str, name: str, _seen: frozenset[str] = frozenset()
    ) -> Symbol | None:
        """Resolve ``module.name`` through re-exports; None when it is gone."""
        key = f"{module}:{name}"
        if key in _seen:
            return None
        seen = _seen | {key}
        info = self.module(module)
        if info is None:
            return None
        deprecated = (
            f"deprecated constant (_DEPRECATED_{name})"
            if name in info.deprecated_constants
            else None
        )
        binding = info.bindings.get(name)
        symbol: Symbol | None = None
        if binding is None:
            if self.module(f"{module}.{name}") is not None:
                symbol = Symbol("module", f"{module}.{name}", name)
            else:
                for source in info.star_imports:
                    if source.startswith("homeassistant") and (
                        symbol := self.resolve(source, name, seen)
                    ):
                        break
                if symbol is None and deprecated:
                    symbol = Symbol("value", module, name)
        elif binding.kind == "module":
            symbol = (
                Symbol("module", binding.target, name)
                if self.module(binding.target) is not None
                else Symbol("external", binding.target, name)
            )
        elif binding.kind == "from":
            if binding.target.startswith("homeassistant"):
                symbol = self.resolve(binding.target, binding.target_name, seen)
                if symbol is None and self.module(
                    f"{binding.target}.{binding.target_name}"
                ):
                    symbol = Symbol(
                        "module", f"{binding.target}.{binding.target_name}", name
                    )
            else:
                symbol = Symbol("external", binding.target, binding.target_name)
        else:
            symbol = Symbol(binding.kind, module, name, binding.node)
        if symbol is None:
            return None
        if symbol.deprecated is None:
            symbol.deprecated = deprecated or self._deprecation(symbol, info)
        return symbol

    def _deprecation(self, symbol: Symbol, info: ModuleInfo) -> str | None:
        """Why a def or class is deprecated, or None."""
        node = symbol.node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return _mentioned(symbol.name, info, self._defining(symbol))
        return _node_deprecation(node) or _mentioned(
            symbol.name, info, self._defining(symbol)
        )

    def _defining(self, symbol: Symbol) -> ModuleInfo | None:
        return self.module(symbol.module)

    def resolve_expr(self, module: str, expr: ast.expr) -> Symbol | None:
        """Resolve a base-class expression written in ``module``."""
        if isinstance(expr, ast.Subscript):  # Generic[T], ConfigEntry[Data]
            return self.resolve_expr(module, expr.value)
        chain = _attr_chain(expr)
        if chain is None:
            return None
        symbol = self.resolve(module, chain[0])
        for part in chain[1:]:
            if symbol is None:
                return None
            symbol = self.member(symbol, part).symbol
        return symbol

    def member(self, owner: Symbol, name: str) -> Lookup:
        """Look ``name`` up on a module or class symbol."""
        if owner.kind == "module":
            found = self.resolve(owner.module, name)
            return Lookup(
                found, unverifiable=found is None and self._open_module(owner)
            )
        if owner.kind == "external":
            return _stdlib_member(owner, name)
        if owner.kind != "class" or not isinstance(owner.node, ast.ClassDef):
            return Lookup(None, unverifiable=True)
        return self._class_member(owner, name, frozenset())

    def _open_module(self, owner: Symbol) -> bool:
        info = self.module(owner.module)
        return info is not None and info.has_getattr

    def _class_member(self, owner: Symbol, name: str, seen: frozenset[str]) -> Lookup:
        node = owner.node
        assert isinstance(node, ast.ClassDef)
        key = f"{owner.module}:{owner.name}"
        if key in seen:
            return Lookup(None, unverifiable=True)
        seen = seen | {key}
        info = self.module(owner.module)
        enum_deprecated = _enum_deprecated_members(node)
        members = _class_members(node)
        if name in members:
            member_node = members[name]
            deprecated = (
                f"deprecated enum member ({enum_deprecated[name]})"
                if name in enum_deprecated
                else _member_deprecation(member_node)
            )
            if deprecated is None and info is not None:
                deprecated = _mentioned(f"{node.name}.{name}", info, info)
            return Lookup(
                Symbol(
                    _member_kind(member_node),
                    owner.module,
                    f"{node.name}.{name}",
                    member_node,
                    deprecated,
                )
            )
        unverifiable = False
        for base in node.bases:
            base_symbol = self.resolve_expr(owner.module, base)
            if base_symbol is not None and base_symbol.kind == "external":
                found = _stdlib_member(base_symbol, name)
                if found.symbol is not None:
                    return found
                unverifiable = unverifiable or found.unverifiable
                continue
            if base_symbol is None or base_symbol.kind != "class":
                if not _is_plain_object(base):
                    unverifiable = True
                continue
            found = self._class_member(base_symbol, name, seen)
            if found.symbol is not None:
                return found
            unverifiable = unverifiable or found.unverifiable
        if any(kw.arg == "metaclass" for kw in node.keywords):
            unverifiable = True
        return Lookup(None, unverifiable=unverifiable)

    def call_keywords(self, symbol: Symbol) -> set[str] | None:
        """Keyword names a callable accepts; None when any (or unknown)."""
        node = symbol.node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return _function_keywords(node)
        if symbol.kind != "class" or not isinstance(node, ast.ClassDef):
            return None
        return self._class_keywords(symbol, frozenset())

    def _class_keywords(self, owner: Symbol, seen: frozenset[str]) -> set[str] | None:
        node = owner.node
        assert isinstance(node, ast.ClassDef)
        key = f"{owner.module}:{owner.name}"
        if key in seen:
            return None
        seen = seen | {key}
        members = _class_members(node)
        for init in ("__init__", "__new__"):
            constructor = members.get(init)
            if isinstance(constructor, ast.FunctionDef | ast.AsyncFunctionDef):
                return _function_keywords(constructor)
        fields: set[str] | None = (
            _dataclass_fields(node) if _is_dataclass(node) else None
        )
        for base in node.bases:
            base_symbol = self.resolve_expr(owner.module, base)
            if base_symbol is None or base_symbol.kind != "class":
                if _is_plain_object(base):
                    continue
                return None  # NamedTuple, TypedDict, external bases: not checked
            base_keywords = self._class_keywords(base_symbol, seen)
            if base_keywords is None:
                return None
            if fields is None:
                return base_keywords  # inherits the base's constructor
            fields |= base_keywords
        return fields


def _stdlib_member(owner: Symbol, name: str) -> Lookup:
    """Members of standard-library bases (StrEnum, IntFlag) are known here too."""
    top = owner.module.split(".")[0]
    if top not in sys.stdlib_module_names or top in {"typing", "typing_extensions"}:
        return Lookup(None, unverifiable=True)
    try:
        value = getattr(importlib.import_module(owner.module), owner.name)
    except (ImportError, AttributeError):
        return Lookup(None, unverifiable=True)
    if not isinstance(value, type):
        return Lookup(None, unverifiable=True)
    if hasattr(value, name):
        return Lookup(Symbol("value", owner.module, f"{owner.name}.{name}"))
    return Lookup(None)


@dataclass(slots=True)
class Lookup:
    """A member lookup: the symbol, or whether absence proves nothing."""

    symbol: Symbol | None
    unverifiable: bool = False


# ---------------------------------------------------------------------------
# AST helpers
# ---------------------------------------------------------------------------


# PEP 758 (Python 3.14): ``except A, B:`` without parentheses. This Python's
# parser rejects it, so such clauses get their parentheses back before parsing.
_BARE_EXCEPT_TUPLE = re.compile(
    r"^(?P<head>[ \t]*except\*?)[ \t]+(?P<types>[^\s(#:][^#:\n]*,[^#:\n]*?)[ \t]*:",
    re.MULTILINE,
)


def parse_newer_python(source: str, filename: str) -> ast.Module:
    """Parse a module written for a newer Python than the one running."""
    try:
        return ast.parse(source, filename)
    except SyntaxError:
        fixed = _BARE_EXCEPT_TUPLE.sub(r"\g<head> (\g<types>):", source)
        return ast.parse(fixed, filename)


def _absolute(module: str, is_package: bool, stmt: ast.ImportFrom) -> str:
    if not stmt.level:
        return stmt.module or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if stmt.level > 1:
        parts = parts[: len(parts) - (stmt.level - 1)]
    return ".".join([*parts, stmt.module] if stmt.module else parts)


def _target_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _target_names(element)


def _is_type_checking(test: ast.expr) -> bool:
    chain = _attr_chain(test)
    return chain is not None and chain[-1] == "TYPE_CHECKING"


def _attr_chain(expr: ast.expr) -> list[str] | None:
    """``a.b.c`` -> ["a", "b", "c"]; None for anything else."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return parts[::-1]


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _is_report_call(call: ast.Call) -> bool:
    name = _call_name(call)
    if name in REPORT_FUNCS:
        return True
    if name == "warn":  # warnings.warn(..., DeprecationWarning)
        return any(
            isinstance(arg, ast.Name) and "Deprecation" in arg.id
            for arg in [*call.args, *(kw.value for kw in call.keywords)]
        )
    return False


def _call_strings(call: ast.Call) -> Iterator[str]:
    for arg in [*call.args, *(kw.value for kw in call.keywords)]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            yield arg.value
        elif isinstance(arg, ast.JoinedStr):
            yield "".join(
                part.value
                for part in arg.values
                if isinstance(part, ast.Constant) and isinstance(part.value, str)
            )


def _mentioned(name: str, info: ModuleInfo, defining: ModuleInfo | None) -> str | None:
    """A deprecation message of the module names ``name`` as its subject.

    Only the part before "; use X instead" counts, and the message must say
    "deprecated": reports about one way of calling a function
    ("calls X without a context") are patterns, checked separately.
    """
    pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w.(])")
    for module in {id(info): info, id(defining): defining}.values():
        if module is None:
            continue
        for message in module.report_messages:
            if "deprecat" not in message.lower():
                continue
            subject = re.split(
                r";|\b(?:use|instead|replaced|migrate|in favou?r)\b", message
            )[0]
            if pattern.search(subject):
                return f"reported as deprecated: {message.strip()!r}"
    return None


def _docstring_deprecated(node: ast.AST) -> bool:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return False
    doc = ast.get_docstring(node) or ""
    return re.search(r"\bdeprecated\b", doc, re.IGNORECASE) is not None


def _unconditional_report(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The function reports on every call (a deprecated function or property)."""
    for stmt in node.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and _is_report_call(call):
            return True
        # A report after an early return is about one case, not the function.
        if any(isinstance(sub, ast.Return) for sub in ast.walk(stmt)):
            return False
    return False


def _node_deprecation(node: ast.AST) -> str | None:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return None
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        chain = _attr_chain(target)
        if chain and "deprecat" in chain[-1].lower():
            return f"decorated with @{chain[-1]}"
    if _docstring_deprecated(node):
        return "its docstring says it is deprecated"
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    if isinstance(node, ast.ClassDef):
        members = _class_members(node)
        functions = [
            fn
            for key in ("__init__", "__post_init__", "__init_subclass__")
            if isinstance(
                fn := members.get(key), ast.FunctionDef | ast.AsyncFunctionDef
            )
        ]
    else:
        functions = [node]
    if any(_unconditional_report(fn) for fn in functions):
        return "reports its use (report_usage) on every call"
    return None


def _member_deprecation(node: ast.AST) -> str | None:
    if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(
        node.value, ast.Call
    ):
        name = _call_name(node.value)
        if name.startswith("Deprecated"):
            return f"a {name}"
    return _node_deprecation(node)


def _member_kind(node: ast.AST) -> Literal["def", "class", "value"]:
    if isinstance(node, ast.ClassDef):
        return "class"
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        is_property = any(
            (_attr_chain(d) or [""])[-1] in {"property", "cached_property"}
            or (_attr_chain(d) or [""])[-1] in {"setter", "getter"}
            for d in node.decorator_list
        )
        return "value" if is_property else "def"
    return "value"


@cache
def _class_members(node: ast.ClassDef) -> dict[str, ast.AST]:
    """Names defined in a class body, and ``self.x`` assigned in its methods."""
    members: dict[str, ast.AST] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            members.setdefault(stmt.name, stmt)
        elif isinstance(stmt, ast.Assign):
            for assigned in stmt.targets:
                for name in _target_names(assigned):
                    members.setdefault(name, stmt)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            members.setdefault(stmt.target.id, stmt)
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            for sub in ast.walk(stmt):
                target: ast.expr | None = None
                if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store):
                    target = sub
                elif (  # _setter(self, "name", value) / object.__setattr__(...)
                    isinstance(sub, ast.Call)
                    and _call_name(sub) in {"_setter", "__setattr__", "setattr"}
                    and len(sub.args) >= 2
                    and isinstance(sub.args[1], ast.Constant)
                    and isinstance(sub.args[1].value, str)
                ):
                    members.setdefault(sub.args[1].value, sub)
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    members.setdefault(target.attr, target)
    return members


def _enum_deprecated_members(node: ast.ClassDef) -> dict[str, str]:
    for keyword in node.keywords:
        if keyword.arg == "deprecated" and isinstance(keyword.value, ast.Dict):
            return {
                key.value: "deprecated"
                for key in keyword.value.keys
                if isinstance(key, ast.Constant) and isinstance(key.value, str)
            }
    return {}


def _function_keywords(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str] | None:
    if node.args.kwarg is not None:
        return None
    return {a.arg for a in [*node.args.args, *node.args.kwonlyargs]} - {"self", "cls"}


def _is_dataclass(node: ast.ClassDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (_attr_chain(target) or [""])[-1] == "dataclass":
            return True
    return False


def _dataclass_fields(node: ast.ClassDef) -> set[str]:
    fields: set[str] = set()
    for stmt in node.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        annotation = ast.unparse(stmt.annotation)
        if "ClassVar" in annotation:
            continue
        value = stmt.value
        if (
            isinstance(value, ast.Call)
            and _call_name(value) == "field"
            and any(
                kw.arg == "init"
                and isinstance(kw.value, ast.Constant)
                and kw.value.value is False
                for kw in value.keywords
            )
        ):
            continue
        fields.add(stmt.target.id)
    return fields


def _is_plain_object(base: ast.expr) -> bool:
    chain = _attr_chain(base.value if isinstance(base, ast.Subscript) else base)
    return chain is not None and chain[-1] in {"object", "Generic", "Protocol", "ABC"}


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _import_name(dist: str) -> str:
    normalized = _normalize(dist)
    return DIST_IMPORT_NAMES.get(normalized, normalized)


# ---------------------------------------------------------------------------
# Our code
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem (or one allowed use) at a place in our code."""

    path: Path
    line: int
    symbol: str
    problem: str
    allowed_by: str | None = None  # the compat marker's version

    def render(self, base: Path) -> str:
        """``file:line: symbol: problem``."""
        try:
            shown = self.path.relative_to(base)
        except ValueError:
            shown = self.path
        suffix = f" (allowed: # compat: {self.allowed_by})" if self.allowed_by else ""
        return f"{shown}:{self.line}: {self.symbol}: {self.problem}{suffix}"


@dataclass(slots=True)
class Report:
    """The result of one check."""

    version: str
    findings: list[Finding] = field(default_factory=list)
    checked: int = 0  # uses looked at
    # HA classes our code refers to, for the by-name check of deprecated members.
    classes: dict[tuple[str, str], Symbol] = field(default_factory=dict)

    @property
    def failures(self) -> list[Finding]:
        """Findings that break (not allowed by a compat marker)."""
        return [f for f in self.findings if f.allowed_by is None]

    @property
    def allowed(self) -> list[Finding]:
        """Findings behind a ``# compat:`` marker."""
        return [f for f in self.findings if f.allowed_by is not None]


def _compat_lines(source: str, tree: ast.Module) -> dict[int, str]:
    """Line -> marker version for every line a ``# compat:`` marker covers."""
    comments: dict[int, str] = {}
    lines = source.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and (
            match := COMPAT_MARKER.search(token.string)
        ):
            row = token.start[0]
            comments[row] = match.group(1)
    covered: dict[int, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.end_lineno is None:
            continue
        first = node.lineno
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([first, *(d.lineno for d in node.decorator_list)])
        marker = comments.get(first) or comments.get(node.lineno)
        row = first - 1
        # Or a comment block directly above the statement.
        while marker is None and row > 0 and lines[row - 1].lstrip().startswith("#"):
            marker = comments.get(row)
            row -= 1
        if marker is not None:
            for row in range(node.lineno, node.end_lineno + 1):
                covered.setdefault(row, marker)
    for row, marker in comments.items():
        covered.setdefault(row, marker)
    return covered


class _FileChecker:
    """Collects and checks the HA uses of one file of ours."""

    def __init__(
        self,
        ha: HATree,
        path: Path,
        local_classes: dict[str, tuple[ast.ClassDef, Path]],
        local_aliases: dict[str, ast.expr],
        report: Report,
    ) -> None:
        self.ha = ha
        self.path = path
        self.source = path.read_text(encoding="utf-8")
        self.tree = ast.parse(self.source, str(path))
        self.compat = _compat_lines(self.source, self.tree)
        self.local_classes = local_classes
        self.local_aliases = local_aliases
        self.report = report
        # Local name -> (HA module, names below it).
        self.bindings: dict[str, tuple[str, tuple[str, ...]]] = {}
        # (line, attribute) already judged through a known type.
        self.judged: set[tuple[int, str]] = set()

    # -- reporting ------------------------------------------------------------

    def add(self, line: int, symbol: str, problem: str) -> None:
        finding = Finding(self.path, line, symbol, problem, self.compat.get(line))
        if finding not in self.report.findings:
            self.report.findings.append(finding)

    def judge(
        self, line: int, shown: str, symbol: Symbol | None, *, missing: str
    ) -> None:
        self.report.checked += 1
        self.judged.add((line, shown.rsplit(".", 1)[-1]))
        if symbol is not None and symbol.kind == "class":
            self.report.classes[(symbol.module, symbol.name)] = symbol
        if symbol is None:
            self.add(line, shown, missing)
        elif symbol.deprecated:
            self.add(
                line, shown, f"deprecated in HA {self.ha.version}: {symbol.deprecated}"
            )

    # -- resolving our expressions --------------------------------------------

    def resolve_chain(
        self, line: int, chain: Sequence[str], *, report: bool
    ) -> Symbol | None:
        """Resolve ``local.a.b`` where ``local`` is an HA binding; judge each step."""
        module, path = self.bindings[chain[0]]
        parts = [*path, *chain[1:]]
        symbol: Symbol | None = Symbol("module", module, module)
        shown = module
        for part in parts:
            assert symbol is not None
            shown = f"{shown}.{part}"
            if symbol.kind not in {"module", "class"}:
                return None  # a function or a value: members not checked
            lookup = self.ha.member(symbol, part)
            if lookup.symbol is None and lookup.unverifiable:
                return None
            if report:
                self.judge(
                    line,
                    shown,
                    lookup.symbol,
                    missing=f"not found in HA {self.ha.version}",
                )
            symbol = lookup.symbol
            if symbol is None:
                return None
        return symbol

    def annotation_classes(self, annotation: ast.expr | None) -> list[Symbol]:
        """HA classes an annotation names (``X | None``, ``"X"``, ``X[...]``)."""
        if annotation is None:
            return []
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return []
        if isinstance(annotation, ast.BinOp):
            return [
                *self.annotation_classes(annotation.left),
                *self.annotation_classes(annotation.right),
            ]
        if isinstance(annotation, ast.Subscript):
            return self.annotation_classes(annotation.value)
        chain = _attr_chain(annotation)
        if chain is None:
            return []
        if len(chain) == 1 and chain[0] in self.local_aliases:
            return self.annotation_classes(self.local_aliases[chain[0]])
        if chain[0] not in self.bindings:
            return []
        symbol = self.resolve_chain(0, chain, report=False)
        return [symbol] if symbol is not None and symbol.kind == "class" else []

    # -- the walk -------------------------------------------------------------

    def run(self) -> None:
        self.collect_imports()
        self.check_attribute_chains()
        self.check_functions()

    def collect_imports(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if not alias.name.startswith("homeassistant"):
                        continue
                    self.report.checked += 1
                    if self.ha.module(alias.name) is None:
                        self.add(
                            node.lineno,
                            alias.name,
                            f"module not found in HA {self.ha.version}",
                        )
                    if alias.asname:
                        self.bindings[alias.asname] = (alias.name, ())
                    else:
                        self.bindings["homeassistant"] = ("homeassistant", ())
            elif isinstance(node, ast.ImportFrom) and not node.level:
                module = node.module or ""
                if not module.startswith("homeassistant"):
                    continue
                if self.ha.module(module) is None:
                    self.report.checked += 1
                    self.add(
                        node.lineno, module, f"module not found in HA {self.ha.version}"
                    )
                    continue
                for alias in node.names:
                    shown = f"{module}.{alias.name}"
                    self.judge(
                        node.lineno,
                        shown,
                        self.ha.resolve(module, alias.name),
                        missing=f"not found in HA {self.ha.version}",
                    )
                    self.bindings[alias.asname or alias.name] = (module, (alias.name,))

    def check_attribute_chains(self) -> None:
        inner: set[int] = set()
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Attribute) or id(node) in inner:
                continue
            value: ast.expr = node
            while isinstance(value, ast.Attribute):
                inner.add(id(value.value))
                value = value.value
            chain = _attr_chain(node)
            if chain and chain[0] in self.bindings:
                self.resolve_chain(node.lineno, chain, report=True)

    def functions(
        self,
    ) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]]:
        """Every function, with the class it is a method of."""
        methods: dict[int, ast.ClassDef] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    methods[id(stmt)] = node
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield node, methods.get(id(node))

    def typed_names(
        self, func: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> dict[str, list[Symbol]]:
        """Parameters and locals whose HA class is known from an annotation or a call."""
        args = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
        typed = {
            arg.arg: classes
            for arg in args
            if arg.arg != "self"
            and (classes := self.annotation_classes(arg.annotation))
        }
        for node in ast.walk(func):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if classes := self.annotation_classes(node.annotation):
                    typed[node.target.id] = classes
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
                and (chain := _attr_chain(node.value.func))
                and chain[0] in self.bindings
            ):
                symbol = self.resolve_chain(0, chain, report=False)
                if symbol is not None and symbol.kind == "class":
                    typed[node.targets[0].id] = [symbol]
        return typed

    def check_functions(self) -> None:
        """Members read from typed names and ``self``, and keywords passed to HA."""
        class_info: dict[int, tuple[list[Symbol], set[str], bool]] = {}
        for func, cls in self.functions():
            typed = self.typed_names(func)
            self_bases: list[Symbol] = []
            own: set[str] = set()
            unknown = True
            if cls is not None:
                if id(cls) not in class_info:
                    class_info[id(cls)] = self.ha_bases(cls)
                self_bases, own, unknown = class_info[id(cls)]
            for node in ast.walk(func):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    name = node.value.id
                    if name in typed:
                        self.check_member(node.lineno, typed[name], node.attr)
                    elif (
                        name == "self"
                        and self_bases
                        and isinstance(node.ctx, ast.Load)
                        and node.attr not in own
                    ):
                        self.check_member(
                            node.lineno, self_bases, node.attr, unknown=unknown
                        )
                elif isinstance(node, ast.Call):
                    self.check_call(node, typed, self_bases, own)

    def check_member(
        self, line: int, owners: list[Symbol], attr: str, *, unknown: bool = False
    ) -> Symbol | None:
        """``attr`` must exist on one of ``owners`` (an ``X | Y`` annotation, bases)."""
        unverifiable = unknown
        for owner in owners:
            if owner.kind == "class":
                self.report.classes[(owner.module, owner.name)] = owner
            lookup = self.ha.member(owner, attr)
            if lookup.symbol is not None:
                self.judge(line, lookup.symbol.name, lookup.symbol, missing="")
                return lookup.symbol
            unverifiable = unverifiable or lookup.unverifiable
        if not unverifiable:
            names = " | ".join(f"{o.module}.{o.name}" for o in owners)
            self.report.checked += 1
            self.add(
                line,
                f"{owners[0].name}.{attr}",
                f"no member {attr!r} on {names} in HA {self.ha.version}",
            )
        return None

    def ha_bases(
        self, node: ast.ClassDef, seen: frozenset[str] = frozenset()
    ) -> tuple[list[Symbol], set[str], bool]:
        """HA base classes, names our own classes define, and whether a base is unknown."""
        own = set(_class_members(node))
        bases: list[Symbol] = []
        unknown = False
        for base in node.bases:
            target = base.value if isinstance(base, ast.Subscript) else base
            chain = _attr_chain(target)
            if chain is None:
                unknown = True
            elif chain[0] in self.bindings:
                symbol = self.resolve_chain(0, chain, report=False)
                if symbol is not None and symbol.kind in {"class", "external"}:
                    bases.append(symbol)
                else:
                    unknown = True
            elif (
                len(chain) == 1
                and chain[0] in self.local_classes
                and chain[0] not in seen
            ):
                local, path = self.local_classes[chain[0]]
                checker = self
                if path != self.path:
                    checker = _FileChecker(
                        self.ha,
                        path,
                        self.local_classes,
                        self.local_aliases,
                        Report(self.ha.version),
                    )
                    checker.collect_imports()
                sub_bases, sub_own, sub_unknown = checker.ha_bases(
                    local, seen | {chain[0]}
                )
                bases.extend(sub_bases)
                own |= sub_own
                unknown = unknown or sub_unknown
            elif not _is_plain_object(base):
                unknown = True
        return bases, own, unknown

    def check_call(
        self,
        call: ast.Call,
        typed: dict[str, list[Symbol]],
        self_bases: list[Symbol],
        own: set[str],
    ) -> None:
        """Keyword arguments passed to an HA callable must still be accepted."""
        if not any(kw.arg for kw in call.keywords):
            return
        chain = _attr_chain(call.func)
        symbol: Symbol | None = None
        if chain is None:
            return
        if chain[0] in self.bindings:
            symbol = self.resolve_chain(call.lineno, chain, report=False)
        elif len(chain) == 2:
            owners = typed.get(chain[0], [])
            if chain[0] == "self" and chain[1] not in own:
                owners = self_bases
            for owner in owners:
                if (lookup := self.ha.member(owner, chain[1])).symbol is not None:
                    symbol = lookup.symbol
                    break
        if symbol is None or symbol.kind not in {"def", "class"}:
            return
        accepted = self.ha.call_keywords(symbol)
        if accepted is None:
            return
        for keyword in call.keywords:
            if keyword.arg is not None and keyword.arg not in accepted:
                self.report.checked += 1
                self.add(
                    call.lineno,
                    f"{symbol.name}({keyword.arg}=...)",
                    f"keyword {keyword.arg!r} is not accepted by "
                    f"{symbol.module}.{symbol.name} in HA {self.ha.version}",
                )

    # -- the section 7 patterns --------------------------------------------------

    def check_patterns(self, tool_classes: set[str]) -> None:
        """Changes that are patterns of use rather than names."""
        delta_dict = self.ha.resolve(
            "homeassistant.components.conversation.chat_log",
            "ToolResultContentDeltaDict",
        )
        if (
            delta_dict is not None
            and isinstance(delta_dict.node, ast.ClassDef)
            and "result" in _class_members(delta_dict.node)
        ):
            for node in ast.walk(self.tree):
                line = self._tool_result_key(node)
                if line:
                    self.add(
                        line,
                        '"tool_result" delta key',
                        f"HA {self.ha.version} wants `result`: llm.ToolResult on tool result deltas; "
                        "`tool_result` is deprecated (use compat.tool_result_delta)",
                    )
        tool = self.ha.resolve("homeassistant.helpers.llm", "Tool")
        has_tool_result = (
            self.ha.resolve("homeassistant.helpers.llm", "ToolResult") is not None
        )
        tool_members = (
            _class_members(tool.node)
            if tool and isinstance(tool.node, ast.ClassDef)
            else {}
        )
        for cls in ast.walk(self.tree):
            if not isinstance(cls, ast.ClassDef) or cls.name not in tool_classes:
                continue
            members = _class_members(cls)
            if "integration" in tool_members and not self._defines_in_chain(
                cls, "integration", tool_classes
            ):
                self.add(
                    cls.lineno,
                    f"{cls.name}.integration",
                    f"llm.Tool subclasses must set `integration` in HA {self.ha.version} (a warning now, an error later)",
                )
            call = members.get("async_call")
            if has_tool_result and isinstance(call, ast.AsyncFunctionDef):
                for node in ast.walk(call):
                    if isinstance(node, ast.Return) and _is_plain_dict(node.value):
                        self.add(
                            node.lineno,
                            f"{cls.name}.async_call",
                            f"returns a plain dict; HA {self.ha.version} wants llm.ToolResult (use compat.tool_result)",
                        )
        session = self.ha.resolve(
            "homeassistant.helpers.chat_session", "async_get_chat_session"
        )
        if session is not None and "context" in (
            self.ha.call_keywords(session) or set()
        ):
            for node in ast.walk(self.tree):
                if (
                    isinstance(node, ast.Call)
                    and (_attr_chain(node.func) or [""])[-1] == "async_get_chat_session"
                    and not any(kw.arg == "context" for kw in node.keywords)
                ):
                    self.add(
                        node.lineno,
                        "async_get_chat_session()",
                        f"called without context=; HA {self.ha.version} logs a warning (an error later)",
                    )

    def check_deprecated_by_name(self, deprecated: dict[str, str]) -> None:
        """``x.attr`` where x's type is unknown but attr is a deprecated member
        of an HA class we use (``item.tool_result`` after an isinstance check)."""
        for node in ast.walk(self.tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in deprecated
                and (node.lineno, node.attr) not in self.judged
            ):
                self.add(
                    node.lineno,
                    f".{node.attr}",
                    f"matches a member deprecated in HA {self.ha.version} "
                    f"({deprecated[node.attr]})",
                )

    def _defines_in_chain(
        self, cls: ast.ClassDef, name: str, tool_classes: set[str]
    ) -> bool:
        if name in _class_members(cls):
            return True
        for base in cls.bases:
            chain = _attr_chain(base)
            if chain and len(chain) == 1 and chain[0] in self.local_classes:
                local, _path = self.local_classes[chain[0]]
                if self._defines_in_chain(local, name, tool_classes):
                    return True
        return False

    @staticmethod
    def _tool_result_key(node: ast.AST) -> int | None:
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and key.value == "tool_result":
                    return key.lineno
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == "tool_result"
        ):
            return node.lineno
        return None


def _deprecated_members(ha: HATree, classes: Iterable[Symbol]) -> dict[str, str]:
    """Deprecated members (by name) of the HA classes our code refers to."""
    found: dict[str, str] = {}
    for owner in classes:
        if not isinstance(owner.node, ast.ClassDef):
            continue
        for name in _class_members(owner.node):
            symbol = ha.member(owner, name).symbol
            if symbol is not None and symbol.deprecated:
                found.setdefault(name, f"{symbol.name}: {symbol.deprecated}")
    return found


def _is_plain_dict(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Dict | ast.DictComp):
        return True
    return isinstance(value, ast.Call) and _call_name(value) == "dict"


def _third_party_imports(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.lineno, node.module.split(".")[0]
        elif (
            isinstance(node, ast.Call)
            and _call_name(node) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value.split(".")[0]


def _tool_subclasses(
    ha_checkers: list[_FileChecker], local_classes: dict[str, tuple[ast.ClassDef, Path]]
) -> set[str]:
    """Our classes that derive from helpers.llm.Tool, directly or through ours."""
    direct: set[str] = set()
    for checker in ha_checkers:
        for cls in ast.walk(checker.tree):
            if not isinstance(cls, ast.ClassDef):
                continue
            for base in cls.bases:
                chain = _attr_chain(base)
                if chain and chain[0] in checker.bindings:
                    symbol = checker.resolve_chain(0, chain, report=False)
                    if (
                        symbol
                        and symbol.name == "Tool"
                        and symbol.module == "homeassistant.helpers.llm"
                    ):
                        direct.add(cls.name)
    found = set(direct)
    changed = True
    while changed:
        changed = False
        for name, (cls, _path) in local_classes.items():
            if name in found:
                continue
            if any((_attr_chain(b) or [""])[-1] in found for b in cls.bases):
                found.add(name)
                changed = True
    return found


def check(
    ha: HATree,
    package_dir: Path = PACKAGE_DIR,
    manifest: Path | None = None,
) -> Report:
    """Check every module of our package against the HA tree."""
    report = Report(ha.version)
    files = sorted(package_dir.rglob("*.py"))
    local_classes: dict[str, tuple[ast.ClassDef, Path]] = {}
    local_aliases: dict[str, ast.expr] = {}
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                local_classes.setdefault(node.name, (node, path))
            elif isinstance(node, ast.TypeAlias) and isinstance(node.name, ast.Name):
                local_aliases[node.name.id] = node.value
    checkers = [
        _FileChecker(ha, path, local_classes, local_aliases, report) for path in files
    ]
    for checker in checkers:
        checker.run()
    tool_classes = _tool_subclasses(checkers, local_classes)
    for checker in checkers:
        checker.check_patterns(tool_classes)
    deprecated = _deprecated_members(ha, report.classes.values())
    for checker in checkers:
        checker.check_deprecated_by_name(deprecated)

    manifest_path = manifest or package_dir / "manifest.json"
    requirements: list[Requirement] = []
    if manifest_path.is_file():
        for line in json.loads(manifest_path.read_text(encoding="utf-8")).get(
            "requirements", []
        ):
            req = Requirement(line)
            requirements.append(req)
            pinned = ha.constraints.get(_normalize(req.name))
            version = _pinned_version(pinned)
            if version is not None and not req.specifier.contains(
                version, prereleases=True
            ):
                report.findings.append(
                    Finding(
                        manifest_path,
                        1,
                        str(req),
                        f"HA {ha.version} pins {pinned}, outside our requirement",
                    )
                )
    if ha.requirements or ha.aliased_modules:
        provided = ha.provided_imports() | {_import_name(r.name) for r in requirements}
        own_top = PACKAGE_NAME.split(".")[0]
        for checker in checkers:
            for line, top in _third_party_imports(checker.tree):
                report.checked += 1
                if (
                    top in sys.stdlib_module_names
                    or top in {"homeassistant", own_top, "__future__"}
                    or _normalize(top) in provided
                    or top in provided
                ):
                    continue
                checker.add(
                    line,
                    f"import {top}",
                    f"HA {ha.version} neither installs nor aliases {top!r}, and our manifest does not require it",
                )
    report.findings.sort(key=lambda f: (str(f.path), f.line, f.symbol))
    return report


def _pinned_version(req: Requirement | None) -> Version | None:
    if req is None:
        return None
    for spec in req.specifier:
        if spec.operator == "==":
            try:
                return Version(spec.version)
            except InvalidVersion:
                return None
    return None


# ---------------------------------------------------------------------------
# Getting the wheel
# ---------------------------------------------------------------------------


class DownloadError(Exception):
    """pip could not download the wheel."""


_WHEEL_RE = re.compile(r"homeassistant-(\d[\w.]*)-py3-none-any\.whl")


def download_wheel(
    version: str | None = None,
    *,
    cache: Path = DEFAULT_CACHE,
    python_version: str = DEFAULT_PYTHON,
    timeout: float = 600,
) -> Path:
    """Download (or reuse) the HA wheel, without dependencies; return its path."""
    cache.mkdir(parents=True, exist_ok=True)
    if version:
        cached = cache / f"homeassistant-{version}-py3-none-any.whl"
        if cached.is_file():
            return cached
    spec = f"homeassistant=={version}" if version else "homeassistant"
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        # Fail fast when the index is unreachable (pip's default waits minutes).
        "--timeout",
        "30",
        "--retries",
        "2",
        "--python-version",
        python_version,
        "--only-binary=:all:",
        "--dest",
        str(cache),
        spec,
    ]
    try:
        result = subprocess.run(  # noqa: S603
            command, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as err:
        raise DownloadError(f"pip download timed out after {timeout:.0f} s") from err
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-5:])
        raise DownloadError(f"pip download failed:\n{tail}")
    names = _WHEEL_RE.findall(result.stdout + result.stderr)
    if not names:
        raise DownloadError("pip did not report which wheel it saved")
    return cache / f"homeassistant-{names[-1]}-py3-none-any.whl"


def unpack_wheel(wheel: Path) -> Path:
    """Unpack the wheel's Python files and metadata next to it (once)."""
    target = wheel.with_suffix("")  # .../homeassistant-2026.11.0-py3-none-any
    done = target / ".unpacked"
    if done.is_file():
        return target
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.endswith(
                (".py", "METADATA", "package_constraints.txt", "manifest.json")
            ):
                archive.extract(member, target)
    done.write_text(wheel.name, encoding="utf-8")
    return target


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check and print the result."""
    parser = argparse.ArgumentParser(
        prog="check-ha-compat",
        description="Check local_assistant against a newer Home Assistant, statically.",
    )
    parser.add_argument("version", nargs="?", help="HA version (default: the newest)")
    parser.add_argument(
        "--tree", type=Path, help="an unpacked tree instead of a download"
    )
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--python-version", default=DEFAULT_PYTHON)
    parser.add_argument("--package", type=Path, default=PACKAGE_DIR)
    args = parser.parse_args(argv)

    if args.tree:
        root = args.tree
    else:
        try:
            wheel = download_wheel(
                args.version, cache=args.cache, python_version=args.python_version
            )
        except DownloadError as err:
            print(f"check-ha-compat: {err}", file=sys.stderr)
            return 2
        print(f"check-ha-compat: using {wheel.name}")
        root = unpack_wheel(wheel)
    ha = HATree(root)
    if ha.module("homeassistant") is None:
        print(f"check-ha-compat: no homeassistant/ under {root}", file=sys.stderr)
        return 2
    report = check(ha, args.package)
    print(f"check-ha-compat: checked {report.checked} uses of HA {report.version}")
    for finding in report.allowed:
        print(f"  allowed  {finding.render(REPO)}")
    for finding in report.failures:
        print(f"  BREAKS   {finding.render(REPO)}")
    if report.failures:
        print(
            f"check-ha-compat: FAIL: {len(report.failures)} use(s) break or are "
            f"deprecated in HA {report.version}",
            file=sys.stderr,
        )
        return 1
    print(
        f"check-ha-compat: OK: nothing we use is gone or deprecated in HA {report.version}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
