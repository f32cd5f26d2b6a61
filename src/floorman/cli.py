"""The `floorman` command: one entry point, one subcommand per capability."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from floorman import __version__
from floorman.core.errors import FloormanError, os_error_text

if TYPE_CHECKING:
    from floorman.models.chip_sides_data import SideSampler
    from floorman.models.chips_data import ChipBoxes

logger = logging.getLogger(__name__)

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


def _detector_chip_boxes() -> ChipBoxes:
    """The shipped detector's chip boxes of a frame, with `benchmarks/chips.py`'s settings, for `floorman models
    train-chips --detector-boxes` (the models package may not import vision: the boxes are passed in here)."""
    from floorman.vision.detect_cli import default_model
    from floorman.vision.detector import OnnxDetectorConfig, class_boxes, create_detector

    return class_boxes(create_detector(OnnxDetectorConfig(model=default_model())), "chip")


def _side_sampler() -> SideSampler:
    """The chip recogniser's side samples of a frame's stacks read on their true boxes, for `floorman models
    train-chip-sides` (the models package may not import vision: the sampler is passed in here)."""
    from floorman.vision.chips_side_net import side_samples

    return side_samples


def _registrars() -> list[Registrar]:
    from floorman.datasets.cli import register as register_datasets
    from floorman.demo import register as register_demo
    from floorman.edge.cli import register as register_edge
    from floorman.models.cli import register as register_models
    from floorman.serve import register as register_rules
    from floorman.vision.cli import register as register_vision
    from floorman.vision.detect_cli import register as register_detect
    from floorman.vision.photo_score import register as register_photos

    return [register_datasets, partial(register_models, chip_boxes=_detector_chip_boxes,
                                       side_sampler=_side_sampler), register_vision,
            register_detect, register_photos, register_rules, register_edge, register_demo]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="floorman",
        description="Watches a live poker table through overhead cameras and calls the floor when a rule "
        "is broken.",
    )
    parser.add_argument("--version", action="version", version=f"floorman {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in _registrars():
        register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return handler(args)
    except FloormanError as exc:
        print(f"floorman: error: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    except OSError as exc:  # a file or folder the command could not read or write: named, not a traceback
        logging.getLogger(__name__).debug("the command's OSError", exc_info=True)
        print(f"floorman: error: {os_error_text(exc)}", file=sys.stderr)  # noqa: T201
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
