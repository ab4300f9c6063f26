"""How many supersession pairs are right, on the synthetic chats of ``bench/conv_data.py``.

The chats plant project decisions (a project, one of its parts — database, CI, hosting, … — and
the value chosen) and later changes of them, among statements about the project's other parts
and the same values for other projects. A pair between two statements about projects is right
when both name the same project and the same part (in any of its surface forms: "DB",
"datastore"). The chats are imported through the product's path (``HiveMind.harvest``:
adapters → actor → cognify → supersession pairs), then the stored pairs are read.

    .venv/bin/python -m bench.evals.supersession_pairs [--show wrong|other]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sqlite3
import tempfile
from pathlib import Path

from bench import conv_data
from bench.evals.recall_eval import CONV, open_hive


def _parts(text: str) -> frozenset[str]:
    """The project parts a turn names, by their canonical form."""
    low = text.lower()
    return frozenset(forms.split("|")[0] for forms in conv_data.COMPONENT_FORMS
                     if any(re.search(rf"\b{re.escape(f.lower())}\b", low)
                            for f in forms.split("|")))


def _projects(text: str) -> frozenset[str]:
    return frozenset(p for p in conv_data.PROJECTS if re.search(rf"\b{p}\b", text))


def judge(mind: Path, show: str | None) -> tuple[int, int, int]:
    """(right, wrong, other) over the stored pairs; prints the pairs of ``show``."""
    right = wrong = other = 0
    with sqlite3.connect(mind) as db:
        rows = db.execute(
            "SELECT s.similarity, s.cue, o.content, n.content FROM frame_supersessions s "
            "JOIN memory_frames o ON o.id = s.superseded_id "
            "JOIN memory_frames n ON n.id = s.frame_id").fetchall()
    for sim, cue, old, new in rows:
        parts, projects = (_parts(old), _parts(new)), (_projects(old), _projects(new))
        if not all(parts) or not all(projects):
            other += 1
            kind = "other"
        elif parts[0] & parts[1] and projects[0] & projects[1]:
            right += 1
            kind = "right"
        else:
            wrong += 1
            kind = "wrong"
        if kind == show:
            print(f"{sim:.2f} {cue:8} {old[:70]!r} -> {new[:70]!r}")
    return right, wrong, other


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", choices=("right", "wrong", "other"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        hm = await open_hive(Path(tmp))
        try:
            await hm.harvest("universal", CONV / "messages.jsonl")
            await hm.wait_idle()
        finally:
            await hm.close()
        right, wrong, other = judge(Path(tmp) / "personal.mind", args.show)
    total = right + wrong
    print(f"pairs between statements about projects: {right} right, {wrong} wrong "
          f"(precision {right / max(total, 1):.3f}); {other} other pairs")


if __name__ == "__main__":
    asyncio.run(main())
