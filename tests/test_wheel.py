"""The shipped package is the runtime: the wheel holds every module and data file of
`memindex` and nothing of the development package (memindex_dev: the evaluation, its
generators and data, the old matcher, the tests' stand-in embedder); the sdist holds both.
Built offline with the installed setuptools (the dev extra's), in a copy of the tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BUILD = "import sys; from setuptools import build_meta as b; print(getattr(b, 'build_' + sys.argv[1])(sys.argv[2]))"


def _runtime_files() -> set[str]:
    """Every file of the package's source: each one ships (a data file package-data misses fails)."""
    found = (REPO / "memindex").rglob("*")
    return {p.relative_to(REPO).as_posix() for p in found if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[set[str], set[str]]:
    """(files in the wheel, files in the sdist below its top folder). The wheel's metadata
    names `memindex` as its one top-level package."""
    tmp = tmp_path_factory.mktemp("wheel")
    src, out = tmp / "src", tmp / "out"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".index.db*")
    for name in ("memindex", "memindex_dev", "scripts"):
        shutil.copytree(REPO / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "MANIFEST.in", "README.md"):
        shutil.copy2(REPO / name, src / name)
    out.mkdir()
    names = {}
    for kind in ("wheel", "sdist"):
        run = subprocess.run([sys.executable, "-c", BUILD, kind, str(out)], cwd=src, capture_output=True, text=True,
                             timeout=120, env={**os.environ, "PIP_NO_INDEX": "1"})
        assert run.returncode == 0, run.stderr[-2000:]
        names[kind] = out / run.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(names["wheel"]) as whl:
        wheel = set(whl.namelist())
        top = next(n for n in wheel if n.endswith(".dist-info/top_level.txt"))
        assert whl.read(top).decode().split() == ["memindex"]
    with tarfile.open(names["sdist"]) as tar:
        sdist = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    return wheel, sdist


def test_the_wheel_is_the_runtime_exactly(built: tuple[set[str], set[str]]) -> None:
    wheel, _ = built
    package = {n for n in wheel if not n.split("/", 1)[0].endswith(".dist-info")}
    assert package == _runtime_files()
    for needed in ("memindex/data/relevance.json", "memindex/data/triage_model.json", "memindex/data/intents.json",
                   "memindex/data/memory-config.template.json", "memindex/ui/templates/base.html",
                   "memindex/ui/static/style.css", "memindex/hook/__init__.py"):
        assert needed in package


def test_nothing_for_development_only_is_in_the_wheel(built: tuple[set[str], set[str]]) -> None:
    wheel, _ = built
    assert not [n for n in wheel if n.startswith(("memindex_dev/", "scripts/", "tests/"))]
    for gone in ("memindex/evaluation/", "memindex/semantic/standin.py", "memindex/retrieval/legacy.py"):
        assert not [n for n in wheel if n.startswith(gone)], gone

def test_the_sdist_carries_the_development_package(built: tuple[set[str], set[str]]) -> None:
    _, sdist = built
    dev = {p.relative_to(REPO).as_posix() for p in (REPO / "memindex_dev").rglob("*")
           if p.is_file() and p.suffix in (".py", ".json") and "__pycache__" not in p.parts}
    assert dev and dev <= sdist
    assert "memindex_dev/evaluation/data/vocabulary.json" in sdist and "scripts/eval_memory.py" in sdist


def test_a_config_naming_the_stand_in_does_not_load_development_code(tmp_path: Path) -> None:
    """Only the environment (the dev package's pytest plugin, `memindex_dev.standin.enable`)
    lets a process load `builtin:hashing`; without it the name is no model, and the runtime
    never imports memindex_dev for it."""
    code = (
        "import sys\n"
        "from memindex.errors import ModelNotFound\n"
        "from memindex.semantic.model import load\n"
        "from memindex.semantic.locate import weights_stamp\n"
        "for f in (load, weights_stamp):\n"
        "    try:\n"
        "        f('builtin:hashing')\n"
        "    except ModelNotFound as e:\n"
        "        print('not found:', e)\n"
        "    else:\n"
        "        print('loaded')\n"
        "print(sorted(m for m in sys.modules if m.startswith('memindex_dev')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MEMINDEX_DEV_STANDIN"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["not found", "not found"], out.stdout
    assert lines[2] == "[]"
    env["MEMINDEX_DEV_STANDIN"] = "1"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.splitlines() == ["loaded", "loaded", "['memindex_dev', 'memindex_dev.standin']"], out.stdout + out.stderr
