"""Contact sheets: every face of a design (or every back, chip, surface) in one image, for looking at.

Run ``python -m floorman.datasets.textures.contact_sheet OUT_DIR`` to write PNG sheets of all designs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from floorman.core.cards import full_deck
from floorman.core.chips import ChipSet
from floorman.datasets.scene import SurfaceKind, TableAppearance
from floorman.datasets.textures._common import Image
from floorman.datasets.textures.backs import N_BACK_DESIGNS, card_back
from floorman.datasets.textures.chips import chip_top, dealer_button_top
from floorman.datasets.textures.design import N_DECK_DESIGNS
from floorman.datasets.textures.faces import card_face
from floorman.datasets.textures.surfaces import table_surface

_BACKGROUND = (70, 110, 60)  # BGR: a felt-like green behind transparent corners


def grid(tiles: Sequence[Image], *, columns: int, gap: int = 8) -> Image:
    """Lay BGRA or BGR tiles out in a grid over a green background (tiles are composited by their alpha)."""
    if not tiles:
        raise ValueError("expected at least one tile, got none")
    th = max(t.shape[0] for t in tiles)
    tw = max(t.shape[1] for t in tiles)
    rows = (len(tiles) + columns - 1) // columns
    sheet = np.empty((rows * (th + gap) + gap, columns * (tw + gap) + gap, 3), dtype=np.uint8)
    sheet[...] = _BACKGROUND
    for i, tile in enumerate(tiles):
        y, x = gap + (i // columns) * (th + gap), gap + (i % columns) * (tw + gap)
        h, w = tile.shape[:2]
        roi = sheet[y : y + h, x : x + w]
        if tile.shape[2] == 4:
            alpha = tile[..., 3:].astype(np.float32) / 255.0
            roi[...] = (tile[..., :3] * alpha + roi * (1.0 - alpha) + 0.5).astype(np.uint8)
        else:
            roi[...] = tile
    return sheet


def contact_sheet(design: int, *, px_per_mm: float = 4.0) -> Image:
    """All 52 faces of `design` in a 13 x 4 grid (one suit per row: spades, hearts, diamonds, clubs)."""
    faces = [card_face(card, design=design, px_per_mm=px_per_mm) for card in full_deck()]
    return grid(faces, columns=13)


def backs_sheet(*, px_per_mm: float = 3.0) -> Image:
    """Every back pattern on a poker-size card."""
    return grid([card_back(b, size_mm=(63.5, 88.9), px_per_mm=px_per_mm) for b in range(N_BACK_DESIGNS)], columns=6)


def chips_sheet(*, px_per_mm: float = 6.0) -> Image:
    """The default chip set's tops and the dealer button."""
    chipset = ChipSet.default()
    tiles = [chip_top(d, diameter_mm=chipset.diameter_mm, px_per_mm=px_per_mm) for d in chipset.denominations]
    tiles.append(dealer_button_top(diameter_mm=60.0, px_per_mm=px_per_mm))
    return grid(tiles, columns=len(tiles))


SAMPLE_SURFACES: tuple[TableAppearance, ...] = (
    TableAppearance(surface=SurfaceKind.FELT, colour=(38, 110, 62), texture_seed=1),
    TableAppearance(surface=SurfaceKind.FELT, colour=(30, 70, 140), texture_seed=2),
    TableAppearance(surface=SurfaceKind.FELT, colour=(140, 28, 34), texture_seed=3),
    TableAppearance(surface=SurfaceKind.FELT, colour=(28, 28, 30), texture_seed=4),
    TableAppearance(surface=SurfaceKind.FELT, colour=(110, 112, 115), texture_seed=5),
    TableAppearance(surface=SurfaceKind.WOOD, colour=(214, 178, 132), texture_seed=6),
    TableAppearance(surface=SurfaceKind.WOOD, colour=(200, 160, 110), texture_seed=8),
    TableAppearance(surface=SurfaceKind.WOOD, colour=(110, 66, 38), texture_seed=7),
)


def surfaces_sheet(*, width_px: int = 600, height_px: int = 330, px_per_mm: float = 1.0) -> Image:
    """A sample of table surfaces: felts in green, blue, red, black, grey; light and dark wood."""
    tiles = [table_surface(a, width_px=width_px, height_px=height_px, px_per_mm=px_per_mm) for a in SAMPLE_SURFACES]
    return grid(tiles, columns=2)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    out = Path(args[0] if args else ".")
    out.mkdir(parents=True, exist_ok=True)
    for design in range(N_DECK_DESIGNS):
        cv2.imwrite(str(out / f"faces_{design}.png"), contact_sheet(design))
    cv2.imwrite(str(out / "backs.png"), backs_sheet())
    cv2.imwrite(str(out / "chips.png"), chips_sheet())
    cv2.imwrite(str(out / "surfaces.png"), surfaces_sheet())
    sys.stdout.write(f"wrote contact sheets to {out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
