"""The one configuration object: ``HIVE_MIND_`` environment variables and a ``.env`` file.

Nothing reads the environment at import time: call :func:`load_settings` (or construct
``Settings(...)`` with explicit values, which reads no file). ``redacted()`` gives the effective
configuration with secrets masked, for ``hive-mind status``.

The ``.env`` file read is the data dir's (``<data dir>/.env``, the data dir from the overrides,
``HIVE_MIND_DATA_DIR`` or the default) or the one named explicitly (``--env-file``,
``HIVE_MIND_ENV_FILE``) — never one in the working directory: a cloned repository's ``.env``
could otherwise send every save (and ``hive-mind mcp``, which agents start inside repositories)
to its own server, turn the SSRF guard off or move the data dir. A ``.env`` there holding
``HIVE_MIND_`` keys is named in a warning; an env file other users may write is refused.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from actors.placement import ShardMap, ShardMapError, parse_shards
from mind.bounds import name_text
from mind.constants import (
    DEFAULT_EMBEDDING_BACKEND,
    DEFAULT_EMBEDDING_BATCH,
    DEFAULT_LITELLM_URL,
    DEFAULT_OLLAMA_URL,
    DEFAULT_OPENAI_URL,
    DEFAULT_TEST_DIMENSIONS,
    DEFAULT_USER_ID,
    DEFAULT_VOYAGE_URL,
)
from mind.errors import ConfigurationError, ValidationError
from mind.redact import mask_text, mask_url
from mind.storage.fencing import Fence
from vocabulary.enums import EmbeddingBackend, EmbeddingProviderName, EmbeddingTier
from vocabulary.ids import PERSONAL_MIND, validate_slug, workspace_mind_id
from workers.constants import COGNIFY_BATCH_FRAMES
from workers.schedule import TASKS, MaintenanceTask, ScheduleConfig

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # built by the methods below, imported there: a CLI command that does not
    # need the runtime, the queue or HTTP does not pay for importing them (issue #14)
    from mind.embeddings.registry import EmbeddingConfig
    from mind.retrieval.external import HttpExternalSource
    from workers.queue import QueueConfig
    from workers.runtime import RuntimeConfig

Backend = EmbeddingBackend
Provider = EmbeddingProviderName


EMBEDDED_NICE = 10
DEFAULT_DATA_DIR = "~/.hive-mind"
ENV_FILE = ".env"
MAX_EXTERNAL_NAME_CHARS = 100
MIN_CLUSTER_KEY_CHARS = 32


def machine_model_cache() -> Path:
    """``$XDG_CACHE_HOME/hive-mind/models``, else ``~/.cache/hive-mind/models``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(base) / "hive-mind" / "models"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="HIVE_MIND_", env_file=None, env_file_encoding="utf-8", extra="ignore"
    )

    data_dir: Path = Field(default=Path(DEFAULT_DATA_DIR), description="where mind files live")
    redis_url: str | None = Field(default=None, description="unset = embedded mode (no Redis)")
    url: str | None = Field(default=None, description="client mode: URL of a running serve")
    host_id: str = Field(default="local", description="this mind host's queue id")
    shards: str = Field(
        default="", max_length=65_536,
        description="sharded deployment (issue #17): shard-0=http://h0:8765,... — this host "
                    "(HIVE_MIND_HOST_ID=shard-<n>) serves and fences the minds of its shard "
                    "and forwards the rest to their owners; empty: one host owns every mind",
    )
    shard_epoch: int = Field(default=0, ge=0, description="this shard host's fencing epoch")
    gateway: bool = Field(default=False, description="serve --gateway: a stateless host of a "
                          "sharded deployment that forwards every request to its mind's owner")

    embedding_provider: Provider = Field(
        default="auto", description="auto probes inprocess → ollama → voyage → openai",
    )
    embedding_model: str | None = Field(
        default=None, description="model name (default per provider: all-MiniLM-L6-v2 in process)",
    )
    embedding_device: str = Field(default="cpu", description="torch device of the in-process model")
    embedding_backend: Backend = Field(
        default=DEFAULT_EMBEDDING_BACKEND,
        description="what runs the in-process model: torch, onnx (same vectors, faster; "
                    "exported once per machine into the model cache) or onnx-int8 (faster still, "
                    "own fingerprint)",
    )
    model_cache: Path = Field(
        default_factory=lambda: machine_model_cache(),
        description="the machine-wide cache of prepared models (ONNX exports), shared by every "
                    "data dir; default $XDG_CACHE_HOME/hive-mind/models or "
                    "~/.cache/hive-mind/models. A read-only one is used when it holds the "
                    "export; otherwise exports go to <data dir>/models",
    )
    embedding_cache_dir: Path | None = Field(
        default=None, description="one directory for ONNX exports instead of the model cache "
                                  "and its fallback (tests, special setups)",
    )
    embedding_batch_size: int = Field(
        default=DEFAULT_EMBEDDING_BATCH, ge=1, le=4096, description="texts per model forward pass",
    )
    embedding_threads: int | None = Field(
        default=None, ge=1, description="torch threads of the in-process model (default: all)",
    )
    embedding_lanes: int | None = Field(
        default=None, ge=1, le=256,
        description="parallel encoders the threads are split into (default: one per core, "
                    "at most 4; 1 on a GPU)",
    )
    embedding_nice: int | None = Field(
        default=None, ge=0, le=19,
        description="nice value added to in-process encodes (default: +10 embedded, 0 workers)",
    )
    embedding_target_dimensions: int | None = Field(
        default=None, ge=1, le=8192, description="truncate/pad vectors to this dimension",
    )
    embedding_timeout: float | None = Field(
        default=None, gt=0, le=600,
        description="seconds an HTTP embedding provider may take per request (default: 30 "
                    "Ollama and LiteLLM, 15 OpenAI and Voyage)",
    )
    embedding_http_batch_size: int | None = Field(
        default=None, ge=1, le=4096,
        description="texts per request to an HTTP embedding provider (default: the "
                    "provider's own limit)",
    )
    inprocess_model: str | None = Field(
        default=None, description="the in-process model, also when auto picks it (default: "
                                  "all-MiniLM-L6-v2)",
    )
    ollama_url: str = Field(default=DEFAULT_OLLAMA_URL, description="Ollama server")
    ollama_model: str | None = Field(
        default=None, description="Ollama's embedding model, also when auto picks it",
    )
    openai_url: str = Field(
        default=DEFAULT_OPENAI_URL, description="OpenAI-compatible API base",
    )
    openai_api_key: SecretStr | None = Field(default=None, description="secret; masked in status")
    openai_model: str | None = Field(
        default=None, description="OpenAI's embedding model, also when auto picks it",
    )
    voyage_url: str = Field(default=DEFAULT_VOYAGE_URL, description="Voyage API base")
    voyage_api_key: SecretStr | None = Field(default=None, description="secret; masked in status")
    voyage_model: str | None = Field(
        default=None, description="Voyage's embedding model, also when auto picks it",
    )
    litellm_url: str = Field(default=DEFAULT_LITELLM_URL, description="LiteLLM proxy")
    litellm_api_key: SecretStr | None = Field(default=None, description="secret; masked in status")
    litellm_model: str | None = Field(default=None, description="LiteLLM's embedding model")
    test_embedding_dimensions: int = Field(
        default=DEFAULT_TEST_DIMENSIONS, ge=8, le=4096,
        description="dimension of the deterministic test embedder",
    )

    batcher_max_items: int = Field(
        default=512, ge=1, description="micro-batcher: texts per embed_batch",
    )
    batcher_max_tokens: int = Field(
        default=32_768, ge=64, description="micro-batcher: approximate tokens per batch",
    )
    batcher_max_wait_ms: float = Field(
        default=20.0, ge=0, description="micro-batcher: longest wait for a fuller batch",
    )

    actor_max_ops: int = Field(default=500, ge=1, description="ops per group commit")
    actor_max_wait_ms: float = Field(
        default=2.0, ge=0, description="wait for more ops before committing",
    )
    actor_mailbox: int = Field(
        default=2_000, ge=1, description="queued ops per mind before callers wait",
    )
    max_open_minds: int = Field(default=64, ge=1, description="LRU cap on open mind files")
    scope_minds: int = Field(
        default=16, ge=0, le=10_000,
        description="workspaces a scope-all recall searches in full, chosen by their content "
                    "(0: every workspace)",
    )

    worker_max_jobs: int = Field(
        default=32, ge=1, description="concurrent jobs per worker (batches fill across them)",
    )
    job_timeout_seconds: int = Field(default=120, ge=1, description="arq job timeout")
    job_max_tries: int = Field(
        default=5, ge=1, description="retries before a job becomes a dead letter",
    )
    cognify_batch_frames: int = Field(
        default=COGNIFY_BATCH_FRAMES, ge=1,
        description="frames per cognify job (small: short index transactions between saves)",
    )

    maintenance_hour: int = Field(
        default=3, ge=0, le=23, description="nightly maintenance time (UTC hour)",
    )
    maintenance_minute: int = Field(
        default=17, ge=0, le=59, description="nightly maintenance time (minute)",
    )
    maintenance_enabled: bool = Field(
        default=True,
        description="run the nightly maintenance: in serve and mcp processes (embedded), the "
                    "host's cron (distributed)",
    )
    maintenance_spread_minutes: float = Field(
        default=60.0, ge=0, le=720,
        description="the nightly minds start spread over this many minutes after the slot "
                    "(jittered; a thousand workspaces do not all compact at once)",
    )
    maintenance_tasks: Annotated[list[MaintenanceTask], NoDecode] = Field(
        default_factory=lambda: list(TASKS),
        description="the nightly tasks, comma-separated: compact, reconcile, harvest_sync",
    )
    maintenance_skip_workspaces: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="workspace ids the nightly maintenance leaves out, comma-separated "
                    "(personal = the personal mind)",
    )

    api_token: SecretStr | None = Field(
        default=None, description="bearer token required by the HTTP API when set (printable "
                                  "ASCII, no spaces; empty = unset); required beyond loopback",
    )
    api_insecure_no_auth: bool = Field(
        default=False,
        description="let serve listen beyond loopback without an API token (anyone who reaches "
                    "the port reads and writes every mind)",
    )
    api_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="extra Host names the HTTP API answers, comma-separated, any port (* = any); "
                    "loopback names and the bind address are always allowed",
    )
    api_allowed_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="extra browser origins (scheme://host[:port], comma-separated; * = any) "
                    "allowed to call the HTTP API",
    )
    max_request_bytes: int = Field(
        default=10 * 1024 * 1024, ge=1024, description="HTTP request body limit",
    )
    cluster_key: SecretStr | None = Field(
        default=None,
        description="a secret shared by a deployment's hosts, workers and the operator's "
                    "cluster commands, never by API clients (at least 32 characters): signs "
                    "move orders to shards outside a host's shard map and the destructive "
                    "write-ops that travel through Redis",
    )
    max_move_bytes: int = Field(
        default=64 * 1024**3, ge=1024 * 1024,
        description="body limit of a mind file moved to this shard (cluster rebalance)",
    )
    header_timeout_seconds: float = Field(
        default=10.0, gt=0, le=600,
        description="serve closes a connection whose request headers are not complete this "
                    "long after it opened (or after the previous response)",
    )
    body_timeout_seconds: float = Field(
        default=30.0, gt=0, le=3600,
        description="serve answers 408 when a request body's next chunk takes longer",
    )
    max_connections: int = Field(
        default=1000, ge=1, le=1_000_000,
        description="open connections serve keeps; beyond, a new one is closed at once",
    )
    metrics_public: bool = Field(
        default=False,
        description="serve /metrics without the API token (for a scraper on a trusted network)",
    )
    metrics_port: int | None = Field(
        default=None, ge=0, le=65535,
        description="a worker's Prometheus port (0: any free port; unset: none)",
    )
    metrics_host: str = Field(
        default="127.0.0.1", description="the interface a worker's metrics port listens on",
    )
    api_server_reads: bool | None = Field(
        default=None,
        description="let HTTP (and MCP-over-HTTP) clients import paths on the server's disk "
                    "and URLs it fetches (default: only while serving on loopback)",
    )
    fetch_private_addresses: bool = Field(
        default=False,
        description="let URL ingest fetch loopback, private, link-local (cloud metadata) and "
                    "other non-public addresses (default: public addresses only)",
    )

    external_url: str | None = Field(
        default=None,
        description="an external knowledge source (JSON protocol of "
                    "mind/retrieval/external.py) that scope-all recalls ask when local memory "
                    "has too little; unset = none",
    )
    external_token: SecretStr | None = Field(
        default=None, description="bearer token sent to the external source; masked in status",
    )
    external_timeout: float = Field(
        default=5.0, gt=0, le=120,
        description="seconds the external source may take per recall (its failures never "
                    "fail a recall)",
    )
    external_name: str | None = Field(
        default=None, description="the external source's name in results (`external:<name>`) "
                                  "and conflict notes (default: its host name)",
    )

    tier: EmbeddingTier | None = Field(
        default=None,
        description="embedding tier: free (local providers, 10,000 embeddings a month), pro "
                    "(+ remote providers, 1,000,000), team or enterprise (unlimited); a used-up "
                    "quota refuses saves, imports and recalls (HTTP 429). Unset: no gating",
    )
    user_id: str = Field(
        default=DEFAULT_USER_ID, min_length=1, max_length=200,
        description="whose monthly embedding count this process adds to (every embedding: "
                    "indexing, imports, recall queries; shown by status)",
    )
    tier_upgrade_url: str | None = Field(
        default=None, description="where a refused provider or a used-up quota tells the user "
                                  "to upgrade (named in the error)",
    )
    eval_mode: bool = Field(
        default=False, description="evaluation mode: the tier never refuses a provider or "
                                   "an embedding (they are still counted)",
    )

    @field_validator("data_dir")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return Path(value).expanduser()

    @field_validator("api_token", "external_token", "cluster_key")
    @classmethod
    def _token(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        """Surrounding whitespace is dropped (a secret file's newline); empty means unset;
        anything but printable ASCII without spaces is refused (an HTTP header could never
        carry it byte for byte). Raised as ConfigurationError, not a pydantic error, so the
        token never appears in the message."""
        token = "" if value is None else value.get_secret_value().strip()
        if not token:
            return None
        for position, char in enumerate(token):
            if not "!" <= char <= "~":
                raise ConfigurationError(
                    f"HIVE_MIND_{str(info.field_name).upper()} must be printable ASCII "
                    f"without spaces (character "
                    f"{position + 1} is not); e.g. python -c 'import secrets; "
                    f"print(secrets.token_urlsafe(32))'")
        if info.field_name == "cluster_key" and len(token) < MIN_CLUSTER_KEY_CHARS:
            raise ConfigurationError(
                f"HIVE_MIND_CLUSTER_KEY must be at least {MIN_CLUSTER_KEY_CHARS} characters; "
                "e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'")
        return SecretStr(token)

    @field_validator("external_url")
    @classmethod
    def _external_url(cls, value: str | None) -> str | None:
        """Operator configuration (not held to URL ingest's address guard), but an http(s)
        URL with a host; empty means unset."""
        url = (value or "").strip()
        if not url:
            return None
        if not url.startswith(("http://", "https://")) or not urlsplit(url).hostname:
            raise ConfigurationError(
                f"HIVE_MIND_EXTERNAL_URL must be an http(s) URL, got {mask_url(url)!r}")
        return url

    @field_validator("external_name")
    @classmethod
    def _external_name(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        try:
            return name_text(value.strip(), "HIVE_MIND_EXTERNAL_NAME", MAX_EXTERNAL_NAME_CHARS)
        except ValidationError as exc:
            raise ConfigurationError(str(exc)) from None

    @field_validator("api_allowed_hosts", "api_allowed_origins", "maintenance_tasks",
                     "maintenance_skip_workspaces", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("maintenance_skip_workspaces")
    @classmethod
    def _workspace_ids(cls, value: list[str]) -> list[str]:
        for ident in value:
            if ident != PERSONAL_MIND:
                validate_slug(ident, "workspace id in HIVE_MIND_MAINTENANCE_SKIP_WORKSPACES")
        return value

    @property
    def embedded(self) -> bool:
        return not self.redis_url

    def default_embedding_nice(self) -> int:
        """Embedded mode encodes on every core at nice +10: imports embed at full speed while
        the writer and the event loop win the CPU back at once (save p99 ≤ 50 ms during a
        harvest, docs/performance.md "Save acknowledgement during an import"). A dedicated worker
        process runs at normal priority."""
        return EMBEDDED_NICE if self.embedded else 0

    def embedding_config(self) -> EmbeddingConfig:
        from mind.embeddings.registry import EmbeddingConfig

        def secret(value: SecretStr | None) -> str | None:
            return value.get_secret_value() if value else None

        return EmbeddingConfig(
            provider=self.embedding_provider,
            model=self.embedding_model,
            device=self.embedding_device,
            batch_size=self.embedding_batch_size,
            num_threads=self.embedding_threads,
            lanes=self.embedding_lanes,
            backend=self.embedding_backend,
            onnx_cache_dir=(self.embedding_cache_dir.expanduser(),) if self.embedding_cache_dir
            else (self.model_cache.expanduser(), (self.data_dir / "models").expanduser()),
            nice=self.default_embedding_nice() if self.embedding_nice is None
            else self.embedding_nice,
            inprocess_model=self.inprocess_model,
            ollama_url=self.ollama_url,
            ollama_model=self.ollama_model,
            openai_url=self.openai_url,
            openai_api_key=secret(self.openai_api_key),
            openai_model=self.openai_model,
            voyage_url=self.voyage_url,
            voyage_api_key=secret(self.voyage_api_key),
            voyage_model=self.voyage_model,
            litellm_url=self.litellm_url,
            litellm_api_key=secret(self.litellm_api_key),
            litellm_model=self.litellm_model,
            timeout=self.embedding_timeout,
            http_batch_size=self.embedding_http_batch_size,
            test_dimensions=self.test_embedding_dimensions,
            target_dimensions=self.embedding_target_dimensions,
            eval_mode=self.eval_mode,
            tier=self.tier,
            user_id=self.user_id,
            upgrade_url=self.tier_upgrade_url,
        )

    def external_source(self) -> HttpExternalSource | None:
        """The configured external knowledge source (no connection is made here)."""
        if not self.external_url:
            return None
        from mind.retrieval.external import HttpExternalSource

        return HttpExternalSource(
            self.external_url,
            api_key=self.external_token.get_secret_value() if self.external_token else None,
            timeout=self.external_timeout,
            name=self.external_name or urlsplit(self.external_url).hostname or "external")

    def runtime_config(self, *, host: bool = True) -> RuntimeConfig:
        """``host=False``: a cognify worker's (it opens no mind file, so it has no fence)."""
        from actors.host import ActorSettings
        from workers.runtime import RuntimeConfig

        return RuntimeConfig(
            data_dir=self.data_dir,
            embedding=self.embedding_config(),
            batcher_max_items=self.batcher_max_items,
            batcher_max_tokens=self.batcher_max_tokens,
            batcher_max_wait=self.batcher_max_wait_ms / 1000,
            actor=ActorSettings(self.actor_max_ops, self.actor_max_wait_ms / 1000,
                                self.actor_mailbox),
            max_open_minds=self.max_open_minds,
            max_tries=self.job_max_tries,
            cognify_batch=self.cognify_batch_frames,
            fence=self.fence() if host else None,
            shards=self.shard_map() if host else None,
        )

    def shard_map(self) -> ShardMap | None:
        """The configured shards (None: unsharded); a malformed map names its fix."""
        if not self.shards.strip():
            return None
        try:
            return parse_shards(self.shards)
        except ShardMapError as exc:
            raise ConfigurationError(f"HIVE_MIND_SHARDS: {exc}") from None

    def fence(self) -> Fence | None:
        """This host's fencing record when sharded: its shard id (the host id) and epoch."""
        shards = self.shard_map()
        if shards is None:
            return None
        if self.host_id not in shards.shards:
            raise ConfigurationError(
                f"HIVE_MIND_HOST_ID={self.host_id!r} is not a shard of HIVE_MIND_SHARDS "
                f"({', '.join(sorted(shards.shards))}): set it to the shard this host serves")
        return Fence(self.host_id, self.shard_epoch)

    def cluster_secret(self) -> str | None:
        """The deployment key (:mod:`vocabulary.signing`), or None when unset."""
        return self.cluster_key.get_secret_value() if self.cluster_key else None

    def schedule_config(self) -> ScheduleConfig:
        """The nightly maintenance (:mod:`workers.schedule`)."""
        skip = {PERSONAL_MIND if ident == PERSONAL_MIND else workspace_mind_id(ident)
                for ident in self.maintenance_skip_workspaces}
        return ScheduleConfig(enabled=self.maintenance_enabled, hour=self.maintenance_hour,
                              minute=self.maintenance_minute,
                              tasks=tuple(dict.fromkeys(self.maintenance_tasks)),
                              skip_minds=frozenset(skip),
                              spread_minutes=self.maintenance_spread_minutes)

    def queue_config(self) -> QueueConfig:
        if not self.redis_url:
            raise ConfigurationError("no Redis configured: set HIVE_MIND_REDIS_URL or --redis-url")
        from workers.queue import QueueConfig

        return QueueConfig(
            redis_url=self.redis_url, host_id=self.host_id, max_jobs=self.worker_max_jobs,
            job_timeout=self.job_timeout_seconds, max_tries=self.job_max_tries,
            shards=self.shard_map(), cluster_key=self.cluster_secret(),
        )

    def redacted(self) -> dict[str, Any]:
        """The effective configuration, secrets masked: secret fields, and credentials inside
        URLs (``user:password@``, ``?api_key=…``; :func:`mind.redact.mask_text`)."""
        out = self.model_dump(mode="json")
        for key, value in out.items():
            if isinstance(getattr(self, key), SecretStr):
                out[key] = "***" if value else None
            elif isinstance(value, str):
                out[key] = mask_text(value)
            elif isinstance(value, list):
                out[key] = [mask_text(v) if isinstance(v, str) else v for v in value]
        return out


def env_file(overrides: dict[str, Any]) -> Path | None:
    """The ``.env`` file to read (see the module docstring); None when there is none."""
    explicit = overrides.get("env_file") or os.environ.get("HIVE_MIND_ENV_FILE")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigurationError(f"env file {path} does not exist")
    else:
        data_dir = overrides.get("data_dir") or os.environ.get("HIVE_MIND_DATA_DIR") \
            or DEFAULT_DATA_DIR
        path = Path(data_dir).expanduser() / ENV_FILE
        if not path.is_file():
            return None
    mode = path.stat().st_mode
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ConfigurationError(f"{path} may be written by other users: chmod go-w it "
                                 "(it configures where memories go)")
    return path


def _warn_of_working_dir_env(used: Path | None) -> None:
    here = Path.cwd() / ENV_FILE
    try:
        if (used is not None and here.resolve() == used.resolve()) or not here.is_file():
            return
        named = any(line.lstrip().startswith("HIVE_MIND_")
                    for line in here.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return
    if named:
        log.warning("ignoring %s: hive-mind reads HIVE_MIND_* settings from the environment, "
                    "<data dir>/.env or --env-file, never from the working directory", here)


def load_settings(**overrides: Any) -> Settings:
    """Read the environment and the data dir's (or the named) ``.env`` now, with explicit
    overrides on top (``env_file``: the file to read instead)."""
    given = {k: v for k, v in overrides.items() if v is not None}
    path = env_file(given)
    given.pop("env_file", None)
    _warn_of_working_dir_env(path)
    return Settings(_env_file=path, **given)  # type: ignore[call-arg]
