"""Forward batches by token count (mind/embeddings/batching.py): pure planning, tables of cases."""

from __future__ import annotations

import pytest

from mind.embeddings.batching import TOKEN_BUDGET, deal, pass_cost, plan_batches


def padded(batches: list[list[int]], lengths: list[int]) -> int:
    return sum(len(b) * max(lengths[i] for i in b) for b in batches)


@pytest.mark.parametrize("lengths", [
    [],
    [7],
    [5] * 70,
    [3, 200, 4, 180, 5, 150, 40, 41, 42],
    [256] * 9 + [2] * 9,
    [(i * 37) % 61 + 3 for i in range(300)],
])
def test_every_text_once_within_the_caps(lengths: list[int]) -> None:
    batches = plan_batches(lengths, max_batch=32)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert 1 <= len(batch) <= 32
        longest = max(lengths[i] for i in batch)
        assert len(batch) == 1 or len(batch) * longest <= TOKEN_BUDGET


def test_equal_lengths_fill_whole_batches() -> None:
    batches = plan_batches([10] * 70, max_batch=32)
    assert sorted(len(b) for b in batches) == [6, 32, 32]  # the shortest plan: three calls


def test_short_and_long_texts_are_not_padded_together() -> None:
    lengths = [8] * 16 + [120] * 8
    batches = plan_batches(lengths, max_batch=32)
    for batch in batches:
        assert len({lengths[i] for i in batch}) == 1
    assert padded(batches, lengths) == sum(lengths)


def test_fewer_padded_tokens_than_character_sorted_batches_of_32() -> None:
    lengths = [(i * 37) % 61 + 3 for i in range(256)]
    chunks = [list(range(k, min(k + 32, 256))) for k in range(0, 256, 32)]  # arrival order
    ours = plan_batches(lengths, max_batch=32)
    assert padded(ours, lengths) < 0.8 * padded(chunks, lengths)
    cost = sum(pass_cost(len(b), max(lengths[i] for i in b)) for b in ours)
    assert cost < sum(pass_cost(len(b), max(lengths[i] for i in b)) for b in chunks)


def test_a_single_text_longer_than_the_budget_runs_alone() -> None:
    lengths = [TOKEN_BUDGET * 2, TOKEN_BUDGET * 2, 4]
    batches = plan_batches(lengths, max_batch=32)
    assert sorted(map(sorted, batches)) == [[0], [1], [2]]


def test_max_batch_must_be_positive() -> None:
    with pytest.raises(ValueError):
        plan_batches([1, 2], max_batch=0)


@pytest.mark.parametrize("lanes", [1, 2, 3])
def test_deal_balances_the_lanes(lanes: int) -> None:
    lengths = [(i * 37) % 61 + 3 for i in range(300)]
    batches = plan_batches(lengths, max_batch=32)
    lane_of = deal(batches, lengths, lanes)
    assert len(lane_of) == len(batches) and set(lane_of) <= set(range(lanes))
    load = [0.0] * lanes
    for batch, lane in zip(batches, lane_of, strict=True):
        load[lane] += pass_cost(len(batch), max(lengths[i] for i in batch))
    biggest = max(pass_cost(len(b), max(lengths[i] for i in b)) for b in batches)
    assert max(load) - min(load) <= biggest
