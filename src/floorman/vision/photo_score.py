"""`floorman photos`: score what `floorman detect` reads on a person's own labelled photographs, and draft their labels.

`floorman photos score LABELS` reads every labelled photo as `floorman detect PHOTO --json` reads it (no
calibration: photos come without one), or takes a saved `floorman detect --json` output (`--detections`), and
prints the figures real photographs are judged by:
- face-up cards: card_face AP50 and AP50-95 (COCO-style, `vision.metrics`) over the labelled boxes, from the
  detections the command prints (confidence >= --conf, 0.25 as `floorman detect`);
- card identity: each labelled face-up card with an identity is matched to one card_face detection (IoU >= 0.5,
  best pairs first, one detection per card); right, wrong, unread (the reader was not sure) or missed (no box);
- card backs: card_back AP50 over the photos whose card backs are labelled;
- chips per colour: over the photos whose chips are labelled, the share of photos whose count of each colour
  (`chip_totals` summed by colour word) is exact, the mean absolute error, and every colour exact.

`floorman photos draft IMAGES --out LABELS` writes what floorman reads as labels marked `"checked": false`, for a
person to correct (each box, identity and count) and mark checked; the scorer refuses unchecked labels.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from floorman.core.chips import ChipSet
from floorman.core.errors import ConfigError
from floorman.vision import photo_labels
from floorman.vision.chips import ChipRecogniser
from floorman.vision.cli import read_image
from floorman.vision.detect_cli import (
    FrameReport,
    add_straight_down_argument,
    colour_name,
    default_model,
    frames,
    read_frame,
)
from floorman.vision.detections import Detections
from floorman.vision.detector import Detector, OnnxDetectorConfig, create_detector
from floorman.vision.metrics import MeanAveragePrecision, iou_matrix
from floorman.vision.photo_labels import CardLabel, LabelledPhoto, PhotoLabel, load_labels, write_labels

MATCH_IOU = 0.5
CARD_FACE, CARD_BACK = "card_face", "card_back"


class BoxScore(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    photos: int = Field(description="Photos whose boxes of this class are labelled.")
    boxes: int = Field(description="Labelled boxes.")
    detections: int = Field(description="Detections of the class on those photos.")
    ap50: float | None = Field(description="AP at IoU 0.5 (None without labelled boxes).")
    ap50_95: float | None = Field(description="AP averaged over IoU 0.50:0.95.")


class IdentityScore(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cards: int = Field(description="Labelled face-up cards with an identity.")
    right: int
    wrong: int = Field(description="Read as another card.")
    unread: int = Field(description="Boxed, but the reader was not sure (card None).")
    missed: int = Field(description="No card_face detection at IoU >= 0.5.")
    accuracy: float | None = Field(description="right / cards (None without cards).")


class ColourScore(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    chips: int = Field(description="Labelled chips of this colour over the photos.")
    counted: int = Field(description="Chips of this colour floorman counted over the photos.")
    exact: float = Field(description="Share of photos whose count of this colour is exact.")
    mean_absolute_error: float = Field(description="Chips per photo.")


class ChipScore(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    photos: int = Field(description="Photos whose chips are labelled.")
    colours: dict[str, ColourScore] = Field(description="Per colour word of the chip set.")
    all_exact: float | None = Field(description="Share of photos with every colour exact (None without photos).")


class PhotoScore(BaseModel):
    """`floorman photos score --json`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    photos: int
    model: str = Field(description="The detector read with, or the detections file scored.")
    conf: float | None = Field(description="Detections kept from this confidence (None: a saved output's own).")
    straight_down: bool = Field(default=False, description="Stacks counted as in a photo taken straight down "
                                "(`--straight-down`); a saved output's counts are its own.")
    card_face: BoxScore
    card_identity: IdentityScore
    card_back: BoxScore
    chips: ChipScore
    misses: list[str] = Field(default_factory=list, description="Each card not read right and each colour "
                              "count not exact, one line each.")


class Tally:
    """What the scorer accumulates photo by photo."""

    def __init__(self, words: list[str]) -> None:
        self.words = words
        self.faces = MeanAveragePrecision(1)
        self.backs = MeanAveragePrecision(1)
        self.face_counts = Counter[str]()
        self.back_counts = Counter[str]()
        self.identity = Counter[str]()
        self.chip_photos = 0
        self.chips_truth = Counter[str]()
        self.chips_counted = Counter[str]()
        self.chips_exact = Counter[str]()
        self.chips_error = Counter[str]()
        self.all_exact = 0
        self.misses: list[str] = []


def _detections(report: FrameReport, class_name: str) -> tuple[Detections, list[str | None]]:
    rows = [o for o in report.objects if o.class_name == class_name]
    found = Detections(xyxy=np.array([o.box for o in rows], dtype=np.float32).reshape(-1, 4),
                       confidence=np.array([o.confidence for o in rows], dtype=np.float32),
                       class_id=np.zeros(len(rows), dtype=np.int64))
    return found, [o.identity for o in rows]


def match(truth: np.ndarray, found: np.ndarray, *, threshold: float = MATCH_IOU) -> dict[int, int]:
    """One-to-one pairs truth index -> found index with IoU >= `threshold`, the best pairs first."""
    if not len(truth) or not len(found):
        return {}
    ious = iou_matrix(truth, found)
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    for flat in np.argsort(-ious, axis=None, kind="stable"):
        t, f = divmod(int(flat), ious.shape[1])
        if ious[t, f] < threshold:
            break
        if t not in pairs and f not in taken:
            pairs[t] = f
            taken.add(f)
    return pairs


def _where(box: tuple[float, float, float, float]) -> str:
    return "[" + ", ".join(f"{v:.0f}" for v in box) + "]"


def score_photo(tally: Tally, label: PhotoLabel, report: FrameReport, *, name: str) -> None:
    """Add one photo's labels against what floorman read on it."""
    faces, identities = _detections(report, CARD_FACE)
    truth = np.array([c.box for c in label.cards], dtype=np.float64).reshape(-1, 4)
    tally.faces.update(faces, truth, np.zeros(len(truth), dtype=np.int64))
    tally.face_counts.update(photos=1, boxes=len(truth), detections=len(faces))
    pairs = match(truth, faces.xyxy.astype(np.float64))
    for i, card in enumerate(label.cards):
        if card.card is None:
            continue
        tally.identity["cards"] += 1
        read = identities[pairs[i]] if i in pairs else None
        outcome = "missed" if i not in pairs else "right" if read == card.card else "unread" if read is None \
            else "wrong"
        tally.identity[outcome] += 1
        if outcome != "right":
            what = {"missed": "no card_face box", "unread": "boxed, unread"}.get(outcome, f"read {read}")
            tally.misses.append(f"{name}: {card.card} {what} at {_where(card.box)}")
    if label.card_backs is not None:
        backs, _ = _detections(report, CARD_BACK)
        truth = np.array(label.card_backs, dtype=np.float64).reshape(-1, 4)
        tally.backs.update(backs, truth, np.zeros(len(truth), dtype=np.int64))
        tally.back_counts.update(photos=1, boxes=len(truth), detections=len(backs))
    if label.chips is not None:
        counted = chips_by_colour(report)
        # a colour floorman counted that the chip set does not name (a saved output read with another set) counts
        # against the labels' 0, not past them; the photos before, with none of it either side, were exact in it
        for word in counted:
            if word not in tally.words:
                tally.words.append(word)
                tally.chips_exact[word] += tally.chip_photos
        tally.chip_photos += 1
        exact = True
        for word in tally.words:
            want, got = label.chips.get(word, 0), counted[word]
            tally.chips_truth[word] += want
            tally.chips_counted[word] += got
            tally.chips_exact[word] += int(want == got)
            tally.chips_error[word] += abs(want - got)
            if want != got:
                exact = False
                tally.misses.append(f"{name}: {word} chips {want}, counted {got}")
        tally.all_exact += int(exact)


def chips_by_colour(report: FrameReport) -> Counter[str]:
    """The chips `floorman detect` counted (`chip_totals`), by the colour word it named each denomination."""
    counted = Counter[str]()
    for total in report.chip_totals:
        counted[total.colour_name] += total.chips
    return counted


def _box_score(ap: MeanAveragePrecision, counts: Counter[str]) -> BoxScore:
    ap50, ap50_95, _ = ap.compute()
    return BoxScore(photos=counts["photos"], boxes=counts["boxes"], detections=counts["detections"],
                    ap50=None if math.isnan(ap50) else round(ap50, 4),
                    ap50_95=None if math.isnan(ap50_95) else round(ap50_95, 4))


def summary(tally: Tally, *, photos: int, model: str, conf: float | None, straight_down: bool = False) -> PhotoScore:
    cards = tally.identity["cards"]
    n = max(tally.chip_photos, 1)
    colours = {word: ColourScore(chips=tally.chips_truth[word], counted=tally.chips_counted[word],
                                 exact=round(tally.chips_exact[word] / n, 4),
                                 mean_absolute_error=round(tally.chips_error[word] / n, 4)) for word in tally.words}
    return PhotoScore(
        photos=photos, model=model, conf=conf, straight_down=straight_down,
        card_face=_box_score(tally.faces, tally.face_counts),
        card_identity=IdentityScore(cards=cards, right=tally.identity["right"], wrong=tally.identity["wrong"],
                                    unread=tally.identity["unread"], missed=tally.identity["missed"],
                                    accuracy=round(tally.identity["right"] / cards, 4) if cards else None),
        card_back=_box_score(tally.backs, tally.back_counts),
        chips=ChipScore(photos=tally.chip_photos, colours=colours if tally.chip_photos else {},
                        all_exact=round(tally.all_exact / tally.chip_photos, 4) if tally.chip_photos else None),
        misses=tally.misses)


def chip_words(chipset: ChipSet) -> list[str]:
    """The colour words of the chip set's denominations, in the set's order, each once."""
    return list(dict.fromkeys(colour_name(d.rgb) for d in chipset.denominations))


def _check_photo(photo: LabelledPhoto, width: int, height: int, words: list[str]) -> None:
    label = photo.label
    if not label.checked:
        raise ConfigError("a draft no person has checked (\"checked\": false): correct its boxes, identities and "
                          "counts, then set \"checked\": true", source=photo.source, field="checked")
    boxes = [(f"cards.{i}.box", c.box) for i, c in enumerate(label.cards)]
    boxes += [(f"card_backs.{i}", box) for i, box in enumerate(label.card_backs or ())]
    for field, (_, _, x2, y2) in boxes:
        if x2 > width + 1 or y2 > height + 1:
            raise ConfigError(f"box reaches ({x2:.0f}, {y2:.0f}), outside the {width}x{height} photo {photo.path} "
                              "(labelled on a resized copy?)", source=photo.source, field=field)
    unknown = sorted(set(label.chips or {}) - set(words))
    if unknown:
        raise ConfigError(f"expected colour words of the chip set ({', '.join(words)}), got {', '.join(unknown)}",
                          source=photo.source, field="chips")


def _saved_reports(path: Path) -> dict[str, list[tuple[str, FrameReport]]]:
    """A `floorman detect --json` output: its lines ("FILE:N") and reports by the file name of each image."""
    if not path.is_file():
        raise ConfigError("no such detections file", source=str(path), field="--detections")
    reports: dict[str, list[tuple[str, FrameReport]]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            report = FrameReport.model_validate_json(line)
        except ValueError as exc:
            raise ConfigError(f"not a `floorman detect --json` line: {str(exc).splitlines()[0]}",
                              source=f"{path}:{number}") from None
        reports.setdefault(Path(report.source).name, []).append((f"{path}:{number}", report))
    return reports


def _saved_report(saved: dict[str, list[tuple[str, FrameReport]]], photo: LabelledPhoto, path: Path) -> FrameReport:
    """The saved report of a labelled photo, found by its file name (one, and not a video's frame)."""
    found = saved.get(photo.path.name, [])
    if not found:
        raise ConfigError(f"no line for {photo.path.name} in {path}", source=photo.source, field="image")
    if len(found) > 1:
        raise ConfigError(f"{len(found)} lines for {photo.path.name} in {path} ({', '.join(w for w, _ in found)}): "
                          "score one folder's output at a time", source=photo.source, field="image")
    return found[0][1]


def _chipset(args: argparse.Namespace) -> ChipSet:
    return ChipSet.load(args.chipset) if args.chipset is not None else ChipSet.default()


def _detector(args: argparse.Namespace) -> Detector:
    model = args.model if args.model is not None else default_model(photos=True)
    return create_detector(OnnxDetectorConfig(model=model, conf=args.conf, threads=args.threads))


def run_score(args: argparse.Namespace) -> int:
    photos = load_labels(args.labels)
    chipset = _chipset(args)
    words = chip_words(chipset)
    if args.detections is not None and args.straight_down:
        raise ConfigError("--straight-down reads the photos; a saved output holds the counts `floorman detect` made "
                          "(run it with --straight-down)", field="--straight-down")
    saved = None if args.detections is None else _saved_reports(args.detections)
    detector = _detector(args) if saved is None else None
    recogniser = ChipRecogniser(chipset)
    tally = Tally(words)
    for photo in photos:
        if saved is not None:
            report = _saved_report(saved, photo, args.detections)
            _check_photo(photo, report.width, report.height, words)
        else:
            assert detector is not None  # no saved detections: the photos are read
            if not photo.path.is_file():
                raise ConfigError(f"no such photo {photo.path}", source=photo.source, field="image")
            image = read_image(photo.path)
            _check_photo(photo, image.shape[1], image.shape[0], words)
            report, _ = read_frame(image, detector=detector, recogniser=recogniser, source=str(photo.path),
                                   straight_down=args.straight_down)
        score_photo(tally, photo.label, report, name=photo.path.name)
    model = str(args.detections) if saved is not None else str(args.model or default_model(photos=True))
    result = summary(tally, photos=len(photos), model=model, conf=None if saved is not None else args.conf,
                     straight_down=args.straight_down)
    sys.stdout.write(result.model_dump_json() + "\n" if args.json else format_score(result, misses=args.misses))
    return 0


def _ap(score: BoxScore) -> str:
    if score.ap50 is None:
        return "not labelled" if not score.photos else "no boxes labelled"
    return f"AP50 {score.ap50:.3f}, AP50-95 {score.ap50_95:.3f} ({score.boxes} boxes, {score.detections} detected, " \
           f"{score.photos} photos)"


def format_score(result: PhotoScore, *, misses: bool = False) -> str:
    ident = result.card_identity
    source = f"detections {result.model}" if result.conf is None else f"detector {Path(result.model).name}, " \
        f"confidence >= {result.conf}"
    how = ", stacks counted as seen straight down" if result.straight_down else ""
    lines = [f"{result.photos} photos, {source}, no calibration{how}",
             f"face-up cards: {_ap(result.card_face)}   (target: AP50 >= 0.8)"]
    if ident.cards:
        lines.append(f"card identity: {ident.right} of {ident.cards} right ({100.0 * (ident.accuracy or 0.0):.1f} %); "
                     f"{ident.wrong} wrong, {ident.unread} unread, {ident.missed} missed by the detector   "
                     "(target: >= 90 %)")
    else:
        lines.append("card identity: no labelled identity")
    lines.append(f"card backs: {_ap(result.card_back)}")
    chips = result.chips
    if chips.photos:
        exact = "  ".join(f"{w} {100.0 * c.exact:.0f} %" for w, c in chips.colours.items())
        error = "  ".join(f"{w} {c.mean_absolute_error:.2f}" for w, c in chips.colours.items())
        total = "  ".join(f"{w} {c.counted}/{c.chips}" for w, c in chips.colours.items())
        lines += [f"chips per colour, {chips.photos} photos: exact {exact}; every colour exact "
                  f"{100.0 * (chips.all_exact or 0.0):.0f} %",
                  f"  mean absolute error (chips per photo): {error}",
                  f"  counted / labelled: {total}"]
    else:
        lines.append("chips per colour: not labelled")
    if misses:
        lines += [f"  {miss}" for miss in result.misses]
    return "\n".join(lines) + "\n"


def draft_labels(reports: list[FrameReport], *, relative_to: Path, chipset: ChipSet) -> list[PhotoLabel]:
    """What floorman read on each photo, as labels marked unchecked (`checked` false)."""
    words = chip_words(chipset)
    drafts = []
    for report in reports:
        path = Path(report.source).resolve()
        try:
            image = str(path.relative_to(relative_to.resolve()))
        except ValueError:
            image = str(path)
        cards = tuple(CardLabel(box=_rounded(o.box), card=o.identity) for o in report.objects
                      if o.class_name == CARD_FACE)
        backs = tuple(_rounded(o.box) for o in report.objects if o.class_name == CARD_BACK)
        chips = dict.fromkeys(words, 0) | chips_by_colour(report)
        drafts.append(PhotoLabel(image=image, cards=cards, card_backs=backs, chips=chips, checked=False))
    return drafts


def _rounded(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = (round(max(v, 0.0)) for v in box)
    return float(x1), float(y1), float(max(x2, x1 + 1)), float(max(y2, y1 + 1))


def run_draft(args: argparse.Namespace) -> int:
    if args.out.exists():  # checked before the photos are read, and again when written
        raise ConfigError("already exists; labels are never overwritten (choose another --out or move it away)",
                          source=str(args.out), field="--out")
    chipset = _chipset(args)
    detector, recogniser = _detector(args), ChipRecogniser(chipset)
    reports = []
    for source, frame_index, image in frames(args.images):  # a photo or a folder's images, as `floorman detect`
        if frame_index is not None:
            raise ConfigError("a video: drafts are of photographs (a photo or a folder of photos)",
                              source=str(args.images), field="IMAGES")
        reports.append(read_frame(image, detector=detector, recogniser=recogniser, source=source,
                                  straight_down=args.straight_down)[0])
    written = write_labels(args.out, draft_labels(reports, relative_to=args.out.parent, chipset=chipset))
    cards = sum(1 for r in reports for o in r.objects if o.class_name == CARD_FACE)
    sys.stdout.write(f"wrote {args.out}: {written} photos, {cards} face-up cards, drafts (\"checked\": false) — "
                     "correct every box, identity and chip count, add what floorman missed, then set \"checked\": "
                     "true\n")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("photos", help="score floorman on your own labelled photographs; draft labels",
                                   description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="photos_command", metavar="COMMAND", required=True)
    score = sub.add_parser("score", help="card_face AP50, card identity, card backs and chips per colour on "
                           "labelled photos", description=__doc__.split("\n\n")[1],
                           epilog="Labels: " + (photo_labels.__doc__ or "").split("\n\n", 1)[1],
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    score.add_argument("labels", type=Path, help="labels file (JSON Lines, one photo a line; below)")
    score.add_argument("--detections", type=Path, help="score a saved `floorman detect --json` output instead of "
                       "reading the photos")
    score.add_argument("--json", action="store_true", help="one JSON object")
    score.add_argument("--misses", action="store_true", help="name each card not read right and each colour count "
                       "not exact")
    draft = sub.add_parser("draft", help="write what floorman reads as unchecked labels, for a person to correct")
    draft.add_argument("images", type=Path, help="a photo or a folder of photos")
    draft.add_argument("--out", type=Path, required=True, help="labels file to write (never overwritten)")
    for command in (score, draft):
        command.add_argument("--model", type=Path, help="ONNX detector (default: the shipped INT8 photo detector)")
        command.add_argument("--conf", type=float, default=0.25, help="minimum confidence (default 0.25, as "
                             "`floorman detect`)")
        command.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads (default 1)")
        command.add_argument("--chipset", type=Path, help="chip set YAML (default: the shipped set)")
        add_straight_down_argument(command)
    score.set_defaults(handler=run_score)
    draft.set_defaults(handler=run_draft)

