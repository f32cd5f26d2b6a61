"""`floorman chips calibrate`: learn a club's chip colours from a few frames and write a chip-set YAML."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from floorman.core.chips import ChipSet
from floorman.core.errors import ConfigError
from floorman.vision.chips_calibrate import calibrated_chipset, chip_boxes, chip_tops, learn_colours


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chips = subparsers.add_parser("chips", help="chip recogniser tools (calibrate a club's chip colours)")
    commands = chips.add_subparsers(dest="chips_command", required=True)
    parser = commands.add_parser(
        "calibrate", help="learn a club's chip colours from a few frames",
        description="Detect the chips in the frames, cluster their top-face colours (one cluster per denomination "
        "to learn) and give each cluster the denomination whose colours it matches best under one light; write "
        "the chip set with the observed colours, and the spot counts their rims show clearly. Frames showing single "
        "chips of every denomination work best.")
    parser.add_argument("--frames", nargs="+", required=True, type=Path, help="images from the table camera")
    parser.add_argument("--chipset", type=Path, help="chip set YAML to start from (default: the shipped set)")
    parser.add_argument("--values", nargs="+", type=int, help="only these denominations are in the frames "
                        "(default: all of the chip set's)")
    parser.add_argument("--model", type=Path, help="ONNX detector (default: the shipped INT8 photo detector: "
                        "the frames are still images)")
    parser.add_argument("--conf", type=float, default=0.4, help="minimum chip detection score (default 0.4)")
    parser.add_argument("--name", help="name of the chip set written (default: <input name>-calibrated)")
    parser.add_argument("--out", required=True, type=Path, help="chip set YAML to write")
    parser.set_defaults(handler=run_calibrate)


def run_calibrate(args: argparse.Namespace) -> int:
    from floorman.vision.cli import read_image
    from floorman.vision.detect_cli import default_model
    from floorman.vision.detector import OnnxDetectorConfig, create_detector

    chipset = ChipSet.load(args.chipset) if args.chipset is not None else ChipSet.default()
    for value in args.values or ():
        if value not in chipset.values:
            raise ConfigError(f"no denomination {value} in chip set {chipset.name!r}, expected one of "
                              f"{list(chipset.values)}", field="--values")
    detector = create_detector(OnnxDetectorConfig(model=args.model or default_model(photos=True), conf=args.conf))
    frames = []
    for path in args.frames:
        image = read_image(path)
        boxes = chip_boxes(detector, image)
        frames.append((image, boxes))
        sys.stdout.write(f"{path}: {len(boxes)} chips\n")
    tops = chip_tops(frames, radius_mm=chipset.diameter_mm / 2.0)
    learned = learn_colours(tops, chipset, values=args.values)
    result = calibrated_chipset(chipset, learned, name=args.name)
    args.out.write_text(yaml.safe_dump(result.model_dump(mode="json", exclude_none=True), sort_keys=False),
                        encoding="utf-8")
    for item in sorted(learned, key=lambda item: item.value):
        d = result.by_value(item.value)
        doubt = "" if item.nearest == item.value else (
            f"  WARNING: looks most like {item.nearest}; if not every denomination is in the frames, "
            "name those that are with --values")
        counted = "" if item.spots is None else " (counted)"
        sys.stdout.write(f"  {d.label:>6}: {item.chips} chips, body {d.colour}, spots {d.edge_colour} x{d.edge_spots}"
                         f"{counted}, fit error {item.error:.3f}{doubt}\n")
    for value in sorted(set(args.values or chipset.values) - {item.value for item in learned}):
        d = result.by_value(value)
        sys.stdout.write(f"  {d.label:>6}: not learned, kept body {d.colour}, spots {d.edge_colour} x{d.edge_spots}\n")
    sys.stdout.write(f"chip set written to {args.out}\n")
    return 0
