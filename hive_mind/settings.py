"""The one configuration object: ``HIVE_MIND_`` environment variables and a ``.env`` file.

Nothing reads the environment at import time: call :func:`load_settings` (or construct
``Settings(...)`` with explicit values, which reads no file). ``redacted()`` gives the effective
configuration with secrets masked, for ``hive-mind status``.

Beyond the data dir and the mode (``redis_url``, ``url``), settings sit in groups
(:mod:`hive_mind.settings_groups`): ``settings.embedding.provider`` is read from
``HIVE_MIND_EMBEDDING_PROVIDER``, the name it always had. Explicit values (``Settings(...)``,
:func:`load_settings`, :meth:`Settings.replace`) name a setting by its flat name, the variable
without ``HIVE_MIND_`` in lower case (``embedding_provider=...``); ``redacted()`` uses the same.

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
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from actors.placement import ShardMap, ShardMapError, parse_shards
from hive_mind.settings_groups import (
    ENV_PREFIX,
    ClusterSettings,
    EmbeddingSettings,
    HttpSettings,
    MaintenanceSettings,
    ProviderSettings,
    QuotaSettings,
    RetrievalSettings,
    SecuritySettings,
    WorkerSettings,
    WriterSettings,
)
from mind.errors import ConfigurationError
from mind.redact import mask_text
from mind.storage.fencing import Fence
from vocabulary.ids import PERSONAL_MIND, workspace_mind_id
from workers.schedule import ScheduleConfig

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # built by the methods below, imported there: a CLI command that does not
    # need the runtime, the queue or HTTP does not pay for importing them (issue #14)
    from mind.embeddings.registry import EmbeddingConfig
    from mind.retrieval.external import HttpExternalSource
    from workers.queue import QueueConfig
    from workers.runtime import RuntimeConfig


EMBEDDED_NICE = 10
DEFAULT_DATA_DIR = "~/.hive-mind"
ENV_FILE = ".env"


class Leaf(NamedTuple):
    """One setting: where it sits (``("embedding", "provider")``), its environment variable
    and its flat name (the variable without ``HIVE_MIND_``, lower case: ``embedding_provider``),
    which :class:`Settings` and :func:`load_settings` take as a keyword."""

    path: tuple[str, ...]
    env: str
    flat: str


@cache
def leaves() -> tuple[Leaf, ...]:
    """Every setting, in the order the settings declare them."""
    found: list[Leaf] = []
    for name, field in Settings.model_fields.items():
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            for inner, leaf in group.model_fields.items():
                env = str(leaf.validation_alias)
                found.append(Leaf((name, inner), env, env[len(ENV_PREFIX):].lower()))
        else:
            found.append(Leaf((name,), ENV_PREFIX + name.upper(), name))
    return tuple(found)


@cache
def _by_flat() -> dict[str, Leaf]:
    return {leaf.flat: leaf for leaf in leaves()}


def env_var(loc: tuple[int | str, ...]) -> str:
    """The environment variable of a validation error's location (``("embedding",
    "batch_size")`` or by alias) — "settings" when it names none."""
    names = [str(part) for part in loc]
    for leaf in leaves():
        if tuple(names[:len(leaf.path)]) == leaf.path or leaf.env in names:
            return leaf.env
    return "settings"


def grouped(values: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword values with the settings' flat names (``embedding_provider=…``) moved into their
    groups (``embedding={"provider": …}``); other keys are left as they are."""
    out: dict[str, Any] = {}
    flat = _by_flat()
    for key, value in values.items():
        leaf = flat.get(key)
        if leaf is None or len(leaf.path) == 1:
            out[key] = value
            continue
        group = out.setdefault(leaf.path[0], {})
        if not isinstance(group, dict):
            raise TypeError(f"{key} given both on its own and inside {leaf.path[0]}")
        group[leaf.path[1]] = value
    return out


class FlatSource(PydanticBaseSettingsSource):
    """Settings from variables (the environment's, a ``.env`` file's; lower-cased names) read
    by each setting's own variable name, into its group."""

    def __init__(self, settings_cls: type[BaseSettings],
                 variables: Mapping[str, str | None]) -> None:
        super().__init__(settings_cls)
        self._variables = variables

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ reads every setting itself

    def __call__(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for leaf in leaves():
            value = self._variables.get(leaf.env.lower())
            if value is None:
                continue
            if len(leaf.path) == 1:
                out[leaf.path[0]] = value
            else:
                out.setdefault(leaf.path[0], {})[leaf.path[1]] = value
        return out


class Settings(BaseSettings):
    """Where the data lives and which mode runs (embedded, distributed or client); every other
    setting sits in a group (:mod:`hive_mind.settings_groups`)."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_file=None, env_file_encoding="utf-8", extra="ignore"
    )

    data_dir: Path = Field(default=Path(DEFAULT_DATA_DIR), description="where mind files live")
    redis_url: str | None = Field(default=None, description="unset = embedded mode (no Redis)")
    url: str | None = Field(default=None, description="client mode: URL of a running serve")

    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    providers: ProviderSettings = Field(default_factory=ProviderSettings)
    quota: QuotaSettings = Field(default_factory=QuotaSettings)
    writer: WriterSettings = Field(default_factory=WriterSettings)
    workers: WorkerSettings = Field(default_factory=WorkerSettings)
    maintenance: MaintenanceSettings = Field(default_factory=MaintenanceSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    security: SecuritySettings = Field(default_factory=SecuritySettings)
    http: HttpSettings = Field(default_factory=HttpSettings)
    cluster: ClusterSettings = Field(default_factory=ClusterSettings)

    def __init__(self, **values: Any) -> None:
        super().__init__(**grouped(values))

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Explicit values, then the environment, then the ``.env`` file — each read by the
        settings' own variable names (:class:`FlatSource`)."""
        assert isinstance(env_settings, EnvSettingsSource)
        assert isinstance(dotenv_settings, EnvSettingsSource)
        return (init_settings, FlatSource(settings_cls, env_settings.env_vars),
                FlatSource(settings_cls, dotenv_settings.env_vars))

    @field_validator("data_dir")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return Path(value).expanduser()

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
            provider=self.embedding.provider,
            model=self.embedding.model,
            device=self.embedding.device,
            batch_size=self.embedding.batch_size,
            num_threads=self.embedding.threads,
            lanes=self.embedding.lanes,
            backend=self.embedding.backend,
            onnx_cache_dir=(self.embedding.cache_dir.expanduser(),) if self.embedding.cache_dir
            else (self.embedding.model_cache.expanduser(),
                  (self.data_dir / "models").expanduser()),
            nice=self.default_embedding_nice() if self.embedding.nice is None
            else self.embedding.nice,
            inprocess_model=self.embedding.inprocess_model,
            ollama_url=self.providers.ollama_url,
            ollama_model=self.providers.ollama_model,
            openai_url=self.providers.openai_url,
            openai_api_key=secret(self.providers.openai_api_key),
            openai_model=self.providers.openai_model,
            voyage_url=self.providers.voyage_url,
            voyage_api_key=secret(self.providers.voyage_api_key),
            voyage_model=self.providers.voyage_model,
            litellm_url=self.providers.litellm_url,
            litellm_api_key=secret(self.providers.litellm_api_key),
            litellm_model=self.providers.litellm_model,
            timeout=self.providers.timeout,
            http_batch_size=self.providers.http_batch_size,
            test_dimensions=self.embedding.test_dimensions,
            target_dimensions=self.embedding.target_dimensions,
            eval_mode=self.quota.eval_mode,
            tier=self.quota.tier,
            user_id=self.quota.user_id,
            upgrade_url=self.quota.upgrade_url,
        )

    def external_source(self) -> HttpExternalSource | None:
        """The configured external knowledge source (no connection is made here)."""
        url, token = self.retrieval.external_url, self.retrieval.external_token
        if not url:
            return None
        from mind.retrieval.external import HttpExternalSource

        return HttpExternalSource(
            url, api_key=token.get_secret_value() if token else None,
            timeout=self.retrieval.external_timeout,
            name=self.retrieval.external_name or urlsplit(url).hostname or "external")

    def runtime_config(self, *, host: bool = True, one_shot: bool = False) -> RuntimeConfig:
        """``host=False``: a cognify worker's (it opens no mind file, so it has no fence);
        ``one_shot``: a CLI command's, which hands the indexing of the frames it saves to a
        process keeping the mind's writer open, if one does (:mod:`actors.handoff`)."""
        from actors.host import ActorSettings
        from workers.runtime import RuntimeConfig

        return RuntimeConfig(
            data_dir=self.data_dir,
            embedding=self.embedding_config(),
            batcher_max_items=self.embedding.batcher_max_items,
            batcher_max_tokens=self.embedding.batcher_max_tokens,
            batcher_max_wait=self.embedding.batcher_max_wait_ms / 1000,
            actor=ActorSettings(self.writer.max_ops, self.writer.max_wait_ms / 1000,
                                self.writer.mailbox, one_shot=one_shot),
            max_open_minds=self.writer.max_open_minds,
            max_tries=self.workers.job_max_tries,
            cognify_batch=self.workers.cognify_batch_frames,
            fence=self.fence() if host else None,
            shards=self.shard_map() if host else None,
        )

    def shard_map(self) -> ShardMap | None:
        """The configured shards (None: unsharded); a malformed map names its fix."""
        if not self.cluster.shards.strip():
            return None
        try:
            return parse_shards(self.cluster.shards)
        except ShardMapError as exc:
            raise ConfigurationError(f"HIVE_MIND_SHARDS: {exc}") from None

    def fence(self) -> Fence | None:
        """This host's fencing record when sharded: its shard id (the host id) and epoch."""
        shards = self.shard_map()
        if shards is None:
            return None
        if self.cluster.host_id not in shards.shards:
            raise ConfigurationError(
                f"HIVE_MIND_HOST_ID={self.cluster.host_id!r} is not a shard of "
                f"HIVE_MIND_SHARDS ({', '.join(sorted(shards.shards))}): set it to the shard "
                "this host serves")
        return Fence(self.cluster.host_id, self.cluster.shard_epoch)

    def api_secret(self) -> str:
        """The HTTP API's bearer token, or "" when unset."""
        token = self.security.api_token
        return token.get_secret_value() if token else ""

    def cluster_secret(self) -> str | None:
        """The deployment key (:mod:`vocabulary.signing`), or None when unset."""
        return self.cluster.key.get_secret_value() if self.cluster.key else None

    def schedule_config(self) -> ScheduleConfig:
        """The nightly maintenance (:mod:`workers.schedule`)."""
        skip = {PERSONAL_MIND if ident == PERSONAL_MIND else workspace_mind_id(ident)
                for ident in self.maintenance.skip_workspaces}
        return ScheduleConfig(enabled=self.maintenance.enabled, hour=self.maintenance.hour,
                              minute=self.maintenance.minute,
                              tasks=tuple(dict.fromkeys(self.maintenance.tasks)),
                              skip_minds=frozenset(skip),
                              spread_minutes=self.maintenance.spread_minutes)

    def queue_config(self) -> QueueConfig:
        if not self.redis_url:
            raise ConfigurationError("no Redis configured: set HIVE_MIND_REDIS_URL or --redis-url")
        from workers.queue import QueueConfig

        return QueueConfig(
            redis_url=self.redis_url, host_id=self.cluster.host_id,
            max_jobs=self.workers.max_jobs, job_timeout=self.workers.job_timeout_seconds,
            max_tries=self.workers.job_max_tries,
            shards=self.shard_map(), cluster_key=self.cluster_secret(),
        )

    def replace(self, **values: Any) -> Settings:
        """A copy with these settings changed, named by their flat names
        (``replace(batcher_max_wait_ms=0.0)``); values are taken as they are."""
        update: dict[str, Any] = {}
        for key, changes in grouped(values).items():
            if key not in type(self).model_fields:
                raise TypeError(f"no setting {key!r}")
            update[key] = getattr(self, key).model_copy(update=changes) \
                if isinstance(changes, dict) else changes
        return self.model_copy(update=update)

    def redacted(self) -> dict[str, Any]:
        """The effective configuration by flat name (``embedding_provider``), secrets masked:
        secret fields, and credentials inside URLs (``user:password@``, ``?api_key=…``;
        :func:`mind.redact.mask_text`)."""
        dumped = self.model_dump(mode="json")
        out: dict[str, Any] = {}
        for leaf in leaves():
            value: Any = dumped
            raw: Any = self
            for part in leaf.path:
                value, raw = value[part], getattr(raw, part)
            if isinstance(raw, SecretStr):
                value = "***" if value else None
            elif isinstance(value, str):
                value = mask_text(value)
            elif isinstance(value, list):
                value = [mask_text(v) if isinstance(v, str) else v for v in value]
            out[leaf.flat] = value
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
    return Settings(_env_file=path, **given)
