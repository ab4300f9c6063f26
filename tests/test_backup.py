"""``hive-mind backup`` and ``restore`` on real mind files: a backup taken while saves go on
holds every save acknowledged before it began and restores to a file that passes
``PRAGMA integrity_check`` and recall; a corrupted copy, a manifest naming paths outside the
layout, and existing minds (without ``--force``) are refused before anything is written;
fencing records are the restoring host's own."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from hive_mind.cli import main
from hive_mind.facade import HiveMind
from mind.storage.connection import driver
from mind.storage.fencing import Fence, read_file_fence
from tests.procs import ROOT

ENV = {"HIVE_MIND_EMBEDDING_PROVIDER": "test", "HF_HUB_OFFLINE": "1"}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_API_TOKEN",
                "HIVE_MIND_DATA_DIR", "HIVE_MIND_SHARDS", "HIVE_MIND_HOST_ID",
                "HIVE_MIND_SHARD_EPOCH"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_PROVIDER", "test")


async def _cli(*args: str) -> tuple[int, str]:
    """The CLI in its own process (so it runs beside this process's writer)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_MIND_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hive_mind", *args, cwd=ROOT, env={**env, **ENV},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await proc.communicate()
    return int(proc.returncode or 0), out.decode()


def _rows(path: Path, sql: str) -> list[Any]:
    conn = driver().connect(f"file:{path}?mode=ro", uri=True)  # the minds' own SQLite
    try:
        return list(conn.execute(sql).fetchall())
    finally:
        conn.close()


def _integrity(path: Path) -> str:
    return str(_rows(path, "PRAGMA integrity_check")[0][0])


def _contents(path: Path) -> set[str]:
    return {r[0] for r in _rows(path, "SELECT content FROM memory_frames")}


async def _seed(data: Path, tmp: Path, frames: int) -> None:
    chat = tmp / "seed.jsonl"
    chat.write_text("".join(json.dumps({
        "conversation_id": f"c{i // 50}", "message_id": str(i), "speaker": "Ann",
        "text": f"seeded memory number {i} about topic{i % 97}"}) + "\n" for i in range(frames)))
    async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
        await hm.run_harvest("universal", chat)
        await hm.create_workspace("Side", workspace_id="side")
        await hm.save("a side workspace memory", workspace="side")
        await hm.wait_idle()


@pytest.mark.integration  # the backup runs in a process of its own beside this one's writer
def test_backup_while_saves_continue(tmp_path: Path) -> None:
    data, out, copy = tmp_path / "data", tmp_path / "backup", tmp_path / "restored"

    async def scenario() -> tuple[list[str], int, int]:
        await _seed(data, tmp_path, 3_000)
        acked: list[str] = []
        stop = asyncio.Event()
        async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
            async def saver() -> None:
                n = 0
                while not stop.is_set():
                    text = f"concurrent save {n} marker{n}x"
                    await hm.save(text)
                    acked.append(text)  # acknowledged
                    n += 1

            task = asyncio.create_task(saver())
            while len(acked) < 20:
                await asyncio.sleep(0.01)
            before = len(acked)  # every save acknowledged before the backup began
            rc, output = await _cli("--data-dir", str(data), "backup", str(out))
            during = len(acked) - before
            await asyncio.sleep(0.2)
            stop.set()
            await task
        assert rc == 0, output
        return acked, before, during

    acked, before, during = asyncio.run(scenario())
    assert during > 0  # saves went on while the backup ran
    manifest = json.loads((out / "manifest.json").read_text())
    assert {f["file"] for f in manifest["files"]} == {
        "personal.mind", "workspaces/side/workspace.json", "workspaces/side/workspace.mind"}
    assert all(len(f["sha256"]) == 64 and f["size"] > 0 for f in manifest["files"])
    assert all(f["schema_version"] > 0 for f in manifest["files"] if f["mind"])

    assert main(["--data-dir", str(copy), "restore", str(out)]) == 0
    restored = copy / "personal.mind"
    assert _integrity(restored) == "ok"
    contents = _contents(restored)
    assert set(acked[:before]) <= contents  # acknowledged before the backup began: all there
    assert "Ann: seeded memory number 2999 about topic89" in contents
    assert _contents(copy / "workspaces" / "side" / "workspace.mind") == {
        "a side workspace memory"}

    async def recall() -> list[dict[str, Any]]:
        async with await HiveMind.open(data_dir=copy, embedding_provider="test") as hm:
            ws = await hm.list_workspaces()
            assert [w["id"] for w in ws["workspaces"]] == ["side"]
            found: list[dict[str, Any]] = await hm.recall(f"marker{before - 1}x", limit=3)
            return found

    assert recall_has(asyncio.run(recall()), acked[before - 1])


def recall_has(results: list[dict[str, Any]], text: str) -> bool:
    return any(r["content"] == text for r in results)


@pytest.fixture
def backed_up(tmp_path: Path) -> tuple[Path, Path]:
    data, out = tmp_path / "data", tmp_path / "backup"
    asyncio.run(_seed(data, tmp_path, 200))
    assert main(["--data-dir", str(data), "backup", str(out)]) == 0
    return data, out


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(args) != 0
    return capsys.readouterr().err


def _rewrite_manifest(out: Path, name: str, **changes: Any) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["file"] == name:
            entry.update(changes)
    (out / "manifest.json").write_text(json.dumps(manifest))


def test_corrupted_copies_are_refused(backed_up: tuple[Path, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    _, out = backed_up
    target = tmp_path / "target"
    mind = out / "personal.mind"
    original = mind.read_bytes()
    flipped = bytearray(original)
    flipped[len(flipped) // 2] ^= 0xFF
    mind.write_bytes(bytes(flipped))
    err = _refused(["--data-dir", str(target), "restore", str(out)], capsys)
    assert "personal.mind: SHA-256 does not match" in err and "nothing was written" in err
    assert not (target / "personal.mind").exists()
    assert not (target / "workspaces").exists()

    broken = bytearray(original)  # a corrupted page, the manifest made to agree with it
    broken[4096 * 2:4096 * 3] = b"\xa5" * 4096
    mind.write_bytes(bytes(broken))
    from mind.storage.backup import sha256_of

    _rewrite_manifest(out, "personal.mind", sha256=sha256_of(mind))
    err = _refused(["--data-dir", str(target), "restore", str(out)], capsys)
    assert "PRAGMA integrity_check" in err or "not a readable SQLite" in err
    assert not (target / "personal.mind").exists()

    mind.write_bytes(original)
    _rewrite_manifest(out, "personal.mind", sha256=sha256_of(mind))
    _rewrite_manifest(out, "workspaces/side/workspace.json", file="../../outside.json")
    err = _refused(["--data-dir", str(target), "restore", str(out)], capsys)
    assert "outside a data dir's layout" in err
    assert not (tmp_path / "outside.json").exists() and not target.exists()


def test_existing_minds_need_force(backed_up: tuple[Path, Path],
                                   capsys: pytest.CaptureFixture[str]) -> None:
    data, out = backed_up

    async def save_after() -> None:
        async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
            await hm.save("written after the backup")

    asyncio.run(save_after())
    err = _refused(["--data-dir", str(data), "restore", str(out)], capsys)
    assert "give --force" in err
    assert "written after the backup" in _contents(data / "personal.mind")
    assert main(["--data-dir", str(data), "restore", "--force", str(out)]) == 0
    contents = _contents(data / "personal.mind")
    assert "written after the backup" not in contents and len(contents) == 200
    assert _integrity(data / "personal.mind") == "ok"

    other = data.parent / "other"  # a workspace of that id registered here already
    assert main(["--data-dir", str(other), "workspace", "create", "Mine", "--id", "side"]) == 0
    err = _refused(["--data-dir", str(other), "restore", str(out)], capsys)
    assert "workspace:side" in err and not (other / "personal.mind").exists()
    assert json.loads((other / "workspaces" / "side" / "workspace.json").read_text())[
        "name"] == "Mine"


def test_fencing_records_are_the_restoring_hosts(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    data, out = tmp_path / "data", tmp_path / "backup"
    asyncio.run(_seed(data, tmp_path, 20))
    conn = driver().connect(str(data / "personal.mind"))  # as a shard host left it
    try:
        conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                         [("fence_shard", "shard-0"), ("fence_epoch", "7")])
        conn.commit()
    finally:
        conn.close()
    assert main(["--data-dir", str(data), "backup", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["files"][0]["fence"] == {"shard": "shard-0", "epoch": 7}

    plain = tmp_path / "plain"  # an unsharded host: no owner recorded
    assert main(["--data-dir", str(plain), "restore", str(out)]) == 0
    assert read_file_fence(plain / "personal.mind") is None

    monkeypatch.setenv("HIVE_MIND_SHARDS", "shard-1=http://127.0.0.1:9")
    monkeypatch.setenv("HIVE_MIND_HOST_ID", "shard-1")
    monkeypatch.setenv("HIVE_MIND_SHARD_EPOCH", "2")
    sharded = tmp_path / "sharded"
    assert main(["--data-dir", str(sharded), "restore", str(out)]) == 0
    assert read_file_fence(sharded / "personal.mind") == Fence("shard-1", 2)

    async def opens() -> int:  # the new host opens and writes it
        async with await HiveMind.open(data_dir=sharded, embedding_provider="test") as hm:
            await hm.save("written on the new host")
            return int((await hm.stats())["frames"])

    assert asyncio.run(opens()) == 21

    monkeypatch.setenv("HIVE_MIND_SHARDS",
                       ",".join(f"shard-{i}=http://127.0.0.1:{9 + i}" for i in range(8)))
    elsewhere = tmp_path / "elsewhere"
    err = _refused(["--data-dir", str(elsewhere), "restore", str(out)], capsys)
    assert "by the shard map" in err and not elsewhere.exists()


def test_deploy_runs_the_backup_against_the_hosts_data() -> None:
    yaml = pytest.importorskip("yaml")
    deploy = ROOT / "deploy"
    host = next(d for d in yaml.safe_load_all((deploy / "k8s" / "hive-mind.yaml").read_text())
                if d["kind"] == "StatefulSet")
    host_claim = (f"{host['spec']['volumeClaimTemplates'][0]['metadata']['name']}-"
                  f"{host['metadata']['name']}-0")
    cron = next(d for d in yaml.safe_load_all((deploy / "k8s" / "backup.yaml").read_text())
                if d["kind"] == "CronJob")
    spec = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in spec["volumes"]}
    (container,) = spec["containers"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    data_dir = {e["name"]: e["value"] for e in container["env"]}["HIVE_MIND_DATA_DIR"]
    assert claims[mounts[data_dir]] == host_claim  # the host's own volume, on its node
    (term,) = spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["labelSelector"]["matchLabels"].items() <= \
        host["spec"]["template"]["metadata"]["labels"].items()
    assert 'hive-mind backup "/backups/' in container["args"][0]
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    unit = (deploy / "hive-mind-backup.service").read_text()
    assert "hive-mind backup " in unit and "Type=oneshot" in unit
    assert "OnCalendar=" in (deploy / "hive-mind-backup.timer").read_text()
