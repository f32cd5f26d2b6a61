"""`floorman detect IMAGE --layout L --calib C --view IMAGE2 CALIB2 [--view ...]`: several calibrated cameras'
photos of the table at one moment, each read as `floorman detect` reads it (printed as it prints it), then fused in
table mm (`vision.fusion.fuse_states`): each stack once, its count from every camera's evidence, each card once with
its surest identity, and the chip value per zone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from floorman.core.chips import ChipSet
from floorman.core.errors import ConfigError
from floorman.core.layout import TableLayout
from floorman.core.table_state import SeenCard, SeenChips, TableState
from floorman.vision.calibration import Calibration, load_calibration
from floorman.vision.chips import ChipReading, ChipRecogniser
from floorman.vision.chips_geometry import Box
from floorman.vision.cli import read_image, write_image
from floorman.vision.detect_cli import (
    FrameReport,
    annotate,
    check_calibrated_size,
    chip_text,
    format_text,
    read_frame,
)
from floorman.vision.detector import Detector
from floorman.vision.fusion import Eye, fuse_states
from floorman.vision.table_state import seen_stack, table_camera


class FusedStack(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    chips: tuple[int, ...] = Field(description="Chip values bottom to top.")
    count: int = Field(description="Chips in the stack: the count every camera's evidence makes likeliest.")
    count_confidence: float = Field(description="Confidence of the count, 0..1.")
    values_confidence: float = Field(description="Confidence of the values, 0..1 (0: no camera read this count).")
    table_mm: tuple[float, float] | None = Field(description="The stack's foot on the table, mm.")
    zone: str | None = Field(description="Layout zone at table_mm.")
    camera: str = Field(description="The image whose reading of the stack is kept (its foot, its values).")


class FusedCard(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    face_up: bool = Field(description="card_face or card_back.")
    identity: str | None = Field(description="The surest identity any camera read (e.g. 10H), None when unread.")
    identity_confidence: float = Field(description="Its confidence, 0..1.")
    table_mm: tuple[float, float] | None = Field(description="The card's centre on the table, mm.")
    zone: str | None = Field(description="Layout zone at table_mm.")
    camera: str = Field(description="The image whose reading of the card is kept.")


class FusedReport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    fused: list[str] = Field(description="The images fused, the first the one given as IMAGE.")
    stacks: list[FusedStack] = Field(description="Every chip stack, once.")
    cards: list[FusedCard] = Field(description="Every card, once.")
    zone_values: dict[str, int] = Field(description="Chip value per zone holding chips (a zone holding a stack whose "
                                        "kept reading is a grayscale image's is left out: its value is unknown).")
    grayscale: list[str] = Field(default_factory=list, description="The images without colour (chips valued 0 "
                                 "sure in them: another camera's reading of a stack's values is kept).")


@dataclass(frozen=True, slots=True)
class View:
    """One camera: its photo and its calibration file."""

    image: Path
    calib: Path


def views_of(args: argparse.Namespace) -> list[View]:
    """IMAGE with --calib, then each --view IMAGE CALIB; refused unless IMAGE is one image, the layout and the first
    calibration given, and every image named once."""
    if args.layout is None or args.calib is None:
        raise ConfigError("--view fuses cameras in table mm: expected --layout and --calib (the first image's) too",
                          field="--view")
    if args.straight_down:
        raise ConfigError("--straight-down is for photos without a calibration, --view for calibrated cameras",
                          field="--straight-down")
    if not args.source.is_file() or args.source.suffix.lower() not in IMAGE_SUFFIXES:
        raise ConfigError(f"--view fuses photos of one moment: expected IMAGE to be an image file, got {args.source}",
                          field="source")
    views = [View(args.source, args.calib)] + [View(Path(image), Path(calib)) for image, calib in args.view]
    seen: set[Path] = set()
    for view in views:
        if view.image.resolve() in seen:
            raise ConfigError(f"{view.image} given twice: each camera's photo once", field="--view")
        seen.add(view.image.resolve())
    return views


IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


def run_views(args: argparse.Namespace, detector: Detector, views: Sequence[View], *,
              placement: tuple[TableLayout, Calibration], chipset: ChipSet) -> int:
    """Read each view (`views_of`) as `floorman detect` reads an image, print it, then print the views fused.
    `placement`: the layout and the first view's calibration, loaded and checked by `floorman detect`."""
    layout = placement[0]
    states: list[TableState] = []
    eyes: list[Eye] = []
    gray_views: list[bool] = []
    for number, view in enumerate(views):
        calibration = placement[1] if number == 0 else load_calibration(view.calib, layout=layout, field="--view")
        image = read_image(view.image)
        check_calibrated_size(image, calibration, source=str(view.image), path=view.calib)
        height = args.camera_height if number == 0 else None  # --camera-height: the first camera's
        camera = table_camera(calibration, camera_height_mm=height)
        recogniser = ChipRecogniser(chipset, camera=camera)
        eyes.append((float(camera.eye[0]), float(camera.eye[1]), float(camera.eye[2])))
        report, readings = read_frame(image, detector=detector, recogniser=recogniser, source=str(view.image),
                                      placement=(layout, calibration))
        sys.stdout.write(report.model_dump_json() + "\n" if args.json else format_text(report))
        if args.annotate is not None:  # OUT/STEM.jpg; photos of one name in other folders get _N (their place)
            stems = [v.image.stem for v in views]
            name = view.image.stem if stems.count(view.image.stem) == 1 else f"{view.image.stem}_{number}"
            write_image(args.annotate / f"{name}.jpg", annotate(image, report))
        states.append(view_state(report, readings, calibration=calibration, layout=layout,
                                 camera_id=str(view.image)))
        gray_views.append(report.grayscale)
    fused = fused_report(states, eyes=eyes, thickness_mm=chipset.thickness_mm,
                         grayscale=[s.camera_id for s, gray in zip(states, gray_views, strict=True) if gray])
    sys.stdout.write(fused.model_dump_json() + "\n" if args.json else format_fused(fused))
    return 0


def view_state(report: FrameReport, readings: Sequence[tuple[Box, ChipReading]], *, calibration: Calibration,
               layout: TableLayout, camera_id: str) -> TableState:
    """One camera's cards and chip stacks as a `TableState` (what `fuse_states` joins): stacks at their feet, with
    their readings (`read_frame`'s, in the order of the report's chip objects that were read), cards at their box's
    centre on the table (the report's `table_mm` is the box's bottom centre: another camera sees another edge). A
    chip box on a stack another box holds (`DetectedObject.boxed_twice`) is left out, as the view's totals leave it.
    A grayscale image's stacks have their values 0 sure."""
    pending = iter(readings)
    chips: list[SeenChips] = []
    cards: list[SeenCard] = []
    for obj in report.objects:
        if obj.class_name == "chip" and obj.chips is not None:
            _, reading = next(pending)
            if obj.boxed_twice:
                continue
            stack = seen_stack(reading, box=obj.box, confidence=obj.confidence, position_mm=obj.table_mm,
                               zone=obj.zone, calibration=calibration)
            # an image without colour values no chip (`read_frame`): another camera's values are kept
            chips.append(replace(stack, denomination_confidence=0.0) if report.grayscale else stack)
        elif obj.class_name in ("card_face", "card_back"):
            x1, y1, x2, y2 = obj.box
            centre = calibration.to_table(np.array([[(x1 + x2) / 2.0, (y1 + y2) / 2.0]], dtype=np.float64))
            zone = layout.zone_names_at(centre)[0]
            cards.append(SeenCard(face_up=obj.class_name == "card_face", box=obj.box, confidence=obj.confidence,
                                  position_mm=(float(centre[0, 0]), float(centre[0, 1])), zone=zone,
                                  identity=obj.identity, identity_confidence=obj.identity_confidence or 0.0))
    return TableState(frame=0, t=0.0, camera_id=camera_id, cards=tuple(cards), chips=tuple(chips),
                      size=(report.width, report.height))


def fused_report(states: Sequence[TableState], *, eyes: Sequence[Eye] | None = None,
                 thickness_mm: float | None = None, grayscale: Sequence[str] = ()) -> FusedReport:
    """The views fused (`fuse_states`, with the cameras' lenses, `eyes`, and the chips' thickness), each object
    named by the view whose reading is kept. A zone holding a stack whose kept reading is one of the `grayscale`
    views' (no camera with colour read its count) has no value: it is left out of the zone values."""
    fused = fuse_states(states, eyes=eyes, thickness_mm=thickness_mm)
    stacks = [FusedStack(chips=s.denominations, count=s.count, count_confidence=round(s.count_confidence, 3),
                         values_confidence=round(s.denomination_confidence, 3), table_mm=_rounded(s.position_mm),
                         zone=s.zone, camera=_camera_of(s.box, s.position_mm, [(v.camera_id, v.chips) for v in states]))
              for s in fused.chips]
    cards = [FusedCard(face_up=c.face_up, identity=c.identity, identity_confidence=round(c.identity_confidence, 3),
                       table_mm=_rounded(c.position_mm), zone=c.zone,
                       camera=_camera_of(c.box, c.position_mm, [(v.camera_id, v.cards) for v in states]))
             for c in fused.cards]
    unvalued = {s.zone for s in stacks if s.camera in grayscale}
    return FusedReport(fused=[s.camera_id for s in states], stacks=stacks, cards=cards,
                       zone_values={z: v for z, v in fused.zone_values().items() if z not in unvalued},
                       grayscale=list(grayscale))


def format_fused(report: FusedReport) -> str:
    lines = [f"fused in table mm ({' + '.join(report.fused)}): {len(report.stacks)} stacks, {len(report.cards)} cards"]
    for card in report.cards:
        what = (f"card {card.identity} ({card.identity_confidence:.2f})" if card.identity else "card ?") \
            if card.face_up else "card face down"
        lines.append(f"  {what}{_place(card.table_mm, card.zone)}  from {card.camera}")
    for stack in report.stacks:
        lines.append(f"  chips {chip_text(stack.chips)} ({stack.values_confidence:.2f}, count "
                     f"{stack.count_confidence:.2f}){_place(stack.table_mm, stack.zone)}  from {stack.camera}")
    if report.zone_values:
        lines.append("  zone values: " + ", ".join(f"{zone} {value}" for zone, value in report.zone_values.items()))
    if report.grayscale:
        lines.append(f"  no colour in {', '.join(report.grayscale)} (grayscale): chips read only there are not "
                     "valued, their zones left out of the zone values")
    return "\n".join(lines) + "\n"


def _place(table_mm: tuple[float, float] | None, zone: str | None) -> str:
    return "" if table_mm is None else f"  table ({table_mm[0]:.0f}, {table_mm[1]:.0f}) mm  zone {zone or '-'}"


def _rounded(point: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if point is None else (round(float(point[0]), 1), round(float(point[1]), 1))


def _camera_of(box: Box, position: tuple[float, float] | None,
               objects: Sequence[tuple[str, Sequence[SeenChips] | Sequence[SeenCard]]]) -> str:
    """The camera whose object a fused object's box and place are (a fused object keeps its reading's)."""
    for camera, seen in objects:
        if any(o.box == box and o.position_mm == position for o in seen):
            return camera
    raise ValueError(f"fusion: no camera's object has box {box} at {position}")
