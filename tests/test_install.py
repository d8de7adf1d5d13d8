"""Installation: where Numba caches grammask's kernels, and the README's install commands in a
fresh virtual environment.

`test_readme_install_commands` copies the working tree (uncommitted changes included) to a
temporary folder and, in a clean venv there, runs the Quick start as a newcomer does:
`python -m pip install . && grammask demo`, then `python -m pip install -e ".[test]"` in the same
venv, then imports grammask from another folder, then the README's fuzz command for a second
per target. Numba's cache goes to a temporary XDG_CACHE_HOME, so the test also sees where the
kernels were cached: never inside the installed package (a folder left behind there by the
uninstall would shadow the editable install as a namespace package). It takes about three and a
half minutes on two cores, most of it Numba compiling the kernels cold twice, once per install;
pip installs from the configured index (a local one, or the network).
`pytest --ignore=tests/test_install.py` leaves this file out.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .support.paths import ROOT

README = ROOT / "README.md"
# The Quick start's commands, word for word (the test fails when the README stops saying them).
INSTALL_AND_DEMO = "python -m pip install . && grammask demo"
INSTALL_EDITABLE = 'python -m pip install -e ".[test]"'
STEP_TIMEOUT_S = 900
# Copied along with the sources only if git cannot list them: what .gitignore names.
IGNORED = ("__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".git", ".hypothesis",
           ".pytest_cache", "*.nbi", "*.nbc", ".venv", ".benchmarks", ".mypy_cache",
           ".ruff_cache", "results", "findings", "corpus-out")


def _pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_package_folder_is_listed() -> None:
    """pyproject's `packages` names exactly the folders with an `__init__.py` below each mapped
    folder: a subpackage missing from the list is missing from a regular install."""
    setuptools = _pyproject()["tool"]["setuptools"]
    package_dir: dict[str, str] = setuptools["package-dir"]
    assert "grammask" in package_dir, "grammask itself must be a regular package"
    assert package_dir["grammask"] != "grammask", (
        "a grammask/ folder at the root would shadow the install when tests run from there")
    found = set()
    for name, folder in package_dir.items():
        base = ROOT / folder
        assert (base / "__init__.py").is_file(), f"{folder}/__init__.py is missing"
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base).parts
            if not any(part.startswith(".") or part == "__pycache__" for part in relative):
                found.add(".".join((name, *relative)))
    assert sorted(setuptools["packages"]) == sorted(found)


def _import_grammask(tmp_path: Path, code: str, **variables: str) -> list[str]:
    """The lines `code` prints in a fresh interpreter with no Numba settings but `variables`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env.update(variables)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


PRINT_CACHE = ("import os, grammask\n"
               "print(grammask.numba_cache_dir); print(os.environ['NUMBA_CACHE_DIR'])")


def test_numba_cache_in_the_user_cache_folder(tmp_path: Path) -> None:
    base = tmp_path / "cache"
    expected = str(base / "grammask" / "numba")
    assert _import_grammask(tmp_path, PRINT_CACHE, XDG_CACHE_HOME=str(base),
                            LOCALAPPDATA=str(base)) == [expected, expected]
    assert Path(expected).is_dir()
    # numba imported first: its config is set too, before any kernel is decorated
    assert _import_grammask(
        tmp_path, "import numba, grammask; print(numba.config.CACHE_DIR)",
        XDG_CACHE_HOME=str(base), LOCALAPPDATA=str(base)) == [expected]


@pytest.mark.skipif(sys.platform == "win32", reason="XDG_CACHE_HOME is not read on Windows")
def test_numba_cache_default_and_relative_xdg(tmp_path: Path) -> None:
    expected = str(tmp_path / "home" / ".cache" / "grammask" / "numba")
    assert _import_grammask(tmp_path, PRINT_CACHE, HOME=str(tmp_path / "home"),
                            XDG_CACHE_HOME="relative/ignored") == [expected, expected]


def test_numba_cache_dir_set_by_the_user_is_kept(tmp_path: Path) -> None:
    mine = str(tmp_path / "mine")
    assert _import_grammask(tmp_path, PRINT_CACHE, NUMBA_CACHE_DIR=mine,
                            XDG_CACHE_HOME=str(tmp_path / "cache"),
                            LOCALAPPDATA=str(tmp_path / "cache")) == [mine, mine]
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("imports", ["numba, grammask", "grammask, numba"])
def test_numba_cache_folder_not_creatable(tmp_path: Path, imports: str) -> None:
    """A cache folder that cannot be created: a temporary one, gone at exit, and no error."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    temp = tmp_path / "temp"
    temp.mkdir()
    lines = _import_grammask(
        tmp_path, f"import {imports}, grammask.runtime\n"
        "print(grammask.numba_cache_dir); print(numba.config.CACHE_DIR)",
        XDG_CACHE_HOME=str(blocker / "cache"), LOCALAPPDATA=str(blocker / "cache"),
        TMPDIR=str(temp), TEMP=str(temp), TMP=str(temp))
    assert lines[0] == lines[1] and Path(lines[0]).parent == temp
    assert not Path(lines[0]).exists()


def _copy_tree(destination: Path) -> None:
    """The working tree's files (tracked and untracked, not ignored) copied to `destination`."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True, timeout=60).stdout.decode()
    except (OSError, subprocess.SubprocessError):
        shutil.copytree(ROOT, destination, ignore=shutil.ignore_patterns(*IGNORED))
        return
    for name in filter(None, listing.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is skipped
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def _run(command: str | list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=env, shell=isinstance(command, str), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=STEP_TIMEOUT_S)


def _tail(output: str, n: int = 4000) -> str:
    return output[-n:]


def _numba_files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.suffix in (".nbi", ".nbc"))


def _quick_start_fuzz_command(readme: str) -> list[str] | None:
    """The Quick start's fuzz command, one second per target and seed 0 (the README's seed, its
    last option, is a shell expression of the commit); None when there is none."""
    quick_start = readme.split("## Quick start", 1)[-1].split("\n## ", 1)[0]
    match = re.search(r"^python fuzz/run\.py .*$", quick_start, re.M)
    if match is None:
        return None
    words = shlex.split(re.sub(r"\s--seed\s.*$", "", match[0]))
    for option, value in (("--seconds", "1"), ("--seed", "0"),
                          # Kernels are compiled cold here: that is not a slow input.
                          ("--input-seconds", "600")):
        if option in words:
            words[words.index(option) + 1] = value
        else:
            words += [option, value]
    return words


def test_readme_install_commands(tmp_path: Path) -> None:
    if importlib.util.find_spec("ensurepip") is None:
        pytest.skip("this Python has no ensurepip, so it cannot create a virtual environment")
    readme = README.read_text(encoding="utf-8")
    for command in (INSTALL_AND_DEMO, INSTALL_EDITABLE):
        assert command in readme, f"the README no longer says {command!r}: update this test"

    repo = tmp_path / "repo"
    _copy_tree(repo)
    venv = tmp_path / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if made.returncode != 0 and "ensurepip" in made.stdout:
        pytest.skip(f"cannot create a virtual environment: {made.stdout.strip()[-300:]}")
    assert made.returncode == 0, made.stdout
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = str(bin_dir / "python")

    # A clean environment: no Numba settings (this process's grammask import sets
    # NUMBA_CACHE_DIR, which would hide where an install caches on its own), nothing on
    # PYTHONPATH, the venv first on PATH, and the per-user cache in a temporary folder.
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("NUMBA_")
           and key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = str(venv)
    pip_cache = _run([python, "-m", "pip", "cache", "dir"], tmp_path, env)
    if pip_cache.returncode == 0 and "PIP_CACHE_DIR" not in env:  # pip keeps its own cache
        env["PIP_CACHE_DIR"] = pip_cache.stdout.strip().splitlines()[-1]
    cache_home = tmp_path / "cache"
    env["XDG_CACHE_HOME"] = env["LOCALAPPDATA"] = str(cache_home)
    numba_cache = cache_home / "grammask" / "numba"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        tmp_path, env).stdout.strip())
    installed = purelib / "grammask"

    # 1. python -m pip install . && grammask demo
    demo = _run(INSTALL_AND_DEMO, repo, env)
    assert demo.returncode == 0, _tail(demo.stdout)
    assert "grammask demo" in demo.stdout and '{"age": 42}' in demo.stdout, _tail(demo.stdout)
    regular = _run([python, "-c", (
        "import grammask, grammask.compiler, grammask.runtime, importlib.resources as r\n"
        "assert (r.files('grammask.specs') / 'regex.lark').is_file()\n"
        "assert (r.files('grammask.specs') / 'json_schema_support.json').is_file()\n"
        "print(grammask.__file__)\n")], elsewhere, env)
    in_package = _numba_files(installed)
    in_cache = _numba_files(numba_cache) if numba_cache.is_dir() else []

    # 2. python -m pip install -e ".[test]" in the same venv (it uninstalls the regular install)
    editable = _run(INSTALL_EDITABLE, repo, env)
    assert editable.returncode == 0, _tail(editable.stdout)
    left_behind = sorted(str(p.relative_to(purelib)) for p in installed.rglob("*")) \
        if installed.exists() else []

    # 3. a plain Python elsewhere imports the editable install
    imported = _run([python, "-c", (
        "import grammask.compiler, grammask.runtime, importlib.resources as r\n"
        "from grammask.compiler import GrammarError\n"
        "assert (r.files('grammask.specs') / 'regex.lark').is_file()\n"
        "print(grammask.compiler.__file__)\n")], elsewhere, env)

    # The user's symptom first, then its causes, then the regular install's own checks.
    assert imported.returncode == 0, (
        f"import grammask.compiler failed after the editable install; left behind in "
        f"site-packages by the uninstall: {left_behind[:20]}\n{_tail(imported.stdout)}")
    assert Path(imported.stdout.splitlines()[-1]).parent == repo / "compiler"
    assert not left_behind, f"the uninstall left these in site-packages: {left_behind[:20]}"
    assert not in_package, f"Numba cached inside the installed package: {in_package[:10]}"
    assert in_cache, f"Numba cached nothing in {numba_cache}"
    assert regular.returncode == 0, _tail(regular.stdout)
    assert Path(regular.stdout.splitlines()[-1]) == installed / "__init__.py", (
        "the regular install's grammask is not a regular package")
    console_script = shutil.which("grammask", path=str(bin_dir))
    assert console_script is not None, "the editable install has no grammask command"
    script = _run([console_script, "check", "--regex", "[a-z]+", "abc"], elsewhere, env)
    assert script.returncode == 0, _tail(script.stdout)
    tests_ready = _run([python, "-m", "pytest", "--version"], elsewhere, env)
    assert tests_ready.returncode == 0, _tail(tests_ready.stdout)

    # 4. the README's fuzz command, short
    fuzz = _quick_start_fuzz_command(readme)
    if fuzz is not None:
        fuzz[0] = python
        fuzzed = _run(fuzz, repo, env)
        assert fuzzed.returncode == 0, _tail(fuzzed.stdout)
