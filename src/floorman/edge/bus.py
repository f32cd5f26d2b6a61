"""What the event bus's pieces share: endpoint checks, publisher keys and the replay request/response models.

The bus: edges connect PUB sockets to the broker's XSUB frontend, consumers connect SUB sockets to its XPUB
backend and subscribe by the prefix ``floorman/<table>/``. Each edge numbers its events (`seq`), keeps them in
a SQLite spool and answers `ReplayRequest`s on a ROUTER socket; a subscriber that sees a gap asks for it.
Messages are multipart ``[topic, payload]`` with JSON payloads, never pickle.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from floorman.core.events import TOPIC_ROOT, Event

ENDPOINT_HELP = "tcp://HOST:PORT, ipc://PATH or inproc://NAME"
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}"
                       r"[A-Za-z0-9])?)*$")
MAX_REPLAY_EVENTS = 1000


def _check_host(host: str, *, bind: bool) -> bool:
    if host == "*":
        return bind
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            return ipaddress.ip_address(host).version == 6
        except ValueError:
            return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return bool(_HOSTNAME.match(host))
    return True


def _check_port(port: str, *, bind: bool) -> bool:
    if port == "*":
        return bind
    return port.isdigit() and 1 <= int(port) <= 65535


def check_endpoint(value: str, *, bind: bool, name: str | None = None) -> str:
    """`value` if it is a ZeroMQ endpoint we accept, else ValueError naming `name` and the value.

    Bind endpoints may use ``*`` for every interface (``tcp://*:5550``) or for a free port
    (``tcp://127.0.0.1:*``); connect endpoints need a real host and port.
    """
    scheme, sep, rest = value.partition("://")
    ok = False
    if sep and scheme == "tcp":
        host, colon, port = rest.rpartition(":")
        ok = bool(colon) and _check_host(host, bind=bind) and _check_port(port, bind=bind)
    elif sep and scheme in {"ipc", "inproc"}:
        ok = bool(rest) and not any(c.isspace() for c in rest)
    if not ok:
        how = "a bind endpoint" if bind else "a connect endpoint"
        star = " ('*' allowed for the host or port)" if bind else ""
        where = f"{name}: " if name else ""
        raise ValueError(f"{where}expected {how} {ENDPOINT_HELP}{star}, got {value!r}")
    return value


def topic_prefix(table_id: str | None = None) -> bytes:
    """The subscription prefix: every table (``floorman/``) or one table (``floorman/<table>/``)."""
    if table_id is None:
        return f"{TOPIC_ROOT}/".encode()
    if not table_id or "/" in table_id:
        raise ValueError(f"expected a table id without '/', got {table_id!r}")
    return f"{TOPIC_ROOT}/{table_id}/".encode()


@dataclass(frozen=True, order=True)
class PublisherKey:
    """One publisher on the bus: its own `seq` numbering."""

    table_id: str
    camera_id: str

    def __str__(self) -> str:
        return f"{self.table_id}/{self.camera_id}"


@dataclass(frozen=True)
class ReplayTarget:
    """Where a publisher answers replay requests, and its CURVE public key (Z85) when the bus is encrypted."""

    endpoint: str
    server_key: bytes | None = None

    def __post_init__(self) -> None:
        check_endpoint(self.endpoint, bind=False, name="replay endpoint")
        if self.server_key is not None and len(self.server_key) != 40:
            raise ValueError(f"expected a 40-character Z85 CURVE public key, got {len(self.server_key)} bytes")


class ReplayRequest(BaseModel):
    """Ask a publisher for its events `first_seq`..`last_seq` (inclusive)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    request_id: int = Field(ge=0, description="Echoed in the response, so late answers can be told apart.")
    table_id: str = Field(min_length=1, max_length=64, description="Table of the publisher.")
    camera_id: str = Field(min_length=1, max_length=64, description="Camera of the publisher.")
    first_seq: int = Field(ge=0, description="First sequence number wanted.")
    last_seq: int = Field(ge=0, description="Last sequence number wanted (inclusive).")


class ReplayResponse(BaseModel):
    """The events of a replay request that the spool still holds, in seq order (at most MAX_REPLAY_EVENTS)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    request_id: int = Field(ge=0, description="The request's id.")
    table_id: str = Field(description="Table of the publisher.")
    camera_id: str = Field(description="Camera of the publisher.")
    oldest_seq: int | None = Field(description="Oldest seq still in the spool; older ones are gone for good.")
    newest_seq: int | None = Field(description="Newest seq published.")
    events: tuple[Event, ...] = Field(default=(), description="The events found, in seq order.")
    error: str | None = Field(default=None, description="Why the request could not be answered, if it could not.")


class EvidenceRequest(BaseModel):
    """Ask an edge for the JPEG of frame `frame` (or the nearest one it still holds), on its replay socket."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["evidence"] = Field(default="evidence", description="Tells it apart from a ReplayRequest.")
    request_id: int = Field(ge=0, description="Echoed in the response.")
    table_id: str = Field(min_length=1, max_length=64, description="Table of the edge.")
    camera_id: str = Field(min_length=1, max_length=64, description="Camera of the edge.")
    frame: int = Field(ge=0, description="Frame number wanted.")
    nearest: bool = Field(default=True, description="Answer the nearest frame held when that one is not.")


class EvidenceResponse(BaseModel):
    """The header of an evidence answer; the JPEG bytes follow in the next message frame (empty when none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    request_id: int = Field(ge=0, description="The request's id.")
    table_id: str = Field(description="Table of the edge.")
    camera_id: str = Field(description="Camera of the edge.")
    frame: int | None = Field(default=None, description="Frame number of the JPEG sent, None when none is.")
    t: float | None = Field(default=None, description="Capture time of that frame.")
    size: int = Field(default=0, ge=0, description="Bytes of the JPEG.")
    oldest_frame: int | None = Field(default=None, description="Oldest frame the buffer holds.")
    newest_frame: int | None = Field(default=None, description="Newest frame the buffer holds.")
    error: str | None = Field(default=None, description="Why no frame is sent, if none is.")
