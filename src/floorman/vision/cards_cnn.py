"""The card classifier (a small CNN trained on rendered cards, `floorman models train-cards`) run with ONNX
Runtime: the card's outline warped upright to a small patch, read in both orientations (the index sits in two
opposite corners), rank and suit probabilities averaged over them; and, when shipped beside it, the index reader
(`floorman models train-cards --patch index`): the card's top-left corner at twice the classifier's pixels per mm,
read at both index corners (the card's and the card's turned 180 degrees), whose rank and suit probabilities are
multiplied into the classifier's (`fuse`), each corner's counted by how sure the reader is that an index shows
there (a corner under a chip or another card says little).

The patch geometry comes from each model's metadata (`floorman_patch`: "width,height,supersample", and for a part
of the card `floorman_region`: "x0,y0,x1,y1"; `core.card_patch`), written by the training recipe, so a retrained
model with another patch needs no change here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from floorman.core.card_patch import WHOLE_CARD, PatchSpec, decode_region, warp_patch
from floorman.core.errors import ConfigError
from floorman.core.geometry import short_side
from floorman.vision.onnx_session import cpu_session

log = logging.getLogger(__name__)

MODEL_PATH = Path(__file__).resolve().parent / "data" / "card_classifier.onnx"
INDEX_PATH = MODEL_PATH.with_name("card_index.onnx")
PATCH_KEY = "floorman_patch"
REGION_KEY = "floorman_region"
CLASSES_KEY = "floorman_classes"
INDEX_RANK_WEIGHT = 1.0  # the index reader's rank probabilities enter the product to this power (times its face)
INDEX_SUIT_WEIGHT = 1.0  # and its suit probabilities to this one
INDEX_MIN_PX = 40.0  # outlines narrower than this are read by the classifier alone (their index a few pixels tall)

FloatArray = npt.NDArray[np.float32]
Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class CnnReading:
    """One outline read by the classifier: the most likely card, its probability (rank times suit, times the
    probability that the patch is a card face at all), and that face probability alone."""

    card: str
    confidence: float
    face: float


@dataclass(frozen=True)
class Probabilities:
    """A reader's output on N outlines: rank (N, 13) and suit (N, 4) probabilities, and face (N,): that the patch
    is a card face (the classifier) or shows an index (the index reader)."""

    rank: FloatArray
    suit: FloatArray
    face: FloatArray


class PatchModel:
    """An ONNX Runtime session over one exported reader (`floorman models train-cards`), with its patch."""

    def __init__(self, path: Path, *, threads: int = 1, what: str = "card classifier") -> None:
        self.session, meta = cpu_session(path, threads=threads, what=what, recipe="floorman models train-cards")
        try:
            width, height, supersample = (int(v) for v in meta[PATCH_KEY].split(","))
            ranks, suits = (part.split(",") for part in meta[CLASSES_KEY].split(";"))
            region = decode_region(meta[REGION_KEY]) if REGION_KEY in meta else WHOLE_CARD
            self.spec = PatchSpec(width=width, height=height, supersample=supersample, region=region)
        except (KeyError, ValueError):
            raise ConfigError(f"expected {PATCH_KEY} and {CLASSES_KEY} metadata (and a valid {REGION_KEY}, if any) in "
                              f"{path}, got {sorted(meta)}", field="metadata") from None
        self.ranks, self.suits = tuple(ranks), tuple(suits)

    def patch(self, image: Image, corners: FloatArray) -> Image:
        """The part of the card with outline `corners` (TL, TR, BR, BL of a portrait card) warped to the input."""
        return warp_patch(image, corners, spec=self.spec)

    def probabilities(self, image: Image, outlines: list[FloatArray]) -> Probabilities:
        """Each outline read in one batch. The whole card: upright and turned 180 degrees, averaged. A corner of it:
        the corner and the opposite one (the card turned 180 degrees), averaged as sure as each is that an index
        shows there; its face the surer of the two."""
        n = len(outlines)
        if self.spec.whole_card:
            patches = [self.patch(image, corners) for corners in outlines]
            both = [p for patch in patches for p in (patch, patch[::-1, ::-1])]
        else:
            both = [self.patch(image, np.roll(corners, -turn, axis=0)) for corners in outlines for turn in (0, 2)]
        batch = np.ascontiguousarray(np.stack(both).transpose(0, 3, 1, 2), dtype=np.float32)
        rank, suit, face = (np.asarray(out, dtype=np.float32) for out in self.session.run(None, {"patch": batch}))
        rank, suit, face = rank.reshape(n, 2, -1), suit.reshape(n, 2, -1), face.reshape(n, 2)
        if self.spec.whole_card:
            return Probabilities(rank=rank.mean(axis=1), suit=suit.mean(axis=1), face=face.mean(axis=1))
        weights = (face + 1e-6) / (face + 1e-6).sum(axis=1, keepdims=True)
        return Probabilities(rank=np.einsum("nk,nkc->nc", weights, rank), suit=np.einsum("nk,nkc->nc", weights, suit),
                             face=face.max(axis=1))


def fuse(card: Probabilities, index: Probabilities, *, rank_weight: float = INDEX_RANK_WEIGHT,
         suit_weight: float = INDEX_SUIT_WEIGHT) -> Probabilities:
    """The classifier's probabilities times the index reader's, raised to `rank_weight` / `suit_weight` times its
    sureness that an index shows (none: the classifier's alone), normalised; the classifier's face."""

    def product(first: FloatArray, second: FloatArray, weight: npt.NDArray[np.float32]) -> FloatArray:
        logs = np.log(first + 1e-6) + weight[:, None] * np.log(second + 1e-6)
        out = np.exp(logs - logs.max(axis=1, keepdims=True))
        return np.asarray(out / out.sum(axis=1, keepdims=True), dtype=np.float32)

    return Probabilities(rank=product(card.rank, index.rank, rank_weight * index.face),
                         suit=product(card.suit, index.suit, suit_weight * index.face), face=card.face)


class CardClassifier:
    """The card classifier (one ONNX Runtime thread by default) and, when given (`index`; default the shipped one
    when it is there), the index reader fused into it on outlines at least `index_min_px` wide (on narrower ones
    its fused readings were surer and wronger: cards 18-40 px of dev seed 28110, read 82.6 -> 83.6 % right, but
    wrong 8.2 -> 12.1 %)."""

    def __init__(self, path: Path = MODEL_PATH, *, threads: int = 1, index: Path | None = INDEX_PATH,
                 index_min_px: float = INDEX_MIN_PX) -> None:
        self.model = PatchModel(path, threads=threads)
        self.index_min_px = index_min_px
        self.index: PatchModel | None = None
        if index is not None:
            try:
                self.index = PatchModel(index, threads=threads, what="card index reader")
            except ConfigError as exc:
                if index != INDEX_PATH or index.is_file():
                    raise
                log.warning("card index reader unavailable, the classifier reads alone: %s", exc)
            if self.index is not None and (self.index.ranks, self.index.suits) != (self.model.ranks, self.model.suits):
                raise ConfigError(f"expected the index reader {index} to name the classifier's ranks and suits, got "
                                  f"{self.index.ranks} {self.index.suits}", field="metadata")
        spec = self.model.spec
        self.width, self.height, self.supersample = spec.width, spec.height, spec.supersample
        self.ranks, self.suits = self.model.ranks, self.model.suits

    def patch(self, image: Image, corners: FloatArray) -> Image:
        """The card with outline `corners` (TL, TR, BR, BL of a portrait card) warped to the classifier's patch."""
        return self.model.patch(image, corners)

    def read(self, image: Image, outlines: list[FloatArray]) -> list[CnnReading]:
        """One reading per outline (all in one batch per model); the index reader's fused in on outlines at least
        `index_min_px` wide."""
        if not outlines:
            return []
        found = self.model.probabilities(image, outlines)
        wide = [i for i, corners in enumerate(outlines) if short_side(corners) >= self.index_min_px]
        if self.index is not None and wide:
            index = self.index.probabilities(image, [outlines[i] for i in wide])
            fused = fuse(Probabilities(rank=found.rank[wide], suit=found.suit[wide], face=found.face[wide]), index)
            found.rank[wide], found.suit[wide] = fused.rank, fused.suit
        readings = []
        for r, s, f in zip(found.rank, found.suit, found.face, strict=True):
            i, j = int(r.argmax()), int(s.argmax())
            readings.append(CnnReading(card=self.ranks[i] + self.suits[j], confidence=float(r[i] * s[j] * f),
                                       face=float(f)))
        return readings


@lru_cache(maxsize=1)
def default_classifier() -> CardClassifier | None:
    """The shipped classifier (with the shipped index reader, when there), or None (logged) when it is missing: the
    classical reader then works alone."""
    try:
        return CardClassifier()
    except ConfigError as exc:
        log.warning("card classifier unavailable: %s", exc)
        return None
