"""The event contract between the edge and the rules: one discriminated union of pydantic models.

Every event carries `type`, `schema_version`, `table_id`, `camera_id`, `seq` (per publisher, gap-detectable),
`t` (capture time of the frame, seconds) and `frame` (frame number at the source). Events describe semantic
changes seen on the table, never raw boxes. Positions are in table millimetres.

Decode with `decode_event(payload)` (JSON bytes or str) or `EVENT_ADAPTER.validate_python(obj)`; encode with
`encode_event(event)`. Topics come from `event_topic(table_id, type)`.
"""

from __future__ import annotations

import enum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from floorman.core.cards import Card
from floorman.core.chips import ChipCount
from floorman.core.errors import SchemaError

SCHEMA_VERSION = 1
TOPIC_ROOT = "floorman"


class EventBase(BaseModel):
    """Fields common to every event."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = Field(default=1, description="Version of this schema.")
    table_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$", description="Table id.")
    camera_id: str = Field(default="sim", min_length=1, max_length=64, description="Camera (or edge) id.")
    seq: int = Field(ge=0, description="Sequence number per publisher, +1 per event: gaps are detectable.")
    t: float = Field(ge=0, description="Capture time of the frame the event comes from, in seconds.")
    frame: int = Field(ge=0, description="Frame number at the source.")


def _check_card(value: str) -> str:
    return str(Card.parse(value))


class ZoneCards(EventBase):
    """The cards in a zone changed: the full new content of the zone (face-up identities, face-down count)."""

    type: Literal["zone_cards"] = "zone_cards"
    zone: str = Field(description="Zone name: board, hole_<seat>, muck, deck, pot, bet_<seat>, stack_<seat>.")
    seat: int | None = Field(default=None, ge=1, le=10, description="Seat owning the zone, if any.")
    face_up: tuple[str, ...] = Field(default=(), description="Face-up cards, canonical strings ('10H').")
    face_down: int = Field(default=0, ge=0, description="Number of face-down cards.")
    confidence: float = Field(default=1.0, ge=0, le=1, description="Confidence of the reading.")

    @field_validator("face_up")
    @classmethod
    def _cards(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_check_card(v) for v in value)


class ZoneChips(EventBase):
    """The chips in a zone changed: the full new content of the zone."""

    type: Literal["zone_chips"] = "zone_chips"
    zone: str = Field(description="Zone name: stack_<seat>, bet_<seat>, pot, dealer_tray, ...")
    seat: int | None = Field(default=None, ge=1, le=10, description="Seat owning the zone, if any.")
    chips: tuple[ChipCount, ...] = Field(default=(), description="Chips by denomination.")
    value: int = Field(ge=0, description="Total value of the chips in the zone.")
    visible_fraction: float = Field(default=1.0, ge=0, le=1, description="Share of the chips seen uncovered.")
    confidence: float = Field(default=1.0, ge=0, le=1, description="Confidence of the reading.")


class ChipsPushed(EventBase):
    """Chips crossed a seat's bet line toward the centre, in one forward trip of the hand."""

    type: Literal["chips_pushed"] = "chips_pushed"
    seat: int = Field(ge=1, le=10, description="Seat that pushed.")
    trip: int = Field(ge=1, description="1 for the first forward trip of this action, 2 for the second, ...")
    chips: tuple[ChipCount, ...] = Field(min_length=1, description="The chips of this trip.")
    value: int = Field(gt=0, description="Total value of this trip.")
    t_start: float = Field(ge=0, description="When the hand left the stack with these chips.")
    landed_zone: str = Field(description="Zone where the chips came to rest (bet_<seat>, or pot if splashed).")
    confidence: float = Field(default=1.0, ge=0, le=1, description="How sure the chips' value is: the readings of "
                              "the stacks that changed in the zone they landed in, before and after (in the pot, "
                              "those of the stack they left too: only that pick-up makes them the seat's).")
    landed_confidence: float | None = Field(
        default=None, ge=0, le=1, description="How sure it is that the seat's chips came to rest in `landed_zone`, "
        "whatever their value: the counts of the stacks there holding chips of the values that came (in the pot, and "
        "no surer than the seat's pick-up unless its own hand laid them there). What a splash (B1) rests on. None: "
        "as `confidence`.")


class HandZone(EventBase):
    """A hand (or forearm) entered or left a zone."""

    type: Literal["hand_zone"] = "hand_zone"
    zone: str = Field(description="Zone name, or rail_edge.")
    seat: int | None = Field(default=None, ge=1, le=10, description="Seat the hand belongs to, if known.")
    action: Literal["enter", "leave"] = Field(description="Whether the hand entered or left the zone.")
    holding: Literal["nothing", "chips", "cards"] = Field(default="nothing", description="What the hand holds.")


class Tap(EventBase):
    """A player tapped the table in their seat zone (check, or fold when facing a bet)."""

    type: Literal["tap"] = "tap"
    seat: int = Field(ge=1, le=10, description="Seat that tapped.")
    count: int = Field(default=2, ge=1, description="Number of taps seen.")
    confidence: float = Field(default=1.0, ge=0, le=1, description="How sure it is that nothing of the seat moved "
                              "while its hand rested on its cards: the least sure chip reading of the seat that the "
                              "edge set aside to call it a tap (1.0: none).")


class RailDirection(enum.StrEnum):
    IN = "in"
    OUT = "out"


class RailCrossing(EventBase):
    """Objects came onto the table over the rail edge, or left it there (below table level)."""

    type: Literal["rail_crossing"] = "rail_crossing"
    direction: RailDirection = Field(description="'in' onto the table, 'out' off it.")
    seat: int | None = Field(default=None, ge=1, le=10, description="Seat nearest to the crossing.")
    objects: Literal["chips", "cards", "other"] = Field(description="What crossed.")
    chips: tuple[ChipCount, ...] = Field(default=(), description="The chips that crossed, if chips.")
    value: int = Field(default=0, ge=0, description="Value of the chips that crossed.")
    position: tuple[float, float] = Field(description="Where it crossed, table mm.")
    confidence: float = Field(default=1.0, ge=0, le=1, description="How sure the chips' value is: the readings of "
                              "the stacks that changed, before and after (a stack read the same where it lay "
                              "moved nothing, however unsure).")


class ButtonMoved(EventBase):
    """The dealer button now sits in front of `seat`."""

    type: Literal["button_moved"] = "button_moved"
    seat: int = Field(ge=1, le=10, description="Seat in front of which the button lies.")


class Shuffle(EventBase):
    """The dealer shuffled (the start of the next hand for club_000, rule 11-1)."""

    type: Literal["shuffle"] = "shuffle"


class CardDealt(EventBase):
    """A card went from the deck stub to a place: a seat (hole card), the muck (burn) or the board."""

    type: Literal["card_dealt"] = "card_dealt"
    to_zone: str = Field(description="Destination zone: hole_<seat>, muck (burn), board.")
    seat: int | None = Field(default=None, ge=1, le=10, description="Seat receiving it, for hole cards.")
    face_up: bool = Field(default=False, description="Whether it landed face up.")
    card: str | None = Field(default=None, description="Identity when it was seen face up.")

    @field_validator("card")
    @classmethod
    def _card(cls, value: str | None) -> str | None:
        return None if value is None else _check_card(value)


class BlindsLevel(EventBase):
    """The tournament clock's level (external feed)."""

    type: Literal["blinds_level"] = "blinds_level"
    level: int = Field(ge=1, description="Level number.")
    small_blind: int = Field(ge=0, description="Small blind.")
    big_blind: int = Field(gt=0, description="Big blind.")
    ante: int = Field(default=0, ge=0, description="Ante (or big-blind ante).")


class Declaration(EventBase):
    """A verbal declaration entered on a floor keypad or the dashboard."""

    type: Literal["declaration"] = "declaration"
    seat: int = Field(ge=1, le=10, description="Seat that declared.")
    declaration: Literal["call", "raise", "all-in", "check", "fold", "bet", "raise_to", "time",
                         "agree_rabbit"] = Field(description="What was declared.")
    amount: int | None = Field(default=None, ge=0, description="Amount for bet / raise_to.")


class CameraStatus(enum.StrEnum):
    ONLINE = "online"
    DEGRADED = "degraded"
    OFFLINE = "offline"


class Heartbeat(EventBase):
    """Periodic health of a camera and its edge."""

    type: Literal["heartbeat"] = "heartbeat"
    status: CameraStatus = Field(description="Camera status.")
    fps: float = Field(ge=0, description="Analysed frames per second over the last interval.")
    latency_ms: float = Field(ge=0, description="Capture-to-publish latency, median over the interval.")
    frames_dropped: int = Field(ge=0, description="Frames dropped since start.")
    epoch: int | None = Field(default=None, ge=0, description="The publisher's epoch: a new one whenever its seq "
                              "numbering restarts at 0 (its spool was lost), so that seq 0 is not a duplicate.")
    replay_endpoint: str | None = Field(default=None, max_length=256, description="Where the publisher answers "
                                        "replay requests (ZeroMQ connect endpoint), for consumers to find it.")
    replay_key: str | None = Field(default=None, min_length=40, max_length=40, description="The replay socket's "
                                   "CURVE public key (Z85), when the bus is encrypted.")


Event = Annotated[
    ZoneCards | ZoneChips | ChipsPushed | HandZone | Tap | RailCrossing | ButtonMoved | Shuffle | CardDealt
    | BlindsLevel | Declaration | Heartbeat,
    Field(discriminator="type"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
EVENT_TYPES: tuple[str, ...] = (
    "zone_cards", "zone_chips", "chips_pushed", "hand_zone", "tap", "rail_crossing", "button_moved",
    "shuffle", "card_dealt", "blinds_level", "declaration", "heartbeat",
)


def encode_event(event: EventBase) -> bytes:
    """JSON bytes of an event."""
    return event.model_dump_json().encode("utf-8")


def decode_event(payload: bytes | str) -> Event:
    """Validate a JSON payload into its event type; SchemaError names the field that is wrong."""
    try:
        return EVENT_ADAPTER.validate_json(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "union_tag_invalid":
            tag = first.get("ctx", {}).get("tag")
            raise SchemaError(f"invalid event: field 'type': unknown event type {tag!r}, "
                              f"expected one of {list(EVENT_TYPES)}") from None
        if first["type"] == "union_tag_not_found":
            raise SchemaError("invalid event: field 'type': missing") from None
        location = ".".join(str(p) for p in first["loc"]) or "<root>"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise SchemaError(f"invalid event: field '{location}': {message}") from None


def event_topic(table_id: str, event_type: str) -> str:
    """The ZeroMQ topic of an event: ``floorman/<table>/<type>``."""
    if event_type not in EVENT_TYPES and event_type != "alert":
        raise ValueError(f"unknown event type {event_type!r}, expected one of {EVENT_TYPES}")
    return f"{TOPIC_ROOT}/{table_id}/{event_type}"
