"""Settings in groups: every setting keeps its ``HIVE_MIND_*`` variable, the groups own their
defaults, and the sources keep their order (explicit values > environment > the data dir's
``.env`` > defaults). Real env files in tmp dirs, the real environment (monkeypatched)."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest
from pydantic import SecretStr

from hive_mind.cli.common import settings_from
from hive_mind.settings import Settings, env_var, leaves, load_settings
from hive_mind.settings_groups import EmbeddingSettings, MaintenanceSettings
from mind.errors import ConfigurationError

# the variables the settings were read from before they were grouped: none may change
VARIABLES = """DATA_DIR REDIS_URL URL HOST_ID SHARDS SHARD_EPOCH GATEWAY EMBEDDING_PROVIDER
EMBEDDING_MODEL EMBEDDING_DEVICE EMBEDDING_BACKEND MODEL_CACHE EMBEDDING_CACHE_DIR
EMBEDDING_BATCH_SIZE EMBEDDING_THREADS EMBEDDING_LANES EMBEDDING_NICE EMBEDDING_TARGET_DIMENSIONS
EMBEDDING_TIMEOUT EMBEDDING_HTTP_BATCH_SIZE INPROCESS_MODEL OLLAMA_URL OLLAMA_MODEL OPENAI_URL
OPENAI_API_KEY OPENAI_MODEL VOYAGE_URL VOYAGE_API_KEY VOYAGE_MODEL LITELLM_URL LITELLM_API_KEY
LITELLM_MODEL TEST_EMBEDDING_DIMENSIONS BATCHER_MAX_ITEMS BATCHER_MAX_TOKENS BATCHER_MAX_WAIT_MS
ACTOR_MAX_OPS ACTOR_MAX_WAIT_MS ACTOR_MAILBOX MAX_OPEN_MINDS SCOPE_MINDS WORKER_MAX_JOBS
JOB_TIMEOUT_SECONDS JOB_MAX_TRIES COGNIFY_BATCH_FRAMES MAINTENANCE_HOUR MAINTENANCE_MINUTE
MAINTENANCE_ENABLED MAINTENANCE_SPREAD_MINUTES MAINTENANCE_TASKS MAINTENANCE_SKIP_WORKSPACES
API_TOKEN API_INSECURE_NO_AUTH API_ALLOWED_HOSTS API_ALLOWED_ORIGINS MAX_REQUEST_BYTES CLUSTER_KEY
MAX_MOVE_BYTES HEADER_TIMEOUT_SECONDS BODY_TIMEOUT_SECONDS MAX_CONNECTIONS METRICS_PUBLIC
METRICS_PORT METRICS_HOST API_SERVER_READS FETCH_PRIVATE_ADDRESSES EXTERNAL_URL EXTERNAL_TOKEN
EXTERNAL_TIMEOUT EXTERNAL_NAME TIER USER_ID TIER_UPGRADE_URL EVAL_MODE""".split()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for leaf in leaves():
        monkeypatch.delenv(leaf.env, raising=False)
    monkeypatch.delenv("HIVE_MIND_ENV_FILE", raising=False)
    monkeypatch.chdir(tmp_path)


def _env_file(path: Path, text: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / ".env").write_text(text, encoding="utf-8")
    (path / ".env").chmod(0o600)
    return path


def test_every_variable_is_kept_and_most_settings_sit_in_a_group() -> None:
    assert sorted(leaf.env for leaf in leaves()) == sorted(f"HIVE_MIND_{v}" for v in VARIABLES)
    assert {leaf.flat for leaf in leaves()} == {v.lower() for v in VARIABLES}
    grouped = [leaf for leaf in leaves() if len(leaf.path) == 2]
    assert len(grouped) >= len(VARIABLES) - 3
    assert len({leaf.path[0] for leaf in grouped}) >= 8


def test_a_variable_reaches_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_PROVIDER", "test")
    monkeypatch.setenv("HIVE_MIND_ACTOR_MAX_OPS", "7")
    monkeypatch.setenv("HIVE_MIND_MAINTENANCE_TASKS", "compact, reconcile")
    monkeypatch.setenv("hive_mind_cluster_key", "k" * 40)  # names are case-insensitive
    settings = Settings()
    assert settings.embedding.provider == "test"
    assert settings.writer.max_ops == 7
    assert settings.maintenance.tasks == ["compact", "reconcile"]
    assert settings.cluster_secret() == "k" * 40
    assert settings.embedding.batch_size == EmbeddingSettings().batch_size  # the group's default


def test_explicit_values_beat_the_environment_which_beats_the_env_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    data = _env_file(tmp_path / "data", "HIVE_MIND_EMBEDDING_MODEL=from-file\n"
                                        "HIVE_MIND_EMBEDDING_DEVICE=from-file\n"
                                        "HIVE_MIND_SCOPE_MINDS=3\n")
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_DEVICE", "from-env")
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_PROVIDER", "ollama")
    settings = load_settings(data_dir=data, embedding_provider="test")
    assert settings.embedding.provider == "test"          # explicit (a CLI flag)
    assert settings.embedding.device == "from-env"        # environment over the file
    assert settings.embedding.model == "from-file"        # the file, same group as the others
    assert settings.retrieval.scope_minds == 3
    assert settings.maintenance.hour == MaintenanceSettings().hour


def test_flat_keywords_nested_values_and_replace() -> None:
    settings = Settings(embedding_provider="test", api_token="t0k",
                        maintenance={"hour": 5}, maintenance_minute=9)
    assert settings.security.api_token == SecretStr("t0k")
    assert (settings.maintenance.hour, settings.maintenance.minute) == (5, 9)
    changed = settings.replace(batcher_max_wait_ms=0.0, url="http://x", gateway=True)
    assert changed.embedding.batcher_max_wait_ms == 0.0 and changed.url == "http://x"
    assert changed.cluster.gateway and not settings.cluster.gateway
    assert changed.embedding.provider == "test"  # the rest of the group is kept
    with pytest.raises(TypeError, match="no setting"):
        settings.replace(no_such_setting=1)


def test_status_config_keeps_the_flat_names_with_secrets_masked() -> None:
    config = Settings(openai_api_key="sk-secret", shard_epoch=2,
                      openai_url="https://u:pw@x.example/v1").redacted()
    assert list(config) == [leaf.flat for leaf in leaves()]
    assert config["openai_api_key"] == "***" and config["api_token"] is None
    assert config["shard_epoch"] == 2 and "pw" not in config["openai_url"]
    assert config["maintenance_tasks"] == ["compact", "reconcile", "harvest_sync"]


def test_a_bad_value_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_BATCH_SIZE", "0")
    with pytest.raises(ConfigurationError, match="HIVE_MIND_EMBEDDING_BATCH_SIZE"):
        settings_from({})
    monkeypatch.delenv("HIVE_MIND_EMBEDDING_BATCH_SIZE")
    with pytest.raises(pydantic.ValidationError) as info:
        Settings(shard_epoch=-1)
    assert env_var(tuple(info.value.errors()[0]["loc"])) == "HIVE_MIND_SHARD_EPOCH"
    with pytest.raises(ConfigurationError, match="HIVE_MIND_EXTERNAL_TOKEN must be printable"):
        Settings(external_token="a b")
    with pytest.raises(ConfigurationError, match="HIVE_MIND_CLUSTER_KEY must be at least 32"):
        Settings(cluster_key="short")
    with pytest.raises(ValueError, match="HIVE_MIND_MAINTENANCE_SKIP_WORKSPACES"):
        Settings(maintenance_skip_workspaces="Not A Slug!")
