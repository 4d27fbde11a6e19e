"""Imports point down: every module imports only its own folder, the folders of earlier layers
and the ground floor (core), never a later one, so no two folders import each other. Imports
inside functions count as much as those at the top of a module."""

from __future__ import annotations

import ast
from pathlib import Path

import visibility_assets

PACKAGE = Path(visibility_assets.__file__).parent
# Bottom to top. A module at the package root (definitions.py, runs.py, celery_location.py)
# is the layer "<root>": it assembles the stages and launches their runs.
LAYERS = ("core", "config", "warehouse", "review", "events", "collect", "clean", "judge", "measure", "notify", "report", "serve", "operate",
          "<root>", "tools", "cli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every visibility_assets module `path` imports, wherever the import statement stands."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join(base + ([node.module] if node.module else [])))
            else:
                found.add(node.module or "")
    return {module for module in found if module.split(".")[0] == "visibility_assets"}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()) else "<root>"


def edges() -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = module_name(path)
        for target in imported_modules(path):
            pair = (layer_of(source), layer_of(target))
            if pair[0] != pair[1]:
                found.setdefault(pair, []).append(f"{source} imports {target}")
    return found


def test_every_folder_of_the_package_has_a_layer():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS) - {"<root>"}


def test_imports_point_down_the_layers():
    upward = [line for (source, target), lines in edges().items()
              if LAYERS.index(target) > LAYERS.index(source) for line in lines]
    assert upward == []


def test_no_two_folders_import_each_other():
    pairs = edges()
    cycles = sorted({tuple(sorted(pair)) for pair in pairs if pair[::-1] in pairs})
    assert cycles == [], [pairs[c] + pairs[c[::-1]] for c in cycles]


def root_module_cycles() -> list[list[str]]:
    """Import circles among the modules at the package root (one layer, so the layer test cannot see them)."""
    roots = {module_name(path): path for path in PACKAGE.glob("*.py") if path.name != "__init__.py"}
    graph = {name: sorted(m for m in imported_modules(path) if m in roots and m != name) for name, path in roots.items()}
    return find_cycles(graph)


def find_cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    cycles, done = [], set()

    def visit(node: str, trail: list[str]) -> None:
        if node in trail:
            cycles.append(trail[trail.index(node):] + [node])
            return
        if node in done:
            return
        for target in graph.get(node, ()):
            visit(target, trail + [node])
        done.add(node)

    for node in graph:
        visit(node, [])
    return cycles


def test_no_two_root_modules_import_each_other_even_through_others():
    assert find_cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c", "a"]]
    assert root_module_cycles() == []


def modules_started_by_name(path: Path) -> list[str]:
    """The package modules `path` starts as a process: a list holding "-m" and a module's name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.List | ast.Tuple):
            values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if "-m" in values:
                found += [v for v in values if v.split(".")[0] == "visibility_assets"]
    return found


def test_only_the_commands_and_the_benchmarks_start_a_module_of_the_package_as_a_process():
    """A stage or the workspace that starts `python -m visibility_assets.cli ...` calls the layer
    above it behind the import walk's back (the admin's ask did, before it became a task)."""
    started = {str(path.relative_to(PACKAGE)): modules for path in sorted(PACKAGE.rglob("*.py"))
               if (modules := modules_started_by_name(path))}
    assert "tools/bench/serve.py" in started  # the bench serves the workspace in a process of its own
    assert [path for path in started if path.split("/")[0] not in ("tools", "cli")] == []


def test_the_walk_sees_imports_inside_functions():
    assert "visibility_assets.operate.instance" in imported_modules(PACKAGE / "cli" / "ask.py")  # inside run()
    assert layer_of("visibility_assets.definitions") == "<root>" and layer_of("visibility_assets.clean.text") == "clean"


def test_every_import_of_the_package_names_something_that_exists():
    """Imports inside functions run only when the function does: a moved name must not wait for
    the one test that calls it to be found."""
    import importlib

    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("visibility_assets"):
                module = importlib.import_module(node.module)
                missing += [f"{module_name(path)}: {node.module}.{alias.name}" for alias in node.names
                            if not hasattr(module, alias.name) and not _is_submodule(module, alias.name)]
    assert missing == []


def _is_submodule(module, name: str) -> bool:
    import importlib.util

    return hasattr(module, "__path__") and importlib.util.find_spec(module.__name__ + "." + name) is not None


def test_every_path_the_architecture_page_names_for_a_concept_or_a_folder_exists():
    """docs/architecture.md's tree of the package and its table of concepts point at files a newcomer opens."""
    import re

    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    built = page[:page.index("Measured figures behind some choices")]
    table = built[built.index("| concept | home |"):]
    named = set(re.findall(r"`([A-Za-z_][\w/.-]*\.(?:py|sql|yml|yaml)|[a-z_]+/(?:[a-z_]+/)*)`", table))
    tree = built[built.index("visibility_assets/\n"):built.index("```", built.index("visibility_assets/\n"))]
    named |= {line.split()[0] for line in tree.splitlines()[1:] if line.startswith("  ") and not line.startswith("   ")}
    missing = [path for path in sorted(named)
               if not any((base / path).exists() for base in (PACKAGE, PACKAGE.parent))]
    assert named and missing == []
    folders = {p.name + "/" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert folders <= named  # every folder of the package is in the tree
