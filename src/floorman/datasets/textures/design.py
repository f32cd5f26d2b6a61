"""Deck designs: card size, corner indices, fonts, pip layout and colours of each face style."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from floorman.datasets.scene import BRIDGE_CARD_MM, POKER_CARD_MM
from floorman.datasets.textures._common import check_index
from floorman.datasets.textures.strokefont import FontStyle

Corner = Literal["tl", "tr", "bl", "br"]
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class DeckDesign:
    """How the faces of one deck look. Lengths in millimetres, colours RGB."""

    name: str
    size_mm: tuple[float, float]  # (width, height)
    corner_radius_mm: float
    index_height_mm: float  # rank glyph height
    index_corners: tuple[Corner, ...]
    index_margin_mm: tuple[float, float]  # (x, y) from the card edges to the index box
    index_width_mm: float  # width of the index column (fits "10")
    index_pip_mm: float  # height of the suit pip under the rank
    index_gap_mm: float  # gap between rank glyph and pip
    font: FontStyle  # stroke-font style of the rank glyphs
    font_weight: float  # stroke width / glyph height
    glyph_condense: float  # glyph width relative to the font's natural width
    pip_height_mm: float  # centre pips of number cards
    pip_columns: tuple[float, float]  # x of the left/right pip columns, fraction of the width
    pip_rows: tuple[float, float]  # y of the top/bottom pip rows, fraction of the height
    ace_height_mm: float
    paper_rgb: tuple[int, int, int]
    red_rgb: tuple[int, int, int]
    black_rgb: tuple[int, int, int]
    court_palette: tuple[tuple[int, int, int], ...]  # robe colours of the court figures (>= 4)
    court_split: Literal["horizontal", "diagonal"]
    court_frame_colour: tuple[int, int, int]

    @property
    def width_mm(self) -> float:
        return self.size_mm[0]

    @property
    def height_mm(self) -> float:
        return self.size_mm[1]

    def index_box(self) -> Box:
        """The top-left index box (rank glyph + suit pip) in mm, upright card frame."""
        x0, y0 = self.index_margin_mm
        return x0, y0, x0 + self.index_width_mm, y0 + self.index_height_mm + self.index_gap_mm + self.index_pip_mm

    def court_frame(self) -> Box:
        """The frame around the court figure, in mm: inside the index columns, top to bottom margin."""
        w, h = self.size_mm
        _, _, x1, _ = self.index_box()
        dx = x1 + 1.2
        dy = self.index_margin_mm[1] + 0.4
        return dx, dy, w - dx, h - dy


_CLASSIC_COURT = ((178, 34, 40), (28, 58, 150), (236, 186, 40), (24, 24, 28), (60, 130, 70))
_MODERN_COURT = ((200, 60, 50), (20, 110, 150), (240, 200, 70), (40, 40, 60), (140, 70, 150))

_DESIGNS: tuple[DeckDesign, ...] = (
    DeckDesign(
        name="classic-poker",
        size_mm=POKER_CARD_MM,
        corner_radius_mm=3.2,
        index_height_mm=8.0,
        index_corners=("tl", "br"),
        index_margin_mm=(2.9, 3.6),
        index_width_mm=8.4,
        index_pip_mm=5.4,
        index_gap_mm=0.9,
        font="slab",
        font_weight=0.15,
        glyph_condense=0.8,
        pip_height_mm=11.5,
        pip_columns=(0.29, 0.71),
        pip_rows=(0.195, 0.805),
        ace_height_mm=24.0,
        paper_rgb=(250, 249, 243),
        red_rgb=(198, 30, 42),
        black_rgb=(22, 22, 26),
        court_palette=_CLASSIC_COURT,
        court_split="horizontal",
        court_frame_colour=(28, 58, 150),
    ),
    DeckDesign(
        name="jumbo-four-corner",
        size_mm=POKER_CARD_MM,
        corner_radius_mm=3.0,
        index_height_mm=13.0,
        index_corners=("tl", "tr", "bl", "br"),
        index_margin_mm=(2.4, 2.8),
        index_width_mm=10.6,
        index_pip_mm=6.0,
        index_gap_mm=1.3,
        font="sans",
        font_weight=0.17,
        glyph_condense=0.76,
        pip_height_mm=9.0,
        pip_columns=(0.34, 0.66),
        pip_rows=(0.29, 0.71),
        ace_height_mm=17.0,
        paper_rgb=(246, 246, 241),
        red_rgb=(212, 34, 46),
        black_rgb=(14, 14, 16),
        court_palette=_MODERN_COURT,
        court_split="diagonal",
        court_frame_colour=(20, 20, 24),
    ),
    DeckDesign(
        name="bridge-casino",
        size_mm=BRIDGE_CARD_MM,
        corner_radius_mm=3.0,
        index_height_mm=7.4,
        index_corners=("tl", "br"),
        index_margin_mm=(2.5, 3.2),
        index_width_mm=7.6,
        index_pip_mm=4.9,
        index_gap_mm=0.8,
        font="slab",
        font_weight=0.13,
        glyph_condense=0.82,
        pip_height_mm=11.0,
        pip_columns=(0.3, 0.7),
        pip_rows=(0.2, 0.8),
        ace_height_mm=22.0,
        paper_rgb=(252, 250, 238),
        red_rgb=(186, 22, 50),
        black_rgb=(30, 28, 34),
        court_palette=_CLASSIC_COURT,
        court_split="diagonal",
        court_frame_colour=(186, 22, 50),
    ),
    DeckDesign(
        name="modern-poker",
        size_mm=POKER_CARD_MM,
        corner_radius_mm=3.4,
        index_height_mm=9.6,
        index_corners=("tl", "br"),
        index_margin_mm=(3.0, 3.4),
        index_width_mm=9.2,
        index_pip_mm=5.8,
        index_gap_mm=0.8,
        font="sans",
        font_weight=0.14,
        glyph_condense=0.78,
        pip_height_mm=11.5,
        pip_columns=(0.3, 0.7),
        pip_rows=(0.2, 0.8),
        ace_height_mm=28.0,
        paper_rgb=(244, 245, 248),
        red_rgb=(222, 40, 52),
        black_rgb=(10, 10, 12),
        court_palette=_MODERN_COURT,
        court_split="horizontal",
        court_frame_colour=(20, 110, 150),
    ),
    DeckDesign(
        name="bridge-jumbo-four-corner",
        size_mm=BRIDGE_CARD_MM,
        corner_radius_mm=2.8,
        index_height_mm=12.5,
        index_corners=("tl", "tr", "bl", "br"),
        index_margin_mm=(2.2, 2.6),
        index_width_mm=10.0,
        index_pip_mm=5.6,
        index_gap_mm=1.2,
        font="sans",
        font_weight=0.16,
        glyph_condense=0.74,
        pip_height_mm=9.5,
        pip_columns=(0.34, 0.66),
        pip_rows=(0.28, 0.72),
        ace_height_mm=18.0,
        paper_rgb=(249, 247, 238),
        red_rgb=(204, 28, 38),
        black_rgb=(18, 18, 22),
        court_palette=_CLASSIC_COURT,
        court_split="horizontal",
        court_frame_colour=(18, 18, 22),
    ),
    DeckDesign(
        name="slim-index-poker",
        size_mm=POKER_CARD_MM,
        corner_radius_mm=3.2,
        index_height_mm=7.2,
        index_corners=("tl", "br"),
        index_margin_mm=(3.2, 4.0),
        index_width_mm=7.4,
        index_pip_mm=5.0,
        index_gap_mm=1.0,
        font="slab",
        font_weight=0.105,
        glyph_condense=0.86,
        pip_height_mm=12.0,
        pip_columns=(0.28, 0.72),
        pip_rows=(0.19, 0.81),
        ace_height_mm=30.0,
        paper_rgb=(251, 250, 247),
        red_rgb=(190, 36, 44),
        black_rgb=(26, 26, 30),
        court_palette=_MODERN_COURT,
        court_split="diagonal",
        court_frame_colour=(190, 36, 44),
    ),
)

N_DECK_DESIGNS: int = len(_DESIGNS)


def deck_design(design: int) -> DeckDesign:
    """The face design number `design` (0 .. N_DECK_DESIGNS - 1)."""
    return _DESIGNS[check_index(design, what="a deck design", count=N_DECK_DESIGNS)]


def corner_box(box: Box, corner: Corner, size_mm: tuple[float, float]) -> Box:
    """`box` (given for the top-left corner) moved to `corner`; bottom corners are rotated 180 degrees."""
    w, h = size_mm
    x0, y0, x1, y1 = box
    if corner == "tl":
        return box
    if corner == "br":
        return w - x1, h - y1, w - x0, h - y0
    if corner == "tr":
        return w - x1, y0, w - x0, y1
    return x0, h - y1, x1, h - y0


def index_regions(design: int) -> tuple[Box, ...]:
    """The corner-index boxes (x0, y0, x1, y1) in mm on the upright card, one per index corner of `design`."""
    spec = deck_design(design)
    return tuple(corner_box(spec.index_box(), corner, spec.size_mm) for corner in spec.index_corners)
