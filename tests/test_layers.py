"""The house's layers, read from the code with ``ast``: no module imports from a layer above its own, no two
modules import each other (directly or round a longer circle), no adapter imports a stage module's private
(underscore) name or takes more from stage modules than is listed below, and no module runs past ``MAX_LINES``
lines without saying why in its docstring.

Layers, lowest first. A module may import its own package and any package of a lower rank; packages of one
rank do not import each other:

    0  contracts/  samples/     the hand-off models and the artifact store; the bundled demo corpus (data and its
                                build script: it imports no project module, so any layer may read it)
    1  stages/                  pure functions, contract in -> contract out (adapters and ports included)
    2  flows/                   Prefect flows and tasks, run records, settings, stage versions, back-ends, and the
                                Prefect server, deployments and task runners they run on
       training/                making the reader's models: the hand-written question set, the training bundle,
                                the trainer, the trained models' export (never imported by flows/: the product's
                                path holds no training code)
    3  api/  evaluation/        edges over the flows: the HTTP API; the quality suites and the eval flow
    4  cli/  bench/             the outermost edges: the `citebound` command (it serves the API and runs the eval);
                                benchmarks and tuning tools (they build on evaluation/)
    5  tests/                   may import anything; nothing imports them

Every import statement counts, wherever it sits: at the top, inside a function (lazy), under ``TYPE_CHECKING``.
A lazy import does not break a circle, it only hides it: the modules still cannot be read, changed or tested
one without the other.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from flows.stage_versions import imported_module

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent

RANKS: dict[str, int] = {
    "contracts": 0, "samples": 0,
    "stages": 1,
    "flows": 2, "training": 2,
    "api": 3, "evaluation": 3,
    "cli": 4, "bench": 4,
    "tests": 5,
}

MAX_LINES = 500
LONG_MARKER = "Why long:"
"""A module over ``MAX_LINES`` lines says why in its docstring, in a paragraph starting with this marker."""

# Modules over MAX_LINES with no reason yet. The list may only shrink: an entry that is no longer over the
# limit fails the test until it is removed here.
LONG_WITHOUT_REASON: dict[str, str] = {}

# Import circles among project modules that are known and not yet broken, as the set of modules in the circle ->
# why it stays. The list may only shrink: a circle no longer there fails the test until it is removed here.
IMPORT_CYCLES_ALLOWED: dict[frozenset[str], str] = {}

# What adapters take from stage modules besides the ports (stages.ports), as (adapter, stage module, name).
# Adapters implement a port over the typed contracts; what they take from stages is the rendering side of the
# generation port (the prompt a language model is sent) and the stage an adapter serves (the extractive reader),
# never a stage's helpers. A new import fails the test until it is listed here with its reason; an entry no
# longer imported fails it too until it is removed.
ADAPTER_STAGE_IMPORTS: frozenset[tuple[str, str, str]] = frozenset({
    # The OpenAI backend renders its messages from the typed request (the one prompt renderer).
    ("stages.adapters.openai_llm", "stages.generation.prompt", "prompt_messages"),
    ("stages.adapters.openai_llm", "stages.generation.prompt", "render_prompt"),
    # The default backend serves the extractive reader, a stage of its own, behind the LLM port.
    ("stages.adapters.extractive_llm", "stages.generation.extractive_reader", "CHAR_BUDGET"),
    ("stages.adapters.extractive_llm", "stages.generation.extractive_reader", "ExtractiveReader"),
})


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the imported module, dotted (relative imports resolved)
    names: tuple[str, ...]  # names taken from it (``from target import a, b``); () for ``import target``
    line: int


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_files(root: Path = ROOT) -> list[Path]:
    files = []
    for package in RANKS:
        files.extend(p for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts)
    return sorted(files)


def imports_of(path: Path, root: Path = ROOT) -> list[Import]:
    module = _module_name(path, root)
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.extend(Import(module, alias.name, (), node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = imported_module(node, module, is_package)
            found.append(Import(module, target, tuple(alias.name for alias in node.names), node.lineno))
    return found


def _package(dotted: str) -> str:
    return dotted.split(".")[0]


def upward_imports(root: Path = ROOT) -> list[str]:
    bad = []
    for path in project_files(root):
        for imp in imports_of(path, root):
            source, target = _package(imp.module), _package(imp.target)
            if target not in RANKS or target == source:
                continue
            if RANKS[target] >= RANKS[source]:
                bad.append(f"{path.relative_to(root)}:{imp.line}: {source} (rank {RANKS[source]}) imports "
                           f"{imp.target} (rank {RANKS[target]})")
    return bad


def import_graph(root: Path = ROOT) -> dict[str, dict[str, str]]:
    """module -> {project module it imports -> where (``path:line``)}. ``from package import name`` is an edge to
    the module ``package.name`` when there is one, else to the package; an import of a module no file defines
    (a library, a name in a package) is an edge to the nearest enclosing project module, or none."""
    files = {_module_name(path, root): path for path in project_files(root)}
    graph: dict[str, dict[str, str]] = {module: {} for module in files}
    for module, path in files.items():
        for imp in imports_of(path, root):
            targets = [f"{imp.target}.{n}" if f"{imp.target}.{n}" in files else imp.target for n in imp.names] \
                or [imp.target]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    graph[module].setdefault(target, f"{path.relative_to(root)}:{imp.line}")
    return graph


def import_cycles(root: Path = ROOT) -> dict[frozenset[str], str]:
    """Every import circle (a strongly connected set of modules) -> one shortest way round it, with where each step
    is imported, e.g. ``a -> b (a.py:3) -> a (b.py:9)``."""
    graph = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            components.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    found = {}
    for component in (set(c) for c in components if len(c) > 1):
        start = min(component)
        came_from: dict[str, str] = {}  # module -> the module it was first reached from
        frontier = [start]
        while start not in came_from:  # breadth first, inside the circle, back to where it started
            reached = []
            for node in frontier:
                for nxt in sorted(graph[node]):
                    if nxt in component and nxt not in came_from:
                        came_from[nxt] = node
                        reached.append(nxt)
            frontier = reached
        path = [start]
        while len(path) == 1 or path[-1] != start:
            path.append(came_from[path[-1]])
        path.reverse()
        steps = " -> ".join(f"{b} ({graph[a][b]})" for a, b in zip(path, path[1:], strict=False))
        found[frozenset(component)] = f"{start} -> {steps}"
    return found


def _stage_module(dotted: str) -> bool:
    return dotted.startswith("stages.") and not dotted.startswith("stages.adapters")


def adapter_stage_imports(root: Path = ROOT) -> tuple[set[tuple[str, str, str]], list[str]]:
    """(every (adapter, stage module, name) taken besides the ports, private names reached), over all adapters."""
    taken: set[tuple[str, str, str]] = set()
    private: list[str] = []
    for path in sorted((root / "stages" / "adapters").rglob("*.py")):
        module_aliases: dict[str, str] = {}  # local name -> stage module it is bound to
        for imp in imports_of(path, root):
            if not _stage_module(imp.target) or imp.target == "stages.ports":
                continue
            for name in imp.names:
                if (root / Path(*imp.target.split("."), name)).with_suffix(".py").is_file():
                    module_aliases[name] = f"{imp.target}.{name}"  # from stages.x import module
                    continue
                taken.add((imp.module, imp.target, name))
                if name.startswith("_"):
                    private.append(f"{path.relative_to(root)}:{imp.line}: from {imp.target} import {name}")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):  # import stages.x.y as z
                module_aliases.update({a.asname: a.name for a in node.names if a.asname and _stage_module(a.name)})
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in module_aliases:
                stage = module_aliases[node.value.id]
                taken.add((_module_name(path, root), stage, node.attr))
                if node.attr.startswith("_") and not node.attr.startswith("__"):
                    private.append(f"{path.relative_to(root)}:{node.lineno}: {stage}.{node.attr}")
    return taken, private


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def long_modules(root: Path = ROOT) -> dict[str, int]:
    """Modules over MAX_LINES lines whose docstring gives no reason (relative path -> lines)."""
    found = {}
    for path in project_files(root):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        doc = _docstring(path)
        reason = doc.split(LONG_MARKER, 1)[1].strip() if LONG_MARKER in doc else ""
        if lines > MAX_LINES and len(reason.split()) < 5:
            found[str(path.relative_to(root))] = lines
    return found


# ------------------------------------------------------------------------------------------ the rules


def test_the_walk_sees_every_layer_and_lazy_imports():
    names = {_module_name(p) for p in project_files()}
    assert {"contracts.store", "stages.grounding.validate", "flows.tasks", "api.app", "evaluation.runner",
            "cli.main", "bench.cli", "samples.build_corpus", "tests.test_layers"} <= names
    lazy = [i.names for i in imports_of(ROOT / "flows" / "tasks.py") if i.target == "stages.grounding"]
    assert ("validate",) in lazy, "an import inside a function is seen"


def test_the_checks_catch_what_they_are_for(tmp_path):
    """A throw-away house with one of each violation: every check must report it."""
    def write(relative: str, text: str) -> None:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    write("flows/run.py", "def go():\n    from cli.main import main  # lazy, and upward\n")
    write("stages/grounding/validate.py", "_helper = 1\n")
    write("stages/adapters/llm.py", "from stages.grounding import validate\n"
                                    "from stages.grounding.validate import _helper\n"
                                    "x = validate._helper\n"
                                    "def f():\n    import stages.grounding.validate as v\n    return v._helper\n")
    write("evaluation/suite.py", "import api.app\n")  # same rank, another package
    write("contracts/big.py", '"""Big.\n\nWhy long: because."""\n' + "x = 1\n" * MAX_LINES)
    write("flows/__init__.py", "")
    write("flows/a.py", "from flows import b\nimport numpy\n")
    write("flows/b.py", "import flows.c\n")
    write("flows/c.py", "def late():\n    from flows.a import thing  # lazy, and still a circle\n")
    write("flows/d.py", "from flows import a, b\n")  # imports into the circle: not in it
    assert upward_imports(tmp_path) == [
        "evaluation/suite.py:1: evaluation (rank 3) imports api.app (rank 3)",
        "flows/run.py:2: flows (rank 2) imports cli.main (rank 4)",
    ]
    taken, private = adapter_stage_imports(tmp_path)
    assert private == ["stages/adapters/llm.py:2: from stages.grounding.validate import _helper",
                       "stages/adapters/llm.py:3: stages.grounding.validate._helper",
                       "stages/adapters/llm.py:6: stages.grounding.validate._helper"]
    assert ("stages.adapters.llm", "stages.grounding.validate", "_helper") in taken
    assert long_modules(tmp_path) == {"contracts/big.py": MAX_LINES + 3}, "a one-word reason is no reason"
    assert import_cycles(tmp_path) == {frozenset({"flows.a", "flows.b", "flows.c"}): (
        "flows.a -> flows.b (flows/a.py:1) -> flows.c (flows/b.py:1) -> flows.a (flows/c.py:2)")}


def test_no_module_imports_from_a_higher_layer():
    bad = upward_imports()
    assert not bad, "imports against the layers (contracts, samples < stages < flows < api, evaluation < cli, " \
                    "bench < tests):\n" + "\n".join(bad)


def test_no_import_circle():
    found = import_cycles()
    new = {cycle: path for cycle, path in found.items() if cycle not in IMPORT_CYCLES_ALLOWED}
    gone = [sorted(cycle) for cycle in IMPORT_CYCLES_ALLOWED if cycle not in found]
    circles = [f"{', '.join(sorted(cycle))}; one way round: {path}" for cycle, path in new.items()]
    assert not new, "modules that import each other (lazy imports included): give what they share a home that " \
                    "imports neither, or list the circle in IMPORT_CYCLES_ALLOWED with the reason:\n" + \
                    "\n".join(circles)
    assert not gone, f"no longer a circle: remove from IMPORT_CYCLES_ALLOWED: {gone}"


def test_flows_import_no_edge():
    edges = {"api", "evaluation", "cli", "bench"}
    bad = [f"{p.relative_to(ROOT)}:{i.line}: {i.target}" for p in sorted((ROOT / "flows").rglob("*.py"))
           for i in imports_of(p) if _package(i.target) in edges]
    assert not bad, "\n".join(bad)


def test_no_adapter_imports_a_private_name_of_a_stage():
    _, private = adapter_stage_imports()
    assert not private, "adapters reaching into stage modules' private names:\n" + "\n".join(private)


def test_adapters_take_from_stage_modules_only_what_is_listed():
    taken, _ = adapter_stage_imports()
    new = sorted(taken - ADAPTER_STAGE_IMPORTS)
    gone = sorted(ADAPTER_STAGE_IMPORTS - taken)
    assert not new, "adapters import stage internals not listed in ADAPTER_STAGE_IMPORTS (go through a port, " \
                    "or list it with a reason):\n" + "\n".join(map(str, new))
    assert not gone, "listed in ADAPTER_STAGE_IMPORTS but no longer imported: remove them there:\n" + \
                     "\n".join(map(str, gone))


def test_no_module_is_long_without_a_reason():
    found = long_modules()
    unlisted = {m: n for m, n in found.items() if m not in LONG_WITHOUT_REASON}
    fixed = sorted(set(LONG_WITHOUT_REASON) - set(found))
    assert not unlisted, (f"modules over {MAX_LINES} lines: split them, or give the reason in the module docstring "
                          f"after {LONG_MARKER!r}:\n" + "\n".join(f"{m}: {n} lines" for m, n in unlisted.items()))
    assert not fixed, "no longer long, or now with a reason: remove from LONG_WITHOUT_REASON: " + ", ".join(fixed)
