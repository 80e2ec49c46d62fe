"""The package as a user installs it: a wheel built from the checkout and installed in a fresh
virtual environment outside it carries its theme and prompts, and builds the example site byte
for byte like the checkout does. The checkout keeps the theme and the prompts at its top level
(``themes/``, ``prompts/``); the wheel carries them inside the package (``generator/themes``,
``generator/prompts``), and so does a wheel built from the sdist.

One wheel and one environment for the module. The fresh environment gets carnet's dependencies
without the network: a ``.pth`` file names the site-packages of the interpreter running the
tests. A line of a ``.pth`` file only adds its folder to ``sys.path``; the ``.pth`` files in that
folder are not processed, so an editable install of carnet there (its ``__editable__*.pth``
finder) cannot leak in; the probe test checks where ``generator``, its theme and its prompts
came from."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

import generator
from generator.llm.prompts import load_prompt, prompt_files

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generator"
BUNDLED = ("themes", "prompts")
"""The checkout's top-level data folders the wheel carries as ``generator/<name>``."""

# PEP 639's `license = "MIT"` in pyproject.toml needs setuptools 77; an older one in this
# environment builds the wheel with pip's build isolation instead (from the package index).
SETUPTOOLS_READING_PYPROJECT = (77, 0)

PROBE = """
import json, sys
import generator
from generator.llm.prompts import PROMPTS, load_prompt, prompt_files
from generator.site import DEFAULT_THEME
print(json.dumps({
    "generator": generator.__file__, "prompts": str(PROMPTS), "theme": str(DEFAULT_THEME),
    "templates": sorted(p.name for p in (DEFAULT_THEME / "templates").glob("*.html")),
    "versions": {f"{language}/{name}": load_prompt(name, language).version for language, name in prompt_files()},
    "editable": sorted(name for name in sys.modules if "editable" in name),
    "path": sys.path,
}))
"""


@dataclass(frozen=True)
class Installed:
    wheel: Path
    source: Path
    """The copy of the checkout the wheel was built from."""
    venv: Path
    python: Path
    carnet: Path
    work: Path
    """A folder outside the checkout: the working directory of every command."""
    env: dict[str, str]


def _unavailable(reason: str) -> NoReturn:
    """Skip where the machine lacks what the test needs, but never under CI."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (required under CI)")
    pytest.skip(reason)


def _run(command: list[str | Path], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    done = subprocess.run([str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode == 0, (f"{' '.join(map(str, command))}: exit {done.returncode}\n"
                                  f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")
    return done.stdout


def _version(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for part in text.split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts)


def _build_isolation_needed() -> bool:
    try:
        return _version(importlib.metadata.version("setuptools")) < SETUPTOOLS_READING_PYPROJECT
    except importlib.metadata.PackageNotFoundError:
        return True


def _copy_checkout(destination: Path) -> Path:
    """What the wheel is built from: the checkout's top-level files, generator/, themes/ and
    prompts/. A build in place would write build/ (the site's default output folder) and an
    .egg-info into it."""
    destination.mkdir()
    for path in ROOT.iterdir():
        if path.is_file() and not path.name.startswith("."):
            shutil.copy2(path, destination / path.name)
    for folder in ("generator", *BUNDLED):
        shutil.copytree(ROOT / folder, destination / folder, ignore=shutil.ignore_patterns("__pycache__", "*.py[co]"))
    return destination


def _packaged(source: Path) -> dict[str, bytes]:
    """What a wheel built from ``source`` must hold under generator/: every file of its
    generator/, and of its top-level themes/ and prompts/ inside the package."""
    expected = {f"generator/{name}": data for name, data in _tree(source / "generator").items()}
    for folder in BUNDLED:
        expected.update({f"generator/{folder}/{name}": data for name, data in _tree(source / folder).items()})
    return expected


def _wheel_files(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist() if not name.endswith("/")}


def _dependency_folders() -> list[str]:
    """The site-packages folders of the interpreter running the tests (not the checkout itself,
    nor tests/, which are on its sys.path too)."""
    folders: list[str] = []
    for entry in sys.path:
        path = Path(entry) if entry else None
        if path is not None and path.name in ("site-packages", "dist-packages") and path.is_dir() \
                and str(path) not in folders:
            folders.append(str(path))
    return folders


def _tree(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() or path.is_symlink()}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    try:
        import venv  # noqa: F401
    except ImportError:
        _unavailable("the venv module is missing from this Python")
    try:
        import pip  # noqa: F401
    except ImportError:
        _unavailable("pip is missing from the environment running the tests")
    base = tmp_path_factory.mktemp("wheel")
    if base.resolve().is_relative_to(ROOT):
        pytest.fail(f"the temporary folder {base} is inside the checkout: the installed package must be tested "
                    "outside it (pytest --basetemp)")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env["PYTHONNOUSERSITE"] = "1"
    work = base / "work"
    work.mkdir()

    source = _copy_checkout(base / "source")
    dist = base / "dist"
    build: list[str | Path] = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, source]
    if not _build_isolation_needed():
        build.insert(4, "--no-build-isolation")
    _run(build, work, env, timeout=600)
    (wheel,) = dist.glob("carnet-*.whl")

    venv_dir = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv_dir], work, env)
    python = venv_dir / "bin" / "python"
    # pip of this environment installs into the fresh one; the dependencies come after, so pip sees no carnet there
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "--quiet", wheel],
         work, env)
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work, env).strip())
    assert purelib.is_relative_to(venv_dir), purelib
    folders = _dependency_folders()
    assert folders, f"no site-packages on this interpreter's sys.path: {sys.path}"
    (purelib / "carnet-test-dependencies.pth").write_text("".join(f"{folder}\n" for folder in folders),
                                                         encoding="utf-8")
    return Installed(wheel, source, venv_dir, python, venv_dir / "bin" / "carnet", work, env)


def test_the_wheel_holds_every_file_of_the_package_and_nothing_else(installed: Installed) -> None:
    entries = _wheel_files(installed.wheel)
    version = generator.__version__
    top = {name.split("/")[0] for name in entries}
    assert top == {"generator", f"carnet-{version}.dist-info"}, "no tests, content, themes/ or prompts/ at the top"
    packaged = {name: data for name, data in entries.items() if name.startswith("generator/")}
    expected = _packaged(installed.source)
    missing, extra = sorted(expected.keys() - packaged.keys()), sorted(packaged.keys() - expected.keys())
    assert not missing and not extra, f"missing from the wheel: {missing}; unexpected in it: {extra}"
    changed = sorted(name for name in expected if packaged[name] != expected[name])
    assert not changed, f"different in the wheel: {changed}"
    for folder in ("generator/themes/default/templates/", "generator/themes/default/strings/",
                   "generator/themes/default/static/", "generator/prompts/en/", "generator/prompts/fr/",
                   "generator/verification/calibration/"):
        assert any(name.startswith(folder) for name in packaged), f"nothing under {folder}"
    for name in ("generator/themes/default/templates/layout.html", "generator/themes/default/strings/fr.yaml",
                 "generator/prompts/fr/verify_pairs.j2", "generator/prompts/en/verify_pairs.j2"):
        assert packaged[name] == (installed.source / name.removeprefix("generator/")).read_bytes(), name


def test_the_sdist_holds_the_theme_and_prompts_and_builds_the_same_wheel(installed: Installed,
                                                                         tmp_path: Path) -> None:
    """A wheel built from the sdist (as pip does from an index without wheels) holds the same
    files as the one built from the checkout: the sdist carries themes/, prompts/ and setup.py."""
    if _build_isolation_needed():
        _unavailable(f"setuptools {SETUPTOOLS_READING_PYPROJECT} or later is needed to build the sdist here")
    source = _copy_checkout(tmp_path / "source")
    backend = ("import sys; from setuptools import build_meta; "
               "print(build_meta.build_sdist(sys.argv[1]))")
    name = _run([sys.executable, "-c", backend, tmp_path / "sdist"], source, installed.env).strip().splitlines()[-1]
    with tarfile.open(tmp_path / "sdist" / name) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    for folder in BUNDLED:
        assert _tree(unpacked / folder) == _tree(source / folder), f"the sdist's {folder}/ is the checkout's"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w",
          tmp_path / "dist", unpacked], installed.work, installed.env, timeout=600)
    (wheel,) = (tmp_path / "dist").glob("carnet-*.whl")
    from_sdist = _wheel_files(wheel)
    assert {name.split("/")[0] for name in from_sdist} == {name.split("/")[0] for name in _wheel_files(installed.wheel)}
    assert {n: d for n, d in from_sdist.items() if n.startswith("generator/")} == _packaged(source), \
        "the wheel built from the sdist holds what the checkout's would"


def test_the_installed_package_runs_from_its_own_environment_with_its_prompts(installed: Installed) -> None:
    probe = json.loads(_run([installed.python, "-c", PROBE], installed.work, installed.env))
    module = Path(probe["generator"]).resolve()
    assert module.is_relative_to(installed.venv.resolve()), f"generator imported from {module}"
    assert not module.is_relative_to(ROOT)
    assert probe["editable"] == [], "the editable install of the checkout leaked into the fresh environment"
    assert str(ROOT) not in [str(Path(entry).resolve()) for entry in probe["path"] if entry], probe["path"]
    for key in ("prompts", "theme"):
        assert Path(probe[key]).resolve().is_relative_to(installed.venv.resolve()), probe[key]
    assert "layout.html" in probe["templates"]
    here = {f"{language}/{name}": load_prompt(name, language).version
            for language, name in prompt_files(ROOT / "prompts")}
    assert {key.split("/")[0] for key in here} == {"en", "fr"}, here
    assert probe["versions"] == here, "the installed prompts are the checkout's, in each language, same versions"


def test_carnet_version(installed: Installed) -> None:
    shown = _run([installed.carnet, "--version"], installed.work, installed.env)
    assert shown.strip() == f"carnet {generator.__version__}"


def test_the_installed_carnet_builds_the_example_site_like_the_checkout(installed: Installed) -> None:
    content = installed.work / "content"
    shutil.copytree(ROOT / "content", content, symlinks=True)
    from_wheel, from_checkout = installed.work / "wheel" / "site", installed.work / "checkout" / "site"
    commands = [[installed.carnet, "build", content, "--out", from_wheel, "--no-search"],
                [sys.executable, "-m", "generator", "build", content, "--out", from_checkout, "--no-search"]]
    # the checkout's build runs where the tests do: the editable install (or whichever carnet they test)
    envs = [installed.env, dict(os.environ)]
    running = [subprocess.Popen([str(part) for part in command], cwd=installed.work, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for command, env in zip(commands, envs, strict=True)]
    for command, process in zip(commands, running, strict=True):
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, f"{command}: exit {process.returncode}\n--- stdout\n{out}\n--- stderr\n{err}"
    built, expected = _tree(from_wheel), _tree(from_checkout)
    assert any(name.startswith("static/") for name in expected), "the theme's static files are published"
    missing, extra = sorted(expected.keys() - built.keys()), sorted(built.keys() - expected.keys())
    assert not missing and not extra, f"missing from the wheel's site: {missing[:20]}; only in it: {extra[:20]}"
    changed = sorted(name for name in expected if built[name] != expected[name])
    assert not changed, f"{len(changed)} file(s) differ, e.g. {changed[:20]}"
