"""The package arrows of DESIGN.md: walk every import in src/floorman and fail on a forbidden one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "floorman"

ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "datasets": {"core"},
    "models": {"core", "datasets"},
    "vision": {"core"},
    "edge": {"core", "vision"},
    "rules": {"core"},
    "dashboard": {"core", "rules"},
    "evaluation": {"core", "edge", "rules", "datasets"},
}
PACKAGES = set(ALLOWED)


def imported_packages(path: Path) -> list[tuple[int, str]]:
    """(line, floorman subpackage) for each import of ours in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            raise AssertionError(f"{path}:{node.lineno}: relative import; use absolute floorman.* imports")
        for name in names:
            parts = name.split(".")
            if parts[0] == "floorman" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


def violations() -> list[str]:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC)
        package = relative.parts[0] if len(relative.parts) > 1 else None
        if package is None:
            continue  # cli.py and __init__.py at the top may import everything
        for line, target in imported_packages(path):
            if target == package or target not in PACKAGES:
                continue
            if target not in ALLOWED[package]:
                problems.append(f"{relative}:{line}: {package} imports {target}")
    return problems


def test_no_forbidden_arrows() -> None:
    assert violations() == []


def test_the_walker_sees_a_forbidden_arrow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from floorman.vision import detector\nimport floorman.core.cards\n")
    assert [t for _, t in imported_packages(bad)] == ["vision", "core"]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_package_exists(package: str) -> None:
    assert (SRC / package / "__init__.py").is_file()
