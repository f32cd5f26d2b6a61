"""The card readers' patch geometry and warp, shared by their training recipe (`floorman.models.cards_data`) and
their reader (`floorman.vision.cards_cnn`): a card's outline (TL, TR, BR, BL of the upright card) warped so that a
part of the card, `PatchSpec.region`, fills the patch (`warp_patch`, the one warp both cut with). The card
classifier's patch is the whole card; the index reader's is the card's top-left corner, where every deck prints its
index (the bottom-right one is the same corner of the card turned 180 degrees: its outline's corners taken two on).

The spec travels in the model's metadata (`floorman_patch`: "width,height,supersample" and, for a part of the card,
`floorman_region`: "x0,y0,x1,y1"), so training and reading cut patches alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import FloatArray

Region = tuple[float, float, float, float]  # x0, y0, x1, y1 as fractions of the upright card's width and height
WHOLE_CARD: Region = (0.0, 0.0, 1.0, 1.0)
# Every index of the simulator's decks lies within 2.4-13.0 mm of the left side and 2.8-23.1 mm of the top
# (`textures.design`), a standard deck's within ~3-11 mm and ~3-22 mm; the margin takes an outline a few per cent off.
INDEX_REGION: Region = (0.0, 0.0, 0.3, 0.3)


@dataclass(frozen=True)
class PatchSpec:
    """A reader's input: the card's `region` warped upright (portrait) to `width` x `height` pixels, through a warp
    to `supersample` times that size then area-averaged down (no aliasing from large cards)."""

    width: int = 64
    height: int = 88
    supersample: int = 2
    region: Region = WHOLE_CARD

    def __post_init__(self) -> None:
        x0, y0, x1, y1 = self.region
        if self.width < 8 or self.height < 8 or self.supersample < 1 or not (0.0 <= x0 < x1 <= 1.0
                                                                            and 0.0 <= y0 < y1 <= 1.0):
            raise ValueError(f"expected a patch of at least 8x8 px, supersample >= 1 and a region within the card "
                             f"(0 <= x0 < x1 <= 1, 0 <= y0 < y1 <= 1), got {self}")

    @property
    def whole_card(self) -> bool:
        return self.region == WHOLE_CARD

    @property
    def tag(self) -> str:
        """What a cache file's name says of the patch: "" for the card classifier's, else its size and region."""
        if self == PatchSpec():
            return ""
        return f"_p{self.width}x{self.height}x{self.supersample}" + (
            "" if self.whole_card else "_r" + "-".join(f"{v:g}" for v in self.region))

    def target(self) -> FloatArray:
        """Where the card's corners (TL, TR, BR, BL) go in the supersampled warp (`width` x `height` times
        `supersample`): the region's corners on the warp's."""
        x0, y0, x1, y1 = self.region
        big_w, big_h = self.width * self.supersample, self.height * self.supersample
        xs = (np.array([0.0, 1.0]) - x0) / (x1 - x0) * big_w
        ys = (np.array([0.0, 1.0]) - y0) / (y1 - y0) * big_h
        return np.array([[xs[0], ys[0]], [xs[1], ys[0]], [xs[1], ys[1]], [xs[0], ys[1]]], dtype=np.float64)

    def encode_region(self) -> str:
        return ",".join(f"{v:g}" for v in self.region)


def decode_region(text: str) -> Region:
    """A region from the model's metadata ("x0,y0,x1,y1")."""
    try:
        x0, y0, x1, y1 = (float(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"expected a card region 'x0,y0,x1,y1', got {text!r}") from None
    return x0, y0, x1, y1


def warp_patch(image: npt.NDArray[np.uint8], corners: npt.NDArray[np.floating[Any]], *,
               spec: PatchSpec) -> npt.NDArray[np.uint8]:
    """The part `spec.region` of the card with outline `corners` (TL, TR, BR, BL of a portrait card) in the BGR
    `image` warped to the patch (spec.height, spec.width, 3)."""
    matrix = cv2.getPerspectiveTransform(np.asarray(corners, dtype=np.float32), spec.target().astype(np.float32))
    big_w, big_h = spec.width * spec.supersample, spec.height * spec.supersample
    big = cv2.warpPerspective(image, matrix, (big_w, big_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(cv2.resize(big, (spec.width, spec.height), interpolation=cv2.INTER_AREA), dtype=np.uint8)
