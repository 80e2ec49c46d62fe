"""The one thing pyproject.toml cannot say: the package list is the discovered ``generator*``
packages plus two data-only packages whose folders sit at the top of the repository
(``themes/`` → ``generator/themes``, ``prompts/`` → ``generator/prompts``, mapped by
``[tool.setuptools.package-dir]``). ``packages.find`` alone cannot take them in, and a list
written by hand would drop the next subpackage from the wheel. Everything else is in
pyproject.toml."""

from setuptools import find_packages, setup

# Only folders with an __init__.py are packages (no namespace packages): data folders stay data.
setup(packages=[*find_packages(include=["generator", "generator.*"]), "generator.themes", "generator.prompts"])
