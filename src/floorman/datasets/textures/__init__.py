"""Procedural textures for the table simulator: card faces and backs, chips, dealer button, table surfaces.

Everything is drawn with OpenCV and numpy (no image files, no downloaded fonts) and cached where it is
reused (faces, backs, chips are read-only arrays shared between callers). Colours are BGR(A) uint8 as
OpenCV expects; alpha is 255 inside an object's outline and 0 outside.
`python -m floorman.datasets.textures.contact_sheet OUT_DIR` writes PNG contact sheets for inspection.
"""

from floorman.datasets.textures.backs import BACK_DESIGNS, N_BACK_DESIGNS, BackDesign, back_design, card_back
from floorman.datasets.textures.chips import chip_edge_colours, chip_top, dealer_button_top
from floorman.datasets.textures.design import N_DECK_DESIGNS, DeckDesign, deck_design, index_regions
from floorman.datasets.textures.faces import card_face, pip_positions
from floorman.datasets.textures.surfaces import table_surface

__all__ = [
    "BACK_DESIGNS",
    "N_BACK_DESIGNS",
    "N_DECK_DESIGNS",
    "BackDesign",
    "DeckDesign",
    "back_design",
    "card_back",
    "card_face",
    "chip_edge_colours",
    "chip_top",
    "dealer_button_top",
    "deck_design",
    "index_regions",
    "pip_positions",
    "table_surface",
]
