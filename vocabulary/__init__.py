"""The vocabulary every layer shares, written once (stdlib only, imports nothing of ours).

- :mod:`vocabulary.ids` — caller ids (session/GOP ids), workspace slugs, mind ids, op, host
  and job-id parts: full-match rules, so a trailing newline or a path trick never passes.
- :mod:`vocabulary.timestamps` — the one timestamp format, UTC ISO-8601 with milliseconds and
  ``Z`` (``2026-11-30T03:20:49.123Z``): format, parse, normalize.
- :mod:`vocabulary.enums` — the enumerations (frame types, importance, sources, scopes, entity
  types, awareness categories, harvest sources, …) as ``Literal`` types with their tuples.
- :mod:`vocabulary.limits` — the bounds of caller input and of job/op payloads.

``mind/`` and ``queue_schemas/`` import it (``queue_schemas/`` depends on nothing else but
pydantic), and so do the layers above; every other list of these values is derived from it.
Its checks raise plain ``ValueError``: ``mind/ids.py`` and ``mind/timeutil.py`` turn that
into the engine's :class:`mind.errors.InvalidIdError` / ``InvalidTimestampError``, pydantic
into its own validation error.
"""
