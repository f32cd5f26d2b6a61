"""The edge's spool: every event it published, in SQLite, so that a consumer can ask again for what it missed.

Bounded: each publisher keeps its newest `max_events` events; older ones are deleted and counted in
`SpoolStats.dropped` (a replay request for them gets nothing, and the response says which is the oldest kept).
Thread-safe: the publishing thread appends while the replay thread reads.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from floorman.core.errors import ConfigError
from floorman.edge.bus import PublisherKey

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    table_id TEXT NOT NULL,
    camera_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (table_id, camera_id, seq)
) WITHOUT ROWID
"""


@dataclass
class SpoolStats:
    """Counters of a spool since it was opened."""

    appended: int = 0
    dropped: int = 0


@dataclass(frozen=True)
class SpooledEvent:
    """One stored event: its seq and its JSON payload."""

    seq: int
    payload: bytes


class Spool:
    """SQLite store of published events, per publisher, bounded to the newest `max_events`."""

    def __init__(self, path: str | Path = ":memory:", *, max_events: int = 100_000) -> None:
        if max_events < 1:
            raise ValueError(f"expected max_events >= 1, got {max_events}")
        self.path = str(path)
        self.max_events = max_events
        self.stats = SpoolStats()
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open the spool database: {exc}", source=self.path) from None

    def append(self, key: PublisherKey, *, seq: int, payload: bytes) -> None:
        """Store one event; past the bound, delete the oldest of this publisher and count them as dropped."""
        with self._lock:
            self._db.execute("BEGIN")
            self._db.execute("INSERT OR REPLACE INTO events VALUES (?, ?, ?, ?)",
                             (key.table_id, key.camera_id, seq, payload))
            cursor = self._db.execute(
                "DELETE FROM events WHERE table_id = ? AND camera_id = ? AND seq <= ?",
                (key.table_id, key.camera_id, seq - self.max_events))
            self._db.execute("COMMIT")
        self.stats.appended += 1
        if cursor.rowcount > 0:
            if self.stats.dropped == 0:
                logger.warning("spool %s is full (%s events per publisher): dropping the oldest events",
                               self.path, self.max_events)
            self.stats.dropped += cursor.rowcount

    def bounds(self, key: PublisherKey) -> tuple[int, int] | None:
        """(oldest seq, newest seq) stored for a publisher, or None when it has none."""
        with self._lock:
            row = self._db.execute("SELECT MIN(seq), MAX(seq) FROM events WHERE table_id = ? AND camera_id = ?",
                                   (key.table_id, key.camera_id)).fetchone()
        if row is None or row[0] is None:
            return None
        return int(row[0]), int(row[1])

    def read(self, key: PublisherKey, *, first_seq: int, last_seq: int, limit: int) -> list[SpooledEvent]:
        """The stored events with first_seq <= seq <= last_seq, in seq order, at most `limit`."""
        if first_seq > last_seq:
            raise ValueError(f"expected first_seq <= last_seq, got {first_seq} > {last_seq}")
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, payload FROM events WHERE table_id = ? AND camera_id = ? AND seq BETWEEN ? AND ? "
                "ORDER BY seq LIMIT ?", (key.table_id, key.camera_id, first_seq, last_seq, limit)).fetchall()
        return [SpooledEvent(seq=int(seq), payload=bytes(payload)) for seq, payload in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
