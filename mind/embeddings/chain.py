"""Choosing the embedding provider: the probing chain over the registry (``registry.py``).

``provider='auto'`` probes ``inprocess → ollama → voyage → openai`` (voyage/openai only with an
API key; providers outside the configured tier are skipped) and **stops at the first that
works** (later providers are not probed: no download or request for nothing). If none works the
chain falls back to the byte-based :class:`MockEmbedder`, which is ``degraded`` and carries
``last_error`` — it keeps the process running but must never write vectors into a real index
(docs/architecture.md, "Invariants"). An explicit provider is the only one tried; its failure is
an :class:`EmbeddingError`. There is no per-text mock fallback: a failing batch raises.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mind.constants import MOCK_DIMENSIONS
from mind.embeddings.base import (
    Embedder,
    EmbeddingError,
    TargetDimEmbedder,
    aclose,
    cap_texts,
    empty_matrix,
    probe_embedder,
)
from mind.embeddings.quota import UsageCounter, check_provider_allowed, provider_allowed
from mind.embeddings.registry import (
    AUTO_ORDER,
    PROVIDERS,
    EmbeddingConfig,
    ProviderFactory,
    ProviderNotConfigured,
)
from mind.timeutil import now_iso

if TYPE_CHECKING:  # the chain is built by every process; its vectors only by one that embeds
    import numpy as np

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Selection:
    embedder: Embedder
    probes: dict[str, str]
    last_error: str | None


class EmbeddingProviderChain:
    """The engine's embedder: picks a provider on :meth:`start`, then delegates to it.

    It is an :class:`Embedder` itself, describing the active provider. With a usage counter
    (:mod:`mind.embeddings.quota`) every embedded text is counted for the configured
    ``user_id``; with a tier (and not ``eval_mode``) providers are tier-gated and the monthly
    quota is reserved before each call. Without gating the count is written after the call, off
    the caller's path (a recall does not wait for it; :meth:`quota_status` and :meth:`close`
    do). The chain owns the counter: :meth:`close` closes it.
    """

    def __init__(
        self,
        config: EmbeddingConfig | None = None,
        *,
        usage: UsageCounter | None = None,
        registry: dict[str, ProviderFactory] | None = None,
    ) -> None:
        self.config = config or EmbeddingConfig()
        self._usage = usage
        self._registry = PROVIDERS if registry is None else registry
        self._active: Embedder | None = None
        self._probes: dict[str, str] = {}
        self._last_error: str | None = None
        self._probed_at: str | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self._counting: set[asyncio.Future[None]] = set()  # counts being written

    @property
    def active(self) -> Embedder | None:
        return self._active

    @property
    def provider(self) -> str:
        return self._active.provider if self._active else "none"

    @property
    def model_id(self) -> str:
        return self._active.model_id if self._active else ""

    @property
    def dimensions(self) -> int:
        return self._active.dimensions if self._active else 0

    @property
    def degraded(self) -> bool:
        return self._active.degraded if self._active else True

    @property
    def last_error(self) -> str | None:
        return self._last_error

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        active = await self.start()
        if not texts:
            return empty_matrix(active.dimensions)
        capped = cap_texts(texts, active.model_id)
        counted = await self._reserve(len(capped))
        try:
            out = await active.embed_batch(capped)
            if out.shape != (len(capped), active.dimensions):
                raise EmbeddingError(
                    f"{active.provider} returned shape {out.shape} for {len(capped)} texts "
                    f"of dimension {active.dimensions}",
                    provider=active.provider,
                )
        except BaseException as exc:
            if counted:
                await self._refund(len(capped))
            if not isinstance(exc, Exception):
                raise
            error = (
                exc
                if isinstance(exc, EmbeddingError)
                else EmbeddingError(
                    f"{active.provider}: {type(exc).__name__}: {exc}", provider=active.provider
                )
            )
            self._last_error = str(error)
            log.warning(
                "embedding %d texts with %s failed: %s", len(capped), active.provider, error
            )
            raise error from (None if error is exc else exc)
        if not counted:
            self._count_later(len(capped))
        return out

    async def embed(self, text: str) -> np.ndarray:
        """One text → one vector."""
        vectors = await self.embed_batch([text])
        row: np.ndarray = vectors[0]
        return row

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> Embedder:
        """Probe and activate a provider (once); returns the active embedder."""
        if self._active is not None:
            return self._active
        async with self._lock:
            if self._closed:
                raise EmbeddingError("the embedding provider chain is closed")
            if self._active is None:
                self._activate(await self._select())
            assert self._active is not None
            return self._active

    async def close(self) -> None:
        self._closed = True
        active, self._active = self._active, None
        if active is not None:
            await aclose(active)
        if self._usage is not None:
            await self._counted()
            await self._usage.close()

    async def __aenter__(self) -> EmbeddingProviderChain:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def status(self) -> dict[str, object]:
        available = [self.provider] if self._active and not self.degraded else []
        lanes = getattr(self._active, "lanes", None)  # the in-process embedder's layout
        layout = {} if lanes is None else {
            "backend": getattr(self._active, "backend", None),
            "lanes": lanes, "threads_per_lane": getattr(self._active, "lane_threads", None)}
        return {
            "provider": self.provider,
            "model": self.model_id,
            "dimensions": self.dimensions,
            "degraded": self.degraded,
            "last_error": self._last_error,
            "available_providers": [*available, "mock"],
            "probed_at": self._probed_at,
            "probes": dict(self._probes),
            "tier": self.config.tier,
            "eval_mode": self.config.eval_mode,
            **layout,
        }

    async def quota_status(self) -> dict[str, object] | None:
        """This month's count, the tier and its quota (None: nothing is counted here)."""
        if self._usage is None:
            return None
        await self._counted()
        return {**await self._usage.status(self.config.user_id, self.config.tier),
                "gated": self.config.gated}

    async def check_quota(self, n: int = 1) -> None:
        """Refuse (:class:`~mind.embeddings.quota.EmbeddingQuotaExceededError`) work that
        would need ``n`` more embeddings than this month's quota leaves; counts nothing."""
        cfg = self.config
        if self._usage is not None and cfg.gated:
            await self._usage.check(cfg.user_id, cfg.tier or "", n, upgrade_url=cfg.upgrade_url)

    # -- selection --------------------------------------------------------------------------

    def _activate(self, selection: _Selection) -> None:
        self._active = selection.embedder
        self._probes = selection.probes
        self._last_error = selection.last_error
        self._probed_at = now_iso()

    async def _select(self) -> _Selection:
        cfg, started = self.config, time.perf_counter()
        if cfg.provider != "auto":
            if cfg.gated:
                check_provider_allowed(cfg.tier or "", cfg.provider, upgrade_url=cfg.upgrade_url)
            try:
                embedder = await self._try(cfg.provider)
            except EmbeddingError as exc:
                self._last_error = str(exc)
                raise EmbeddingError(
                    f"embedding provider {cfg.provider!r} is unavailable: {exc}",
                    provider=cfg.provider,
                    provider_status=exc.provider_status,
                ) from None
            return _Selection(self._wrap(embedder), {cfg.provider: "ok"}, None)
        probes: dict[str, str] = {}
        errors: list[str] = []
        for name in AUTO_ORDER:
            if cfg.gated and not provider_allowed(cfg.tier or "", name):
                probes[name] = f"skipped: not in tier {cfg.tier!r}"
                continue
            try:
                embedder = await self._try(name)
            except ProviderNotConfigured as exc:
                probes[name] = f"skipped: {exc}"
                continue
            except EmbeddingError as exc:
                probes[name] = f"failed: {exc}"
                errors.append(f"{name}: {exc}")
                log.info("embedding provider %s unavailable: %s", name, exc)
                continue
            probes[name] = "ok"
            log.info(
                "embedding provider %s/%s active (%d dims), probed in %.2fs",
                embedder.provider,
                embedder.model_id,
                embedder.dimensions,
                time.perf_counter() - started,
            )
            return _Selection(self._wrap(embedder), probes, None)
        reason = "No real providers available" + (": " + "; ".join(errors) if errors else "")
        log.warning(
            "NO REAL EMBEDDING PROVIDER: using the degraded deterministic mock; semantic "
            "search is meaningless and no vectors may be indexed (%s)",
            reason,
        )
        probes["mock"] = "ok (degraded fallback)"
        from mind.embeddings.testing import MockEmbedder  # loaded for the fallback only

        mock = MockEmbedder(cfg.target_dimensions or MOCK_DIMENSIONS)
        return _Selection(mock, probes, reason)

    async def _try(self, name: str) -> Embedder:
        factory = self._registry.get(name)
        if factory is None:
            known = ", ".join(sorted(self._registry))
            raise EmbeddingError(f"unknown embedding provider {name!r} (known: {known})")
        embedder: Embedder | None = None
        try:
            embedder = factory(self.config)
            await probe_embedder(embedder)
        except BaseException as exc:
            if embedder is not None:
                await aclose(embedder)
            if isinstance(exc, Exception) and not isinstance(exc, EmbeddingError):
                raise EmbeddingError(f"{name}: {type(exc).__name__}: {exc}", provider=name) from exc
            raise
        return embedder

    def _wrap(self, embedder: Embedder) -> Embedder:
        target = self.config.target_dimensions
        if target and not embedder.degraded:
            return TargetDimEmbedder(embedder, target)
        return embedder

    async def _reserve(self, n: int) -> bool:
        """Check and count ``n`` embeddings when gated (raises when the quota is used up);
        True when counted."""
        cfg = self.config
        if self._usage is None or not cfg.gated:
            return False
        await self._usage.reserve(cfg.user_id, cfg.tier or "", n, upgrade_url=cfg.upgrade_url)
        return True

    def _count_later(self, n: int) -> None:
        """Count ``n`` embeddings without a gate, in the background."""
        if self._usage is None:
            return
        task = asyncio.ensure_future(self._add(self._usage, n))
        self._counting.add(task)
        task.add_done_callback(self._counting.discard)

    async def _add(self, usage: UsageCounter, n: int) -> None:
        try:
            await usage.add(self.config.user_id, n)
        except Exception:  # a count lost is no reason to fail the embedding it counts
            log.exception("could not count %d embeddings", n)

    async def _counted(self) -> None:
        """Wait for the counts still being written."""
        while self._counting:
            await asyncio.gather(*list(self._counting))

    async def _refund(self, n: int) -> None:
        if self._usage is None:
            return
        try:
            await self._usage.release(self.config.user_id, n)
        except Exception:
            log.exception("could not give back %d reserved embeddings", n)
