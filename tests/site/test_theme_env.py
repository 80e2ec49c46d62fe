"""The theme's jinja environment reads ``x.name`` from a dict by its key first (no
exception raised and caught for each one): every template gives what jinja's own
environment gives, the names of dict's own attributes and a missing key included."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2
import pytest

from generator.site.theme import Theme, _Environment

TEMPLATES = {
    "key": "{{ d.title }}|{{ d['title'] }}",
    "method": "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
    "shadowed": "{{ d.items is string }}|{{ d.keys is string }}",  # a key named as a dict method
    "object": "{{ o.title }}|{{ o.count + 1 }}",
    "nested": "{{ d.inner.title }}|{{ d.inner.items()|list|length }}",
    "subclass": "{{ s.title }}",
    "escaped": "{{ d.html }}",
    "defined": "{{ d.missing is defined }}",
}


@dataclass
class Shown:
    title: str
    count: int


class Sub(dict[str, str]):
    title = "the attribute"  # a dict subclass: its attribute first, as jinja does


def _envs() -> tuple[jinja2.Environment, jinja2.Environment]:
    options = {"loader": jinja2.DictLoader(TEMPLATES), "autoescape": True, "undefined": jinja2.StrictUndefined}
    return jinja2.Environment(**options), _Environment(**options)  # type: ignore[arg-type]


CONTEXT = {
    "d": {"title": "Séance", "items": "a key", "html": "<b>&</b>", "inner": {"title": "dedans", "x": 1}},
    "o": Shown("objet", 2),
    "s": Sub(title="the key"),
}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_each_template_renders_as_jinjas_own_environment_renders_it(name: str) -> None:
    plain, ours = _envs()
    assert ours.get_template(name).render(**CONTEXT) == plain.get_template(name).render(**CONTEXT)


def test_the_readings_that_differ_in_how_they_are_made_give_the_same_value() -> None:
    _plain, ours = _envs()
    assert ours.get_template("key").render(**CONTEXT) == "Séance|Séance"
    assert ours.get_template("shadowed").render(**CONTEXT) == "False|False", "a dict's method, not its key"
    assert ours.get_template("subclass").render(**CONTEXT) == "the attribute"
    assert ours.get_template("escaped").render(**CONTEXT) == "&lt;b&gt;&amp;&lt;/b&gt;"
    assert ours.get_template("defined").render(**CONTEXT) == "False"


def test_a_missing_key_is_the_same_error() -> None:
    plain, ours = _envs()
    source = "{{ d.missing }}"
    errors = []
    for env in (plain, ours):
        with pytest.raises(jinja2.UndefinedError) as raised:
            env.from_string(source).render(d={"title": "x"})
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and "missing" in errors[0]


def test_the_bundled_theme_uses_it() -> None:
    assert isinstance(Theme.load().env, _Environment)


def test_a_build_renders_with_the_templates_its_theme_loaded(tmp_path: Path) -> None:
    """Within a build, a template edited on disk changes no page (the build's fingerprint
    digested the templates it loaded; Jinja does not stat each template at each page); the
    next load takes the edit (a rebuild, or ``carnet serve``'s next one)."""
    import shutil

    from generator.site.theme import DEFAULT_THEME

    theme_dir = tmp_path / "theme"
    shutil.copytree(DEFAULT_THEME, theme_dir)
    (theme_dir / "templates" / "probe.html").write_text("avant", encoding="utf-8")
    theme = Theme.load(theme_dir)
    assert theme.render("probe.html") == b"avant"
    (theme_dir / "templates" / "probe.html").write_text("après", encoding="utf-8")
    assert theme.render("probe.html") == b"avant"
    assert Theme.load(theme_dir).render("probe.html") == "après".encode()
