"""The groups of :class:`~hive_mind.settings.Settings`: one model per concept, each owning its
settings' defaults, bounds and descriptions.

A setting keeps the environment variable it always had (``HIVE_MIND_EMBEDDING_PROVIDER`` is
``settings.embedding.provider``): :func:`setting` declares it as the field's alias, and the
settings sources read exactly that name. A setting marked ``internal`` is a tuning knob whose
default was measured (docs/performance.md): documented, but nothing a deployment needs to set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SecretStr,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticUndefined

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
from mind.redact import mask_url
from vocabulary.enums import EmbeddingBackend, EmbeddingProviderName, EmbeddingTier
from vocabulary.ids import PERSONAL_MIND, validate_slug
from workers.constants import COGNIFY_BATCH_FRAMES
from workers.schedule import TASKS, MaintenanceTask

ENV_PREFIX = "HIVE_MIND_"
INTERNAL = "internal"
MAX_EXTERNAL_NAME_CHARS = 100
MIN_CLUSTER_KEY_CHARS = 32


def machine_model_cache() -> Path:
    """``$XDG_CACHE_HOME/hive-mind/models``, else ``~/.cache/hive-mind/models``."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(base) / "hive-mind" / "models"


def setting(env: str, default: Any = PydanticUndefined, *, internal: bool = False,
            **kwargs: Any) -> Any:
    """A field read from ``HIVE_MIND_<env>``; ``internal``: a measured tuning knob."""
    extra: dict[str, JsonValue] | None = {INTERNAL: True} if internal else None
    return Field(default, validation_alias=ENV_PREFIX + env, json_schema_extra=extra, **kwargs)


def is_internal(field: Any) -> bool:
    """Whether a field (a pydantic ``FieldInfo``) is marked an internal tuning knob."""
    extra = getattr(field, "json_schema_extra", None)
    return isinstance(extra, dict) and bool(extra.get(INTERNAL))


def comma_list(value: Any) -> Any:
    """``a, b,c`` → ``["a", "b", "c"]`` (a list is left alone)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def check_token(value: SecretStr | None, env: str, min_chars: int = 0) -> SecretStr | None:
    """Surrounding whitespace is dropped (a secret file's newline); empty means unset;
    anything but printable ASCII without spaces is refused (an HTTP header could never carry
    it byte for byte). Raised as ConfigurationError, not a pydantic error, so the token never
    appears in the message."""
    token = "" if value is None else value.get_secret_value().strip()
    if not token:
        return None
    for position, char in enumerate(token):
        if not "!" <= char <= "~":
            raise ConfigurationError(
                f"{env} must be printable ASCII without spaces (character {position + 1} is "
                "not); e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    if len(token) < min_chars:
        raise ConfigurationError(
            f"{env} must be at least {min_chars} characters; "
            "e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    return SecretStr(token)


def env_of(model: type[BaseModel], info: ValidationInfo) -> str:
    """The environment variable of the field being validated."""
    alias = model.model_fields[str(info.field_name)].validation_alias
    return alias if isinstance(alias, str) else ENV_PREFIX + str(info.field_name).upper()


class Group(BaseModel):
    """A group of settings: built by field name (or by its variable's name)."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, extra="forbid")


class ClusterSettings(Group):
    """A deployment of several hosts: this host's identity, the shard map and the key the hosts
    share. Unset, one host owns every mind."""

    model_config = ConfigDict(title="Cluster")

    host_id: str = setting("HOST_ID", "local", description="this mind host's queue id")
    shards: str = setting(
        "SHARDS", "", max_length=65_536,
        description="sharded deployment: shard-0=http://h0:8765,... — this host "
                    "(HIVE_MIND_HOST_ID=shard-<n>) serves and fences the minds of its shard "
                    "and forwards the rest to their owners; empty: one host owns every mind",
    )
    shard_epoch: int = setting("SHARD_EPOCH", 0, ge=0,
                               description="this shard host's fencing epoch")
    gateway: bool = setting("GATEWAY", False, description="serve --gateway: a stateless host "
                            "of a sharded deployment that forwards every request to its "
                            "mind's owner")
    key: SecretStr | None = setting(
        "CLUSTER_KEY", None,
        description="a secret shared by a deployment's hosts, workers and the operator's "
                    "cluster commands, never by API clients (at least 32 characters): signs "
                    "move orders to shards outside a host's shard map and the destructive "
                    "write-ops that travel through Redis",
    )
    max_move_bytes: int = setting(
        "MAX_MOVE_BYTES", 64 * 1024**3, ge=1024 * 1024,
        description="body limit of a mind file moved to this shard (cluster rebalance)",
    )

    @field_validator("key")
    @classmethod
    def _key(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        return check_token(value, env_of(cls, info), MIN_CLUSTER_KEY_CHARS)


class EmbeddingSettings(Group):
    """How texts become vectors: the provider, the in-process model and what runs it."""

    model_config = ConfigDict(title="Embedding")

    provider: EmbeddingProviderName = setting(
        "EMBEDDING_PROVIDER", "auto",
        description="auto probes inprocess → ollama → voyage → openai",
    )
    model: str | None = setting(
        "EMBEDDING_MODEL", None,
        description="model name (default per provider: all-MiniLM-L6-v2 in process)",
    )
    inprocess_model: str | None = setting(
        "INPROCESS_MODEL", None, description="the in-process model, also when auto picks it "
                                             "(default: all-MiniLM-L6-v2)",
    )
    device: str = setting("EMBEDDING_DEVICE", "cpu",
                          description="torch device of the in-process model")
    backend: EmbeddingBackend = setting(
        "EMBEDDING_BACKEND", DEFAULT_EMBEDDING_BACKEND,
        description="what runs the in-process model: torch, onnx (same vectors, faster; "
                    "exported once per machine into the model cache) or onnx-int8 (faster still, "
                    "own fingerprint)",
    )
    model_cache: Path = setting(
        "MODEL_CACHE", default_factory=lambda: machine_model_cache(),
        description="the machine-wide cache of prepared models (ONNX exports), shared by every "
                    "data dir; default $XDG_CACHE_HOME/hive-mind/models or "
                    "~/.cache/hive-mind/models. A read-only one is used when it holds the "
                    "export; otherwise exports go to <data dir>/models",
    )
    threads: int | None = setting(
        "EMBEDDING_THREADS", None, ge=1,
        description="torch threads of the in-process model (default: all)",
    )
    target_dimensions: int | None = setting(
        "EMBEDDING_TARGET_DIMENSIONS", None, ge=1, le=8192,
        description="truncate/pad vectors to this dimension",
    )
    cache_dir: Path | None = setting(
        "EMBEDDING_CACHE_DIR", None, internal=True,
        description="one directory for ONNX exports instead of the model cache and its "
                    "fallback (tests, special setups)",
    )
    batch_size: int = setting(
        "EMBEDDING_BATCH_SIZE", DEFAULT_EMBEDDING_BATCH, ge=1, le=4096, internal=True,
        description="texts per model forward pass",
    )
    lanes: int | None = setting(
        "EMBEDDING_LANES", None, ge=1, le=256, internal=True,
        description="parallel encoders the threads are split into (default: one per core, "
                    "at most 4; 1 on a GPU)",
    )
    nice: int | None = setting(
        "EMBEDDING_NICE", None, ge=0, le=19, internal=True,
        description="nice value added to in-process encodes (default: +10 embedded, 0 workers)",
    )
    test_dimensions: int = setting(
        "TEST_EMBEDDING_DIMENSIONS", DEFAULT_TEST_DIMENSIONS, ge=8, le=4096, internal=True,
        description="dimension of the deterministic test embedder",
    )
    batcher_max_items: int = setting(
        "BATCHER_MAX_ITEMS", 512, ge=1, internal=True,
        description="micro-batcher: texts per embed_batch",
    )
    batcher_max_tokens: int = setting(
        "BATCHER_MAX_TOKENS", 32_768, ge=64, internal=True,
        description="micro-batcher: approximate tokens per batch",
    )
    batcher_max_wait_ms: float = setting(
        "BATCHER_MAX_WAIT_MS", 20.0, ge=0, internal=True,
        description="micro-batcher: longest wait for a fuller batch",
    )


class ProviderSettings(Group):
    """The HTTP embedding providers: where each one is, its key and its model."""

    model_config = ConfigDict(title="Embedding providers")

    ollama_url: str = setting("OLLAMA_URL", DEFAULT_OLLAMA_URL, description="Ollama server")
    ollama_model: str | None = setting(
        "OLLAMA_MODEL", None, description="Ollama's embedding model, also when auto picks it",
    )
    openai_url: str = setting("OPENAI_URL", DEFAULT_OPENAI_URL,
                              description="OpenAI-compatible API base")
    openai_api_key: SecretStr | None = setting("OPENAI_API_KEY", None,
                                               description="secret; masked in status")
    openai_model: str | None = setting(
        "OPENAI_MODEL", None, description="OpenAI's embedding model, also when auto picks it",
    )
    voyage_url: str = setting("VOYAGE_URL", DEFAULT_VOYAGE_URL, description="Voyage API base")
    voyage_api_key: SecretStr | None = setting("VOYAGE_API_KEY", None,
                                               description="secret; masked in status")
    voyage_model: str | None = setting(
        "VOYAGE_MODEL", None, description="Voyage's embedding model, also when auto picks it",
    )
    litellm_url: str = setting("LITELLM_URL", DEFAULT_LITELLM_URL, description="LiteLLM proxy")
    litellm_api_key: SecretStr | None = setting("LITELLM_API_KEY", None,
                                                description="secret; masked in status")
    litellm_model: str | None = setting("LITELLM_MODEL", None,
                                        description="LiteLLM's embedding model")
    timeout: float | None = setting(
        "EMBEDDING_TIMEOUT", None, gt=0, le=600,
        description="seconds an HTTP embedding provider may take per request (default: 30 "
                    "Ollama and LiteLLM, 15 OpenAI and Voyage)",
    )
    http_batch_size: int | None = setting(
        "EMBEDDING_HTTP_BATCH_SIZE", None, ge=1, le=4096, internal=True,
        description="texts per request to an HTTP embedding provider (default: the "
                    "provider's own limit)",
    )


class QuotaSettings(Group):
    """The embedding tier: which providers a process may use and how many embeddings a month
    its user may make."""

    model_config = ConfigDict(title="Embedding tier and quota")

    tier: EmbeddingTier | None = setting(
        "TIER", None,
        description="embedding tier: free (local providers, 10,000 embeddings a month), pro "
                    "(+ remote providers, 1,000,000), team or enterprise (unlimited); a used-up "
                    "quota refuses saves, imports and recalls (HTTP 429). Unset: no gating",
    )
    user_id: str = setting(
        "USER_ID", DEFAULT_USER_ID, min_length=1, max_length=200,
        description="whose monthly embedding count this process adds to (every embedding: "
                    "indexing, imports, recall queries; shown by status)",
    )
    upgrade_url: str | None = setting(
        "TIER_UPGRADE_URL", None, description="where a refused provider or a used-up quota "
                                              "tells the user to upgrade (named in the error)",
    )
    eval_mode: bool = setting(
        "EVAL_MODE", False, description="evaluation mode: the tier never refuses a provider or "
                                        "an embedding (they are still counted)",
    )


class WriterSettings(Group):
    """The writer each open mind has: how it groups saves into commits, how many wait, and
    how many minds stay open."""

    model_config = ConfigDict(title="Mind writers")

    max_open_minds: int = setting("MAX_OPEN_MINDS", 64, ge=1,
                                  description="LRU cap on open mind files")
    max_ops: int = setting("ACTOR_MAX_OPS", 500, ge=1, internal=True,
                           description="ops per group commit")
    max_wait_ms: float = setting("ACTOR_MAX_WAIT_MS", 2.0, ge=0, internal=True,
                                 description="wait for more ops before committing")
    mailbox: int = setting("ACTOR_MAILBOX", 2_000, ge=1, internal=True,
                           description="queued ops per mind before callers wait")


class WorkerSettings(Group):
    """Distributed mode's queue workers: their jobs, retries and metrics port."""

    model_config = ConfigDict(title="Queue workers")

    max_jobs: int = setting(
        "WORKER_MAX_JOBS", 32, ge=1,
        description="concurrent jobs per worker (batches fill across them)",
    )
    job_timeout_seconds: int = setting("JOB_TIMEOUT_SECONDS", 120, ge=1,
                                       description="arq job timeout")
    job_max_tries: int = setting(
        "JOB_MAX_TRIES", 5, ge=1, description="retries before a job becomes a dead letter",
    )
    metrics_port: int | None = setting(
        "METRICS_PORT", None, ge=0, le=65535,
        description="a worker's Prometheus port (0: any free port; unset: none)",
    )
    metrics_host: str = setting(
        "METRICS_HOST", "127.0.0.1",
        description="the interface a worker's metrics port listens on",
    )
    cognify_batch_frames: int = setting(
        "COGNIFY_BATCH_FRAMES", COGNIFY_BATCH_FRAMES, ge=1, internal=True,
        description="frames per cognify job (small: short index transactions between saves)",
    )


class MaintenanceSettings(Group):
    """The nightly maintenance: when it runs, what it does and which workspaces it skips."""

    model_config = ConfigDict(title="Nightly maintenance")

    enabled: bool = setting(
        "MAINTENANCE_ENABLED", True,
        description="run the nightly maintenance: in serve and mcp processes (embedded), the "
                    "host's cron (distributed)",
    )
    hour: int = setting("MAINTENANCE_HOUR", 3, ge=0, le=23,
                        description="nightly maintenance time (UTC hour)")
    minute: int = setting("MAINTENANCE_MINUTE", 17, ge=0, le=59,
                          description="nightly maintenance time (minute)")
    spread_minutes: float = setting(
        "MAINTENANCE_SPREAD_MINUTES", 60.0, ge=0, le=720,
        description="the nightly minds start spread over this many minutes after the slot "
                    "(jittered; a thousand workspaces do not all compact at once)",
    )
    tasks: list[MaintenanceTask] = setting(
        "MAINTENANCE_TASKS", default_factory=lambda: list(TASKS),
        description="the nightly tasks, comma-separated: compact, reconcile, harvest_sync",
    )
    skip_workspaces: list[str] = setting(
        "MAINTENANCE_SKIP_WORKSPACES", default_factory=list,
        description="workspace ids the nightly maintenance leaves out, comma-separated "
                    "(personal = the personal mind)",
    )

    _comma_list = field_validator("tasks", "skip_workspaces", mode="before")(comma_list)

    @field_validator("skip_workspaces")
    @classmethod
    def _workspace_ids(cls, value: list[str], info: ValidationInfo) -> list[str]:
        for ident in value:
            if ident != PERSONAL_MIND:
                validate_slug(ident, f"workspace id in {env_of(cls, info)}")
        return value


class SecuritySettings(Group):
    """Who may reach the HTTP API and what it may make the server read or fetch
    (docs/security.md)."""

    model_config = ConfigDict(title="Security")

    api_token: SecretStr | None = setting(
        "API_TOKEN", None, description="bearer token required by the HTTP API when set "
                                       "(printable ASCII, no spaces; empty = unset); required "
                                       "beyond loopback",
    )
    insecure_no_auth: bool = setting(
        "API_INSECURE_NO_AUTH", False,
        description="let serve listen beyond loopback without an API token (anyone who reaches "
                    "the port reads and writes every mind)",
    )
    allowed_hosts: list[str] = setting(
        "API_ALLOWED_HOSTS", default_factory=list,
        description="extra Host names the HTTP API answers, comma-separated, any port (* = any); "
                    "loopback names and the bind address are always allowed",
    )
    allowed_origins: list[str] = setting(
        "API_ALLOWED_ORIGINS", default_factory=list,
        description="extra browser origins (scheme://host[:port], comma-separated; * = any) "
                    "allowed to call the HTTP API",
    )
    metrics_public: bool = setting(
        "METRICS_PUBLIC", False,
        description="serve /metrics without the API token (for a scraper on a trusted network)",
    )
    server_reads: bool | None = setting(
        "API_SERVER_READS", None,
        description="let HTTP (and MCP-over-HTTP) clients import paths on the server's disk "
                    "and URLs it fetches (default: only while serving on loopback)",
    )
    fetch_private_addresses: bool = setting(
        "FETCH_PRIVATE_ADDRESSES", False,
        description="let URL ingest fetch loopback, private, link-local (cloud metadata) and "
                    "other non-public addresses (default: public addresses only)",
    )

    _comma_list = field_validator("allowed_hosts", "allowed_origins", mode="before")(comma_list)

    @field_validator("api_token")
    @classmethod
    def _token(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        return check_token(value, env_of(cls, info))


class HttpSettings(Group):
    """The limits serve holds every connection and request to."""

    model_config = ConfigDict(title="HTTP server limits")

    max_request_bytes: int = setting(
        "MAX_REQUEST_BYTES", 10 * 1024 * 1024, ge=1024, description="HTTP request body limit",
    )
    header_timeout_seconds: float = setting(
        "HEADER_TIMEOUT_SECONDS", 10.0, gt=0, le=600,
        description="serve closes a connection whose request headers are not complete this "
                    "long after it opened (or after the previous response)",
    )
    body_timeout_seconds: float = setting(
        "BODY_TIMEOUT_SECONDS", 30.0, gt=0, le=3600,
        description="serve answers 408 when a request body's next chunk takes longer",
    )
    max_connections: int = setting(
        "MAX_CONNECTIONS", 1000, ge=1, le=1_000_000,
        description="open connections serve keeps; beyond, a new one is closed at once",
    )


class RetrievalSettings(Group):
    """What a recall searches beyond one mind: the workspaces of a scope-all recall and an
    external knowledge source."""

    model_config = ConfigDict(title="Retrieval")

    scope_minds: int = setting(
        "SCOPE_MINDS", 16, ge=0, le=10_000,
        description="workspaces a scope-all recall searches in full, chosen by their content "
                    "(0: every workspace)",
    )
    external_url: str | None = setting(
        "EXTERNAL_URL", None,
        description="an external knowledge source (JSON protocol of "
                    "mind/retrieval/external.py) that scope-all recalls ask when local memory "
                    "has too little; unset = none",
    )
    external_token: SecretStr | None = setting(
        "EXTERNAL_TOKEN", None,
        description="bearer token sent to the external source; masked in status",
    )
    external_timeout: float = setting(
        "EXTERNAL_TIMEOUT", 5.0, gt=0, le=120,
        description="seconds the external source may take per recall (its failures never "
                    "fail a recall)",
    )
    external_name: str | None = setting(
        "EXTERNAL_NAME", None, description="the external source's name in results "
                                           "(`external:<name>`) and conflict notes (default: "
                                           "its host name)",
    )

    @field_validator("external_token")
    @classmethod
    def _token(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        return check_token(value, env_of(cls, info))

    @field_validator("external_url")
    @classmethod
    def _external_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Operator configuration (not held to URL ingest's address guard), but an http(s)
        URL with a host; empty means unset."""
        url = (value or "").strip()
        if not url:
            return None
        if not url.startswith(("http://", "https://")) or not urlsplit(url).hostname:
            raise ConfigurationError(
                f"{env_of(cls, info)} must be an http(s) URL, got {mask_url(url)!r}")
        return url

    @field_validator("external_name")
    @classmethod
    def _external_name(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or not value.strip():
            return None
        try:
            return name_text(value.strip(), env_of(cls, info), MAX_EXTERNAL_NAME_CHARS)
        except ValidationError as exc:
            raise ConfigurationError(str(exc)) from None
