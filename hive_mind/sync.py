"""A small synchronous wrapper for scripts: ``with SyncHiveMind(data_dir=...) as hm: ...``.

Every async method of the facade is available as a blocking call; one private event loop
runs them in order.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hive_mind.contract import MindFacade


class SyncHiveMind:
    def __init__(self, **overrides: Any) -> None:
        from hive_mind.facade import HiveMind

        self._runner = asyncio.Runner()
        self._hm: MindFacade | None = self._runner.run(HiveMind.open(**overrides))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._hm, name)
        if not inspect.iscoroutinefunction(attr):
            return attr

        @functools.wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            return self._runner.run(attr(*args, **kwargs))

        return call

    def close(self) -> None:
        if self._hm is not None:
            self._runner.run(self._hm.close())
            self._hm = None
        self._runner.close()

    def __enter__(self) -> SyncHiveMind:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
