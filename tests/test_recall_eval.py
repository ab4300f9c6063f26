"""The recall eval harness (bench/evals/recall_eval.py) on a small slice, so it cannot rot: one LoCoMo
conversation and a few questions, imported and asked through the product path with the real
model. LoCoMo is read from the evaluation data (HIVE_MIND_SHARED_DATA; never copied into the
repository); CI has it."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.evals import recall_eval as harness

pytestmark = pytest.mark.timeout(600)
MULTI, TEMPORAL = "multi-hop", "temporal"


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
        assert 0.0 <= s["R@5"] <= s["R@10"] <= 1.0 and 0.0 <= s["S@10"] <= 1.0
    # results map back to message ids: the default finds most of the evidence on this slice
    assert ev.summary("default")["all"]["R@10"] >= 0.5
    assert ev.summary("default")["all"]["R@10"] >= ev.summary("keyword")["all"]["R@10"]
    table = harness.table(ev)
    assert table.count("\n") == 1 + len(harness.MODES) and "| default |" in table
    assert "| R@5 | R@10 | S@10 |" in table

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


# -- session recall ------------------------------------------------------------------------------


@pytest.mark.parametrize(("ranked", "gold", "expected"), [
    (["c:D3:1"], {"c:D3:12"}, 1.0),  # another turn of the evidence's session counts
    (["c:D4:12"], {"c:D3:12"}, 0.0),
    (["c:D3:1", "c:D3:2"], {"c:D3:12", "c:D5:1"}, 0.5),  # two evidence sessions, one found
    (["c:D1:1", "c:D1:2"], {"c:D1:3", "c:D1:4"}, 1.0),  # two turns of one session = one session
    (["", "c:D5:2"], {"c:D5:1"}, 1.0),  # a result without a message id is skipped
    ([*(f"c:D1:{i}" for i in range(10)), "c:D2:1"], {"c:D2:1"}, 0.0),  # 11th result: not in @10
    ([], {"c:D1:1"}, 0.0),
])
def test_session_recall(ranked: list[str], gold: set[str], expected: float) -> None:
    assert harness.session_recall_at(ranked, gold, 10) == pytest.approx(expected)
    assert harness.session_of("conv-26:D3:12") == "conv-26:D3"


def test_message_id_prefix_is_the_imported_session() -> None:
    """S@10 reads a turn's session off its message id; the import's conversation_id agrees."""
    data = _locomo()
    for path in sorted(data.glob("conv-*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            sample, _, number = row["conversation_id"].partition(":session_")
            assert harness.session_of(row["message_id"]) == f"{sample}:D{number}"


# -- the grid ------------------------------------------------------------------------------------


def test_grid_moves_one_knob_at_a_time_around_the_default() -> None:
    grid = harness.GRID
    assert next(iter(grid)) == "default" and grid["default"] == harness.DEFAULT_SIGNALS
    assert 8 <= len(grid) <= 24 and len(set(grid.values())) == len(grid)
    for name, signals in list(grid.items())[1:]:
        knob, _, _ = name.partition("=")
        moved = [f for f in harness.Signals.__dataclass_fields__
                 if getattr(signals, f) != getattr(harness.DEFAULT_SIGNALS, f)]
        assert moved == [knob], name


@pytest.mark.parametrize(("knob", "default", "expected"), [
    ("session_weight", 0.6, (0.3, 1.2)),
    ("session_top", 3, (2, 6)),
    ("session_top", 1, (1, 2)),  # an int knob moves by at least 1 and stays >= 1
    ("neighbour_hits", 30, (15, 60)),
])
def test_around(monkeypatch: pytest.MonkeyPatch, knob: str, default: Any,
                expected: tuple[Any, ...]) -> None:
    monkeypatch.setattr(harness, "DEFAULT_SIGNALS",
                        replace(harness.DEFAULT_SIGNALS, **{knob: default}))
    assert harness.around(knob) == expected


def test_a_new_knob_is_one_grid_entry() -> None:
    """Any Signals field becomes grid settings by naming it and its values; a value equal to the
    default adds nothing."""
    base = harness.DEFAULT_SIGNALS
    grid = harness.grid(base, {"supersede": (False, True), "spread": (0.0, 0.5)})
    assert list(grid) == ["default", "supersede=False", "spread=0", "spread=0.5"]
    assert grid["spread=0.5"] == replace(base, spread=0.5)


# -- the folds -----------------------------------------------------------------------------------


def _rows(*per_fold: tuple[str, list[float]]) -> list[harness.Row]:
    """One row per question: (fold, group, {"R@10": v, "S@10": v})."""
    return [(fold, MULTI if i % 2 else TEMPORAL, {"R@10": v, "S@10": min(1.0, v + 0.5)})
            for fold, values in per_fold for i, v in enumerate(values)]


# settings → per fold R@10 of each question; "a" is better on x and y, "b" on z
SCORES = {
    "default": _rows(("x", [0.5, 0.5]), ("y", [0.5, 0.5]), ("z", [0.5, 0.5])),
    "a": _rows(("x", [1.0, 1.0]), ("y", [1.0, 1.0]), ("z", [0.0, 0.0])),
    "b": _rows(("x", [0.0, 0.0]), ("y", [0.0, 0.0]), ("z", [1.0, 1.0])),
}


@pytest.mark.parametrize(("folds", "expected"), [
    (["x", "y", "z"], "a"),  # a: 4/6, default 3/6, b 2/6
    (["y", "z"], "default"),  # a and b and default tie at 0.5: the earliest (default) wins
    (["x", "z"], "default"),
    (["x", "y"], "a"),
    (["z"], "b"),
])
def test_pick(folds: list[str], expected: str) -> None:
    assert harness.pick(SCORES, folds) == expected


def test_leave_out_picks_on_the_others_and_weights_by_question() -> None:
    folds = harness.leave_out(SCORES)
    assert folds.chosen == {"x": "default", "y": "default", "z": "a"}
    assert folds.in_sample_setting == "a"
    assert folds.in_sample["all"]["R@10"] == pytest.approx(4 / 6)
    # held out: x and y with the default (0.5 each), z with a (0.0)
    assert folds.leave_out["all"]["R@10"] == pytest.approx(2 / 6)
    assert folds.held_out["z"]["all"]["R@10"] == 0.0
    assert folds.default["all"]["R@10"] == pytest.approx(0.5)
    assert folds.gap()["all"]["R@10"] == pytest.approx(2 / 6)
    # S@10 (0.5 more, capped at 1) comes out at 5/6 both ways: only R@10 is flagged
    assert folds.overfit() == [("all", "R@10"), (TEMPORAL, "R@10"), (MULTI, "R@10")]

    # weighting: a fold of 3 questions counts three times a fold of 1 (not mean of folds)
    uneven = {"default": [("x", TEMPORAL, {"R@10": 1.0}),
                          *(("y", TEMPORAL, {"R@10": 0.0}) for _ in range(3))]}
    result = harness.leave_out(uneven)
    assert result.leave_out["all"]["R@10"] == pytest.approx(0.25)  # (1 + 0 + 0 + 0) / 4
    assert result.leave_out[TEMPORAL]["R@10"] == pytest.approx(0.25)
    assert result.overfit() == []  # one setting: in-sample = leave-out

    with pytest.raises(ValueError, match="two folds"):
        harness.leave_out({"default": [("x", TEMPORAL, {"R@10": 1.0})]})


@pytest.mark.parametrize(("in_sample", "leave_out", "flagged"), [
    (0.80, 0.78, False),
    (0.83, 0.80, False),  # exactly 0.03 is within
    (0.8301, 0.80, True),
    (0.75, 0.80, False),  # leave-out ahead is no overfitting
    (0.90, 0.80, True),
])
def test_gap_flag(in_sample: float, leave_out: float, flagged: bool) -> None:
    assert harness.overfits(in_sample - leave_out) is flagged
    default, inside, out = (harness.summarize([(TEMPORAL, {"R@10": v})], ["R@10"])
                            for v in (leave_out, in_sample, leave_out))
    folds = harness.Folds(["R@10"], {"x": "default"}, {}, "tuned", default, inside, out)
    assert folds.overfit() == ([("all", "R@10"), (TEMPORAL, "R@10")] if flagged else [])


def test_fold_table_flags_and_names_each_fold() -> None:
    ev = harness.Eval("locomo", 10, [harness.Question("q", {"c:D1:1"}, g, f)
                                     for f, g, _ in SCORES["default"]],
                      str, {"R@10": lambda r, g: 0.0, "S@10": lambda r, g: 0.0}, [])
    ev.scores = {harness.GRID_PREFIX + k: [(g, v) for _, g, v in rows] for k, rows in SCORES.items()}
    ev.scores["default"] = ev.scores[harness.GRID_PREFIX + "default"]
    folds = harness.leave_out({k: ev.fold_rows(harness.GRID_PREFIX + k) for k in SCORES})
    text = harness.folds_table(ev, folds)
    assert "| in-sample | a | 0.6667 |" in text and "overfitting" in text and "+0.3333!" in text
    assert "| z | 2 | a | 0.0000 |" in text


# -- each setting asked once ---------------------------------------------------------------------


class _CountingHive:
    def __init__(self) -> None:
        self.calls = 0

    async def recall(self, query: str, **_: Any) -> list[dict[str, Any]]:
        self.calls += 1
        return [{"metadata": {"message_id": "c:D1:1"}}]


async def test_a_setting_is_asked_once_per_run() -> None:
    ev = harness.Eval("locomo", 10, [harness.Question("q1", {"c:D1:1"}, TEMPORAL, "c"),
                                     harness.Question("q2", {"c:D2:1"}, MULTI, "c")],
                      lambda r: r["metadata"]["message_id"],
                      {"S@10": lambda r, g: harness.session_recall_at(r, g, 10)}, [])
    hive = _CountingHive()
    modes = {"default": ("hybrid", harness.DEFAULT_SIGNALS),
             "+ supersession (= default)": ("hybrid", harness.DEFAULT_SIGNALS),
             **{harness.GRID_PREFIX + k: ("hybrid", v) for k, v in harness.GRID.items()}}
    await harness.ask(hive, ev, modes, "balanced")
    assert hive.calls == 2 * len(harness.GRID)  # default asked once for its three names
    assert ev.scores["default"] is ev.scores["grid default"] is ev.scores["+ supersession (= default)"]
    assert [v["S@10"] for _, v in ev.scores["default"]] == [1.0, 0.0]
    assert harness.conversation.DEFAULT_SIGNALS is harness.DEFAULT_SIGNALS  # restored
