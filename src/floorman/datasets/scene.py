"""The scene model: everything on (and above) one table at one instant, in table millimetres.

A `Scene` is what the renderer draws and what the scenario engine animates. Every object has an `id` unique
within the scene (> 0); the renderer writes these ids into its instance mask, so labels can be checked
against pixels. Coordinates follow `floorman.core.layout`: origin at the table centre, x along the long axis,
y along the short axis, z up from the felt, all in millimetres.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace

import numpy as np

from floorman.core.cards import Card, Rank
from floorman.core.chips import ChipSet
from floorman.core.layout import TableLayout

POKER_CARD_MM = (63.5, 88.9)
BRIDGE_CARD_MM = (57.0, 89.0)
CARD_THICKNESS_MM = 0.3


class DetectorClass(enum.IntEnum):
    """The detector's classes, in the order of the YOLO dataset's `names`."""

    CARD_FACE = 0
    CARD_BACK = 1
    CHIP = 2
    DEALER_BUTTON = 3
    HAND = 4

    @property
    def label(self) -> str:
        return self.name.lower()


class SurfaceKind(enum.StrEnum):
    FELT = "felt"
    WOOD = "wood"


@dataclass(frozen=True, slots=True)
class RackRow:
    """One channel of a chip rack: `count` chips standing on edge, body and edge-spot colours (RGB)."""

    colour: tuple[int, int, int]
    spot_colour: tuple[int, int, int]
    count: int  # 0..20


@dataclass(frozen=True, slots=True)
class ChipRack:
    """A chip rack (a dealer's tray, or the box of a home game) seen from above: channels of chips on edge.

    Part of the static table (`TableAppearance.racks`): it never moves, and it is not a detector object —
    the chips in it are the bank, not in play. `x`, `y` is its centre in table mm; the channels run across
    the rack's long side (`angle_deg` rotates that side from the table's x axis).
    """

    x: float
    y: float
    rows: tuple[RackRow, ...]
    angle_deg: float = 0.0
    tray_rgb: tuple[int, int, int] = (34, 34, 38)


@dataclass(frozen=True, slots=True)
class TableAppearance:
    """How the table looks: surface material and colour, printed bet line, rail, chip racks on it."""

    surface: SurfaceKind = SurfaceKind.FELT
    colour: tuple[int, int, int] = (38, 110, 62)  # RGB
    texture_seed: int = 0
    bet_line_colour: tuple[int, int, int] = (215, 205, 160)
    bet_line_visible: bool = True
    rail_colour: tuple[int, int, int] = (30, 24, 22)
    logo: bool = False
    racks: tuple[ChipRack, ...] = ()
    markers: bool = False  # the layout's ArUco calibration markers laid on the felt


@dataclass(frozen=True, slots=True)
class GlareSpot:
    x: float  # mm
    y: float  # mm
    radius: float  # mm
    strength: float  # 0..1 added whiteness at the centre


@dataclass(frozen=True, slots=True)
class Lighting:
    """Scene lighting: colour temperature, overall level, a linear gradient, glare spots, shadows."""

    colour_temperature_k: float = 4500.0
    intensity: float = 1.0
    gradient_direction_deg: float = 0.0
    gradient_strength: float = 0.0  # 0 = flat; 0.3 = 30 % darker on one side
    glare: tuple[GlareSpot, ...] = ()
    shadow_strength: float = 0.35  # 0 = no object shadows
    shadow_offset_mm: tuple[float, float] = (6.0, 8.0)  # shadow shift per 10 mm of object height


@dataclass(frozen=True, slots=True)
class CardObject:
    """One card lying on the table (or held a little above it: z > 0)."""

    id: int
    card: Card
    face_up: bool
    x: float
    y: float
    angle_deg: float = 0.0
    z: float = 0.0
    design: int = 0  # deck design index (face style)
    back: int = 0  # back pattern index
    size_mm: tuple[float, float] = POKER_CARD_MM
    figure: Rank | None = None  # a court card's figure: None its own; another court rank for a deck not ours
    suit_shape: int = 0  # its suit symbols' shape (`textures.suits`): 0 ours, 1..N_SUIT_SHAPES another deck's


@dataclass(frozen=True, slots=True)
class DeckStub:
    """The undealt cards: a face-down block of `count` cards (class card_back)."""

    id: int
    x: float
    y: float
    count: int = 30
    angle_deg: float = 0.0
    back: int = 0
    size_mm: tuple[float, float] = POKER_CARD_MM


@dataclass(frozen=True, slots=True)
class ChipStack:
    """A vertical stack of chips, `chips` listed bottom to top by denomination value (count = len)."""

    id: int
    x: float
    y: float
    chips: tuple[int, ...]
    z: float = 0.0
    angle_deg: float = 0.0  # the bottom chip's turn (edge-spot phase); those above: `render_objects.chip_turns_deg`
    lean_mm: tuple[float, float] = (0.0, 0.0)  # top offset relative to the bottom (a sloppy stack)

    @property
    def count(self) -> int:
        return len(self.chips)

    @property
    def value(self) -> int:
        return sum(self.chips)


@dataclass(frozen=True, slots=True)
class DealerButton:
    id: int
    x: float
    y: float
    diameter_mm: float = 60.0
    thickness_mm: float = 10.0
    angle_deg: float = 0.0


class HandPose(enum.StrEnum):
    FLAT = "flat"  # open hand, fingers extended (pushing, tapping)
    FIST = "fist"  # closed
    CUPPED = "cupped"  # holding chips or cards


@dataclass(frozen=True, slots=True)
class HandObject:
    """A forearm and hand reaching over the table from beyond the rail.

    `elbow` and `wrist` are 3-D points in mm (z above the felt); the hand extends `hand_length_mm` past the
    wrist along the forearm's direction. Only the part over the image is drawn; the detector's `hand` box
    covers the palm, fingers and thumb (the arm is drawn, not labelled).
    """

    id: int
    elbow: tuple[float, float, float]
    wrist: tuple[float, float, float]
    seat: int | None = None
    pose: HandPose = HandPose.FLAT
    width_mm: float = 85.0
    hand_length_mm: float = 180.0
    skin_rgb: tuple[int, int, int] = (224, 172, 140)
    sleeve_rgb: tuple[int, int, int] | None = (40, 50, 90)  # None = bare forearm


@dataclass(slots=True)
class Scene:
    """One table at one instant."""

    layout: TableLayout
    chipset: ChipSet
    appearance: TableAppearance = field(default_factory=TableAppearance)
    lighting: Lighting = field(default_factory=Lighting)
    cards: list[CardObject] = field(default_factory=list)
    decks: list[DeckStub] = field(default_factory=list)
    chips: list[ChipStack] = field(default_factory=list)
    buttons: list[DealerButton] = field(default_factory=list)
    hands: list[HandObject] = field(default_factory=list)

    def object_ids(self) -> list[int]:
        groups: list[list[CardObject] | list[DeckStub] | list[ChipStack] | list[DealerButton] | list[HandObject]]
        groups = [self.cards, self.decks, self.chips, self.buttons, self.hands]
        return [obj.id for group in groups for obj in group]

    def check_ids(self) -> None:
        """Raise ValueError if an id is not positive or is used twice."""
        ids = self.object_ids()
        bad = [i for i in ids if i <= 0]
        if bad:
            raise ValueError(f"scene: object ids must be > 0, got {bad[:5]}")
        counts: dict[int, int] = {}
        for i in ids:
            counts[i] = counts.get(i, 0) + 1
        dup = sorted(i for i, n in counts.items() if n > 1)
        if dup:
            raise ValueError(f"scene: object ids must be unique, got duplicates {dup[:5]}")


COURT_FIGURE_MODES = ("own", "shifted", "any")
COURTS = (Rank.JACK, Rank.QUEEN, Rank.KING)


def with_court_figures(scene: Scene, mode: str, rng: np.random.Generator | None = None) -> Scene:
    """`scene` with its court cards' figures drawn as `mode` says: "own" (each its own), "shifted" (a jack
    shows the queen's figure, a queen the king's, a king the jack's: a test of whether a reader goes by the
    corner index, the one cue every deck shares) or "any" (a court rank drawn by `rng` for each card: figures
    that tell nothing of the rank, for training)."""
    if mode not in COURT_FIGURE_MODES:
        raise ValueError(f"court figures: expected one of {', '.join(COURT_FIGURE_MODES)}, got {mode!r}")
    if mode == "own":
        return scene
    if mode == "any" and rng is None:
        raise ValueError("court figures 'any' draws each figure: expected a random generator")
    cards = []
    for card in scene.cards:
        if card.card.rank.is_court:
            if mode == "shifted" or rng is None:
                figure = COURTS[(COURTS.index(card.card.rank) + 1) % len(COURTS)]
            else:
                figure = COURTS[int(rng.integers(len(COURTS)))]
            card = replace(card, figure=figure)
        cards.append(card)
    return replace(scene, cards=cards)


SUIT_SHAPE_MODES = ("own", "any")
N_SUIT_SHAPES = 64
"""Suit shape variants other than our deck's (`textures.suits.suit_shape_params(1 .. N_SUIT_SHAPES)`)."""


def check_suit_shapes(mode: str) -> str:
    """`mode` if it is one of `SUIT_SHAPE_MODES`, else a ValueError naming it."""
    if mode not in SUIT_SHAPE_MODES:
        raise ValueError(f"suit shapes: expected one of {', '.join(SUIT_SHAPE_MODES)}, got {mode!r}")
    return mode


def with_suit_shapes(scene: Scene, mode: str, rng: np.random.Generator | None = None) -> Scene:
    """`scene` with its cards' suit symbols drawn as `mode` says: "own" (ours) or "any" (one of the
    `N_SUIT_SHAPES` other decks' shapes drawn by `rng` for each card: real decks' spades and clubs are not ours,
    and a reader that learnt our shapes reads another deck's spade as a club)."""
    if check_suit_shapes(mode) == "own":
        return scene
    if rng is None:
        raise ValueError("suit shapes 'any' draws each card's shape: expected a random generator")
    shapes = rng.integers(1, N_SUIT_SHAPES + 1, size=len(scene.cards))
    return replace(scene, cards=[replace(card, suit_shape=int(k)) for card, k in zip(scene.cards, shapes, strict=True)])
