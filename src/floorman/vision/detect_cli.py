"""`floorman detect IMAGE|DIR|VIDEO`: run the detector and print every object per image or frame.

Each object: class, box in pixels, confidence; with `--layout` and `--calib`, the box's bottom centre mapped
to table millimetres and the zone there. Each face-up card is read by the card recogniser (`identity`, e.g. "10H",
with `identity_confidence`; null when unsure). Each chip box is read by the chip recogniser (`chips`: values bottom
to top, `count`, `identity` the top chip's value); with a calibration a stack's position is its fitted foot and
its count comes from its geometry (`count_confidence`), without one the count is not measured (confidence 0) unless
`--straight-down` (a photo taken straight down: the camera it implies counts the stacks, `vision.straight_down`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from floorman.core.chips import ChipSet
from floorman.core.errors import CameraError, ConfigError
from floorman.core.geometry import FloatArray
from floorman.core.layout import TableLayout
from floorman.core.table_state import zone_totals
from floorman.vision.button_or_chip import buttons_as_chips
from floorman.vision.calibration import Calibration, check_camera_height, load_calibration
from floorman.vision.cards_cnn import CardClassifier
from floorman.vision.chips import ChipReading, ChipRecogniser
from floorman.vision.chips_colour import grayscale
from floorman.vision.chips_geometry import Box
from floorman.vision.cli import load_layout, output_folder, read_image, write_image
from floorman.vision.detections import Detections, alternative_box, border_cuts
from floorman.vision.detector import Detector, Image, OnnxDetectorConfig, create_detector, parse_levels
from floorman.vision.straight_down import read_straight_down
from floorman.vision.table_state import (
    ONE_STACK_SHARE,
    boxed_twice,
    placed_on_table,
    recognise_card_reader,
    same_place_readings,
    table_camera,
)

IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp"})
VIDEO_SUFFIXES = frozenset({".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v"})
DEFAULT_MODEL = "models/weights/detector_int8.onnx"
# Still photographs are read with the photo detector (session 28: the shipped detector's weights averaged with a
# fine-tune on other clubs' chips, `floorman models average`; it finds plain white chips the video detector misses
# but lost alerts from the 1280x720 videos, so the edge and videos keep the video detector). MODEL_CARD.md.
PHOTO_MODEL = "models/weights/photo_detector_int8.onnx"
_COLOURS = ((255, 255, 255), (200, 60, 60), (40, 40, 230), (0, 215, 255), (180, 120, 240))


class DetectedObject(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    class_name: str = Field(description="Detector class (card_face, card_back, chip, dealer_button, hand).")
    class_id: int = Field(description="Detector class id.")
    confidence: float = Field(description="Detector score, 0..1.")
    box: tuple[float, float, float, float] = Field(description="x1, y1, x2, y2 in pixels.")
    table_mm: tuple[float, float] | None = Field(default=None, description="Box bottom centre on the table, mm.")
    zone: str | None = Field(default=None, description="Layout zone at table_mm.")
    identity: str | None = Field(default=None, description="Card or chip identity (from the recognisers).")
    identity_confidence: float | None = Field(default=None, description="Confidence of the identity, 0..1.")
    chips: tuple[int, ...] | None = Field(default=None, description="Chip values bottom to top, for chip objects.")
    count: int | None = Field(default=None, description="Chips in the stack, for chip objects.")
    count_confidence: float | None = Field(default=None, description="Confidence of the count, 0..1.")
    boxed_twice: bool = Field(default=False, description="With a calibration: a chip box on a stack another chip "
                              "box holds (one stack boxed twice, as the edge's table state drops it), not counted in "
                              "chip_totals or zone_values.")


class ChipTotal(BaseModel):
    """The chips of one denomination seen in a frame, summed over its stacks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: int = Field(description="Denomination value.")
    name: str = Field(description="Denomination name in the chip set.")
    colour: str = Field(description="Body colour in the chip set, '#rrggbb'.")
    colour_name: str = Field(description="Plain colour word for the body colour (white, red, green, ...).")
    chips: int = Field(description="Chips of this denomination over every stack.")
    stacks: int = Field(description="Stacks holding at least one chip of this denomination.")


class FrameReport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="Image file or video file.")
    frame: int | None = Field(description="Frame index in a video, None for an image.")
    width: int = Field(description="Image width in pixels.")
    height: int = Field(description="Image height in pixels.")
    objects: list[DetectedObject] = Field(description="Every detection.")
    chip_totals: list[ChipTotal] = Field(default_factory=list, description="Chips counted per denomination "
                                         "(colour), highest value first; without a calibration, boxes too long to "
                                         "be a chip lying flat (a rack's row) are left out.")
    zone_values: dict[str, int] = Field(default_factory=dict, description="With a calibration: the chips' value "
                                        "per layout zone holding chips (each stack counted once), as the edge's "
                                        "table state sums them.")
    grayscale: bool = Field(default=False, description="The image holds no colour (its three channels equal: a "
                            "monochrome or infrared camera): chips are valued by their colours, so each chip's "
                            "denomination is given 0 confidence and no chips are counted per denomination or valued "
                            "per zone.")


COLOUR_WORDS = {"white": (235, 235, 230), "grey": (128, 128, 128), "black": (25, 25, 28), "red": (190, 30, 40),
                "green": (30, 140, 60), "blue": (30, 70, 180), "purple": (110, 40, 140), "yellow": (235, 200, 40),
                "orange": (240, 120, 30), "pink": (240, 130, 170), "brown": (120, 75, 40)}


def colour_name(rgb: tuple[int, int, int]) -> str:
    """The nearest plain colour word (CIE Lab distance) to an RGB colour."""
    words = list(COLOUR_WORDS)
    swatches = np.array([[COLOUR_WORDS[w] for w in words] + [rgb]], dtype=np.uint8)[:, :, ::-1]
    lab = cv2.cvtColor(swatches, cv2.COLOR_BGR2LAB)[0].astype(np.float32)
    return words[int(np.linalg.norm(lab[:-1] - lab[-1], axis=1).argmin())]


# Without a calibration a chip box longer than this many times the frame's typical chip box (the median longest side
# of the chip boxes clear of the image's border, of at least _MIN_TYPICAL of them) is no chip lying flat: a row of
# a chip rack (its chips on edge) boxed in part. Such boxes are not counted in `chip_totals`. Measured on photo-like
# frames (the `benchmarks/chips_photo.py` scenes, seeds 99631 and 99632, 70 frames): 4 boxes left out, none on a
# chip object (IoU >= 0.5), one over two chips boxed together (they then count 0, not 1); frames exact in every
# colour 21 -> 22.
_LONGER_THAN_A_CHIP = 1.3
# Two boxes tell the typical size when they agree within _TWO_AGREE times (not a chip and a rack's row). Session 35
# (it took three): photos with two or three chips in view had their slivers at the edge counted; thirteen photo sets
# of 40 (`benchmarks/photo_labels.py --singles --rack always`) every colour exact 471 -> 474 of 520.
_MIN_TYPICAL = 2
_TWO_AGREE = 1.25
# Nor is a chip box cut by the image's border to less than this share of the typical chip box across that border (a
# chip a fifth or less in view): such slivers' colours were read wrong 8 times of 13 on photo-like frames (dev seeds
# 29900-29903, 120 frames; from 0.3 to 0.45 of a chip across, 1 of 9; more, none).
_MIN_IN_VIEW = 0.3
# Nor is a chip box the detector is less sure of than this: on photo-like frames of single chips with a rack at the
# side (`benchmarks/photo_labels.py --singles --rack always`, dev seeds 31001-31004, 160 photos, the photo detector)
# 23 of the 28 chip boxes on no chip (a rack's row cut by the photo's edge or a card, a card with a chip on it) are
# under 0.4 and 4 of 1,081 on a chip (two of them slivers at the edge); photos with every colour exact 129 -> 135.
_MIN_COUNTED_CONFIDENCE = 0.4
# ... unless it has a lone chip's shape (each side within `_LONE_CHIP_SIDES` of the frame's typical chip box, clear of
# the border) and its colours read as one denomination with confidence `_LONE_CHIP_VALUE` or more: the detector
# scores another club's plain white chip (white spots on white) 0.26-0.33 on light wood, where no rack row or card
# corner has a chip's outline and colours. Dev photo sets (seeds 31003-35102, nine sets, 360 photos): of 34 chip
# boxes under 0.4, 5 are such chips and counted again; none of the 29 others passes (27 on no chip or a chip already
# counted, 2 chips cut by the border).
_LONE_CHIP_SIDES = (0.9, 1.12)
_LONE_CHIP_VALUE = 0.45
# Nor is a chip box cut by the image's border whose colours read a denomination with less confidence than this (the
# end of a rack's row, a card's corner): on eleven dev photo sets (440 photos) every colour exact 390 -> 396 with the
# photo detector of session 35, 380 -> 385 with session 28's; fresh seeds 35301 / 35302 39 -> 38, 36 -> 37 of 40.
_MIN_CUT_VALUE = 0.3
# ... or, for a box cut by two borders (in the photo's corner, where a chip shows a quarter of its rim at most), than
# this: the corner of a chip rack, its chips on edge, was counted as a white chip (read 0.35-0.45) in three photos of
# 520 (thirteen dev photo sets of `benchmarks/photo_labels.py --singles --rack always`), where the one chip box in a
# corner that was a chip read 0.70; every colour exact 482 -> 485 with the photo detector `h200_36`.
_MIN_CORNER_VALUE = 0.5


def counted_chips(chips: dict[int, ChipReading], detections: Detections, *,
                  image_size: tuple[int, int], every_box: bool = False) -> dict[int, ChipReading]:
    """The readings `chip_totals` counts: without a count (no calibration), not those of boxes the detector is less
    sure of than `_MIN_COUNTED_CONFIDENCE` (but for lone chips read with confidence `_LONE_CHIP_VALUE`), cut by the
    image's border and read with less confidence than `_MIN_CUT_VALUE` (`_MIN_CORNER_VALUE` in a corner), too long
    to be a chip lying flat (`_LONGER_THAN_A_CHIP` times the frame's typical chip box) or cut by the image's border
    to a sliver (less than `_MIN_IN_VIEW` of it across the border); `every_box` (a straight-down photo, whose counts
    come from an implied camera): not those among all the boxes (a rack's row read as a tall stack)."""
    boxes = detections.xyxy.astype(np.float64).reshape(-1, 4)
    sides = boxes[:, 2:] - boxes[:, :2]  # width, height
    longest = sides.max(axis=1)
    uncounted = [i for i, reading in chips.items()
                 if every_box or (reading.count_confidence == 0.0 and reading.base_mm is None)]
    cut_x, cut_y = border_cuts(boxes, image_size)  # by the left or right border, by the top or bottom one
    clear = ~(cut_x | cut_y)
    unsure = {i for i in uncounted if float(detections.confidence[i]) < _MIN_COUNTED_CONFIDENCE
              or (not clear[i] and chips[i].confidence < _MIN_CUT_VALUE)
              or (cut_x[i] and cut_y[i] and chips[i].confidence < _MIN_CORNER_VALUE)}
    typical = _typical_chip_px(longest[[i for i in uncounted if i not in unsure and clear[i]]])
    if typical is None:
        return {i: reading for i, reading in chips.items() if i not in unsure}
    low, high = _LONE_CHIP_SIDES[0] * typical, _LONE_CHIP_SIDES[1] * typical
    unsure -= {i for i in unsure if clear[i] and chips[i].confidence >= _LONE_CHIP_VALUE
               and bool(np.all((sides[i] >= low) & (sides[i] <= high)))}
    # across each side the border cuts, the box's extent (inf where it cuts none)
    across = np.minimum(np.where(cut_x, sides[:, 0], np.inf), np.where(cut_y, sides[:, 1], np.inf))
    left_out = unsure | {i for i in uncounted if longest[i] > _LONGER_THAN_A_CHIP * typical
                         or across[i] < _MIN_IN_VIEW * typical}
    return {i: reading for i, reading in chips.items() if i not in left_out}


def _typical_chip_px(longest: FloatArray) -> float | None:
    """The frame's typical chip box, the median of the longest sides of the chip boxes clear of the image's border;
    None from fewer than `_MIN_TYPICAL` of them, or from two that differ more than `_TWO_AGREE` times."""
    if len(longest) < _MIN_TYPICAL or (len(longest) == 2 and longest.max() > _TWO_AGREE * longest.min()):
        return None
    return float(np.median(longest))


def chip_totals(chips: dict[int, ChipReading], chipset: ChipSet) -> list[ChipTotal]:
    """Per denomination: chips over all stacks and stacks holding it."""
    counts: dict[int, int] = {}
    stacks: dict[int, int] = {}
    for reading in chips.values():
        for value in reading.denominations:
            counts[value] = counts.get(value, 0) + 1
        for value in set(reading.denominations):
            stacks[value] = stacks.get(value, 0) + 1
    totals = []
    for value in sorted(counts, reverse=True):
        denomination = chipset.by_value(value)
        totals.append(ChipTotal(value=value, name=denomination.label, colour=denomination.colour,
                                colour_name=colour_name(denomination.rgb), chips=counts[value],
                                stacks=stacks[value]))
    return totals


def default_model(*, photos: bool = False) -> Path:
    """The shipped INT8 detector: for still `photos` the photo detector (when shipped), else the video detector."""
    if photos:
        photo = Path(str(resources.files("floorman").joinpath(PHOTO_MODEL)))
        if photo.is_file():
            return photo
    return Path(str(resources.files("floorman").joinpath(DEFAULT_MODEL)))


def is_video(source: Path) -> bool:
    """Whether `floorman detect` reads `source` as a video (else as an image or a folder of images)."""
    return source.is_file() and source.suffix.lower() in VIDEO_SUFFIXES


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "detect", help="detect cards, chips, the button and hands in images or a video",
        description="Print every detected object per image or frame: class, box in pixels, confidence, a card's "
        "identity, a chip stack's values and count (and table mm and zone with --layout and --calib), then the chips "
        "counted per denomination (and, with --layout and --calib, each stack once, the chips' value per zone). Any "
        "image size: frames are seen through a pyramid of resized windows.")
    parser.add_argument("source", type=Path, help="an image, a folder of images, or a video file")
    parser.add_argument("--model", type=Path, help="ONNX detector (default: the shipped INT8 models, the photo "
                        "detector for images, the video detector for a video)")
    parser.add_argument("--json", action="store_true", help="one JSON object per image or frame")
    parser.add_argument("--annotate", type=Path, metavar="OUT", help="write annotated images into folder OUT")
    parser.add_argument("--conf", type=float, default=0.25, help="minimum confidence (default 0.25)")
    parser.add_argument("--iou", type=float, default=0.5, help="NMS IoU (default 0.5)")
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads (default 1)")
    parser.add_argument("--levels", type=_levels, help="pyramid levels, long side in px, e.g. 320,960 "
                        "(default: the model's)")
    parser.add_argument("--every", type=int, default=1, help="in a video, detect every Nth frame")
    parser.add_argument("--max-frames", type=int, help="in a video, stop after this many detected frames")
    parser.add_argument("--layout", help="bundled layout name or layout YAML (with --calib)")
    parser.add_argument("--calib", type=Path, help="camera calibration YAML (with --layout)")
    parser.add_argument("--chipset", type=Path, help="chip set YAML (default: the shipped set; see "
                        "`floorman chips calibrate`)")
    parser.add_argument("--camera-height", type=float, metavar="MM", help="camera height above the felt in mm, "
                        "for stack counts from a camera looking straight down (default: the calibration file's if "
                        "measured, else from the calibration or the stacks in view)")
    parser.add_argument("--view", nargs=2, action="append", default=[], metavar=("IMAGE", "CALIB"),
                        help="another calibrated camera's photo of the same moment and its calibration (repeatable; "
                        "IMAGE is then one photo, with --layout and --calib): each photo is printed as read, then "
                        "the stacks, cards and zone values fused in table mm, each stack counted from every camera's "
                        "view of it")
    add_straight_down_argument(parser)
    parser.set_defaults(handler=run_detect)


def add_straight_down_argument(parser: argparse.ArgumentParser) -> None:
    """`--straight-down`, shared by `floorman detect` and `floorman photos score|draft`."""
    parser.add_argument("--straight-down", action="store_true",
                        help="photos taken straight down, without a calibration: count each stack's chips from its "
                        "side, with a camera over the image's centre scaled by the chips (and --camera-height if "
                        "measured); without it each chip box counts as one chip")


def _levels(text: str) -> tuple[int, ...]:
    try:
        return parse_levels(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def frames(source: Path, *, every: int = 1, max_frames: int | None = None) -> Iterator[tuple[str, int | None, Image]]:
    """(source name, frame index or None, BGR image) for an image, each image of a folder, or a video."""
    if source.is_dir():
        paths = sorted(p for p in source.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not paths:
            raise CameraError(f"{source}: no images ({', '.join(sorted(IMAGE_SUFFIXES))}) in the folder")
        for path in paths:
            yield str(path), None, read_image(path)
    elif not source.is_file():
        raise CameraError(f"{source}: no such file or folder")
    elif is_video(source):
        yield from _video_frames(source, every=every, max_frames=max_frames)
    else:
        yield str(source), None, read_image(source)


def _video_frames(path: Path, *, every: int, max_frames: int | None) -> Iterator[tuple[str, int | None, Image]]:
    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        raise CameraError(f"{path}: not a readable video")
    index, emitted = 0, 0
    try:
        while max_frames is None or emitted < max_frames:
            ok, frame = capture.read()
            if not ok:
                break
            if index % every == 0:
                emitted += 1
                yield str(path), index, np.asarray(frame, dtype=np.uint8)
            index += 1
    finally:
        capture.release()
    if index == 0:
        raise CameraError(f"{path}: no frames could be decoded")


Identity = tuple[str | None, float | None]


def read_cards(image: Image, detections: Detections, *, names: dict[int, str], margin: float = 0.1,
               pixels_to_mm: FloatArray | None = None, classifier: CardClassifier | None = None) -> list[Identity]:
    """The card recogniser on every `card_face` box (grown by `margin`; with a calibration's homography, each
    outline upright on the table: `table_state.recognise_card_reader`; `classifier` instead of the shipped
    one); (None, None) for other classes."""
    reader = recognise_card_reader(margin, pixels_to_mm=pixels_to_mm, classifier=classifier)
    identities: list[Identity] = []
    for i in range(len(detections)):
        if names.get(int(detections.class_id[i])) != "card_face":
            identities.append((None, None))
            continue
        identity = reader(image, _box_of(detections, i))
        identities.append((identity.card, round(float(identity.confidence), 3)))
    return identities


def read_chips(image: Image, detections: Detections, *, names: dict[int, str], recogniser: ChipRecogniser,
               last: Sequence[tuple[Box, ChipReading]] = (), straight_down: bool = False,
               camera_height_mm: float | None = None) -> dict[int, ChipReading]:
    """The chip recogniser on every `chip` box, by detection index (read together: `ChipRecogniser.read_frame`).
    `last`: the previous video frame's boxes and readings; a stack at the same place keeps its count where the
    evidence leaves it open (`table_state.same_place_readings`). `straight_down`: an uncalibrated photo taken
    straight down, its stacks counted with the camera it implies (`straight_down.read_straight_down`; the camera
    `camera_height_mm` above the felt when given)."""
    indices: list[int] = []
    boxes: list[Box] = []
    seconds: list[Box | None] = []  # the detector's second box of each, where it has one (`ALTERNATIVE_BOX`)
    for i in range(len(detections)):
        if names.get(int(detections.class_id[i])) == "chip":
            x1, y1, x2, y2 = (float(v) for v in detections.xyxy[i])
            if x2 - x1 >= 2 and y2 - y1 >= 2:
                indices.append(i)
                boxes.append((x1, y1, x2, y2))
                seconds.append(alternative_box(detections, i))
    previous = same_place_readings(boxes, last)
    if straight_down:
        read = read_straight_down(image, boxes, recogniser=recogniser, height_mm=camera_height_mm, previous=previous)
    else:
        read = recogniser.read_evidence(image, [recogniser.evidence(image, box, alternative=second)
                                                for box, second in zip(boxes, seconds, strict=True)],
                                        previous=previous)
    return dict(zip(indices, read, strict=True))


def report(detections: Detections, *, names: dict[int, str], source: str, frame: int | None,
           image_size: tuple[int, int], zones: list[str | None] | None = None,
           identities: list[Identity] | None = None, chips: dict[int, ChipReading] | None = None,
           twice: set[int] | frozenset[int] = frozenset()) -> FrameReport:
    """The frame's report: every detection, with its card identity or chip reading, table position and zone;
    `twice`: the chip boxes on a stack another box holds (`table_state.boxed_twice`)."""
    objects = []
    for i in range(len(detections)):
        identity, identity_confidence = (None, None) if identities is None else identities[i]
        reading = None if chips is None else chips.get(i)
        if reading is not None:
            identity, identity_confidence = str(reading.top), round(reading.confidence, 3)
        table = None if detections.xy_mm is None else (float(detections.xy_mm[i, 0]), float(detections.xy_mm[i, 1]))
        x1, y1, x2, y2 = (round(float(v), 1) for v in detections.xyxy[i])
        class_id = int(detections.class_id[i])
        objects.append(DetectedObject(
            class_name=names.get(class_id, str(class_id)), class_id=class_id,
            confidence=round(float(detections.confidence[i]), 4), box=(x1, y1, x2, y2), table_mm=table,
            zone=None if zones is None else zones[i], identity=identity, identity_confidence=identity_confidence,
            chips=None if reading is None else reading.denominations, count=None if reading is None else reading.count,
            count_confidence=None if reading is None else round(reading.count_confidence, 3),
            boxed_twice=i in twice))
    return FrameReport(source=source, frame=frame, width=image_size[0], height=image_size[1], objects=objects)


def format_text(result: FrameReport) -> str:
    where = result.source if result.frame is None else f"{result.source} frame {result.frame}"
    lines = [f"{where} ({result.width}x{result.height}): {len(result.objects)} objects"]
    for obj in result.objects:
        x1, y1, x2, y2 = obj.box
        line = f"  {obj.class_name:<13} {obj.confidence:.2f}  box {x1:.0f},{y1:.0f},{x2:.0f},{y2:.0f}"
        if obj.class_name == "card_face":
            line += f"  card {obj.identity} ({obj.identity_confidence:.2f})" if obj.identity else "  card ?"
        if obj.chips is not None and obj.count is not None:
            line += (f"  chips {chip_text(obj.chips)} ({obj.identity_confidence or 0.0:.2f}, "
                     f"count {obj.count_confidence or 0.0:.2f})")
        if obj.table_mm is not None:
            line += f"  table ({obj.table_mm[0]:.0f}, {obj.table_mm[1]:.0f}) mm  zone {obj.zone or '-'}"
        if obj.boxed_twice:
            line += "  (a stack boxed twice: not counted)"
        lines.append(line)
    if result.chip_totals:
        lines.append("  chips by denomination: " + ", ".join(
            f"{t.name} ({t.colour_name}) x {t.chips}" for t in result.chip_totals))
    if result.zone_values:
        lines.append("  zone values: " + ", ".join(f"{zone} {value}" for zone, value in result.zone_values.items()))
    if result.grayscale:
        lines.append("  no colour in the image (grayscale): chips are valued by their colours, so no denomination is "
                     "known")
    return "\n".join(lines) + "\n"


def chip_text(chips: tuple[int, ...]) -> str:
    """'6 x 500' for a uniform stack, '3: 100+100+500' (bottom to top) for a mixed one."""
    if len(set(chips)) == 1:
        return f"{len(chips)} x {chips[0]}"
    return f"{len(chips)}: " + "+".join(str(c) for c in chips)


def annotate(image: Image, result: FrameReport) -> Image:
    out = image.copy()
    scale = max(0.45, out.shape[1] / 1600.0)  # readable labels on 3000 px photos too
    thickness = max(1, round(scale * 2))
    for obj in result.objects:
        colour = _COLOURS[obj.class_id % len(_COLOURS)]
        x1, y1, x2, y2 = (round(v) for v in obj.box)
        cv2.rectangle(out, (x1, y1), (x2, y2), colour, thickness + 1)
        label = f"{obj.class_name} {obj.confidence:.2f}" + (f" {obj.identity}" if obj.identity else "")
        if obj.count is not None and obj.count > 1:
            label += f" x{obj.count}"
        cv2.putText(out, label, (x1, max(round(28 * scale), y1 - 4)), cv2.FONT_HERSHEY_SIMPLEX, scale, colour,
                    thickness, cv2.LINE_AA)
    return out


def _placement(args: argparse.Namespace) -> tuple[TableLayout, Calibration] | None:
    if (args.layout is None) != (args.calib is None):
        raise ConfigError("expected --layout and --calib together", field="--calib" if args.calib is None
                          else "--layout")
    if args.layout is None:
        return None
    layout = load_layout(args.layout)
    return layout, load_calibration(args.calib, layout=layout)


def run_detect(args: argparse.Namespace) -> int:
    check_camera_height(args.camera_height, field="--camera-height")
    model = args.model if args.model is not None else default_model(photos=not is_video(args.source))
    detector: Detector = create_detector(OnnxDetectorConfig(
        model=model, conf=args.conf, iou=args.iou, threads=args.threads, levels=args.levels))
    if args.straight_down and args.calib is not None:
        raise ConfigError("--straight-down is for photos without a calibration (with --calib the calibration's "
                          "camera counts the stacks)", field="--straight-down")
    views = []
    if args.view:
        from floorman.vision.detect_views import views_of

        views = views_of(args)  # refused before any photo is read
    placement = _placement(args)
    recogniser = _chip_recogniser(args, placement)
    if args.annotate is not None:
        output_folder(args.annotate, field="--annotate")
    if views and placement is not None:
        from floorman.vision.detect_views import run_views

        return run_views(args, detector, views, placement=placement, chipset=recogniser.chipset)
    last: list[tuple[Box, ChipReading]] = []  # the previous video frame's chip boxes and readings
    for source, frame_index, image in frames(args.source, every=max(1, args.every), max_frames=args.max_frames):
        if placement is not None:
            check_calibrated_size(image, placement[1], source=str(source), path=args.calib)
        result, last = read_frame(image, detector=detector, recogniser=recogniser, source=source,
                                  frame_index=frame_index, placement=placement,
                                  last=last if frame_index is not None else (), straight_down=args.straight_down,
                                  camera_height_mm=args.camera_height)
        sys.stdout.write(result.model_dump_json() + "\n" if args.json else format_text(result))
        if args.annotate is not None:
            stem = Path(source).stem if frame_index is None else f"{Path(source).stem}_{frame_index:06d}"
            write_image(args.annotate / f"{stem}.jpg", annotate(image, result))
    return 0


def read_frame(image: Image, *, detector: Detector, recogniser: ChipRecogniser, source: str,
               frame_index: int | None = None, placement: tuple[TableLayout, Calibration] | None = None,
               last: Sequence[tuple[Box, ChipReading]] = (), straight_down: bool = False,
               camera_height_mm: float | None = None) -> tuple[FrameReport, list[tuple[Box, ChipReading]]]:
    """What `floorman detect` prints for one image or video frame (detections, card identities, chip readings,
    chips counted per denomination; with `placement`, table mm and zones), and the frame's chip boxes and
    readings, for the next frame of a video (`last`). `straight_down` (no `placement`): a photo taken straight down,
    its stacks counted with the camera it implies (`read_chips`)."""
    if straight_down and placement is not None:
        raise ValueError("straight_down is for frames without a calibration")
    detections = detector.detect(image)
    if placement is None:  # a chip's size and print tell a plain white chip from the button (`button_or_chip`)
        detections = buttons_as_chips(image, detections, names=detector.names)
    chips = read_chips(image, detections, names=detector.names, recogniser=recogniser, last=last,
                       straight_down=straight_down, camera_height_mm=camera_height_mm)
    seen = [(_box_of(detections, i), reading) for i, reading in chips.items()]
    zones = None
    twice: set[int] = set()
    if placement is not None:
        layout, calibration = placement
        camera = recogniser.camera or table_camera(calibration, camera_height_mm=camera_height_mm)
        hand_class = next((k for k, name in detector.names.items() if name == "hand"), -1)
        detections = placed_on_table(detections, chips, calibration=calibration, camera=camera, hand_class=hand_class)
        zones = layout.zone_names_at(detections.xy_mm.astype(np.float64)) \
            if len(detections) and detections.xy_mm is not None else []
        twice = boxed_twice(detections, chips, apart_mm=ONE_STACK_SHARE * recogniser.chipset.diameter_mm)
    result = report(detections, names=detector.names, source=source, frame=frame_index,
                    image_size=(image.shape[1], image.shape[0]), zones=zones,
                    identities=read_cards(image, detections, names=detector.names,
                                          pixels_to_mm=None if placement is None else placement[1].pixels_to_mm),
                    chips=chips, twice=twice)
    if grayscale(image):  # chips are valued by their colours: none here
        objects = [o.model_copy(update={"identity_confidence": 0.0}) if o.chips is not None else o
                   for o in result.objects]
        return result.model_copy(update={"objects": objects, "grayscale": True}), seen
    once = {i: reading for i, reading in chips.items() if i not in twice}
    counted = counted_chips(once, detections, image_size=(image.shape[1], image.shape[0]), every_box=straight_down)
    update: dict[str, object] = {"chip_totals": chip_totals(counted, recogniser.chipset)}
    if zones is not None:
        update["zone_values"] = zone_values(once, zones)
    return result.model_copy(update=update), seen


def zone_values(chips: dict[int, ChipReading], zones: Sequence[str | None]) -> dict[str, int]:
    """The chips' value per zone (`zones`: each detection's), for the zones holding chips, sorted by zone name, as
    the edge's `TableState.zone_values` sums it (`core.table_state.zone_totals`)."""
    return zone_totals((zones[i], reading.value) for i, reading in chips.items())


def check_calibrated_size(image: Image, calibration: Calibration, *, source: str, path: Path) -> None:
    """A calibration maps its own frames' pixels: an image of another size would get wrong positions, zones,
    counts and card orientations, so it is refused, naming both sizes."""
    height, width = image.shape[:2]
    if (width, height) != tuple(calibration.image_size):
        cal_w, cal_h = calibration.image_size
        raise ConfigError(f"{source} is {width}x{height}, but the calibration {path} was made on {cal_w}x{cal_h} "
                          "frames: calibrate on a frame of this size (or resize the frames to the calibration's)",
                          field="--calib")


def _box_of(detections: Detections, i: int) -> Box:
    x1, y1, x2, y2 = (float(v) for v in detections.xyxy[i])
    return x1, y1, x2, y2


def _chip_recogniser(args: argparse.Namespace, placement: tuple[TableLayout, Calibration] | None) -> ChipRecogniser:
    chipset = ChipSet.load(args.chipset) if args.chipset is not None else ChipSet.default()
    camera = None
    if placement is not None:
        camera = table_camera(placement[1], camera_height_mm=args.camera_height)
    return ChipRecogniser(chipset, camera=camera)
