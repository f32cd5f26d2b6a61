"""The card classifier (a small CNN trained on rendered cards, `floorman models train-cards`) run with ONNX
Runtime: the card's outline warped upright to a small patch, read in both orientations (the index sits in two
opposite corners), rank and suit probabilities averaged over them.

The patch geometry comes from the model's metadata (`floorman_patch`: "width,height,supersample"), written by
the training recipe, so a retrained model with another patch size needs no change here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.errors import ConfigError
from floorman.vision.onnx_session import cpu_session

log = logging.getLogger(__name__)

MODEL_PATH = Path(__file__).resolve().parent / "data" / "card_classifier.onnx"
PATCH_KEY = "floorman_patch"
CLASSES_KEY = "floorman_classes"

FloatArray = npt.NDArray[np.float32]
Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class CnnReading:
    """One outline read by the classifier: the most likely card, its probability (rank times suit, times the
    probability that the patch is a card face at all), and that face probability alone."""

    card: str
    confidence: float
    face: float


class CardClassifier:
    """An ONNX Runtime session over the exported card classifier (one thread by default)."""

    def __init__(self, path: Path = MODEL_PATH, *, threads: int = 1) -> None:
        self.session, meta = cpu_session(path, threads=threads, what="card classifier",
                                         recipe="floorman models train-cards")
        try:
            width, height, supersample = (int(v) for v in meta[PATCH_KEY].split(","))
            ranks, suits = (part.split(",") for part in meta[CLASSES_KEY].split(";"))
        except (KeyError, ValueError):
            raise ConfigError(f"expected {PATCH_KEY} and {CLASSES_KEY} metadata in {path}, got "
                              f"{sorted(meta)}", field="metadata") from None
        self.width, self.height, self.supersample = width, height, supersample
        self.ranks, self.suits = tuple(ranks), tuple(suits)

    def patch(self, image: Image, corners: FloatArray) -> Image:
        """The card with outline `corners` (TL, TR, BR, BL of a portrait card) warped to the input patch."""
        big_w, big_h = self.width * self.supersample, self.height * self.supersample
        target = np.array([[0, 0], [big_w, 0], [big_w, big_h], [0, big_h]], dtype=np.float32)
        matrix = cv2.getPerspectiveTransform(np.asarray(corners, dtype=np.float32), target)
        big = cv2.warpPerspective(image, matrix, (big_w, big_h), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REPLICATE)
        return np.asarray(cv2.resize(big, (self.width, self.height), interpolation=cv2.INTER_AREA), dtype=np.uint8)

    def read(self, image: Image, outlines: list[FloatArray]) -> list[CnnReading]:
        """One reading per outline (all in one batch: each patch upright and turned 180 degrees)."""
        if not outlines:
            return []
        patches = [self.patch(image, corners) for corners in outlines]
        both = np.stack([p for patch in patches for p in (patch, patch[::-1, ::-1])])
        batch = np.ascontiguousarray(both.transpose(0, 3, 1, 2), dtype=np.float32)
        rank, suit, face = self.session.run(None, {"patch": batch})
        rank = np.asarray(rank, dtype=np.float32).reshape(len(outlines), 2, -1).mean(axis=1)
        suit = np.asarray(suit, dtype=np.float32).reshape(len(outlines), 2, -1).mean(axis=1)
        face = np.asarray(face, dtype=np.float32).reshape(len(outlines), 2).mean(axis=1)
        readings = []
        for r, s, f in zip(rank, suit, face, strict=True):
            i, j = int(r.argmax()), int(s.argmax())
            readings.append(CnnReading(card=self.ranks[i] + self.suits[j], confidence=float(r[i] * s[j] * f),
                                       face=float(f)))
        return readings


@lru_cache(maxsize=1)
def default_classifier() -> CardClassifier | None:
    """The shipped classifier, or None (logged) when it is missing: the classical reader then works alone."""
    try:
        return CardClassifier()
    except ConfigError as exc:
        log.warning("card classifier unavailable: %s", exc)
        return None
