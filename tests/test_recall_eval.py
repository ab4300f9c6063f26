"""The recall eval harness (bench/recall_eval.py) on a small slice, so it cannot rot: one LoCoMo
conversation and a few questions, imported and asked through the product path with the real
model. LoCoMo is read from ../shared (never copied into the repository); CI has it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import recall_eval as harness  # noqa: E402

pytestmark = pytest.mark.timeout(600)


def _locomo() -> Path:
    if not (harness.LOCOMO / "questions.json").exists():
        if os.environ.get("CI"):
            pytest.fail(f"LoCoMo dev half missing at {harness.LOCOMO}")
        pytest.skip(f"LoCoMo dev half not at {harness.LOCOMO}")
    return harness.LOCOMO


async def test_locomo_slice_through_the_product_path(tmp_path: Path) -> None:
    ev = harness.locomo_eval(_locomo(), tmp_path, conversations=1, questions=12)
    assert len({q.workspace for q in ev.questions}) == 1 and len(ev.questions) == 12
    assert len({q.group for q in ev.questions}) >= 3  # the slice mixes categories
    await harness.run_eval(ev, tmp_path / "locomo", harness.MODES, "balanced", progress=False)
    assert ev.frames > 300  # the whole conversation imported
    for mode in harness.MODES:
        assert len(ev.scores[mode]) == 12
        s = ev.summary(mode)["all"]
        assert 0.0 <= s["R@5"] <= s["R@10"] <= 1.0
    # results map back to message ids: the default finds most of the evidence on this slice
    assert ev.summary("default")["all"]["R@10"] >= 0.5
    assert ev.summary("default")["all"]["R@10"] >= ev.summary("keyword")["all"]["R@10"]
    table = harness.table(ev)
    assert table.count("\n") == 1 + len(harness.MODES) and "| default |" in table

    # a second run reuses the import (no second harvest) and asks again
    again = harness.locomo_eval(_locomo(), tmp_path, conversations=1, questions=12)
    await harness.run_eval(again, tmp_path / "locomo", {"default": harness.MODES["default"]},
                           "balanced", progress=False)
    assert again.frames == ev.frames and again.scores["default"] == ev.scores["default"]


async def test_touches_do_not_leak_between_questions(tmp_path: Path) -> None:
    """The harness asks with touch=False: access counts stay zero after a whole run."""
    from hive_mind.facade import HiveMind

    ev = harness.conv_eval(harness.CONV, questions=4)
    await harness.run_eval(ev, tmp_path / "conv", {"default": harness.MODES["default"]},
                           "balanced", progress=False)
    assert len(ev.scores["default"]) == 4
    async with await HiveMind.open(data_dir=tmp_path / "conv", embedding_provider="inprocess",
                                   redis_url=None) as hm:
        mind = await hm.reader(None)
        row = await mind.db.fetchone("SELECT max(access_count) FROM memory_frames")
        assert row[0] == 0
