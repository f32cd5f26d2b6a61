"""What one camera saw on the table in one frame: `TableState`, the contract between vision and edge.

Vision builds it from detections and recognisers (`floorman.vision`); the simulator builds the same shape from
its per-frame ground truth (`floorman.core.frame_truth.FrameTruth.table_state`). The edge derives events from a
sequence of them (`floorman.edge`). Positions are table millimetres; zones are `TableLayout` zone names
(`stack_<s>`, `bet_<s>`, `hole_<s>`, `pot`, `board`, `muck`, `deck`, `dealer_tray`, `rail_edge`), or None when
the object lies on no zone (or the camera is not calibrated). Boxes are in the frame's pixels, xyxy.

Plain frozen dataclasses (not pydantic): one is built per analysed frame, and the values come from our own
code, never from outside input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

Box = tuple[float, float, float, float]
PointMm = tuple[float, float]


@dataclass(frozen=True, slots=True)
class SeenCard:
    """One card (or a pile read as one object: the deck stub, a fanned pair)."""

    face_up: bool
    box: Box
    confidence: float
    position_mm: PointMm | None = None
    zone: str | None = None
    identity: str | None = None  # canonical card string ('10H') when face up and read
    identity_confidence: float = 0.0
    count: int = 1  # cards in the object: the deck stub holds many
    track_id: int | None = None


@dataclass(frozen=True, slots=True)
class SeenChips:
    """One chip stack (or a single chip): denominations bottom to top when read."""

    box: Box
    confidence: float
    position_mm: PointMm | None = None
    zone: str | None = None
    denominations: tuple[int, ...] = ()  # one value per chip, bottom to top; empty when unread
    denomination_confidence: float = 0.0  # of the values read
    count_confidence: float = 0.0  # of the number of chips (0: not measured, e.g. a camera straight above)
    visible_fraction: float = 1.0  # share of the stack seen uncovered
    track_id: int | None = None
    # log p(the camera's evidence | count) for counts 1, 2, ... up to a constant (empty when the count was not
    # measured): how several cameras' views of one stack combine (`floorman.vision.fusion`); not kept in states files
    count_log_likelihood: tuple[float, ...] = ()
    # where the camera's ray through the top disc's centre meets the felt, when the top's rim was seen (None else):
    # two cameras' rays cross at the stack's top, whose height is its count (`floorman.vision.fusion`)
    top_mm: PointMm | None = None

    @property
    def count(self) -> int:
        return len(self.denominations)

    @property
    def value(self) -> int:
        return sum(self.denominations)


@dataclass(frozen=True, slots=True)
class SeenHand:
    """A hand or forearm over the table."""

    box: Box
    confidence: float
    position_mm: PointMm | None = None
    zone: str | None = None  # zone under the hand's middle
    seat: int | None = None  # seat the arm comes from, when known
    holding: str = "nothing"  # 'nothing' | 'chips' | 'cards'
    track_id: int | None = None


@dataclass(frozen=True, slots=True)
class SeenButton:
    """The dealer button."""

    box: Box
    confidence: float
    position_mm: PointMm | None = None
    seat: int | None = None  # seat in front of which it lies
    track_id: int | None = None


@dataclass(frozen=True, slots=True)
class TableState:
    """Everything one camera saw in one frame."""

    frame: int
    t: float
    camera_id: str = "sim"
    cards: tuple[SeenCard, ...] = ()
    chips: tuple[SeenChips, ...] = ()
    hands: tuple[SeenHand, ...] = ()
    button: SeenButton | None = None
    size: tuple[int, int] | None = None  # frame width, height in px
    extra: dict[str, float] = field(default_factory=dict)  # per-frame measurements (timings, counts)

    def cards_in(self, zone: str) -> tuple[SeenCard, ...]:
        return tuple(c for c in self.cards if c.zone == zone)

    def chips_in(self, zone: str) -> tuple[SeenChips, ...]:
        return tuple(c for c in self.chips if c.zone == zone)

    def chip_value(self, zone: str) -> int:
        """Value of the chips at rest in `zone` (stacks whose denominations were read)."""
        return sum(stack.value for stack in self.chips if stack.zone == zone)

    def chip_counts(self, zone: str) -> dict[int, int]:
        """Chips by denomination in `zone`."""
        counts: Counter[int] = Counter()
        for stack in self.chips_in(zone):
            counts.update(stack.denominations)
        return dict(sorted(counts.items()))

    def zone_values(self) -> dict[str, int]:
        """Chip value per zone, for every zone holding chips."""
        return zone_totals((stack.zone, stack.value) for stack in self.chips)

    def hands_in(self, zone: str) -> tuple[SeenHand, ...]:
        return tuple(h for h in self.hands if h.zone == zone)


def zone_totals(values: Iterable[tuple[str | None, int]]) -> dict[str, int]:
    """Chip values summed per zone ((zone, value) pairs; None: in no zone), sorted by zone name: a table state's
    `zone_values`, and `floorman detect`'s from its readings."""
    totals: Counter[str] = Counter()
    for zone, value in values:
        if zone is not None:
            totals[zone] += value
    return dict(sorted(totals.items()))
