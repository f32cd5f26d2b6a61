"""`floorman datasets render`: a YOLO detection dataset from random scenes."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from floorman.datasets.random_scene import TILT_LIMITS_DEG, SceneStyle, Tilt, tilt_in_limits
from floorman.datasets.render_dataset import DatasetSpec, render_dataset
from floorman.datasets.scene import COURT_FIGURE_MODES, N_SUIT_SHAPES, SUIT_SHAPE_MODES

_SIZE = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*$")


NumberT = TypeVar("NumberT", int, float)


def parse_size(text: str) -> tuple[int, int]:
    """``"1280x720"`` to (1280, 720); argparse shows the error."""
    match = _SIZE.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"expected WxH such as 1280x720, got {text!r}")
    width, height = int(match.group(1)), int(match.group(2))
    if not (16 <= width <= 8192 and 16 <= height <= 8192):
        raise argparse.ArgumentTypeError(f"expected a width and height within 16..8192, got {text!r}")
    return width, height


def parse_tilt(text: str) -> Tilt:
    """``"35-55"`` to (35.0, 55.0): a range of camera tilts in degrees from vertical; argparse shows the error."""
    low, sep, high = text.partition("-")
    try:
        values = (float(low), float(high)) if sep else (float(text), float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN-MAX degrees such as 35-55, got {text!r}") from None
    if not tilt_in_limits(values):
        raise argparse.ArgumentTypeError(f"expected MIN-MAX degrees with {TILT_LIMITS_DEG[0]:g} <= MIN <= MAX <= "
                                         f"{TILT_LIMITS_DEG[1]:g}, got {text!r}")
    return values


def _checked(text: str, *, parse: Callable[[str], NumberT], ok: Callable[[NumberT], bool], expected: str) -> NumberT:
    """Parse a flag's value and check it, or raise ArgumentTypeError saying what was expected."""
    try:
        value = parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def _positive(text: str) -> int:
    return _checked(text, parse=int, ok=lambda v: v >= 1, expected="a positive integer")


def _seed(text: str) -> int:
    return _checked(text, parse=int, ok=lambda v: v >= 0, expected="a non-negative integer")


def _fraction(text: str) -> float:
    return _checked(text, parse=float, ok=lambda v: 0.0 <= v < 1.0, expected="a number in [0, 1)")


def _probability(text: str) -> float:
    return _checked(text, parse=float, ok=lambda v: 0.0 <= v <= 1.0, expected="a probability in [0, 1]")


def register_render(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "render", help="render a YOLO detection dataset of random table scenes",
        description="Render random table scenes to DIR/images/{train,val}, YOLO labels to DIR/labels, a JSON "
        "sidecar per image to DIR/meta (card identities and corners, chip stacks, zones, camera) and "
        "DIR/data.yaml. The output depends only on --seed (and --size), not on --workers.")
    parser.add_argument("--count", type=_positive, required=True, help="number of images")
    parser.add_argument("--seed", type=_seed, required=True, help="dataset seed")
    parser.add_argument("--out", type=Path, required=True, help="output directory (new or empty)")
    parser.add_argument("--size", type=parse_size, default=None,
                        help="image size WxH for every image (default: each random camera picks its own)")
    parser.add_argument("--style", choices=["mixed", *(style.value for style in SceneStyle)], default="mixed",
                        help="scene style: casino (a hand in progress, any camera), home (close straight-down "
                        "photos of a light-wood table: the held-out photographs' kind) or mixed (default: home "
                        "one time in five)")
    parser.add_argument("--seat-chips", type=_probability, default=0.0, metavar="P",
                        help="chance that a casino scene's seats hold their stacks as players do: one stack per "
                        "denomination side by side, touching, 1-20 chips, half of them on a dark felt (default 0: "
                        "scenes as before, the same for a given seed)")
    parser.add_argument("--chip-designs", type=_probability, default=0.0, metavar="P",
                        help="chance that a scene's chips are another club's design: the same five colours in its "
                        "own shades, edge spots (white chips often plain) and inlays (default 0: the shipped set's, "
                        "the same frames for a given seed)")
    parser.add_argument("--white-spots", action="store_true",
                        help="with --chip-designs: another club's chips have white edge spots only (a white chip's "
                        "are then plain), as the held-out photographs' chips (default: spots of any colour)")
    parser.add_argument("--home-button", type=_probability, default=0.0, metavar="P",
                        help="chance that a home scene has a dealer button among its cards and chips (default 0: "
                        "none, the same frames for a given seed; a detector trained without takes a plain white "
                        "chip for the button)")
    parser.add_argument("--court-figures", choices=COURT_FIGURE_MODES, default="own",
                        help="the court cards' figures: own (default), shifted (a jack shows the queen's figure, a "
                        "queen the king's, a king the jack's, with the letter in the figure's frame; corner indices "
                        "unchanged: a deck whose figures the card reader never saw, as a real deck's are) or any "
                        "(a random court figure each)")
    parser.add_argument("--suit-shapes", choices=SUIT_SHAPE_MODES, default="own",
                        help="the cards' suit symbols (pips, corner indices): own (default) or any (each card one "
                        f"of {N_SUIT_SHAPES} other decks' shapes: wider or narrower spades, thin or broad stems, "
                        "rounder clubs, straighter diamonds; real decks' symbols are not ours)")
    parser.add_argument("--camera-tilt", type=parse_tilt, default=None, metavar="MIN-MAX",
                        help="casino scenes' cameras tilted MIN to MAX degrees from vertical, drawn uniformly (e.g. "
                        "35-55: a camera low over the table, past the 35 the renderer draws at most; default: 0-5 "
                        "degrees two times in five, else 5-35); home scenes' stay straight down")
    parser.add_argument("--workers", type=_positive, default=1, help="worker processes (default 1)")
    parser.add_argument("--val-fraction", type=_fraction, default=0.1,
                        help="fraction of images in the validation split (default 0.1)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a non-empty directory (same-named files are replaced, nothing deleted)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(handler=run_render)


def run_render(args: argparse.Namespace) -> int:
    spec = DatasetSpec(out=args.out, count=args.count, seed=args.seed, size=args.size, workers=args.workers,
                       val_fraction=args.val_fraction, overwrite=args.overwrite, progress=not args.no_progress,
                       style=None if args.style == "mixed" else SceneStyle(args.style), seat_chips=args.seat_chips,
                       court_figures=args.court_figures, suit_shapes=args.suit_shapes, camera_tilt=args.camera_tilt,
                       chip_designs=args.chip_designs, home_button=args.home_button,
                       white_spots=args.white_spots)
    summary = render_dataset(spec)
    sys.stdout.write(f"wrote {summary.train + summary.val} images ({summary.train} train, {summary.val} val), "
                     f"{summary.labels} labels, to {summary.out}\n")
    return 0
