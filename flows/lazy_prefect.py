"""Prefect's ``@flow`` and ``@task`` for modules that must import without Prefect (the cold path).

``from flows.lazy_prefect import NO_CACHE, flow, task`` in place of Prefect's own: the decorators take
Prefect's arguments unchanged. When Prefect is already imported in the process (a Prefect worker loading a
deployment's entrypoint, ``prefect deploy``, a process that started a flow run, the test harness), they are
Prefect's decorators and return real ``Flow`` and ``Task`` objects. Otherwise they return a stand-in that holds
the function and the arguments: ``.fn`` is the plain function (the un-orchestrated path, which never imports
Prefect), and anything else (calling it, ``.submit``, ``.map``, ``.with_options``, ``.name``) imports Prefect
once, builds the real object with the same arguments and hands over to it.

Why: ``import prefect`` costs 0.75 s on a quiet machine (2 s loaded), and ``citebound ask`` answers a question
without a flow run in ~1 s, nothing of Prefect needed (bench/cli.py). ``NO_CACHE`` is a stand-in for
``prefect.cache_policies.NO_CACHE`` and becomes it when the real object is built.

>>> @task(name="double", cache_policy=NO_CACHE)
... def double(x: int) -> int:
...     return 2 * x
>>> double.fn(21)
42
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["flow", "task", "NO_CACHE", "prefect_loaded"]


class _NoCache:
    """Stands for ``prefect.cache_policies.NO_CACHE`` until Prefect is imported."""

    def __repr__(self) -> str:
        return "NO_CACHE"


NO_CACHE: Any = _NoCache()
_build_lock = threading.Lock()


def prefect_loaded() -> bool:
    """Whether this process has imported Prefect (so a real flow or task costs nothing more)."""
    return "prefect" in sys.modules


def _real_options(options: dict[str, Any]) -> dict[str, Any]:
    if isinstance(options.get("cache_policy"), _NoCache):
        from prefect.cache_policies import NO_CACHE as prefect_no_cache

        return {**options, "cache_policy": prefect_no_cache}
    return options


def _build(kind: str, fn: Callable[..., Any], options: dict[str, Any]) -> Any:
    import prefect

    decorator = prefect.flow if kind == "flow" else prefect.task
    return decorator(**_real_options(options))(fn)


class _Deferred:
    """A flow or task not built yet: ``.fn`` is the function; every other use builds the Prefect object."""

    def __init__(self, kind: str, fn: Callable[..., Any], options: dict[str, Any]) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._kind = kind
        self._options = options
        self._real: Any = None

    def prefect_object(self) -> Any:
        """The real Prefect ``Flow`` or ``Task`` (imports Prefect on first use)."""
        if self._real is None:
            with _build_lock:
                if self._real is None:
                    self._real = _build(self._kind, self.fn, self._options)
        return self._real

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.prefect_object()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_real", "_kind", "_options", "fn"):
            raise AttributeError(name)
        return getattr(self.prefect_object(), name)

    def __repr__(self) -> str:
        return f"<deferred Prefect {self._kind} {self.fn.__qualname__} (built on first use)>"


def _decorator(kind: str, fn: Callable[..., Any] | None, options: dict[str, Any]) -> Any:
    def wrap(f: Callable[..., Any]) -> Any:
        if prefect_loaded():
            return _build(kind, f, options)
        return _Deferred(kind, f, options)

    return wrap(fn) if fn is not None else wrap


def flow(fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """``prefect.flow`` when Prefect is loaded, else a stand-in built into one on first use (not for ``.fn``)."""
    return _decorator("flow", fn, options)


def task(fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """``prefect.task`` when Prefect is loaded, else a stand-in built into one on first use (not for ``.fn``)."""
    return _decorator("task", fn, options)
