"""`TableStateBuilder`: one frame in, one `TableState` out (detect, recognise, place on the table, track).

Per frame: the detector's boxes; each face-up card read by the card reader; each chip box read by the chip
recogniser (denominations bottom to top, count from the stack's geometry); positions in table mm through the
calibration (a stack's foot from its fitted cylinder, a card's centre, a hand's middle: its box's centre taken at
a hand's height above the felt and moved a tenth of the way to the edge nearest the table centre) and the layout
zone there; of two chip boxes on one stack (their feet under half a chip apart, or their top discs at one place)
only one (`one_box_per_stack`); no hand where a stack, card or button was seen clear of hands with the same pixels
as now (`StillScene`); tracker ids from `TableTracker`; the button's seat (the nearest seat). Without a calibration
(or layout) positions, zones and chip counts are left unknown.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from floorman.core.chips import ChipSet
from floorman.core.geometry import FloatArray
from floorman.core.layout import TableLayout
from floorman.core.table_state import SeenButton, SeenCard, SeenChips, SeenHand, TableState
from floorman.vision.calibration import Calibration
from floorman.vision.cards_cnn import CardClassifier
from floorman.vision.chips import ChipReading, ChipRecogniser, StackEvidence
from floorman.vision.chips_colour import grayscale
from floorman.vision.chips_geometry import Box, TableCamera
from floorman.vision.detections import Detections, alternative_box
from floorman.vision.detector import Detector, Image, box_iou
from floorman.vision.still_scene import StillScene, crop, same_pixels
from floorman.vision.tracking import TableTracker

logger = logging.getLogger(__name__)

_SAME_PLACE_IOU = 0.6  # a chip box overlapping one of the previous frame this much is the same stack (moved a pixel)
# Two chip boxes whose stacks' feet lie closer than this share of a chip's diameter are one stack seen twice (two
# stacks standing apart are a diameter apart, touching ones too): the detector's surer box is kept. Measured on
# detector boxes of 30 frames of mixed sizes (seed 99602): 8 pairs of boxes on one stack among 465 boxes, 4 of them
# under 16 mm apart; boxes on two chip objects came no closer than 23.8 mm. `benchmarks/chips.py --size mixed --seed
# 99602 --frames 60`, detector boxes with the height: zone value exact 16.6 -> 16.9 %, the stacks' figures unchanged.
# Since session 65 the box whose count is read surer is kept (the detector's surer of two as sure): a foot is placed
# from the count, and a count read wrong puts it where another stack stands. From two 4K cameras facing each other
# (pair4k pocket_chips_01) a stack of 25s half hidden behind three 1000s was boxed to where the 1000s hide it, read
# on down the 1000s' side as 20 chips (count 0.18 sure), its foot so put on the 1000s' (0.83 sure): the detector, 0.77
# sure of that box and 0.70 of the 1000s', kept it, and the 1000s went from the state for 2 s, as if taken. Measured
# (`benchmarks/chips.py`, detector boxes, camera height given, before -> after): `--scene seats --size 3840x2160
# --frames 12 --seed 60902` count exact 89.0 -> 89.6 %, zone value 70.1 -> 71.1 %; `--seed 50104` 84.2 -> 84.3 %, zone
# value 65.0 % either way; dev `--seed 50101` 87.5 -> 87.6 %, zone value 72.3 % either way (each with one stack more
# matched to a box: the box kept is the better placed); `--size mixed --frames 60 --seed 99656` count exact 70.8 ->
# 71.2 %, chip denomination 83.5 -> 83.1 %, zone value 33.1 % either way. (Session 51 measured the same choice for
# `_same_top` and left it: there a short box round a stack's top is often read surer than the whole stack's.)
ONE_STACK_SHARE = 0.5
# ...and so are two whose top discs' centres (where each box's fit saw the rim) lie closer than this share of the
# narrower box's width: a box round a tall stack's top disc alone beside one round the whole stack puts its foot the
# missing chips nearer the camera (31 mm: tilted 4K out_of_turn_04, a stack of nineteen 100s read again as 29 from
# the short box, then seen twice: its reappearance beside itself a sure rail crossing, a false D2). The larger box is
# kept where it is `_WHOLE_STACK_SIZE` times the other's size: the detector is often surer of the short box (1280x720
# hidden_chips_covered_02: a stack of 19 boxed again round its top, that box read 1-5 chips at 0.3-0.9). Tops of
# stacks standing apart are a diameter apart. The still benchmarks hold no such pair (`benchmarks/chips.py --scene
# seats --size 3840x2160 --seed 50101 / 50104 / 49006`, `--scene seats --size mixed --seed 50102`, `--size mixed
# --seed 50103`: every figure unchanged).
_ONE_TOP_SHARE = 0.25
_WHOLE_STACK_SIZE = 1.25  # ...where the other box is this many times the surer one's size, it is kept instead


def same_place_readings(boxes: Sequence[Box], last: Sequence[tuple[Box, ChipReading]]) -> list[ChipReading | None]:
    """For each chip box, the last frame's reading of the box it overlaps most, when that overlap reaches
    `_SAME_PLACE_IOU` (the same stack, its box moved by a pixel), else None: the `previous` of
    `ChipRecogniser.read_evidence`."""
    if not last:
        return [None] * len(boxes)
    last_boxes = np.array([box for box, _ in last], dtype=np.float32).reshape(-1, 4)
    hints: list[ChipReading | None] = []
    for box in boxes:
        overlaps = box_iou(np.array(box, dtype=np.float32), last_boxes)[0]
        near = int(np.argmax(overlaps))
        hints.append(last[near][1] if overlaps[near] >= _SAME_PLACE_IOU else None)
    return hints


@dataclass(frozen=True, slots=True)
class CardIdentity:
    card: str | None
    confidence: float


CardReader = Callable[[Image, Box], CardIdentity]


def recognise_card_reader(margin: float = 0.1, *, pixels_to_mm: FloatArray | None = None,
                          classifier: CardClassifier | None = None) -> CardReader:
    """The shipped card recogniser (`vision.cards.recognise_card`) on the box grown by `margin`; with a
    calibration's homography (`pixels_to_mm`), each outline's top is its short side on the table, not in the
    image (`vision.cards.upright_on_table`: a card seen at a slant may be foreshortened past square). `classifier`:
    another card classifier than the shipped one (a benchmark's candidate)."""
    from floorman.vision.cards import recognise_card

    def read(image: Image, box: Box) -> CardIdentity:
        height, width = image.shape[:2]
        x1, y1, x2, y2 = box
        dx, dy = (x2 - x1) * margin, (y2 - y1) * margin
        grown = (max(0.0, x1 - dx), max(0.0, y1 - dy), min(float(width), x2 + dx), min(float(height), y2 + dy))
        if grown[2] - grown[0] < 8 or grown[3] - grown[1] < 8:
            return CardIdentity(None, 0.0)
        reading = recognise_card(image, box=grown, pixels_to_mm=pixels_to_mm, classifier=classifier)
        return CardIdentity(reading.card, float(reading.confidence))

    return read


def table_camera(calibration: Calibration, *, camera_height_mm: float | None = None) -> TableCamera:
    """The camera model behind a calibration (focal length from the homography, or from the camera height:
    `camera_height_mm` if given, else the one measured in the calibration file, if any)."""
    height = camera_height_mm if camera_height_mm is not None else calibration.camera_height_mm
    return TableCamera.from_homography(calibration.mm_to_pixels, image_size=calibration.image_size, height_mm=height)


class TableStateBuilder:
    """`build(frame_bgr, frame_no, t) -> TableState` for one camera."""

    def __init__(self, detector: Detector, layout: TableLayout | None, calibration: Calibration | None,
                 chipset: ChipSet, card_reader: CardReader | None, tracker: TableTracker | None, *,
                 camera_id: str = "cam0", camera_height_mm: float | None = None) -> None:
        self.detector = detector
        self.layout = layout
        self.calibration = calibration
        self.card_reader = card_reader
        self.tracker = tracker
        self.camera_id = camera_id
        camera = None if calibration is None else table_camera(calibration, camera_height_mm=camera_height_mm)
        self.camera = camera
        self.chips = ChipRecogniser(chipset, camera=camera)
        self._class = {name: class_id for class_id, name in detector.names.items()}
        self._chip_cache: dict[tuple[int, int, int, int], tuple[Image, ChipReading, StackEvidence]] = {}
        self._card_cache: dict[tuple[int, int, int, int], tuple[Image, CardIdentity]] = {}
        self._card_seen: dict[tuple[int, int, int, int], tuple[Image, CardIdentity]] = {}
        self._warned_gray = False  # a frame without colour was logged
        self.still = StillScene()

    def build(self, frame_bgr: Image, frame_no: int, t: float) -> TableState:
        started = time.perf_counter()
        detections = self.detector.detect(frame_bgr)
        detected = time.perf_counter()
        return self.state_from(frame_bgr, detections, frame_no=frame_no, t=t,
                               timings={"detect_ms": (detected - started) * 1000.0})

    def state_from(self, frame_bgr: Image, detections: Detections, *, frame_no: int, t: float,
                   timings: dict[str, float] | None = None) -> TableState:
        """The state from given detections (the detector's, or truth boxes in a benchmark)."""
        started = time.perf_counter()
        detections = self.still.without_still_hands(frame_bgr, detections, hand_class=self._class.get("hand", -1),
                                                    t=t)
        chip_class = self._class.get("chip", -1)
        readings = self._read_chips(frame_bgr, detections, chip_class)
        detections = self._placed(detections, readings)
        detections, readings = one_box_per_stack(detections, readings,
                                                 apart_mm=ONE_STACK_SHARE * self.chips.chipset.diameter_mm)
        if self.tracker is not None:
            detections = self.tracker.update(detections)
        zones = self._zones(detections)
        names = self.detector.names
        cards, chips, hands, buttons = [], [], [], []
        for i in range(len(detections)):
            name = names.get(int(detections.class_id[i]), "")
            if name in ("card_face", "card_back"):
                cards.append(self._card(frame_bgr, detections, i, zone=zones[i], face_up=name == "card_face"))
            elif name == "chip":
                chips.append(_chips(detections, i, readings[i], zone=zones[i], calibration=self.calibration))
            elif name == "hand":
                hands.append(self._hand(detections, i, zone=zones[i]))
            elif name == "dealer_button":
                buttons.append(self._button(detections, i))
        if chips and grayscale(frame_bgr):  # chips are valued by their colours: none here
            if not self._warned_gray:
                logger.warning("camera %s: frame %d holds no colour (grayscale); chip values are given 0 sure",
                               self.camera_id, frame_no)
                self._warned_gray = True
            chips = [replace(c, denomination_confidence=0.0) for c in chips]
        button = max(buttons, key=lambda b: b.confidence, default=None)
        self._card_cache, self._card_seen = self._card_seen, {}
        extra = dict(timings or {})
        extra["recognise_ms"] = (time.perf_counter() - started) * 1000.0
        extra["objects"] = float(len(detections))
        logger.debug("frame %d: %d cards, %d chip objects, %d hands", frame_no, len(cards), len(chips), len(hands))
        height, width = frame_bgr.shape[:2]
        return TableState(frame=frame_no, t=t, camera_id=self.camera_id, cards=tuple(cards), chips=tuple(chips),
                          hands=tuple(hands), button=button, size=(width, height), extra=extra)

    def _read_card(self, reader: CardReader, image: Image, box: Box) -> CardIdentity:
        """The card reader's answer; a card whose box and pixels are those of the previous frame (as for chips)
        keeps that frame's reading."""
        key = (round(box[0]), round(box[1]), round(box[2]), round(box[3]))
        pixels = crop(image, key)
        previous = self._card_cache.get(key)
        if previous is not None and same_pixels(previous[0], pixels):
            identity = previous[1]
        else:
            identity = reader(image, box)
        self._card_seen[key] = (pixels.copy(), identity)
        return identity

    def _read_chips(self, image: Image, detections: Detections, chip_class: int) -> dict[int, ChipReading]:
        """Chip readings by detection index. A box where the previous frame had the same box (to the pixel) over
        the same pixels (`still_scene.same_pixels`) keeps that frame's reading: a stack at rest is read once. The
        others are read together, with the evidence of those at rest (`ChipRecogniser.read_frame`:
        the frame's stacks tell an assumed camera's height), each given the previous frame's reading of the box it
        overlaps most (IoU >= _SAME_PLACE_IOU) as its `previous`: a box moved by a pixel keeps its count where the
        evidence leaves it open."""
        cache: dict[tuple[int, int, int, int], tuple[Image, ChipReading, StackEvidence]] = {}
        readings: dict[int, ChipReading] = {}
        fresh: list[tuple[int, tuple[int, int, int, int], Image, StackEvidence]] = []
        for i in np.flatnonzero(detections.class_id == chip_class).tolist():
            box = _box(detections, i)
            key = (round(box[0]), round(box[1]), round(box[2]), round(box[3]))
            pixels = crop(image, key)
            previous = self._chip_cache.get(key)
            if previous is not None and same_pixels(previous[0], pixels):
                readings[i] = previous[1]
                cache[key] = (pixels.copy(), previous[1], previous[2])
            else:
                fresh.append((i, key, pixels.copy(),
                              self.chips.evidence(image, box, alternative=alternative_box(detections, i))))
        resting = [entry[2] for entry in cache.values()]
        hints = same_place_readings([entry[3].box for entry in fresh],
                                    [(key, entry[1]) for key, entry in self._chip_cache.items()])
        read = self.chips.read_evidence(image, [entry[3] for entry in fresh], context=resting, previous=hints)
        for (i, key, pixels, evidence), reading in zip(fresh, read, strict=True):
            readings[i] = reading
            cache[key] = (pixels, reading, evidence)
        self._chip_cache = cache
        return readings

    # --- placing ------------------------------------------------------------------------------------------

    def _placed(self, detections: Detections, readings: dict[int, ChipReading]) -> Detections:
        """The detections placed on the table (`placed_on_table`); unplaced without a calibration."""
        if self.calibration is None or self.camera is None:
            return detections
        return placed_on_table(detections, readings, calibration=self.calibration, camera=self.camera,
                               hand_class=self._class.get("hand", -1))

    def _zones(self, detections: Detections) -> list[str | None]:
        if self.layout is None or detections.xy_mm is None or len(detections) == 0:
            return [None] * len(detections)
        return self.layout.zone_names_at(detections.xy_mm.astype(np.float64))

    def _nearest_seat(self, point: tuple[float, float] | None) -> int | None:
        if self.layout is None or point is None or not self.layout.seats:
            return None
        return min(self.layout.seats, key=lambda s: np.hypot(s.position[0] - point[0], s.position[1] - point[1])).number

    # --- objects ------------------------------------------------------------------------------------------

    def _card(self, image: Image, detections: Detections, i: int, *, zone: str | None, face_up: bool) -> SeenCard:
        identity = CardIdentity(None, 0.0)
        if face_up and self.card_reader is not None:
            identity = self._read_card(self.card_reader, image, _box(detections, i))
        return SeenCard(face_up=face_up, box=_box(detections, i), confidence=float(detections.confidence[i]),
                        position_mm=_position(detections, i), zone=zone, identity=identity.card,
                        identity_confidence=identity.confidence if identity.card else 0.0,
                        track_id=_track(detections, i))

    def _hand(self, detections: Detections, i: int, *, zone: str | None) -> SeenHand:
        position = _position(detections, i)
        # No seat: one box does not tell which side of the rail the arm came from, and the seat nearest the
        # hand is wrong for the dealer's hands (at the deck, beside seat 1). The edge attributes each hand
        # from where its track first came over the rail (the dealer included).
        return SeenHand(box=_box(detections, i), confidence=float(detections.confidence[i]), position_mm=position,
                        zone=zone, track_id=_track(detections, i))

    def _button(self, detections: Detections, i: int) -> SeenButton:
        position = _position(detections, i)
        return SeenButton(box=_box(detections, i), confidence=float(detections.confidence[i]), position_mm=position,
                          seat=self._nearest_seat(position), track_id=_track(detections, i))


def placed_on_table(detections: Detections, readings: dict[int, ChipReading], *, calibration: Calibration,
                    camera: TableCamera, hand_class: int) -> Detections:
    """Detections with table positions (`xy_mm`): chips at their fitted foot (`readings`), cards and buttons at the
    box centre, hands at their middle (`_hand_point`). The edge and `floorman detect --calib` place alike."""
    if len(detections) == 0:
        return detections
    centres = np.stack([(detections.xyxy[:, 0] + detections.xyxy[:, 2]) / 2.0,
                        (detections.xyxy[:, 1] + detections.xyxy[:, 3]) / 2.0], axis=1).astype(np.float64)
    xy = calibration.to_table(centres)
    for i in np.flatnonzero(detections.class_id == hand_class).tolist():
        xy[i] = _hand_point(camera, detections.xyxy[i])
    for i, reading in readings.items():
        if reading.base_mm is not None:
            xy[i] = reading.base_mm
    return Detections(xyxy=detections.xyxy, confidence=detections.confidence, class_id=detections.class_id,
                      tracker_id=detections.tracker_id, xy_mm=xy.astype(np.float32), data=dict(detections.data))


def one_box_per_stack(detections: Detections, readings: dict[int, ChipReading], *,
                      apart_mm: float) -> tuple[Detections, dict[int, ChipReading]]:
    """The detections without the chip boxes on a stack another chip box holds (`boxed_twice`), and the readings by
    their new indices."""
    dropped = boxed_twice(detections, readings, apart_mm=apart_mm)
    if not dropped:
        return detections, readings
    keep = [i for i in range(len(detections)) if i not in dropped]
    logger.debug("%d chip boxes on stacks boxed twice dropped", len(dropped))
    return detections[keep], {new: readings[old] for new, old in enumerate(keep) if old in readings}


def boxed_twice(detections: Detections, readings: dict[int, ChipReading], *, apart_mm: float) -> set[int]:
    """The indices of the chip boxes on a stack another chip box holds (one stack boxed twice): of boxes whose top
    discs' centres lie within `_ONE_TOP_SHARE` of the narrower box's width, all but the one round the whole stack
    (`_same_top`); then, of boxes whose stacks' feet lie within `apart_mm` (`ONE_STACK_SHARE` of a chip's diameter
    for the edge), all but the one whose count is read surer (of two as sure, the detector's surer)."""
    dropped = _same_top(detections, readings)
    feet = sorted(((i, r.base_mm) for i, r in readings.items() if r.base_mm is not None and i not in dropped),
                  key=lambda entry: (-readings[entry[0]].count_confidence, -float(detections.confidence[entry[0]])))
    kept: list[tuple[float, float]] = []
    for i, foot in feet:
        if any(math.hypot(foot[0] - x, foot[1] - y) < apart_mm for x, y in kept):
            dropped.add(i)
        else:
            kept.append((float(foot[0]), float(foot[1])))
    return dropped


def _same_top(detections: Detections, readings: dict[int, ChipReading]) -> set[int]:
    """The boxes whose top disc another box's reading saw at the same place (`_ONE_TOP_SHARE`): of two, the detector's
    surer is kept unless the other is `_WHOLE_STACK_SIZE` times its size (round the whole stack, not its top alone)."""
    xyxy = detections.xyxy.astype(np.float64)
    sizes = (xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1])
    kept: dict[int, tuple[float, float, float]] = {}  # box -> its top disc's centre (px), its width
    dropped: set[int] = set()
    tops = sorted(((i, r.top_px) for i, r in readings.items() if r.top_px is not None),
                  key=lambda entry: -float(detections.confidence[entry[0]]))
    for i, top in tops:
        width = float(xyxy[i, 2] - xyxy[i, 0])
        other = next((k for k, (x, y, w) in kept.items()
                      if math.hypot(top[0] - x, top[1] - y) < _ONE_TOP_SHARE * min(width, w)), None)
        if other is None or sizes[i] > _WHOLE_STACK_SIZE * sizes[other]:
            if other is not None:
                dropped.add(other)
                del kept[other]
            kept[i] = (float(top[0]), float(top[1]), width)
        else:
            dropped.add(i)
    return dropped


def _chips(detections: Detections, i: int, reading: ChipReading, *, zone: str | None,
           calibration: Calibration | None) -> SeenChips:
    return seen_stack(reading, box=_box(detections, i), confidence=float(detections.confidence[i]),
                      position_mm=_position(detections, i), zone=zone, calibration=calibration,
                      track_id=_track(detections, i))


def seen_stack(reading: ChipReading, *, box: Box, confidence: float, position_mm: tuple[float, float] | None,
               zone: str | None, calibration: Calibration | None, track_id: int | None = None) -> SeenChips:
    """A stack as a `TableState` holds it: its values' confidence, its count's (0 when the count was not measured),
    the count's evidence, and where the ray through its top's centre meets the felt (with a calibration)."""
    top_mm = None
    if calibration is not None and reading.top_px is not None:
        point = calibration.to_table(np.array([reading.top_px], dtype=np.float64))[0]
        top_mm = (float(point[0]), float(point[1]))
    return SeenChips(box=box, confidence=confidence, position_mm=position_mm, zone=zone,
                     denominations=reading.denominations, denomination_confidence=float(reading.confidence),
                     count_confidence=float(reading.count_confidence), track_id=track_id,
                     count_log_likelihood=reading.count_log_likelihood, top_mm=top_mm)


HAND_HEIGHT_MM = 30.0
"""The height above the felt at which a hand's box centre is taken (the palm rests ~40 mm up, the fingers lower).
A point that high, projected onto the felt through the calibration's homography, lands beyond the hand, away
from the camera: by ~30 mm from the scenarios' tilted camera (~50 degrees from vertical) and ~20 mm at a straight-down
camera's table edge. Session 43, against the rendered hand's middle (`benchmarks/hands.py --per-video` on the stored
states of the bundled video sets, hands matched within 150 mm), median distance per video: at ~50 degrees 30-41 mm
on the felt -> 21-25 mm at 30 mm up, straight down 15.5-19.7 -> 14.6-18.0 mm, from 4K ~28 degrees 17.8-19.8 ->
18.8-19.9 mm (the camera's height, where a straight-down view cannot tell it, assumed as for chips:
`chips_geometry.DEFAULT_CAMERA_HEIGHT_MM`)."""

HAND_TOWARDS_TIPS = 0.1
"""How far a hand's point lies from its box's centre towards the box edge nearest the table centre (the fingertips'
side), as a share of the way. The `hand` box holds the palm and fingers (since session 6; the arm is not
labelled), so its middle is near the box's centre. Until session 43 (the box's centre taken on the felt) 0.25, which
made up for part of the height's parallax on straight-down views. Taken at `HAND_HEIGHT_MM` (session 43, median
distances as there, 37 videos): 0 was worse on 35 (by up to 5.6 mm); 0.25 worse on 18 of the 19 straight-down ones
(by 0.1-5.1 mm) and better on the eight from 4K ~28 degrees (by 1.3-3.5 mm); 0.1 kept. Heights 25 and 35 mm were
each ~2 mm better on one camera kind and worse on another."""


def _hand_point(camera: TableCamera, box: FloatArray, *, height_mm: float = HAND_HEIGHT_MM,
                towards_tips: float = HAND_TOWARDS_TIPS) -> FloatArray:
    """A hand's middle on the table: the box's centre, taken `height_mm` above the felt, `towards_tips` of the way
    towards the one of its four edge midpoints (taken as high) nearest the table centre (`benchmarks/hands.py` also
    places hands as sessions 6-42 did: on the felt, a quarter of the way)."""
    x1, y1, x2, y2 = (float(v) for v in box)
    mids = np.array([[(x1 + x2) / 2, y1], [(x1 + x2) / 2, y2], [x1, (y1 + y2) / 2], [x2, (y1 + y2) / 2]])
    table = camera.to_plane(np.vstack([mids, [[(x1 + x2) / 2, (y1 + y2) / 2]]]), z=height_mm)
    tips, centre = table[int(np.argmin(np.hypot(table[:4, 0], table[:4, 1])))], table[4]
    result: FloatArray = centre + towards_tips * (tips - centre)
    return result


def _box(detections: Detections, i: int) -> Box:
    x1, y1, x2, y2 = (float(v) for v in detections.xyxy[i])
    return x1, y1, x2, y2


def _position(detections: Detections, i: int) -> tuple[float, float] | None:
    if detections.xy_mm is None:
        return None
    return float(detections.xy_mm[i, 0]), float(detections.xy_mm[i, 1])


def _track(detections: Detections, i: int) -> int | None:
    value = int(detections.tracker_id[i])
    return value if value >= 0 else None
