"""Stage versions derived from code: what keys the stage cache, recorded beside every output.

A hand-bumped ``STAGE_VERSION`` cannot see a change in a module the stage merely imports (a new sentence
splitter in ``stages/text/units.py`` changes what ``validate`` decides, yet bumped nothing). So a stage's
version is a sha256 over

- the code of its module and of every project module it imports, transitively, within ``contracts/`` and
  ``stages/`` (imports found with ``ast``, wherever they sit in a module, including inside functions);
- the code of the adapters the run passes in (embedder, LLM, OCR engine: their own module, its project
  imports) and their identity (model name and revision);
- the versions of the libraries those modules import (``importlib.metadata``), of the programs behind them
  (the ``tesseract`` binary behind pytesseract), and of Python;
- the stage's human label, ``STAGE_VERSION``, read from its module's source (so a hand bump still counts).

Code is hashed as its syntax tree without docstrings (``ast.dump``), so an edit to comments, docstrings or
layout keeps every version; anything else in a module a stage reaches gives that stage a new version and
leaves the stages that do not reach it alone. Versions are computed once per process from the files as
they are on first use, i.e. the code this process runs: a long-lived process (``citebound api``) keeps
answering under the versions of the code it was started with, which are the versions of the code it runs.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import json
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = [
    "STAGE_MODULES",
    "PROJECT_PACKAGES",
    "StageVersion",
    "stage_version",
    "describe_stage",
    "module_closure",
    "imported_module",
    "clear_caches",
]

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# Packages whose code a stage version follows through imports. flows/ is the orchestration around stages
# (store reads and writes), not what decides their outputs.
PROJECT_PACKAGES = ("contracts", "stages")
# Never libraries, even when a backend's module imports them.
_OWN_PACKAGES = frozenset({"contracts", "stages", "flows", "tests", "bench", "samples"})

# Every stage name run_stage is called with -> the module whose code computes it.
# tests/flows/test_stage_versions.py pins this table: renaming a stage or moving its module must be deliberate.
STAGE_MODULES: dict[str, str] = {
    "source": "stages.ingest.extract",  # make_source_document
    "extract": "stages.ingest.extract",
    "clean": "stages.ingest.clean",
    "chunk": "stages.ingest.chunk",
    "flag": "stages.ingest.injection",
    "embed": "stages.ingest.embed",
    "index": "stages.index.search_index",
    "request": "contracts.catalog",  # the request is stored as given: only its contract shapes it
    "retrieve": "stages.retrieval.retrieve",
    "context": "stages.retrieval.context",
    "successors": "stages.provisions.successors",
    "answerability": "stages.grounding.answerability",
    "precheck": "stages.grounding.precheck",
    "generate": "stages.generation.generate",
    "validate": "stages.grounding.validate",
    "provisions": "stages.provisions.parse",
    "align_provisions": "stages.provisions.align",
}
# Pseudo-stages that compute nothing have a fixed label (their module's STAGE_VERSION belongs to another stage).
_FIXED_LABELS = {"source": "source.v1", "request": "request.v1"}

# Distributions whose behaviour reaches a stage through a library it imports.
_ALSO_DEPENDS = {
    "sentence_transformers": ("torch", "transformers", "tokenizers"),
    "bm25s": ("PyStemmer", "scipy"),
}
# Import name -> distribution, where they differ and the lookup by name fails.
_DISTRIBUTION_ALIASES = {
    "faiss": "faiss-cpu", "fitz": "pymupdf", "PIL": "pillow", "Stemmer": "PyStemmer", "yaml": "PyYAML", "cv2": "opencv-python",
}


@dataclass(frozen=True)
class StageVersion:
    """A stage's human label (``STAGE_VERSION``) and its code-derived version (the cache key's part)."""

    stage: str
    label: str
    code: str


# ------------------------------------------------------------------------------------------ source files


def _module_file(root: Path, module: str) -> Path | None:
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


_BODIES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def imported_module(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module a ``from ... import`` statement in ``module`` imports from, relative levels resolved.

    >>> imported_module(ast.parse("from ..text import units").body[0], "stages.grounding.validate", False)
    'stages.text'
    """
    base = node.module or ""
    if not node.level:
        return base
    package = module.split(".") if is_package else module.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, base] if base else package)


def _imports_and_strip_docstrings(tree: ast.AST, module: str, is_package: bool) -> list[tuple[str, tuple[str, ...]]]:
    """(imported module, names taken from it) for every import statement, relative ones resolved; removes
    docstrings from ``tree`` on the way (one walk: this runs over every module a stage reaches)."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((imported_module(node, module, is_package), tuple(alias.name for alias in node.names)))
        elif isinstance(node, _BODIES):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return found


# CPython 3.11's ast module is not safe across threads: parses or dumps running at once in a task runner's
# threads can fail with "SystemError: AST constructor recursion depth mismatch" (seen under load here;
# python/cpython gh-106905). One parse at a time; each module is parsed once per process anyway.
_ast_lock = threading.Lock()


@lru_cache(maxsize=1024)
def _module_info(root: Path, module: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(code sha256, project modules it imports, top-level names of other modules it imports)."""
    with _ast_lock:
        return _parse_module_info(root, module)


def _parse_module_info(root: Path, module: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    path = _module_file(root, module)
    if path is None:
        raise FileNotFoundError(f"no source for module {module!r} under {root}")
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    project: set[str] = set()
    external: set[str] = set()
    for base, names in _imports_and_strip_docstrings(tree, module, path.name == "__init__.py"):
        top = base.split(".")[0]
        if top in PROJECT_PACKAGES:
            # `from stages.grounding import validate` imports a module; `from stages.grounding.validate import X`
            # an attribute.
            submodules = [f"{base}.{n}" for n in names if _module_file(root, f"{base}.{n}")]
            project.update(submodules or [base])
        elif top and top not in _OWN_PACKAGES and top not in sys.stdlib_module_names:
            external.add(top)
        elif top == "unicodedata":
            external.add(top)  # stdlib, but its Unicode tables change with the Python build
    code = hashlib.sha256(ast.dump(tree).encode()).hexdigest()
    return code, tuple(sorted(project - {module})), tuple(sorted(external))


@lru_cache(maxsize=1024)
def module_closure(module: str, root: Path = PROJECT_ROOT) -> tuple[str, ...]:
    """The module and every project module it imports, transitively (sorted).

    >>> "stages.text.units" in module_closure("stages.grounding.validate")
    True
    """
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_module_info(root, name)[1])
    return tuple(sorted(seen))


# ------------------------------------------------------------------------------------------ libraries

_dists_lock = threading.Lock()
_dists: dict[str, list[str]] | None = None


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=512)
def _library_version(top: str) -> str:
    """The installed version of the distribution an import name comes from, or ``absent``."""
    global _dists
    if top == "unicodedata":
        import unicodedata

        return f"unicode {unicodedata.unidata_version}"
    for candidate in (top, top.replace("_", "-"), _DISTRIBUTION_ALIASES.get(top)):
        if candidate and (version := _distribution_version(candidate)):
            return version
    with _dists_lock:
        if _dists is None:
            _dists = importlib.metadata.packages_distributions()  # ~0.5 s: only when the names above miss
    versions = [v for d in _dists.get(top, ()) if (v := _distribution_version(d))]
    return ",".join(sorted(versions)) or "absent"


@lru_cache(maxsize=1)
def _tesseract_version() -> str:
    """First line of ``tesseract --version`` (the engine behind pytesseract), or ``absent``."""
    try:
        proc = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return "absent"
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[0].strip() if lines else "absent"


def _libraries(modules: Sequence[str], root: Path) -> dict[str, str]:
    tops: set[str] = set()
    for module in modules:
        tops.update(_module_info(root, module)[2])
    versions = {top: _library_version(top) for top in sorted(tops)}
    for top in sorted(tops):
        for dist in _ALSO_DEPENDS.get(top, ()):
            versions[dist] = _distribution_version(dist) or "absent"
    if "pytesseract" in versions:
        versions["tesseract (program)"] = _tesseract_version()
    return versions


# ------------------------------------------------------------------------------------------ backends


_BackendKey = tuple[str, str, tuple[tuple[str, object], ...]]


def _backend_key(backend: object) -> _BackendKey:
    """What of an adapter decides outputs, besides its code: its class and its model (name, revision). An object
    with ``adapter_class`` ((module, qualname)) stands for an adapter not loaded (``flows.index_backends.index_identity``)."""
    cls = type(backend)
    module, qualname = getattr(backend, "adapter_class", None) or (cls.__module__, cls.__qualname__)
    attrs = tuple((attr, value) for attr in ("name", "model_name", "model_revision", "model")
                  if isinstance(value := getattr(backend, attr, None), str | int | float))
    return module, qualname, attrs


@lru_cache(maxsize=256)
def _backend_description(key: _BackendKey, root: Path) -> str:
    """An adapter's identity plus the code of its module (if ours, with its project imports) or its library."""
    module, qualname, attrs = key
    identity: dict[str, object] = {"class": f"{module}.{qualname}", **dict(attrs)}
    if _module_file(root, module) is not None:
        modules = _closure_with(module, root)
        identity["modules"] = {m: _module_info(root, m)[0] for m in modules}
        identity["libraries"] = _libraries(modules, root)
    else:
        identity["library"] = _library_version(module.split(".")[0])
    return json.dumps(identity, sort_keys=True)


def _closure_with(module: str, root: Path) -> tuple[str, ...]:
    """Like module_closure, for a module outside PROJECT_PACKAGES (an adapter in tests/, say)."""
    _, imports, _ = _module_info(root, module)
    return tuple(sorted({module, *(m for i in imports for m in module_closure(i, root))}))


# ------------------------------------------------------------------------------------------ stages


@lru_cache(maxsize=64)
def _label(stage: str, root: Path) -> str:
    if stage in _FIXED_LABELS:
        return _FIXED_LABELS[stage]
    path = _module_file(root, STAGE_MODULES[stage])
    with _ast_lock:
        body = ast.parse(path.read_text(encoding="utf-8")).body  # type: ignore[union-attr]
    for node in body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "STAGE_VERSION" for t in node.targets) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node.value.value
    raise ValueError(f"module {STAGE_MODULES[stage]} of stage {stage!r} defines no STAGE_VERSION string")


@lru_cache(maxsize=64)
def _static_description(stage: str, root: Path) -> str:
    if stage not in STAGE_MODULES:
        raise KeyError(f"unknown stage {stage!r}: add it to flows.stage_versions.STAGE_MODULES")
    modules = module_closure(STAGE_MODULES[stage], root)
    return json.dumps({
        "stage": stage,
        "label": _label(stage, root),
        "modules": {m: _module_info(root, m)[0] for m in modules},
        "libraries": _libraries(modules, root),
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
    }, sort_keys=True)


def _description(stage: str, root: Path, keys: tuple[_BackendKey, ...]) -> dict:
    description = json.loads(_static_description(stage, root))
    description["backends"] = [json.loads(_backend_description(key, root)) for key in keys]
    return description


def describe_stage(stage: str, *, backends: Sequence[object] = (), root: Path = PROJECT_ROOT) -> dict:
    """Everything a stage's version is computed from (for reading; ``stage_version`` hashes it)."""
    return _description(stage, Path(root), tuple(_backend_key(b) for b in backends if b is not None))


@lru_cache(maxsize=256)
def _version(stage: str, root: Path, keys: tuple[_BackendKey, ...]) -> StageVersion:
    description = _description(stage, root, keys)
    code = hashlib.sha256(json.dumps(description, sort_keys=True).encode()).hexdigest()
    return StageVersion(stage=stage, label=description["label"], code=code)


def stage_version(stage: str, *, backends: Sequence[object] = (), root: Path = PROJECT_ROOT) -> StageVersion:
    """The label and code-derived version of ``stage`` run with these adapters (cached per process).

    >>> v = stage_version("validate")
    >>> v.label.startswith("validate.") and len(v.code) == 64
    True
    """
    return _version(stage, Path(root), tuple(_backend_key(b) for b in backends if b is not None))

def clear_caches() -> None:
    """Forget what was read from source files (tests that edit code in place; a process is otherwise replaced)."""
    for cached in (_module_info, module_closure, _label, _static_description, _backend_description, _version):
        cached.cache_clear()
