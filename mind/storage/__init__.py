"""Storage: how a mind is one SQLite file.

Owns the connection (driver choice, sqlite-vec, pragmas, owner-only files), the async
``Database`` wrapper with its transactions, the schema and its ordered migrations (with the
keyword index's context column), applied ops and idempotency keys, and small SQL helpers.
Imports nothing else of ``mind/`` but errors, constants and the vocabulary; everything else in
``mind/`` reads and writes through it.
"""
