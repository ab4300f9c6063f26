"""Pure helpers of the embedding layer, the test embedder and the byte mock."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mind.embeddings import (
    EmbeddingError,
    MockEmbedder,
    TargetDimEmbedder,
    TestEmbedder,
    cap_text,
    fingerprint,
    max_chars_for_model,
    normalize_dimensions,
)
from mind.embeddings.base import coerce_matrix
from mind.embeddings.testing import tokens
from mind.errors import HiveMindError


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nomic-embed-text", 6000),
        ("all-MiniLM-L6-v2", 6000),
        ("jina-embeddings-v2-base-en-8k", 8000),
        ("mxbai_8k", 8000),
        ("model.8K", 8000),
        ("model-8kx", 6000),  # no word boundary after 8k
        ("model8k", 6000),  # no separator before 8k
        ("custom num_ctx=8192", 8000),
        ("NUM_CTX 8192 bge", 8000),
        ("num_ctx 4096", 6000),
    ],
)
def test_max_chars_for_model(name: str, expected: int) -> None:
    assert max_chars_for_model(name) == expected


def test_cap_text() -> None:
    assert cap_text("abcdef", 3) == "abc"
    assert cap_text("abc", 3) == "abc"
    assert cap_text("", 3) == ""
    assert cap_text("😀😀😀", 2) == "😀😀"  # code points: never half a character


def test_normalize_dimensions_pads_truncates_and_keeps_identity() -> None:
    v = np.array([0.5, -0.25, 1.0], dtype=np.float32)
    assert normalize_dimensions(v, 3) is v
    np.testing.assert_array_equal(normalize_dimensions(v, 5), [0.5, -0.25, 1.0, 0, 0])
    np.testing.assert_array_equal(normalize_dimensions(v, 2), [0.5, -0.25])  # not renormalized
    m = np.ones((2, 3), dtype=np.float32)
    out = normalize_dimensions(m, 4)
    assert out.shape == (2, 4) and out.dtype == np.float32
    np.testing.assert_array_equal(out[:, 3], [0, 0])
    with pytest.raises(ValueError):
        normalize_dimensions(v, 0)


def test_embedding_error_is_in_the_tree() -> None:
    err = EmbeddingError("boom", provider="ollama", provider_status=503)
    assert isinstance(err, HiveMindError)
    assert (err.code, err.provider, err.provider_status) == ("embedding_error", "ollama", 503)


def test_coerce_matrix_accepts_ints_and_the_empty_batch() -> None:
    out = coerce_matrix([[1, 2], [3, 4]], expected_rows=2, expected_dim=0, provider="p")
    assert out.dtype == np.float32 and out.shape == (2, 2)
    assert coerce_matrix([], expected_rows=0, expected_dim=7, provider="p").shape == (0, 7)
    for bad in ([[True, False]], [[[1.0]]], {"a": 1}, [[1.0], "x"]):
        with pytest.raises(EmbeddingError):
            coerce_matrix(bad, expected_rows=1, expected_dim=0, provider="p")


async def test_mock_embedder_matches_the_original() -> None:
    mock = MockEmbedder()
    assert (mock.provider, mock.model_id, mock.dimensions, mock.degraded) == (
        "mock",
        "deterministic-mock",
        1024,
        True,
    )
    out = await mock.embed_batch(["AB", "", "é"])
    assert out.shape == (3, 1024) and out.dtype == np.float32
    assert out[0, 0] == (65 - 128) / 128 and out[0, 1] == (66 - 128) / 128
    assert not out[0, 2:].any() and not out[1].any()
    np.testing.assert_allclose(out[2, :2], [(0xC3 - 128) / 128, (0xA9 - 128) / 128])
    lone = await MockEmbedder(4).embed_batch(["\ud800"])  # TextEncoder → U+FFFD (EF BF BD)
    np.testing.assert_allclose(lone[0, :3], [(b - 128) / 128 for b in (0xEF, 0xBF, 0xBD)])
    long = (await MockEmbedder(8).embed_batch(["x" * 100]))[0]
    assert long.shape == (8,) and np.all(long == (ord("x") - 128) / 128)
    assert (await mock.embed_batch([])).shape == (0, 1024)


def test_tokens_are_unicode_aware() -> None:
    assert tokens("Zürich CAFÉ, hive-mind don't Москва 東京 Q2") == [
        "zürich",
        "café",
        "hive",
        "mind",
        "don",
        "t",
        "москва",
        "東京",
        "q2",
    ]


async def test_test_embedder_is_deterministic_normalized_and_semantic() -> None:
    emb = TestEmbedder()
    assert (emb.provider, emb.dimensions, emb.degraded) == ("test", 64, False)
    texts = [
        "the quarterly budget meeting moved to friday",
        "budget meeting for the quarter is on friday now",
        "penguins waddle across antarctic ice sheets",
    ]
    a = await emb.embed_batch(texts)
    b = await TestEmbedder().embed_batch(texts)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    assert float(a[0] @ a[1]) > float(a[0] @ a[2]) + 0.2
    assert float(a[0] @ a[1]) > float(a[1] @ a[2]) + 0.2
    cased = await emb.embed_batch(["Zürich Café", "zürich café", "", "!!!"])
    np.testing.assert_allclose(cased[0], cased[1])
    assert not cased[2].any() and not cased[3].any()  # nothing to hash: zero vector
    assert (await emb.embed_batch([])).shape == (0, 64)
    assert TestEmbedder(256).model_id != emb.model_id


async def test_target_dim_wrapper_changes_the_fingerprint() -> None:
    inner = TestEmbedder(64)
    wrapped = TargetDimEmbedder(inner, 1024)
    assert fingerprint(inner) == ("test", "hashed-bow-trigram-64", 64)
    assert fingerprint(wrapped) == ("test", "hashed-bow-trigram-64@1024", 1024)
    assert wrapped.degraded is False
    out = await wrapped.embed_batch(["hello world"])
    assert out.shape == (1, 1024)
    np.testing.assert_array_equal(out[0, :64], inner.encode(["hello world"])[0])
    assert not out[0, 64:].any()
    assert (await wrapped.embed_batch([])).shape == (0, 1024)
    small = await TargetDimEmbedder(inner, 16).embed_batch(["hello"])
    assert small.shape == (1, 16)


def test_config_repr_hides_api_keys() -> None:
    from mind.embeddings import EmbeddingConfig

    cfg = EmbeddingConfig(openai_api_key="sk-secret", voyage_api_key="pa-secret")
    assert "secret" not in repr(cfg)
    assert cfg.model_for("ollama") is None
    assert EmbeddingConfig(provider="ollama", model="bge-m3").model_for("ollama") == "bge-m3"
    assert EmbeddingConfig(provider="auto", model="bge-m3").model_for("ollama") is None
    assert EmbeddingConfig(ollama_model="all-minilm").model_for("ollama") == "all-minilm"


def test_settings_set_every_embedding_field_with_the_same_defaults(tmp_path: Path) -> None:
    """The settings are the one source of the embedder's configuration: every field of
    EmbeddingConfig is built from a setting, and a default Settings gives EmbeddingConfig's
    defaults (but the two that depend on the data dir and the mode)."""
    import dataclasses

    from hive_mind.settings import Settings
    from mind.embeddings import EmbeddingConfig

    built = Settings(data_dir=tmp_path).embedding_config()
    default = EmbeddingConfig()
    derived = {"onnx_cache_dir", "nice"}  # the data dir's model folder; +10 when embedded
    differ = {f.name: (getattr(built, f.name), getattr(default, f.name))
              for f in dataclasses.fields(EmbeddingConfig)
              if f.name not in derived and getattr(built, f.name) != getattr(default, f.name)}
    assert differ == {}
    assert built.backend == "onnx-int8"


def test_every_embedding_field_can_be_set_by_environment(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    from hive_mind.settings import load_settings

    values = {"INPROCESS_MODEL": "org/small", "OLLAMA_MODEL": "all-minilm",
              "OPENAI_MODEL": "text-embedding-3-small", "VOYAGE_MODEL": "voyage-3",
              "LITELLM_MODEL": "local-e5", "EMBEDDING_TIMEOUT": "7.5",
              "EMBEDDING_HTTP_BATCH_SIZE": "16", "TIER": "pro", "USER_ID": "team-a",
              "TIER_UPGRADE_URL": "https://example.test/up"}
    for name, value in values.items():
        monkeypatch.setenv(f"HIVE_MIND_{name}", value)
    cfg = load_settings(data_dir=tmp_path).embedding_config()
    assert (cfg.inprocess_model, cfg.ollama_model, cfg.openai_model, cfg.voyage_model,
            cfg.litellm_model) == ("org/small", "all-minilm", "text-embedding-3-small",
                                   "voyage-3", "local-e5")
    assert (cfg.timeout, cfg.http_batch_size, cfg.tier, cfg.user_id, cfg.upgrade_url) == (
        7.5, 16, "pro", "team-a", "https://example.test/up")
    monkeypatch.setenv("HIVE_MIND_TIER", "gold")
    with pytest.raises(Exception, match="tier"):
        load_settings(data_dir=tmp_path)
