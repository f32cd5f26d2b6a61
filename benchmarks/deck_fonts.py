"""Render a test set whose cards are printed with another deck's type: suit symbols and/or rank glyphs taken
from TrueType fonts instead of the simulator's own shapes, to measure the card reader on a deck it never saw.

    .venv/bin/python benchmarks/deck_fonts.py [--suit-font F.ttf] [--rank-font F.ttf [--slab-font F.ttf]]
        -- datasets render --count 60 --seed 99721 --out DIR --val-fraction 0 --no-progress
    .venv/bin/python benchmarks/cards.py measure --data DIR --min-width 20

Everything after `--` is a `floorman` command line, run with the simulator's textures patched in this process:
- `--suit-font`: every suit symbol of our deck (pips, corner indices, the aces, the courts' pips) is the font's
  glyph for that suit (U+2660 spade, U+2665 heart, U+2666 diamond, U+2663 club), its outline traced at 400 px;
  other decks' shapes (`--suit-shapes any`) are left as they are.
- `--rank-font` / `--slab-font`: the rank glyphs of the corner indices (and the court frames' letters) drawn
  in that font, for the decks whose index font is our sans / slab stroke font (`--slab-font` defaults to
  `--rank-font`).

Fonts that ship with matplotlib (in the venv): `.venv/lib/python3*/site-packages/matplotlib/mpl-data/fonts/ttf/`
DejaVuSans.ttf, DejaVuSerif-Bold.ttf, STIXGeneral.ttf, cmss10.ttf. Session 18 (dev seeds 99721 mixed, 99702
home; cards >= 20 px): with DejaVu Sans's suit symbols the classifier then shipped read 84.3 % of number
cards and aces (spades read as clubs: DejaVu's spade has a thin flared stem), with STIX General's 96.4 %,
against 98.5 % with our own.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

import floorman.datasets.textures.glyphs as glyphs
import floorman.datasets.textures.suits as suits
from floorman.cli import main as floorman_main
from floorman.core.cards import Suit

SUIT_CHARS = {Suit.SPADES: "\u2660", Suit.HEARTS: "\u2665", Suit.DIAMONDS: "\u2666", Suit.CLUBS: "\u2663"}
_TRACE_PX = 400


def _ink(font_path: Path, char: str) -> np.ndarray:
    """The glyph `char` of the font drawn about `_TRACE_PX` px tall, cropped to its ink (uint8 coverage)."""
    font = ImageFont.truetype(str(font_path), _TRACE_PX)
    canvas = Image.new("L", (2 * _TRACE_PX, 2 * _TRACE_PX), 0)
    ImageDraw.Draw(canvas).text((_TRACE_PX // 4, _TRACE_PX // 4), char, font=font, fill=255)
    ink = np.asarray(canvas)
    ys, xs = np.nonzero(ink > 127)
    if ys.size == 0:
        raise SystemExit(f"{font_path}: no glyph for {char!r} (U+{ord(char):04X})")
    return np.ascontiguousarray(ink[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])


def glyph_polygons(font_path: Path, suit: Suit) -> tuple[np.ndarray, ...]:
    """The outer contours of the font's glyph for `suit` in the unit coordinates of `suits.suit_polygons`
    (height 1, centred, y down)."""
    ink = (_ink(font_path, SUIT_CHARS[suit]) > 127).astype(np.uint8)
    contours, _ = cv2.findContours(ink, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    height = float(ink.shape[0])
    centre = np.array([ink.shape[1] / 2.0, ink.shape[0] / 2.0])
    polygons = []
    for contour in contours:
        points = contour[:, 0, :].astype(np.float64) + 0.5
        points = points[:: max(1, len(points) // 240)]
        polygons.append((points - centre) / height)
    return tuple(polygons)


def patch_suits(font_path: Path) -> None:
    own = suits.suit_polygons
    traced = {suit: glyph_polygons(font_path, suit) for suit in Suit}

    @functools.cache
    def suit_polygons(suit: Suit, shape: int = 0) -> tuple[np.ndarray, ...]:
        return traced[suit] if shape == 0 else own(suit, shape)

    suits.suit_polygons = suit_polygons
    for suit in Suit:  # our deck's aspects (the index pip's size) become the font's
        points = np.concatenate(traced[suit])
        suits.SUIT_ASPECT[suit] = float(np.ptp(points[:, 0]))
    suits.suit_aspect.cache_clear()


def patch_ranks(fonts: dict[str, Path]) -> None:
    own = glyphs._master.__wrapped__

    @functools.lru_cache(maxsize=256)
    def master(char: str, font: glyphs.Font, weight: float) -> np.ndarray:
        if not isinstance(font, str):
            return own(char, font, weight)
        ink = _ink(fonts[font], char)
        height = glyphs._DRAW_HEIGHT
        width = max(1, round(ink.shape[1] * height / ink.shape[0]))
        return np.ascontiguousarray(cv2.resize(ink, (width, height), interpolation=cv2.INTER_AREA))

    glyphs._master = master  # type: ignore[assignment]
    glyphs.glyph_mask.cache_clear()


def main(argv: list[str]) -> int:
    if "--" not in argv:
        raise SystemExit("usage: deck_fonts.py [--suit-font F] [--rank-font F [--slab-font F]] -- FLOORMAN ARGS")
    split = argv.index("--")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suit-font", type=Path, help="TrueType font whose suit glyphs replace our suit symbols")
    parser.add_argument("--rank-font", type=Path, help="TrueType font for the index ranks of our sans decks")
    parser.add_argument("--slab-font", type=Path, help="... of our slab decks (default: --rank-font)")
    args = parser.parse_args(argv[:split])
    for path in (args.suit_font, args.rank_font, args.slab_font):
        if path is not None and not path.is_file():
            raise SystemExit(f"no font file {path}")
    if args.suit_font is not None:
        patch_suits(args.suit_font)
    if args.rank_font is not None:
        patch_ranks({"sans": args.rank_font, "slab": args.slab_font or args.rank_font})
    return floorman_main(argv[split + 1 :])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
