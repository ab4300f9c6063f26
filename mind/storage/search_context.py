"""What the keyword index knows about a frame besides its own text: its source date in words and
the turn before it.

A chat turn such as "Yes, last Tuesday!" or "It had salads and homemade desserts" names neither
its topic nor its date. The FTS index therefore has a second column, ``search_context``, with

* the frame's source date (``created_at``) in words — "Monday 8 May 2023" — so the words of a
  date are searchable ("what happened in May 2023" matches turns of that month by keyword);
* the first :data:`CONTEXT_CHARS` characters of the previous turn of the same conversation (the
  question a turn answers), for every session except the daily bucket of loose saves.

The keyword lane weighs this column :data:`CONTEXT_WEIGHT` against the frame's own text (FTS5
``bm25(…, 1.0, 0.3)``): context helps a turn be found, it never outranks a turn that says it.
Measured on LoCoMo dev: keyword lane alone recall@10 0.613 → 0.702, the default recall 0.768 →
0.793 (bench/evals/recall_eval.py --steps); nothing is embedded twice.

The value is computed by SQLite from one expression (:func:`context_sql`), used by the migration
that back-fills existing files and by the triggers that keep it true when a turn is edited or
forgotten (the next turn's context then drops the old text: a forgotten turn leaves nothing
behind in the index). The frame writer builds the same value in Python (:func:`frame_context`)
from the batch it writes: the previous turn is nearly always in that batch, or the session's
last turn it looked up anyway for the next turn number, where a subquery per row cost an import
a third of its write rate; a test holds both to the same result.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from typing import Final

from mind.constants import DAILY_SAVE_SESSION_PREFIX

CONTEXT_CHARS: Final = 300
CONTEXT_WEIGHT: Final = 0.3

_WEEKDAYS: Final = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_MONTHS: Final = ("January", "February", "March", "April", "May", "June", "July", "August",
                  "September", "October", "November", "December")


def _case(expr: str, names: dict[str, str]) -> str:
    whens = " ".join(f"WHEN '{key}' THEN '{name}'" for key, name in names.items())
    return f"(CASE {expr} {whens} ELSE '' END)"


def date_words_sql(created: str) -> str:
    """SQL for "Monday 8 May 2023" of the timestamp expression ``created`` ('' if unparsable)."""
    weekday = _case(f"strftime('%w', {created})", {str(i): n for i, n in enumerate(_WEEKDAYS)})
    month = _case(f"strftime('%m', {created})",
                  {f"{i:02d}": n for i, n in enumerate(_MONTHS, start=1)})
    day = f"CAST(strftime('%d', {created}) AS INTEGER)"
    year = f"strftime('%Y', {created})"
    return (f"coalesce({weekday} || ' ' || {day} || ' ' || {month} || ' ' || {year}, '')")


def date_words(created: str) -> str:
    """"Monday 8 May 2023" of a stored timestamp (the date part of the house format), as
    :func:`date_words_sql` gives it ('' if unparsable)."""
    return _day_words(created[:10])


@lru_cache(maxsize=4096)
def _day_words(day_text: str) -> str:
    """By day, not by timestamp: an import's turns each have their own second, not their own
    day."""
    try:
        day = date.fromisoformat(day_text)
    except ValueError:
        return ""
    return f"{_WEEKDAYS[day.isoweekday() % 7]} {day.day} {_MONTHS[day.month - 1]} {day.year:04d}"


def frame_context(created: str, gop_id: str, previous: str | None) -> str:
    """A frame's ``search_context`` from its source time, its session and the content of the
    turn before it (None: there is none), as :func:`context_sql` computes it."""
    words = date_words(created)
    if previous is None or gop_id.startswith(DAILY_SAVE_SESSION_PREFIX):
        return words
    return f"{words}\n{previous[:CONTEXT_CHARS]}"


def context_sql(created: str, gop: str, t: str) -> str:
    """SQL for a frame's ``search_context`` given SQL expressions for its ``created_at``,
    ``gop_id`` and ``t`` (column names or parameters; never caller text)."""
    prefix = DAILY_SAVE_SESSION_PREFIX.replace("'", "''")
    previous = (f"(SELECT substr(p.content, 1, {CONTEXT_CHARS}) FROM memory_frames p "
                f"WHERE p.gop_id = {gop} AND p.t = {t} - 1)")
    return (f"({date_words_sql(created)} || CASE WHEN substr({gop}, 1, {len(prefix)}) = "
            f"'{prefix}' THEN '' ELSE coalesce(char(10) || {previous}, '') END)")


ROW_CONTEXT: Final = context_sql("memory_frames.created_at", "memory_frames.gop_id",
                                 "memory_frames.t")
