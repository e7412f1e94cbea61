"""The floors of the house, and no import circles (ARCHITECTURE.md, "Floors").

Every module of every app is parsed (not imported) with ``ast``, imports inside functions and under
``TYPE_CHECKING`` included, since a lazy import is still a dependency. Migrations and tests are left out;
so are ``scripts/``, which may use anything.

* An app imports only itself and the floors below it: core < ordinance < accounts < meters < billing <
  (termination, backflow) < (portal, reports, demo) < waterbilling. ``core`` imports no app; nothing
  imports portal, reports, demo or waterbilling except waterbilling itself.
* Apps on one floor never import each other, unless the pair is declared in ``SIDEWAYS``.
* No module imports itself through others: each circle is reported as ``a -> b -> … -> a``.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FLOORS = {
    "core": 0,
    "ordinance": 1,
    "accounts": 2,
    "meters": 3,
    "billing": 4,
    "termination": 5, "backflow": 5, "remittance": 5, "arrears": 5, "office": 5,
    "portal": 6, "reports": 6, "demo": 6, "conversion": 6, "fieldwork": 6, "notices": 6,
    "waterbilling": 7,
}
# Same-floor imports allowed, as (importer, imported): the conversion's reconciliation is drawn with the reports'
# kit (page, CSV, JSON, PDF) and their aging buckets, so it reads like every other report.
# Payment plans tell the shut-off guard they hold it by registering with termination (``termination.holds``).
# The portal's notification page records the customer's choices with the notices' services; setup_utility (with the
# demo builders) schedules the sender of the notices that waited out the quiet hours beside the nightly job.
SIDEWAYS: set[tuple[str, str]] = {("conversion", "reports"), ("arrears", "termination"), ("portal", "notices"),
                                  ("demo", "notices")}

APPS = [app for app in FLOORS if (ROOT / app).is_dir()]


def _modules() -> dict[str, Path]:
    """Dotted module name → file, for every app module that is not a migration or a test."""
    out = {}
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "migrations" in parts or "tests" in parts or parts[-1].startswith("test_"):
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """(absolute module imported, line) for every import in the file; ``from x import y`` gives ``x.y``
    when that is a module of the project, else ``x``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                found.append((candidate if candidate in MODULES else module, node.lineno))
    return found


def _first_party(module: str) -> str | None:
    """The project module a dotted import refers to (the longest known prefix), or None."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in MODULES:
            return ".".join(parts[:end])
    return None


GRAPH: dict[str, dict[str, int]] = {}
for _name, _path in MODULES.items():
    edges: dict[str, int] = {}
    for _imported, _line in _imports(_name, _path):
        target = _first_party(_imported)
        if target is not None and target != _name:
            edges.setdefault(target, _line)
    GRAPH[_name] = edges


def _app(module: str) -> str:
    return module.partition(".")[0]


def _may_import(importer: str, imported: str) -> bool:
    if importer == imported:
        return True
    if (importer, imported) in SIDEWAYS:
        return True
    return FLOORS[imported] < FLOORS[importer]


def test_every_app_imports_only_the_floors_below_it():
    wrong = [f"{MODULES[module].relative_to(ROOT)}:{line} imports {target} "
             f"({_app(module)} is on floor {FLOORS[_app(module)]}, {_app(target)} on floor {FLOORS[_app(target)]})"
             for module, edges in GRAPH.items() for target, line in edges.items()
             if not _may_import(_app(module), _app(target))]
    assert not wrong, "imports against the floors:\n" + "\n".join(wrong)


def _cycles() -> list[list[str]]:
    """One circle through each strongly connected group of modules (Tarjan), as a path back to its start."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in GRAPH[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)

    circles = []
    for group in groups:
        members, start = set(group), group[0]
        # The shortest way back to the start, inside the group.
        paths, seen, circle = {start: [start]}, {start}, None
        frontier = [start]
        while frontier and circle is None:
            nxt_frontier = []
            for node in frontier:
                for nxt in sorted(GRAPH[node]):
                    if nxt == start:
                        circle = paths[node] + [start]
                        break
                    if nxt in members and nxt not in seen:
                        seen.add(nxt)
                        paths[nxt] = paths[node] + [nxt]
                        nxt_frontier.append(nxt)
                if circle:
                    break
            frontier = nxt_frontier
        circles.append(circle)
    return circles


def test_no_import_circles():
    circles = _cycles()
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


def test_the_checker_sees_lazy_and_relative_imports():
    """A function's import and a relative import count, so a circle cannot hide in either."""
    if "billing.tasks" not in MODULES:
        pytest.skip("billing.tasks is gone")
    assert "billing.services.bill_pdfs" in GRAPH["billing.tasks"]  # imported inside a task
    assert "billing.models" in GRAPH["billing.selectors"]  # from .models import …
