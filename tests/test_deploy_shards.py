"""Issue #17 "Deploy": the sharded deployment files (``deploy/k8s/sharded.yaml`` and the
``sharded`` profile of ``deploy/compose.yaml``), parsed and checked for what a working cluster
needs: one shard map for every process that parses and names exactly the shard hosts, one
volume and one shard id per host, a gateway, the token required. Nothing here runs Docker or
Kubernetes."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from actors.placement import parse_shards
from hive_mind.settings import Settings
from mind.errors import ConfigurationError
from tests.procs import ROOT

yaml = pytest.importorskip("yaml")
DEPLOY = ROOT / "deploy"
POD_INDEX_LABEL = "metadata.labels['apps.kubernetes.io/pod-index']"
SINGLE_HOST_STACK = {"redis", "host", "worker"}  # what a plain `docker compose up` starts


# --- Kubernetes -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def k8s() -> dict[tuple[str, str], dict[str, Any]]:
    docs = yaml.safe_load_all((DEPLOY / "k8s" / "sharded.yaml").read_text(encoding="utf-8"))
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for doc in docs:
        key = (doc["kind"], doc["metadata"]["name"])
        assert key not in out, key
        out[key] = doc
    return out


def pod_spec(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["spec"]["template"]["spec"]


def containers(k8s: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for doc in k8s.values() if doc["kind"] in ("StatefulSet", "Deployment")
            for c in pod_spec(doc)["containers"]]


def hive_containers(k8s: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in containers(k8s) if c["image"].startswith("hive-mind:")]


def env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


def only(k8s: dict[tuple[str, str], dict[str, Any]], kind: str) -> dict[str, Any]:
    docs = [doc for (k, _), doc in k8s.items() if k == kind]
    assert len(docs) == 1, (kind, len(docs))
    return docs[0]


def shard_map_text(k8s: dict[tuple[str, str], dict[str, Any]]) -> str:
    refs = {(r["name"], r["key"]) for c in hive_containers(k8s)
            for r in [env(c)["HIVE_MIND_SHARDS"]["valueFrom"]["configMapKeyRef"]]}
    assert len(refs) == 1, refs
    ((name, key),) = refs
    return str(k8s[("ConfigMap", name)]["data"][key])


def test_k8s_every_hive_mind_container_reads_one_shard_map(k8s: dict) -> None:
    assert {c["name"] for c in hive_containers(k8s)} == {"shard", "gateway", "worker"}
    for container in hive_containers(k8s):
        assert set(env(container)["HIVE_MIND_SHARDS"]["valueFrom"]) == {"configMapKeyRef"}
    parse_shards(shard_map_text(k8s))  # one ConfigMap key, and it parses


def test_k8s_shard_statefulset_one_volume_per_pod(k8s: dict) -> None:
    sts = only(k8s, "StatefulSet")
    assert sts["spec"]["replicas"] == 3
    assert sts["spec"]["podManagementPolicy"] == "Parallel"
    claims = {t["metadata"]["name"] for t in sts["spec"]["volumeClaimTemplates"]}
    assert claims
    (container,) = pod_spec(sts)["containers"]
    data_dir = env(container)["HIVE_MIND_DATA_DIR"]["value"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert mounts[data_dir] in claims  # the data dir is the pod's own claim
    assert "volumes" not in pod_spec(sts)  # nothing shared between the shard pods
    labels = sts["spec"]["template"]["metadata"]["labels"]
    assert sts["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_k8s_shard_map_names_exactly_the_statefulset_pods(k8s: dict) -> None:
    sts = only(k8s, "StatefulSet")
    replicas, service_name = sts["spec"]["replicas"], sts["spec"]["serviceName"]
    namespace = sts["metadata"]["namespace"]
    assert {doc["metadata"].get("namespace") for doc in k8s.values()} == {namespace}
    headless = k8s[("Service", service_name)]
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["selector"].items() <= \
        sts["spec"]["template"]["metadata"]["labels"].items()
    (container,) = pod_spec(sts)["containers"]
    port = container["ports"][0]["containerPort"]
    shards = parse_shards(shard_map_text(k8s)).shards
    assert set(shards) == {f"shard-{k}" for k in range(replicas)}
    for k in range(replicas):  # pod <sts>-<k> behind the headless Service serves shard-k
        parts = urlsplit(shards[f"shard-{k}"])
        assert parts.hostname == (f"{sts['metadata']['name']}-{k}.{service_name}."
                                  f"{namespace}.svc.cluster.local")
        assert parts.port == port
        assert headless["spec"]["ports"][0]["port"] == port


def test_k8s_shard_id_is_derived_from_the_pod_ordinal(k8s: dict) -> None:
    sts = only(k8s, "StatefulSet")
    (container,) = pod_spec(sts)["containers"]
    names = [e["name"] for e in container["env"]]
    variables = env(container)
    host_id = variables["HIVE_MIND_HOST_ID"]["value"]
    assert host_id == "shard-$(POD_INDEX)"
    assert variables["POD_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"] == POD_INDEX_LABEL
    assert names.index("POD_INDEX") < names.index("HIVE_MIND_HOST_ID")  # k8s expands earlier
    text = shard_map_text(k8s)
    for k in range(sts["spec"]["replicas"]):  # each pod is a valid, distinct shard host
        fence = Settings(shards=text, host_id=host_id.replace("$(POD_INDEX)", str(k))).fence()
        assert fence is not None and fence.shard == f"shard-{k}"
    with pytest.raises(ConfigurationError):  # no pod-index label: refuses, serves no shard
        Settings(shards=text, host_id=host_id.replace("$(POD_INDEX)", "")).fence()
    epoch = variables["HIVE_MIND_SHARD_EPOCH"]["valueFrom"]["configMapKeyRef"]
    assert Settings(shard_epoch=k8s[("ConfigMap", epoch["name"])]["data"][epoch["key"]]
                    ).cluster.shard_epoch >= 0


def test_k8s_gateway_is_stateless_serve_gateway(k8s: dict) -> None:
    gateway = k8s[("Deployment", "hive-mind-gateway")]
    assert gateway["spec"]["replicas"] >= 2
    (container,) = pod_spec(gateway)["containers"]
    assert container["args"][:2] == ["serve", "--gateway"]
    assert "volumes" not in pod_spec(gateway) and "volumeMounts" not in container
    service = k8s[("Service", "hive-mind-gateway")]
    assert service["spec"].get("type", "ClusterIP") == "ClusterIP"
    assert service["spec"]["selector"].items() <= \
        gateway["spec"]["template"]["metadata"]["labels"].items()


def test_k8s_every_server_requires_the_token(k8s: dict) -> None:
    servers = [c for c in hive_containers(k8s) if c["args"][0] == "serve"]
    assert {c["name"] for c in servers} == {"shard", "gateway"}
    for container in servers:
        assert "0.0.0.0" in container["args"]
        assert "--insecure-no-auth" not in container["args"]
        assert "HIVE_MIND_API_INSECURE_NO_AUTH" not in env(container)
        ref = env(container)["HIVE_MIND_API_TOKEN"]["valueFrom"]["secretKeyRef"]
        assert ref["optional"] is False
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_k8s_pods_are_hardened_and_reach_their_redis(k8s: dict) -> None:
    for container in containers(k8s):
        assert container["resources"]["requests"], container["name"]
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
        assert "livenessProbe" in container, container["name"]
    for container in hive_containers(k8s):
        redis = urlsplit(env(container)["HIVE_MIND_REDIS_URL"]["value"])
        assert ("Service", redis.hostname) in k8s
        assert k8s[("Service", redis.hostname)]["spec"]["ports"][0]["port"] == redis.port


# --- docker compose ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def compose() -> dict[str, dict[str, Any]]:
    loaded = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    volumes = set(loaded.get("volumes") or {})
    for service in loaded["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            assert source.startswith(".") or source in volumes, volume  # declared named volumes
    return dict(loaded["services"])


def sharded(compose: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: s for name, s in compose.items() if "sharded" in s.get("profiles", [])}


def compose_shards(compose: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: s for name, s in sharded(compose).items()
            if s["command"][0] == "serve" and "--gateway" not in s["command"]}


def test_compose_sharded_profile_has_three_shards_with_own_volume_and_id(compose: dict) -> None:
    shards = compose_shards(compose)
    assert len(shards) == 3
    data = [next(v.split(":")[0] for v in s["volumes"] if v.split(":")[1] == "/data")
            for s in shards.values()]
    assert len(set(data)) == len(shards)
    other = {v.split(":")[0] for name, s in compose.items() if name not in shards
             for v in s.get("volumes", [])}
    assert not set(data) & other  # no other service mounts a shard's volume
    ids = [s["environment"]["HIVE_MIND_HOST_ID"] for s in shards.values()]
    assert len(set(ids)) == len(shards)
    for service in shards.values():
        assert "0.0.0.0" in service["command"]
        assert service["environment"]["HIVE_MIND_API_TOKEN"].startswith("${HIVE_MIND_API_TOKEN:?")


def test_compose_shard_map_names_exactly_the_shard_services(compose: dict) -> None:
    maps = {s["environment"]["HIVE_MIND_SHARDS"] for s in sharded(compose).values()}
    assert len(maps) == 1  # shards, gateway and workers: one map
    (text,) = maps
    shards = parse_shards(text).shards
    services = compose_shards(compose)
    by_id = {s["environment"]["HIVE_MIND_HOST_ID"]: name for name, s in services.items()}
    assert set(shards) == set(by_id)
    for shard_id, url in shards.items():
        parts = urlsplit(url)
        assert parts.hostname == by_id[shard_id]  # the compose service name resolves to it
        assert str(parts.port) == services[by_id[shard_id]]["command"][-1]
        fence = Settings(shards=text, host_id=shard_id).fence()
        assert fence is not None and fence.shard == shard_id


def test_compose_gateway_and_workers(compose: dict) -> None:
    profile = sharded(compose)
    gateways = [s for s in profile.values() if "--gateway" in s["command"]]
    assert len(gateways) == 1
    (gateway,) = gateways
    assert gateway["command"][:2] == ["serve", "--gateway"] and "0.0.0.0" in gateway["command"]
    assert gateway["environment"]["HIVE_MIND_API_TOKEN"].startswith("${HIVE_MIND_API_TOKEN:?")
    assert gateway["ports"] and all(p.startswith("127.0.0.1:") for p in gateway["ports"])
    assert not gateway.get("volumes")
    workers = [s for s in profile.values() if s["command"][0] == "worker"]
    assert sum(s.get("deploy", {}).get("replicas", 1) for s in workers) >= 2
    # the unsharded worker must never take a sharded job: the profile has its own Redis db
    urls = {s["environment"]["HIVE_MIND_REDIS_URL"] for s in profile.values()}
    assert len(urls) == 1
    assert not urls & {compose[n]["environment"]["HIVE_MIND_REDIS_URL"] for n in ("host", "worker")}


def test_compose_profiles_only_add(compose: dict) -> None:
    default = {name for name, s in compose.items() if "profiles" not in s}
    assert default == SINGLE_HOST_STACK
    for name in default:  # a plain `up` needs nothing from a profile
        assert set(compose[name].get("depends_on", [])) <= default, name
    for name, service in sharded(compose).items():
        assert service["profiles"] == ["sharded"], name
        assert set(service.get("depends_on", [])) <= default | set(sharded(compose)), name
    # the sharded profile runs next to the single host: no published port taken twice
    running = [s for s in compose.values() if "profiles" not in s or "sharded" in s["profiles"]]
    published = [p.rsplit(":", 1)[0] for s in running for p in s.get("ports", [])]
    assert len(published) == len(set(published)), published
