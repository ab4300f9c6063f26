"""Placement of minds on shards (actors/placement.py, issue #17): rendezvous hashing over a
static shard map — stable, balanced, and adding a shard moves only the minds it wins."""

from __future__ import annotations

from collections import Counter

import pytest

from actors.placement import ShardMap, ShardMapError, parse_shards, weight

MINDS = ["personal", *(f"workspace:w-{k:05d}" for k in range(6000))]


def shard_map(n: int) -> ShardMap:
    return parse_shards(",".join(f"shard-{k}=http://h{k}:8765" for k in range(n)))


def test_owners_are_stable_and_balanced() -> None:
    three = shard_map(3)
    owners = Counter(three.owner(m) for m in MINDS)
    assert set(owners) == {"shard-0", "shard-1", "shard-2"}
    assert all(abs(count - len(MINDS) / 3) < 0.05 * len(MINDS) for count in owners.values())
    again = parse_shards("shard-2=http://h2:8765, shard-0=http://h0:8765,shard-1=http://h1:8765")
    assert all(again.owner(m) == three.owner(m) for m in MINDS)  # order does not matter
    assert weight("shard-0", "personal") == weight("shard-0", "personal")
    assert three.url("personal") == three.shards[three.owner("personal")]


def test_adding_a_shard_moves_about_one_in_n_and_only_to_it() -> None:
    three, four = shard_map(3), shard_map(4)
    moved = three.moved(four, MINDS)
    assert {there for _, there in moved.values()} == {"shard-3"}
    assert abs(len(moved) - len(MINDS) / 4) < 0.03 * len(MINDS)
    removed = four.moved(three, MINDS)  # removing it sends back exactly those
    assert set(removed) == set(moved)


@pytest.mark.parametrize("text", [
    "", " , ", "shard-0", "node-0=http://h:1", "shard-01=http://h:1",
    "shard-0=ftp://h:1", "shard-0=http://user:pw@h:1", "shard-0=http://h:1/?x=1",
    "shard-0=http://h:1,shard-0=http://g:1", "shard-0=http://",
])
def test_malformed_maps_are_refused_with_the_fix(text: str) -> None:
    with pytest.raises(ShardMapError):
        parse_shards(text)


def test_an_invalid_mind_id_is_refused() -> None:
    with pytest.raises(ValueError):
        shard_map(2).owner("workspace:../../etc")


def test_settings_give_a_shard_host_its_fence(tmp_path: object) -> None:
    from hive_mind.settings import Settings
    from mind.errors import ConfigurationError
    from mind.storage.fencing import Fence

    assert Settings(data_dir=tmp_path).runtime_config().fence is None  # unsharded
    sharded = Settings(data_dir=tmp_path, shards="shard-0=http://a:1,shard-1=http://b:1",
                       host_id="shard-1", shard_epoch=3)
    assert sharded.runtime_config().fence == Fence("shard-1", 3)
    assert sharded.shard_map() is not None
    with pytest.raises(ConfigurationError, match="HIVE_MIND_HOST_ID"):
        Settings(data_dir=tmp_path, shards="shard-0=http://a:1", host_id="local").fence()
    with pytest.raises(ConfigurationError, match="HIVE_MIND_SHARDS"):
        Settings(data_dir=tmp_path, shards="shard-0=ftp://a:1", host_id="shard-0").fence()
