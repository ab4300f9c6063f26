"""The ``hive-mind`` command line (process commands; the full CLI arrives with issue #6)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from hive_mind.settings import Settings, load_settings
from mind.errors import HiveMindError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hive-mind", description="Persistent memory for AI agents.")
    p.add_argument("--data-dir", help="where mind files live (env HIVE_MIND_DATA_DIR)")
    p.add_argument("--redis-url", help="Redis for distributed mode (env HIVE_MIND_REDIS_URL)")
    p.add_argument("--host-id", help="the mind host's queue id (env HIVE_MIND_HOST_ID)")
    p.add_argument("--embedding-provider", help="auto|inprocess|ollama|openai|voyage|litellm|test")
    p.add_argument("--log-level", default="INFO")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("worker", help="run a stateless embedding/cognify worker")
    w.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    s = sub.add_parser("serve", help="run the mind host (owns mind files, applies write-ops)")
    s.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    st = sub.add_parser("status", help="embedder, queue depth, index lag, dead letters")
    st.add_argument("--json", action="store_true", help="machine-readable output")
    st.add_argument("--no-probe", action="store_true", help="do not load the embedder")
    return p


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(
        data_dir=args.data_dir, redis_url=args.redis_url, host_id=args.host_id,
        embedding_provider=args.embedding_provider,
    )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from hive_mind.processes import configure_logging

    configure_logging(args.log_level)
    try:
        settings = _settings(args)
        if args.command == "worker":
            from hive_mind.processes import run_cognify_worker

            run_cognify_worker(settings, burst=args.burst)
        elif args.command == "serve":
            from hive_mind.processes import run_mind_host

            run_mind_host(settings, burst=args.burst)
        elif args.command == "status":
            from hive_mind.status import collect

            report: dict[str, Any] = asyncio.run(collect(settings, probe=not args.no_probe))
            print(json.dumps(report, indent=2) if args.json else _human(report))
        return 0
    except HiveMindError as exc:
        print(f"hive-mind: error: {exc}", file=sys.stderr)
        return 2


def _human(report: dict[str, Any]) -> str:
    e, q = report["embedder"], report["queue"]
    lines = [
        f"mode: {report['mode']}",
        f"embedder: {e['provider']} {e.get('model') or ''} dims={e.get('dimensions')} "
        f"degraded={e.get('degraded')}",
        f"queue: depth={q.get('depth')} in_progress={q.get('in_progress')} "
        f"dead_letters={q.get('dead_letters')}",
    ]
    lines += [
        f"mind {m['id']}: frames={m['frames']} pending_index={m['pending_index']} "
        f"vectors={m['vectors']} entities={m['entities']}"
        for m in report["minds"]
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
