"""Card recogniser: build its index templates, and measure its accuracy on a rendered test set.

    .venv/bin/python benchmarks/cards.py templates [--out src/floorman/vision/data/card_index_templates.npz]
    .venv/bin/python benchmarks/cards.py measure --data DIR [DIR ...] [--limit N] [--true-corners] [--classical]
        [--detector detector_int8.onnx] [--thresholds] [--min-width 40] [--max-width W] [--classifier C.onnx]
        [--index I.onnx|none] [--plane]

`templates` renders the corner index of all 52 cards of every simulator deck design at several scales (exact,
with small outline jitter as a detector's outline would have, and with camera faults: blur, motion blur,
noise, JPEG), runs them through the recogniser's own index extraction, and saves nearest-neighbour templates
and ridge-regression rank and suit classifiers (seeded: the same file every time). `measure` runs
`recognise_card` on every face-up card with visible_fraction >= 0.7 (less than 30 % covered) and at least 40 px
wide in datasets written by `floorman datasets render` (use seeds never used for training: the card
classifier trains on seeds 7100/7200), on its box jittered and expanded by 10 %, and prints accuracy overall,
by card width and by covered share, the share left unread (None), the accuracy of what was read, and
milliseconds per card. With --true-corners it gives the true outline instead of the box (the reading alone,
as with a keypoint detector); with --classical it runs the index matcher alone (no classifier); with --detector
each card is read from the detector's card_face box best overlapping it (IoU >= 0.5), end to end: a card the
detector misses counts as unread. With --thresholds it also prints, for confidence thresholds around
`MIN_CONFIDENCE`, how many wrong readings a threshold would accept and how many right ones it would refuse.
`--min-width` / `--max-width` read other card widths (the cards of a 1280x720 video are 20-35 px wide).
Rows for court cards (J, Q, K) and the others (2-10, A) come after the width and cover rows; `--classifier`
reads with another card classifier file than the shipped one, `--index` with another index reader fused into it
(`none`: the classifier alone). On a set rendered with `--court-figures shifted`
(each court card drawn with another court figure) it measures how the reader does on a deck whose figures it
never saw (session 17: the classifier before read 0 % of such courts, the one since ~97 %). With `--plane` each
card is read as the edge and `floorman detect --calib` read it (`recognise_card(..., pixels_to_mm=)`, with the
homography of the render's own camera for a calibration: each outline's top its short side on the table, not in the
image); the row "oblique" counts the cards the camera sees at a slant (its two scales there more than `OBLIQUE`
apart: 1.2, about 34 degrees from square on), either way.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from floorman.core.cards import Card, full_deck
from floorman.core.geometry import homography_scales, invert_homography, short_side
from floorman.datasets.camera import Camera
from floorman.datasets.textures import N_DECK_DESIGNS, card_face
from floorman.vision.cards import MIN_CONFIDENCE, CardReading, recognise_card
from floorman.vision.cards_cnn import INDEX_PATH, MODEL_PATH, CardClassifier
from floorman.vision.cards_index import (
    RANK_CODES,
    SUIT_CODES,
    TEMPLATES_PATH,
    IndexTemplates,
    corner_crops,
    fit_linear,
    index_features,
)
from floorman.vision.cards_matcher import rectify
from floorman.vision.detections import Detections
from floorman.vision.detector import OnnxDetector, OnnxDetectorConfig, box_iou

SCALES_PPM = (0.9, 1.2, 1.6, 2.2, 3.0, 4.0)
JITTER_FRACTION = 0.015
RIDGE = 1.0
RANK_SUITS = ("S", "H")  # rank glyphs do not depend on the suit: templates from one black and one red suit
SUIT_RANKS = ("2", "5", "10", "K")  # the index pip does not depend on the rank: templates from a few
MIN_VISIBLE = 0.7
MIN_WIDTH_PX = 40.0
CARD_FACE = 0  # DetectorClass.CARD_FACE
BUCKETS = (("< 60 px", 0.0, 60.0), ("60-120 px", 60.0, 120.0), ("> 120 px", 120.0, float("inf")))
COVER_BUCKETS = (("0-10 % cov", 0.9, 1.01), ("10-30% cov", 0.0, 0.9))
OBLIQUE_ROW = "oblique"
OBLIQUE = 1.2  # a card whose camera's two scales (px per mm) differ more than this is seen at a slant
KIND_BUCKETS = (("J, Q, K", ("J", "Q", "K")), ("2-10, A", ("2", "3", "4", "5", "6", "7", "8", "9", "10", "A")))
THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9)


def _face_on_table(face_bgra: np.ndarray, *, pad: int) -> np.ndarray:
    """The card face pasted on a mid-grey table with `pad` pixels around it."""
    h, w = face_bgra.shape[:2]
    canvas = np.full((h + 2 * pad, w + 2 * pad, 3), 90, dtype=np.uint8)
    alpha = face_bgra[..., 3:4].astype(np.float32) / 255.0
    region = canvas[pad:pad + h, pad:pad + w].astype(np.float32)
    canvas[pad:pad + h, pad:pad + w] = (face_bgra[..., :3] * alpha + region * (1.0 - alpha)).astype(np.uint8)
    return canvas


def _degrade(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A camera's faults: Gaussian blur of 0.3-1.5 px, motion blur up to 3 px, noise of sigma 2-8, JPEG."""
    out = cv2.GaussianBlur(image, (0, 0), float(rng.uniform(0.3, 1.5)))
    length = int(rng.integers(1, 4))
    if length > 1:
        kernel = np.zeros((length, length), np.float32)
        kernel[length // 2, :] = 1.0 / length
        turn = cv2.getRotationMatrix2D(((length - 1) / 2.0, (length - 1) / 2.0), float(rng.uniform(0, 180)), 1.0)
        kernel = cv2.warpAffine(kernel, turn, (length, length))
        out = cv2.filter2D(out, -1, kernel / max(float(kernel.sum()), 1e-6))
    noisy = out.astype(np.float32) + rng.normal(0.0, float(rng.uniform(2.0, 8.0)), size=image.shape)
    out = np.clip(noisy, 0, 255).astype(np.uint8)
    ok, jpeg = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(60, 96))])
    return np.asarray(cv2.imdecode(jpeg, cv2.IMREAD_COLOR), dtype=np.uint8) if ok else out


@dataclass
class _Samples:
    """Features and class ids gathered for one of rank or suit."""

    features: list[np.ndarray] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)

    def add(self, feature: np.ndarray, class_id: int) -> None:
        self.features.append(feature)
        self.ids.append(class_id)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.stack(self.features), np.array(self.ids, dtype=np.int64)


def _card_views(card: Card, *, design: int, ppm: float, rng: np.random.Generator) -> list[tuple[bool, np.ndarray]]:
    """(degraded, top-left index crop) of `card` as the recogniser would rectify it: exact, with outline
    jitter, and twice with jitter and camera faults."""
    face = card_face(card, design=design, px_per_mm=ppm)
    h, w = face.shape[:2]
    pad = 4
    image = _face_on_table(face, pad=pad)
    exact = np.array([[pad, pad], [pad + w, pad], [pad + w, pad + h], [pad, pad + h]], np.float32)
    views: list[tuple[bool, np.ndarray]] = []
    for jitter, degrade in ((0.0, False), (JITTER_FRACTION, False), (JITTER_FRACTION, True), (JITTER_FRACTION, True)):
        corners = exact + rng.normal(0.0, jitter * w, size=(4, 2)).astype(np.float32)
        shot = _degrade(image, rng) if degrade else image
        views.append((degrade, corner_crops(rectify(shot, corners))[0][0]))
    return views


def build_templates(rng: np.random.Generator) -> IndexTemplates:
    """Nearest-neighbour templates from the clean views (ranks of one black and one red suit, a sample of the
    suits), and linear rank and suit classifiers fitted on every view."""
    rank_nn, rank_all, suit_nn, suit_all = _Samples(), _Samples(), _Samples(), _Samples()
    for design in range(N_DECK_DESIGNS):
        for ppm in SCALES_PPM:
            for card in full_deck():
                for degraded, crop in _card_views(card, design=design, ppm=ppm, rng=rng):
                    features = index_features(crop, on_right=False)
                    if features is None:
                        continue
                    rank_id, suit_id = RANK_CODES.index(card.rank.code), SUIT_CODES.index(card.suit.value)
                    rank_all.add(features.rank, rank_id)
                    suit_all.add(features.suit, suit_id)
                    if not degraded and card.suit.value in RANK_SUITS:
                        rank_nn.add(features.rank, rank_id)
                    if not degraded and card.rank.code in SUIT_RANKS:
                        suit_nn.add(features.suit, suit_id)
    rank, rank_ids = rank_nn.arrays()
    suit, suit_ids = suit_nn.arrays()
    return IndexTemplates(rank=rank, rank_ids=rank_ids, suit=suit, suit_ids=suit_ids,
                          rank_weights=fit_linear(*rank_all.arrays(), count=len(RANK_CODES), ridge=RIDGE),
                          suit_weights=fit_linear(*suit_all.arrays(), count=len(SUIT_CODES), ridge=RIDGE))


@dataclass
class Tally:
    """Counts of cards scored, read (not None) and right, and seconds spent."""

    total: int = 0
    read: int = 0
    right: int = 0
    seconds: float = 0.0
    misses: list[str] = field(default_factory=list)
    scored: list[tuple[float, bool, bool]] = field(default_factory=list)  # confidence, read (a card), right

    def row(self, name: str) -> str:
        acc = self.right / max(self.total, 1)
        precision = self.right / max(self.read, 1)
        unread = 1.0 - self.read / max(self.total, 1)
        ms = 1000.0 * self.seconds / max(self.total, 1)
        return f"| {name:<10} | {self.total:>5} | {acc:>8.1%} | {unread:>6.1%} | {precision:>9.1%} | {ms:>7.1f} |"


def threshold_rows(scored: list[tuple[float, bool, bool]], thresholds: tuple[float, ...] = THRESHOLDS) -> list[str]:
    """For each threshold: the wrong readings it would accept, the right ones it would refuse, the accuracy."""
    rows = ["| threshold | wrong accepted | right refused | accuracy |", "|-----------|----------------|"
            "---------------|----------|"]
    for threshold in thresholds:
        wrong = sum(1 for confidence, read, right in scored if confidence >= threshold and read and not right)
        refused = sum(1 for confidence, _, right in scored if confidence < threshold and right)
        accuracy = sum(1 for confidence, _, right in scored if confidence >= threshold and right) / max(len(scored), 1)
        rows.append(f"| {threshold:>9.2f} | {wrong:>14} | {refused:>13} | {accuracy:>8.1%} |")
    return rows


def _cards(data: Path) -> list[tuple[Path, dict[str, object]]]:
    out: list[tuple[Path, dict[str, object]]] = []
    for sidecar in sorted((data / "meta").glob("*/*.json")):
        meta = json.loads(sidecar.read_text())
        for obj in meta["objects"]:
            if obj.get("cls") == "card_face" and obj.get("face_up") and obj["visible_fraction"] >= MIN_VISIBLE:
                out.append((data / meta["image"], obj | {"pixels_to_mm": _pixels_to_mm(meta["camera"]),
                                                          "render": f"{meta.get('seed')}/{meta.get('index')}"}))
    return out


def _pixels_to_mm(camera: dict[str, Any]) -> np.ndarray:
    """The render camera's homography from pixels to table mm on the felt (an exact calibration)."""
    (fx, _, cx), (_, fy, cy), _ = camera["intrinsics"]
    pinhole = Camera(width=int(camera["width"]), height=int(camera["height"]), fx=fx, fy=fy, cx=cx, cy=cy,
                     rotation=np.asarray(camera["rotation"], dtype=np.float64),
                     translation=np.asarray(camera["translation"], dtype=np.float64))
    return invert_homography(pinhole.table_homography())


def _card_width(obj: dict[str, object]) -> float:
    return short_side(np.asarray(obj["corners_px"], dtype=np.float64))


def detected_box(detections: Detections, truth_box: np.ndarray) -> np.ndarray | None:
    """The card_face detection best overlapping the card's true box (IoU >= 0.5), else None (a missed card)."""
    faces = detections[detections.class_id == CARD_FACE]
    if len(faces) == 0:
        return None
    iou, _ = box_iou(truth_box.astype(np.float32), faces.xyxy)
    best = int(iou.argmax())
    return faces.xyxy[best].astype(np.float64) if iou[best] >= 0.5 else None


def _box_noise(seed: int, path: Path, obj: dict[str, object]) -> np.ndarray:
    """A card's box noise (4 sides, shares of the box's size, sd 0.03), drawn from the seed, the frame's render seed
    and index (or its file name) and the card's id alone: the same card reads alike whichever sets, limits and widths
    are measured with it (session 58; before, one generator over the list made a card's noise depend on the cards
    measured before it)."""
    key = zlib.crc32(f"{obj.get('render') or path.name}:{obj.get('id')}".encode())
    return np.random.default_rng([seed, key]).normal(0.0, 0.03, size=4)


def measure(data: list[Path], *, limit: int | None, seed: int, true_corners: bool,
            classical: bool = False, detector: OnnxDetector | None = None,
            widths: tuple[float, float] = (MIN_WIDTH_PX, float("inf")),
            classifier: CardClassifier | None = None, plane: bool = False) -> dict[str, Tally]:
    """Tallies overall, per width bucket and per covered share; with `true_corners` the recogniser gets the
    card's true outline instead of its box (the reading alone, as with a keypoint detector); with `classical`
    the index matcher reads alone; with a `detector` the box is its card_face detection (end to end: a card the
    detector misses counts as unread). Only cards `widths[0]` to `widths[1]` px wide are read. With `plane` a box
    is read as with a calibration (the render camera's homography)."""
    tallies = {name: Tally() for name, _, _ in (("all", 0, 0), *BUCKETS, *COVER_BUCKETS)}
    tallies |= {name: Tally() for name, _ in KIND_BUCKETS} | {OBLIQUE_ROW: Tally()}
    images: dict[Path, np.ndarray] = {}
    found: Detections | None = None
    cards = [(p, o) for d in data for p, o in _cards(d) if widths[0] <= _card_width(o) < widths[1]][:limit]
    for path, obj in cards:
        if path not in images:
            images = {path: cv2.imread(str(path), cv2.IMREAD_COLOR)}
            found = None if detector is None else detector.detect(images[path])
        x0, y0, x1, y1 = np.asarray(obj["box"], dtype=np.float64)
        w, h = x1 - x0, y1 - y0
        noise = _box_noise(seed, path, obj) * np.array([w, h, w, h])
        box: np.ndarray | None = np.array([x0 - 0.05 * w, y0 - 0.05 * h, x1 + 0.05 * w, y1 + 0.05 * h]) + noise
        if found is not None:
            box = detected_box(found, np.array([x0, y0, x1, y1]))
        start = time.perf_counter()
        options = {"use_classifier": not classical, "min_confidence": 0.0, "classifier": classifier}
        to_mm = np.asarray(obj["pixels_to_mm"], dtype=np.float64)
        if box is None:
            raw = CardReading(card=None, confidence=0.0, corners_px=None, source="missed by the detector")
        elif true_corners:
            raw = recognise_card(images[path], corners=obj["corners_px"], pixels_to_mm=to_mm if plane else None,
                                 **options)
        else:
            raw = recognise_card(images[path], box=box, pixels_to_mm=to_mm if plane else None, **options)
        elapsed = time.perf_counter() - start
        reading = raw if raw.confidence >= MIN_CONFIDENCE else replace(raw, card=None)  # what recognise_card gives
        width, visible = _card_width(obj), float(str(obj["visible_fraction"]))
        names = [n for n, lo, hi in (("all", 0.0, float("inf")), *BUCKETS) if lo <= width < hi]
        names += [n for n, lo, hi in COVER_BUCKETS if lo <= visible < hi]
        names += [n for n, ranks in KIND_BUCKETS if str(obj["card"])[:-1] in ranks]
        high, low = homography_scales(to_mm, ((x0 + x1) / 2.0, (y0 + y1) / 2.0))
        names += [OBLIQUE_ROW] if high / low >= OBLIQUE else []
        for name in names:
            tally = tallies[name]
            tally.total += 1
            tally.read += reading.card is not None
            tally.right += reading.card == obj["card"]
            tally.seconds += elapsed
            tally.scored.append((raw.confidence, raw.card is not None, raw.card == obj["card"]))
            if reading.card != obj["card"]:
                tally.misses.append(f"{path.parent.parent.parent.name}/{path.name} {obj['card']} -> {reading.card} "
                                    f"({reading.confidence:.2f}, {reading.source}; {width:.0f} px wide, "
                                    f"{1.0 - visible:.0%} covered)")
    return tallies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("templates", help="render and save the index templates")
    build.add_argument("--out", type=Path, default=TEMPLATES_PATH)
    run = sub.add_parser("measure", help="accuracy on a rendered dataset")
    run.add_argument("--data", type=Path, nargs="+", required=True, help="one or more rendered datasets")
    run.add_argument("--true-corners", action="store_true", help="give the true outline instead of the box")
    run.add_argument("--classical", action="store_true", help="the index matcher alone (no classifier)")
    run.add_argument("--limit", type=int, default=None)
    run.add_argument("--seed", type=int, default=5)
    run.add_argument("--show-misses", action="store_true")
    run.add_argument("--detector", type=Path, help="ONNX detector: read each card from its detection (end to end)")
    run.add_argument("--thresholds", action="store_true", help="wrong accepted / right refused by threshold")
    run.add_argument("--min-width", type=float, default=MIN_WIDTH_PX, help="narrowest card read (px, default 40)")
    run.add_argument("--max-width", type=float, default=float("inf"), help="cards this wide or wider are left out")
    run.add_argument("--classifier", type=Path, help="card classifier ONNX (default: the shipped one)")
    run.add_argument("--index", default=str(INDEX_PATH), help="index reader ONNX fused into the classifier, or "
                     "none (the classifier alone; default: the shipped one, when there)")
    run.add_argument("--plane", action="store_true", help="read as with a calibration (the render camera's): each "
                     "outline's top its short side on the table")
    args = parser.parse_args(argv)
    if args.command == "templates":
        templates = build_templates(np.random.default_rng(20261129))
        templates.save(args.out)
        sys.stdout.write(f"{templates.rank.shape[0]} rank and {templates.suit.shape[0]} suit templates "
                         f"-> {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)\n")
        return 0
    detector = None if args.detector is None else OnnxDetector(OnnxDetectorConfig(model=args.detector))
    tallies = measure(args.data, limit=args.limit, seed=args.seed, true_corners=args.true_corners,
                      classical=args.classical, detector=detector, widths=(args.min_width, args.max_width),
                      classifier=CardClassifier(args.classifier or MODEL_PATH,
                                                index=None if args.index == "none" else Path(args.index)),
                      plane=args.plane)
    sys.stdout.write("| width      | cards | accuracy | unread | precision | ms/card |\n")
    sys.stdout.write("|------------|-------|----------|--------|-----------|---------|\n")
    for name, tally in tallies.items():
        sys.stdout.write(tally.row(name) + "\n")
    sys.stdout.write("target: >= 99 % on cards < 30 % covered (synthetic); >= 90 % on real photos\n")
    if args.thresholds:
        sys.stdout.write("\n".join(threshold_rows(tallies["all"].scored)) + "\n")
    if args.show_misses:
        sys.stdout.write("\n".join(tallies["all"].misses) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
