"""Every string the code can show has a translation, in English and in Spanish.

A static scan of the integration (AST): flow steps (forms and menus, with
their menu options and description placeholders), form fields, errors,
aborts, selector options, services and their fields, exception and repair
issue translation keys with their placeholders. Then strings.json must equal
translations/en.json, and every other language must have exactly the same
keys and placeholders.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
import importlib
import json
from pathlib import Path
import re
import string
from typing import Any, get_args

import homeassistant
from homeassistant.helpers import config_validation as cv
import pytest
import yaml

PACKAGE = (
    Path(__file__).resolve().parent.parent / "custom_components" / "local_assistant"
)
STRINGS = json.loads((PACKAGE / "strings.json").read_text(encoding="utf-8"))
TRANSLATIONS = sorted((PACKAGE / "translations").glob("*.json"))
# How a language parts a list and ends a sentence (tools/phrases.py).
LAYOUT_KEYS = {"exceptions.live_separator.message", "exceptions.live_end.message"}
# Aborts HA core itself raises from our flows.
CORE_SUBENTRY_ABORTS = {"entry_not_loaded", "reconfigure_successful"}
FLOW_BASES = {
    "ConfigFlow": "config",
    "OptionsFlow": "options",
    "OptionsFlowWithReload": "options",
    "ConfigSubentryFlow": "subentry",
    "AgentSubentryFlow": "subentry",  # ours: the shared base of agent subentry flows
}


def modules() -> Iterator[tuple[str, ast.Module, Any]]:
    """(module name, tree, imported module) for each file of the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent.parent).with_suffix("")
        name = ".".join(relative.parts).removesuffix(".__init__")
        yield (
            name,
            ast.parse(path.read_text(encoding="utf-8")),
            importlib.import_module(name),
        )


def value_of(node: ast.expr | None, module: Any) -> Any:
    """A string constant, or a module-level constant such as CONF_MODEL."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return getattr(module, node.id, None)
    if isinstance(node, ast.Attribute):
        return getattr(value_of(node.value, module), node.attr, None)
    return None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def call_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def subentry_types() -> dict[str, str]:
    """Subentry flow class name -> subentry type, from the config flow."""
    flow_module = importlib.import_module(
        f"{PACKAGE.parent.name}.{PACKAGE.name}.config_flow"
    )
    found: dict[str, str] = {}
    for cls in vars(flow_module).values():
        getter = getattr(cls, "async_get_supported_subentry_types", None)
        if (
            isinstance(cls, type)
            and getter is not None
            and cls.__module__ == flow_module.__name__
        ):
            for kind, flow in getter(None).items():
                found[flow.__name__] = kind
    return found


def flow_sections() -> dict[str, str]:
    """Flow class name -> its section path in strings.json."""
    kinds = subentry_types()
    sections: dict[str, str] = {}
    for _name, tree, _module in modules():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for base in cls.bases:
                base_name = (
                    base.attr
                    if isinstance(base, ast.Attribute)
                    else getattr(base, "id", "")
                )
                kind = FLOW_BASES.get(base_name)
                if kind == "subentry":
                    if cls.name in kinds:  # a shared base has no subentry type
                        sections[cls.name] = f"config_subentries.{kinds[cls.name]}"
                elif kind:
                    sections[cls.name] = kind
    return sections


SECTIONS = flow_sections()


def lookup(path: str) -> Any:
    node: Any = STRINGS
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def owner_classes(tree: ast.Module) -> dict[int, str]:
    """id(node) -> name of the flow class it is in."""
    owners: dict[int, str] = {}
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        if cls.name in SECTIONS:
            for node in ast.walk(cls):
                owners[id(node)] = cls.name
    return owners


def names_assigned_strings(func: ast.AST, name: str) -> set[str]:
    """String constants put into a list variable: `x = [...]`, `x += [...]`, `x.append(...)`."""
    found: set[str] = set()
    for node in ast.walk(func):
        values: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                values = [node.value]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"append", "extend"}
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
        ):
            values = list(node.args)
        for value in values:
            found |= {
                c.value
                for c in ast.walk(value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            }
    return found


def _in_home_assistant_domain(node: ast.Call, called: str | None) -> bool:
    """An issue raised in HA's own domain, with HA's own text (its strings)."""
    return (
        called == "async_create_issue"
        and len(node.args) > 1
        and isinstance(node.args[1], ast.Name)
        and node.args[1].id == "HOMEASSISTANT_DOMAIN"
    )


def scan() -> dict[str, set[str]]:
    """Every translation path the code can produce, with where it comes from."""
    need: dict[str, set[str]] = {}

    def add(path: str, where: str) -> None:
        need.setdefault(path, set()).add(where)

    error_sections = sorted(set(SECTIONS.values()))
    for name, tree, module in modules():
        owners = owner_classes(tree)
        functions = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        key_helpers = {  # def _invalid(key, **placeholders): ...(translation_key=key)
            fn.name: [a.arg for a in fn.args.args].index(kw.value.id)
            for fn in functions
            for call in ast.walk(fn)
            if isinstance(call, ast.Call)
            for kw in call.keywords
            if kw.arg == "translation_key"
            and isinstance(kw.value, ast.Name)
            and kw.value.id in [a.arg for a in fn.args.args]
        }
        module_sections = {SECTIONS[c] for c in set(owners.values())}
        enclosing: dict[int, ast.AST] = {}
        for fn in functions:  # outer functions first: inner ones overwrite
            for node in ast.walk(fn):
                enclosing[id(node)] = fn
        for node in ast.walk(tree):
            func = enclosing.get(id(node), tree)
            if True:
                where = f"{name}:{getattr(node, 'lineno', 0)}"
                section = SECTIONS.get(owners.get(id(node), ""))
                if isinstance(node, ast.Call):
                    called = call_name(node)
                    if called in {"async_show_form", "async_show_menu"} and section:
                        step = value_of(keyword(node, "step_id"), module)
                        add(f"{section}.step.{step}.title", where)
                        menu = keyword(node, "menu_options")
                        options: set[str] = set()
                        if isinstance(menu, ast.List):
                            options = {value_of(e, module) for e in menu.elts}
                        elif isinstance(menu, ast.Name):
                            options = names_assigned_strings(func, menu.id)
                        for option in options:
                            add(f"{section}.step.{step}.menu_options.{option}", where)
                        title = lookup(f"{section}.step.{step}.title") or ""
                        if (
                            called == "async_show_menu"
                            and section != "config"
                            and placeholders(title)
                        ):
                            # HA's frontend fills placeholders in form titles and
                            # menu descriptions, but not in the title of an options
                            # or subentry menu: it shows "Translation Error".
                            add(
                                f"(menu title {section}.step.{step}.title has "
                                f"placeholders {sorted(placeholders(title))})",
                                where,
                            )
                        given = keyword(node, "description_placeholders")
                        if isinstance(given, ast.Dict):
                            keys = {value_of(k, module) for k in given.keys if k}
                            text = lookup(f"{section}.step.{step}.description") or ""
                            missing = placeholders(text) - keys - {"name"}
                            if missing:
                                add(
                                    f"(placeholders {sorted(missing)} of {section}.step.{step})",
                                    where,
                                )
                    elif called == "async_abort" and section:
                        reason = value_of(keyword(node, "reason"), module)
                        add(f"{section}.abort.{reason}", where)
                    elif called == "_async_abort_entries_match" and section:
                        add(f"{section}.abort.already_configured", where)
                    elif (
                        called
                        in {"async_update_reload_and_abort", "async_update_and_abort"}
                        and section == "config"
                    ):
                        # In a step: its source's reason; in a helper: both.
                        step = getattr(func, "name", "")
                        reasons = [r for r in ("reconfigure", "reauth") if r in step]
                        for reason in reasons or ["reconfigure", "reauth"]:
                            add(f"config.abort.{reason}_successful", where)
                    elif (
                        called in {"async_update_and_abort", "async_create_entry"}
                        and section
                        and section.startswith("config_subentries")
                    ):
                        for reason in CORE_SUBENTRY_ABORTS:
                            add(f"{section}.abort.{reason}", where)
                    elif called in {"Required", "Optional"} and node.args:
                        field = value_of(node.args[0], module)
                        sections = module_sections or set()
                        if sections and isinstance(field, str):
                            steps = [lookup(f"{s}.step") or {} for s in sections]
                            if not any(
                                field in step.get("data", {})
                                for st in steps
                                for step in st.values()
                            ):
                                add(
                                    f"(field {field!r} has no label in {sorted(sections)})",
                                    where,
                                )
                    elif called == "SelectSelectorConfig" and (
                        key := keyword(node, "translation_key")
                    ):
                        selector_key = value_of(key, module)
                        options_node = keyword(node, "options")
                        if isinstance(options_node, ast.List):
                            for option in options_node.elts:
                                add(
                                    f"selector.{selector_key}.options.{value_of(option, module)}",
                                    where,
                                )
                    if (
                        (key_node := keyword(node, "translation_key")) is not None
                        and called != "SelectSelectorConfig"
                        and not _in_home_assistant_domain(node, called)
                    ):
                        key = value_of(key_node, module)
                        if isinstance(key, str):
                            kind = (
                                "issues"
                                if called == "async_create_issue"
                                else "exceptions"
                            )
                            suffix = "description" if kind == "issues" else "message"
                            add(f"{kind}.{key}.{suffix}", where)
                            if kind == "issues":
                                add(f"issues.{key}.title", where)
                            given = keyword(node, "translation_placeholders")
                            if isinstance(given, ast.Dict):
                                keys = {value_of(k, module) for k in given.keys if k}
                                text = lookup(f"{kind}.{key}.{suffix}") or ""
                                if placeholders(text) - keys:
                                    add(
                                        f"(placeholders {sorted(placeholders(text) - keys)} of {kind}.{key})",
                                        where,
                                    )
                    if (
                        called in key_helpers
                        and len(node.args) > key_helpers[called]
                        and isinstance(
                            key := value_of(node.args[key_helpers[called]], module),
                            str,
                        )
                    ):
                        # (A key from a variable, e.g. FactRefused.reason, is
                        # checked through its Literal type below.)
                        add(f"exceptions.{key}.message", where)
                        text = lookup(f"exceptions.{key}.message") or ""
                        given_names = {kw.arg for kw in node.keywords if kw.arg}
                        if placeholders(text) - given_names:
                            add(
                                f"(placeholders {sorted(placeholders(text) - given_names)} of exceptions.{key})",
                                where,
                            )
                elif (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Subscript)
                    and isinstance(node.targets[0].value, ast.Name)
                    and node.targets[0].value.id == "errors"
                ):
                    error = value_of(node.value, module)
                    if error is None:
                        # A variable: its values come from the checker below.
                        continue
                    paths = (
                        [f"{section}.error.{error}"]
                        if section
                        else [f"{s}.error.{error}" for s in error_sections]
                    )
                    add(" | ".join(paths), where)
                elif (
                    isinstance(node, ast.Return)
                    and isinstance(node.value, ast.Tuple)
                    and getattr(func, "name", "") == "async_check_server"
                ):
                    # (models, error): the error key every flow shows as "base".
                    error = value_of(node.value.elts[-1], module)
                    if error is not None:
                        add(
                            " | ".join(f"{s}.error.{error}" for s in error_sections),
                            where,
                        )
                elif (
                    isinstance(node, ast.Return)
                    and isinstance(node.value, ast.Dict)
                    and getattr(func, "name", "").endswith("_errors")
                ):
                    for value in node.value.values:
                        error = value_of(value, module)
                        add(
                            " | ".join(f"{s}.error.{error}" for s in error_sections),
                            where,
                        )
    services = yaml.safe_load((PACKAGE / "services.yaml").read_text(encoding="utf-8"))
    for service, spec in services.items():
        add(f"services.{service}.name", "services.yaml")
        add(f"services.{service}.description", "services.yaml")
        for field in (spec or {}).get("fields", {}):
            add(f"services.{service}.fields.{field}.name", "services.yaml")
            add(f"services.{service}.fields.{field}.description", "services.yaml")
    return need


NEEDED = scan()


def test_the_issue_raised_in_home_assistant_s_domain_has_its_text() -> None:
    """HA's storage issue we raise for a facts file moved aside: HA ships its
    title and description, with the placeholders we fill."""
    strings = json.loads(
        (
            Path(homeassistant.__file__).parent
            / "components"
            / "homeassistant"
            / "strings.json"
        ).read_text(encoding="utf-8")
    )
    issue = strings["issues"]["storage_corruption"]
    text = issue["fix_flow"]["step"]["confirm"]["description"]
    assert placeholders(text) == {
        "storage_key",
        "original_path",
        "corrupt_path",
        "error",
    }
    assert issue["title"]


def test_the_scan_finds_what_it_should() -> None:
    """Guard the scanner itself: a sample of known keys is found."""
    for path in (
        "config.step.user.title",
        "config.step.reauth_confirm.title",
        "config.abort.reauth_successful",
        "config.abort.reconfigure_successful",
        "config.step.reconfigure.title",
        "config_subentries.conversation.step.init.title",
        "config_subentries.ai_task_data.step.init.title",
        "options.step.init.menu_options.settings",
        "options.step.speaker.menu_options.restore_fact",
        "selector.extraction.options.hosted",
        "exceptions.invalid_json.message",
        "exceptions.fact_not_found.message",
        "issues.server_unreachable.description",
        "services.add_fact.fields.text.name",
    ):
        assert path in NEEDED, path
    assert any("kite_range" in path for path in NEEDED)
    assert any(
        path.endswith("error.invalid_auth") for p in NEEDED for path in p.split(" | ")
    )


@pytest.mark.parametrize("path", sorted(NEEDED))
def test_every_string_the_code_uses_exists(path: str) -> None:
    where = ", ".join(sorted(NEEDED[path]))
    assert not path.startswith("("), f"{path} at {where}"
    options = path.split(" | ")
    assert any(isinstance(lookup(p), str) and lookup(p).strip() for p in options), (
        f"no string for {path} (used at {where})"
    )


def test_every_service_has_an_icon() -> None:
    icons = json.loads((PACKAGE / "icons.json").read_text(encoding="utf-8"))
    services = yaml.safe_load((PACKAGE / "services.yaml").read_text(encoding="utf-8"))
    assert set(icons["services"]) == set(services)
    assert all(
        re.fullmatch(r"mdi:[a-z0-9-]+", v["service"])
        for v in icons["services"].values()
    )


def test_english_translation_is_strings_json() -> None:
    english = json.loads(
        (PACKAGE / "translations" / "en.json").read_text(encoding="utf-8")
    )
    assert english == STRINGS


def flatten(node: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(node, dict):
        out: dict[str, str] = {}
        for key, value in node.items():
            out |= flatten(value, f"{prefix}.{key}" if prefix else key)
        return out
    assert isinstance(node, str), f"{prefix} is not a string"
    return {prefix: node}


@pytest.mark.parametrize("path", TRANSLATIONS, ids=lambda p: p.stem)
def test_every_language_has_the_same_keys_and_placeholders(path: Path) -> None:
    english = flatten(STRINGS)
    other = flatten(json.loads(path.read_text(encoding="utf-8")))
    assert set(other) == set(english), {
        "missing": sorted(set(english) - set(other)),
        "extra": sorted(set(other) - set(english)),
    }
    for key, text in english.items():
        assert placeholders(other[key]) == placeholders(text), key
        # Thai ends no sentence with a mark.
        assert other[key].strip() or key in LAYOUT_KEYS, key


def test_spanish_exists_and_is_translated() -> None:
    spanish = flatten(
        json.loads((PACKAGE / "translations" / "es.json").read_text(encoding="utf-8"))
    )
    english = flatten(STRINGS)
    # Templates made only of placeholders and marks ("{name}: {value}.") are
    # the same in both; words are not.
    same = [
        k
        for k, v in spanish.items()
        if v == english[k] and len(re.sub(r"\{\w+\}|\W", "", v)) > 6
    ]
    # Only proper names and URLs may stay as in English.
    assert len(same) <= 3, same


def form_steps() -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, step) for every step of every flow section in strings.json."""
    sections = {
        "config": STRINGS["config"],
        "options": STRINGS["options"],
        **{
            f"config_subentries.{kind}": section
            for kind, section in STRINGS["config_subentries"].items()
        },
    }
    for name, section in sections.items():
        for step_id, step in section.get("step", {}).items():
            yield f"{name}.step.{step_id}", step


def test_every_field_has_a_description() -> None:
    """The quality scale's config-flow rule: each field says what it is for."""
    missing = [
        f"{path}.data_description.{field}"
        for path, step in form_steps()
        for field in step.get("data", {})
        if not str(step.get("data_description", {}).get(field, "")).strip()
    ]
    assert not missing, missing


def test_every_key_of_a_literal_type_has_its_message() -> None:
    """Keys that reach translation_key through a variable are typed as Literals:
    each one needs its exception message (and the fact refusals their form error),
    in every language (the per-language test checks the rest)."""
    from custom_components.local_assistant.llm.sentences import SpokenKey
    from custom_components.local_assistant.memory.facts import FactRefusal

    for key in (*get_args(SpokenKey), *get_args(FactRefusal)):
        assert lookup(f"exceptions.{key}.message"), key
    for key in get_args(FactRefusal):
        assert lookup(f"options.error.{key}"), key


def test_spoken_languages_are_the_translation_files() -> None:
    from custom_components.local_assistant.llm.sentences import SPOKEN_LANGUAGES

    assert sorted(SPOKEN_LANGUAGES) == sorted(path.stem for path in TRANSLATIONS)


def test_exception_messages_wrap_no_sentence() -> None:
    """Each error has its own translated sentence; none is a frame around an
    English `{reason}` or `{message}` made in code."""
    wrapped = {
        key: value["message"]
        for key, value in STRINGS["exceptions"].items()
        if placeholders(value["message"]) & {"reason", "message", "error"}
    }
    assert not wrapped, wrapped


@pytest.mark.parametrize(
    ("language", "text", "spoken"),
    [
        # German: a URL is mostly the object of what an answer asks (öffne,
        # siehe, besuche): accusative. "der Link" read "Öffne der Link."
        ("de", "Öffne https://x.de.", "Öffne den Link."),
        ("de", "Siehe https://x.de/info.", "Siehe den Link."),
        # French, Spanish and Italian contract the article after de/à, a/de,
        # di/a/su ("du lien", "del enlace", "al link"); a demonstrative does not.
        (
            "fr",
            "Tout est sur la page de https://x.fr.",
            "Tout est sur la page de ce lien.",
        ),
        ("fr", "Rendez-vous à https://x.fr.", "Rendez-vous à ce lien."),
        ("es", "Más información en https://x.es.", "Más información en este enlace."),
        ("es", "Los horarios de https://x.es.", "Los horarios de este enlace."),
        ("it", "Trovi tutto a https://x.it.", "Trovi tutto a questo link."),
        ("it", "Il testo di https://x.it.", "Il testo di questo link."),
        ("en", "See https://x.com for details.", "See the link for details."),
        ("nl", "Open https://x.nl.", "Open de link."),
    ],
)
def test_the_link_text_reads_where_a_url_stands(
    language: str, text: str, spoken: str
) -> None:
    """Found by review: German read "Öffne https://x.de." as "Öffne der Link."
    (llm/spoken.py puts the language's link text where the URL was)."""
    from custom_components.local_assistant.llm.spoken import speakable

    messages = json.loads(
        (PACKAGE / "translations" / f"{language}.json").read_text(encoding="utf-8")
    )["exceptions"]
    assert speakable(text, link_text=messages["link_text"]["message"]) == spoken


def _values(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(dotted key, text) of every string in a translation tree."""
    if isinstance(node, dict):
        for key, child in node.items():
            yield from _values(child, f"{path}.{key}" if path else key)
    elif isinstance(node, str):
        yield path, node


@pytest.mark.parametrize(
    "path", [PACKAGE / "strings.json", *TRANSLATIONS], ids=lambda path: path.name
)
def test_strings_pass_hassfest(path: Path) -> None:
    """What HA's hassfest checks of a translation file (found by a review:
    "live_point_NNE", "live_condition_clear-night" and the separator ", "
    failed it): exception keys are slugs, and no text starts or ends with a
    space."""
    strings = json.loads(path.read_text(encoding="utf-8"))
    for key in strings.get("exceptions", {}):
        assert cv.slug(key) == key, key
    spaced = [key for key, text in _values(strings) if text != text.strip()]
    assert not spaced
