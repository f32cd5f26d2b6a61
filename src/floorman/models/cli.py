"""`floorman models train|export|recover|average|info|train-cards|train-chips|train-chip-sides|train-chip-boxes`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from floorman.core.errors import ConfigError, flag_error
from floorman.datasets.render_cli import parse_size, parse_tilt
from floorman.models import small_net
from floorman.models.chip_boxes_data import BoxTrainConfig
from floorman.models.chip_sides_data import SideTrainConfig
from floorman.models.registry import WEIGHTS_DIR, model_info
from floorman.models.train import RenderSpec, TrainConfig, train_detector

if TYPE_CHECKING:
    from floorman.models.chip_sides_data import SideSampler
    from floorman.models.chips_data import ChipBoxes

# Makes the chip boxes of a frame as a detector finds them (`train-chips --detector-boxes`). Models may not import
# vision, so the `floorman` command passes it in at registration.
ChipBoxesFactory = Callable[[], "ChipBoxes"]
# Reads a frame's stacks on their true boxes and keeps their lower chips' rims (`train-chip-sides`): vision's
# `chips_side_net.side_samples`, passed in by the `floorman` command likewise.
SideSamplerFactory = Callable[[], "SideSampler"]


def _levels(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated sizes such as 320,960, got {text!r}") from None
    if not levels or min(levels) < 32:
        raise argparse.ArgumentTypeError(f"expected sizes of at least 32 px, got {text!r}")
    return levels


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser], *,
             chip_boxes: ChipBoxesFactory | None = None, side_sampler: SideSamplerFactory | None = None) -> None:
    """Add `floorman models ...` (`chip_boxes`: the detector `train-chips --detector-boxes` cuts patches on;
    `side_sampler`: what `train-chip-sides` reads its stacks with)."""
    parser = subparsers.add_parser("models", help="train and export the object detector")
    sub = parser.add_subparsers(dest="models_command", metavar="SUBCOMMAND", required=True)
    _register_train(sub)
    _register_export(sub)
    _register_recover(sub)
    _register_average(sub)
    _register_train_cards(sub)
    _register_train_chips(sub, chip_boxes=chip_boxes)
    _register_train_chip_sides(sub, side_sampler=side_sampler)
    _register_train_chip_boxes(sub, chip_boxes=chip_boxes)
    info = sub.add_parser("info", help="print what an exported ONNX detector declares")
    info.add_argument("model", type=Path, help="ONNX file")
    info.set_defaults(handler=run_info)


def _register_train(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    train = sub.add_parser("train", help="train a YOLO detector from scratch on a synthetic dataset (offline)",
                           description="Render (or take) a YOLO dataset, cut it into the windows the detector sees "
                           "and train an Ultralytics YOLO from a model YAML. Resumes runs/NAME from last.pt.")
    defaults = TrainConfig()
    train.add_argument("--data", type=Path, help="existing YOLO dataset folder (else one is rendered)")
    train.add_argument("--count", type=int, default=defaults.render.count, help="frames to render")
    train.add_argument("--seed", type=int, default=defaults.render.seed, help="render seed")
    train.add_argument("--size", type=parse_size, default=defaults.render.size, help="render size WxH")
    train.add_argument("--render-workers", type=int, default=defaults.render.workers, help="render processes")
    train.add_argument("--levels", type=_levels, default=defaults.levels,
                       help="pyramid levels, long side in px, comma-separated (default 320,960)")
    train.add_argument("--imgsz", type=int, default=defaults.imgsz, help="network input size")
    train.add_argument("--model", default=defaults.model, help="Ultralytics model YAML, e.g. yolo11n.yaml")
    train.add_argument("--weights", type=Path, help="start from this checkpoint (.pt) instead of --model: "
                       "fine-tune an earlier run (a new run --name; resuming an unfinished run needs no flag)")
    train.add_argument("--freeze", type=int, help="with --weights: keep the first N layers as they are "
                       "(10: yolo11n's backbone), train the rest")
    train.add_argument("--optimizer", default=defaults.optimizer, help="Ultralytics optimizer (auto, AdamW, SGD)")
    train.add_argument("--lr0", type=float, help="initial learning rate (default: the optimizer's)")
    train.add_argument("--lrf", type=float, help="final learning rate, fraction of lr0")
    train.add_argument("--warmup-epochs", type=float, default=defaults.warmup_epochs, help="warm-up epochs")
    train.add_argument("--threads", type=int, help="CPU threads for torch (default: every core)")
    train.add_argument("--epochs", type=int, default=defaults.epochs, help="epochs")
    train.add_argument("--time-hours", type=float, help="train for this long instead of --epochs")
    train.add_argument("--batch", type=int, default=defaults.batch, help="batch size")
    train.add_argument("--device", default=defaults.device, help="auto (CUDA when present), cpu or 0")
    train.add_argument("--workers", type=int, default=defaults.loader_workers, help="data-loader workers")
    train.add_argument("--prep-workers", type=int, default=defaults.prep_workers,
                       help="processes cutting the frames into windows")
    train.add_argument("--balance", type=float, help="repeat-factor sampling threshold, e.g. 0.5: windows "
                       "with rare classes (button, hands) are listed more often (default: each once)")
    train.add_argument("--coarse-repeat", type=int, default=defaults.coarse_repeat,
                       help="with --balance: list whole-frame windows (coarsest level) at least N times")
    train.add_argument("--hsv-v", type=float, default=defaults.hsv_v, help="brightness augmentation: each window "
                       "scaled by a gain in 1 +- HSV_V, clipped (default 0.4, Ultralytics'; 0.6 reaches the x1.6 "
                       "overexposure of benchmarks/photo_effects.py)")
    train.add_argument("--runs", type=Path, default=defaults.runs_dir, help="runs folder")
    train.add_argument("--name", default=defaults.name, help="run name (resumed when it exists)")
    train.add_argument("--no-resume", action="store_true", help="start over even if NAME has a checkpoint")
    train.set_defaults(handler=run_train)


def _register_export(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser("export", help="export a checkpoint to ONNX fp32 and static INT8",
                            description="Write NAME.onnx (fp32) and NAME_int8.onnx (static QDQ INT8, calibrated "
                            "on the images under --calibration; the decode tail, the stem and the head's output "
                            "convolutions in fp32).")
    export.add_argument("--weights", type=Path, help="trained checkpoint (.pt); required unless --fp32")
    export.add_argument("--fp32", type=Path, help="quantise this fp32 ONNX (e.g. the shipped detector.onnx, its "
                        "metadata kept) instead of exporting --weights")
    export.add_argument("--out", type=Path, default=WEIGHTS_DIR, help="output folder (default: shipped weights)")
    export.add_argument("--name", default="detector", help="file stem")
    export.add_argument("--imgsz", type=int, default=320, help="network input size")
    export.add_argument("--levels", type=_levels, default=(320, 960), help="pyramid levels (written as metadata)")
    export.add_argument("--calibration", type=Path, help="folder of images (training windows) to calibrate INT8 on")
    export.add_argument("--calibration-count", type=int, default=64, help="calibration images used")
    export.add_argument("--calibration-method", choices=("minmax", "percentile", "entropy"), default="percentile",
                        help="activation ranges from every calibration value (minmax), from histograms keeping "
                        "the central --percentile %% of values (percentile, default) or by entropy")
    export.add_argument("--percentile", type=_percentile, default=99.999,
                        help="with --calibration-method percentile: the share of values kept (default 99.999)")
    export.add_argument("--no-int8", action="store_true", help="write the fp32 model only")
    export.set_defaults(handler=run_export)


def _register_average(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    average = sub.add_parser(
        "average", help="average the weights of two detector checkpoints fine-tuned from the same start",
        description="Write OUT: TUNED's checkpoint with its network's weights (1 - SHARE) x BASE + SHARE x TUNED, "
        "tensor by tensor (WiSE-FT: a fine-tune that learnt new data and forgot some of the old, averaged with its "
        "start, often keeps both). Export it with `floorman models export --weights OUT`.")
    average.add_argument("base", type=Path, help="the checkpoint the fine-tune started from (.pt)")
    average.add_argument("tuned", type=Path, help="the fine-tuned checkpoint (.pt, e.g. runs/detector/NAME/weights/"
                         "best.pt)")
    average.add_argument("--share", type=_share, default=0.5, help="the tuned checkpoint's share (0-1, default 0.5)")
    average.add_argument("--out", type=Path, required=True, help="checkpoint to write (.pt)")
    average.set_defaults(handler=run_average)


def run_average(args: argparse.Namespace) -> int:
    from floorman.models.average import average_checkpoints

    result = average_checkpoints(args.base, args.tuned, share=args.share, out=args.out)
    sys.stdout.write(f"wrote {result.out} ({result.out.stat().st_size / 1e6:.1f} MB): {1.0 - args.share:g} x "
                     f"{args.base} + {args.share:g} x {args.tuned}, {result.averaged} tensors averaged, "
                     f"{result.kept} integer ones taken from {args.tuned}\n")
    return 0


def _register_recover(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    recover = sub.add_parser(
        "recover", help="rebuild a trainable checkpoint (.pt) from an exported ONNX detector",
        description="Rebuild the Ultralytics checkpoint an ONNX detector was exported from, to fine-tune it "
        "(`floorman models train --weights OUT`): the convolutions come from the ONNX file, the batch norms the "
        "export folded into them get statistics measured on --calibration that leave the network's outputs "
        "unchanged. The checkpoint is compared with the ONNX file on those images before it is written.")
    recover.add_argument("--onnx", type=Path, default=WEIGHTS_DIR / "detector.onnx",
                         help="fp32 ONNX detector (default: the shipped detector.onnx)")
    recover.add_argument("--calibration", type=Path, required=True,
                         help="folder of images: rendered frames (cut into the detector's pyramid windows) or "
                         "training windows (fed whole)")
    recover.add_argument("--calibration-count", type=int, default=32, help="images used, spread over the folder")
    recover.add_argument("--out", type=Path, required=True, help="checkpoint to write (.pt)")
    recover.add_argument("--model", default="yolo11n.yaml", help="Ultralytics model YAML the ONNX was trained from")
    recover.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: every core)")
    recover.set_defaults(handler=run_recover)


def _register_train_cards(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # The card classifier's recipe (models/cards_train.py; torch is imported only when it runs).
    cards = sub.add_parser("train-cards", help="train the card classifier on rendered cards and export it to ONNX",
                           description="Render frames (cached in chunks under --cache), cut every face-up card into "
                           "patches, add composites of card faces on plain tables, train for --minutes and write the "
                           "ONNX classifier the card recogniser loads.")
    cards.add_argument("--cache", type=Path, default=Path("/tmp/floorman_cards"), help="patch cache folder")
    cards.add_argument("--seed", type=int, default=7100, help="render seed (never a test seed)")
    cards.add_argument("--frames", type=int, default=750, help="frames to render; the last --val-frames held out")
    cards.add_argument("--val-frames", type=int, default=50, help="held-out frames for the validation figure")
    cards.add_argument("--composites", type=int, default=8500, help="composite patches (0: none)")
    cards.add_argument("--composite-seed", type=int, default=7200, help="composite seed")
    cards.add_argument("--render-workers", type=int, default=1, help="render processes")
    cards.add_argument("--minutes", type=float, default=36.0, help="training time")
    cards.add_argument("--steps", type=int, help="train this many steps instead of --minutes (reproducible)")
    cards.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    cards.add_argument("--out", type=Path, help="ONNX output (default: the shipped vision/data/card_classifier.onnx)")
    cards.add_argument("--chip-share", type=_share, default=0.0, help="share of training patches given a casino chip "
                       "lying on the card (0-1; 0 in the shipped recipe: 0.15 and 0.3 measured worse)")
    cards.add_argument("--composite-chips", action="store_true", help="casino chips among the composites' covers")
    cards.add_argument("--small-composites", type=int, default=0, help="more composite patches, of cards 36-80 px "
                       "wide with chips among the covers (seed --composite-seed + 1; 0 in the shipped recipe)")
    cards.add_argument("--small-share", type=_share, default=0.0, help="share of training patches shrunk to the "
                       "pixels of a card 36-60 px wide and back (0-1; 0 in the shipped recipe)")
    cards.add_argument("--tilted-frames", type=int, default=0, help="more frames to render for training, casino "
                       "scenes whose cameras are tilted --tilt from vertical (cached apart; default 0: none)")
    cards.add_argument("--tilted-seed", type=int, default=7300, help="the tilted frames' render seed")
    cards.add_argument("--tilt", type=parse_tilt, default=(35.0, 60.0), metavar="MIN-MAX",
                       help="the tilted frames' camera tilt range in degrees from vertical (default 35-60)")
    cards.add_argument("--slant-share", type=_share, default=0.0, help="share of training patches shrunk to the "
                       "pixels of a card 24-60 px wide seen at a slant (one axis 1.2-2.2 times more) and back (0-1; 0 "
                       "in the shipped recipe)")
    cards.add_argument("--defocus-share", type=_share, default=0.0, help="share of training patches blurred by a "
                       "Gaussian of sigma 0.6-2 patch px, as a photo out of focus blurs a large card (0-1)")
    cards.add_argument("--init", type=Path, help="start from this exported classifier's weights (fine-tune) "
                       "instead of at random")
    cards.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (warm-up, then a cosine to 0)")
    cards.add_argument("--court-figures", choices=("own", "any"), default="any", help="court cards' figures in the "
                       "training renders and composites: any (default, the shipped recipe since session 17: a random "
                       "court figure each, so only the corner index tells a jack from a king, as on a deck whose "
                       "figures are not ours) or own (each its own, the recipe before)")
    cards.add_argument("--suit-shapes", choices=("own", "any"), default="any", help="cards' suit symbols in the "
                       "training renders and composites: any (default, the shipped recipe since session 18: each "
                       "card one of other decks' spade, heart, diamond and club shapes, as real decks' are not "
                       "ours) or own (our deck's, the recipe before)")
    cards.add_argument("--patch", choices=("card", "index"), default="card", help="what to train: card (default, "
                       "the card classifier on the whole card, 64x88 px) or index (the index reader on the card's "
                       "top-left corner, 40x56 px for 30 %% of its width and height, each card read at two corners; "
                       "default output vision/data/card_index.onnx)")
    cards.set_defaults(handler=run_train_cards)


def _register_train_chips(sub: argparse._SubParsersAction[argparse.ArgumentParser], *,
                          chip_boxes: ChipBoxesFactory | None) -> None:
    # The chip offset net's recipe (models/chips_train.py; torch is imported only when it runs).
    chips = sub.add_parser("train-chips", help="train the chip stacks' offset net on rendered stacks and export it "
                           "to ONNX", description="Render frames of mixed sizes (cached in chunks under --cache), cut "
                           "every chip stack's patch on its mask's box and on boxes jittered as a detector's are, "
                           "train for --minutes and write the ONNX net the chip recogniser loads.")
    chips.add_argument("--cache", type=Path, default=Path("/tmp/floorman_chips"), help="patch cache folder")
    chips.add_argument("--seed", type=int, default=8100, help="render seed (never a test seed)")
    chips.add_argument("--frames", type=int, default=1200, help="frames to render (a multiple of 50); the last "
                       "--val-frames held out")
    chips.add_argument("--val-frames", type=int, default=50, help="held-out frames for the validation figure")
    chips.add_argument("--minutes", type=float, default=25.0, help="training time")
    chips.add_argument("--steps", type=int, help="train this many steps instead of --minutes (reproducible)")
    chips.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    chips.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (AdamW, warm-up then cosine)")
    chips.add_argument("--train-seed", type=int, default=0, help="seed of the batches, augmentation and init")
    chips.add_argument("--init", type=Path, help="fine-tune this exported ONNX net (its batch norms frozen) "
                       "instead of training from scratch")
    chips.add_argument("--out", type=Path, help="ONNX output (default: the shipped vision/data/chip_offsets.onnx)")
    chips.add_argument("--detector-boxes", action="store_true", help="also cut each stack's patch on the shipped "
                       "detector's chip box matched to it (IoU >= 0.5), as `benchmarks/chips.py` gets its detector "
                       "boxes; cached apart (chunk_SEED_START_detector.npz)")
    chips.set_defaults(handler=partial(run_train_chips, chip_boxes=chip_boxes))


def _register_train_chip_sides(sub: argparse._SubParsersAction[argparse.ArgumentParser], *,
                               side_sampler: SideSamplerFactory | None) -> None:
    # The learned side reader's recipe (models/chip_sides_train.py; torch is imported only when it runs).
    defaults = SideTrainConfig()
    sides = sub.add_parser("train-chip-sides", help="train the learned reader of the chips under a stack's top on "
                           "rendered stacks and export it to ONNX", description="Render frames (3840x2160 random "
                           "scenes with our chips and other clubs', casino seats, mixed sizes; cached in chunks "
                           "under --cache), read every stack of two chips or more on its true box, keep each lower "
                           "chip's rim samples where the count was read right, train for --epochs and write the ONNX "
                           "net the chip recogniser loads.")
    small_net.add_arguments(sides, defaults, figures="accuracy printed", samples="chips",
                            out="vision/data/chip_sides.onnx")
    sides.set_defaults(handler=partial(run_train_chip_sides, side_sampler=side_sampler))


def run_train_chip_sides(args: argparse.Namespace, *, side_sampler: SideSamplerFactory | None = None) -> int:
    from floorman.models.chip_sides_train import train_chip_sides

    if side_sampler is None:
        raise ConfigError("train-chip-sides reads stacks with the chip recogniser, which the `floorman` command "
                          "passes in (models may not import vision): none was given", field="side_sampler")
    config = small_net.config_from(args, SideTrainConfig(), command="train-chip-sides")
    path, held_out, chips = train_chip_sides(config, sampler=side_sampler())
    sys.stdout.write(f"wrote {path} ({path.stat().st_size / 1e3:.0f} kB); held-out accuracy {held_out:.4f} on "
                     f"{chips} chips under a top\n")
    return 0


def _register_train_chip_boxes(sub: argparse._SubParsersAction[argparse.ArgumentParser], *,
                               chip_boxes: ChipBoxesFactory | None) -> None:
    # The learned box-side reader's recipe (models/chip_boxes_train.py; torch is imported only when it runs).
    defaults = BoxTrainConfig()
    boxes = sub.add_parser("train-chip-boxes", help="train the learned reader of where a detector's chip box's sides "
                           "lie on rendered frames and export it to ONNX", description="Render frames (3840x2160 "
                           "casino seats and random scenes, mixed sizes; cached in chunks under --cache), find their "
                           "chip boxes with the shipped detector, cut a strip across each side of the boxes matched "
                           "to a stack in sight with the true side's offset, train for --epochs and write the ONNX net "
                           "the chip recogniser loads.")
    small_net.add_arguments(boxes, defaults, figures="figures printed", samples="sides",
                            out="vision/data/chip_boxes.onnx")
    boxes.set_defaults(handler=partial(run_train_chip_boxes, chip_boxes=chip_boxes))


def run_train_chip_boxes(args: argparse.Namespace, *, chip_boxes: ChipBoxesFactory | None = None) -> int:
    from floorman.models.chip_boxes_train import train_chip_boxes

    if chip_boxes is None:
        raise ConfigError("train-chip-boxes cuts its strips on the detector's chip boxes, which the `floorman` "
                          "command passes in (models may not import vision): none was given", field="chip_boxes")
    config = small_net.config_from(args, BoxTrainConfig(), command="train-chip-boxes")
    path, figures = train_chip_boxes(config, boxes=chip_boxes)
    sys.stdout.write(f"wrote {path} ({path.stat().st_size / 1e3:.0f} kB); held-out sides {figures.sides}: mean "
                     f"error {figures.net_mae:.2f} px (the detector's {figures.box_mae:.2f}), over 2 px "
                     f"{100 * figures.net_over_2px:.1f} % ({100 * figures.box_over_2px:.1f} %)\n")
    return 0


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def _percentile(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage above 90 and at most 100, got {text!r}") from None
    if not 90.0 < value <= 100.0:
        raise argparse.ArgumentTypeError(f"expected a percentage above 90 and at most 100, got {text!r}")
    return value


def run_train_cards(args: argparse.Namespace) -> int:
    from floorman.models.cards_train import CardTrainConfig, train_cards

    config = CardTrainConfig(cache=args.cache, seed=args.seed, frames=args.frames, val_frames=args.val_frames,
                             composites=args.composites, composite_seed=args.composite_seed,
                             render_workers=args.render_workers, minutes=args.minutes, steps=args.steps,
                             threads=args.threads, chip_share=args.chip_share,
                             composite_chips=args.composite_chips, small_composites=args.small_composites,
                             small_share=args.small_share, slant_share=args.slant_share, init=args.init,
                             defocus_share=args.defocus_share,
                             tilted_frames=args.tilted_frames, tilted_seed=args.tilted_seed, tilt=args.tilt,
                             court_figures=args.court_figures,
                             suit_shapes=args.suit_shapes, lr=args.lr, patch=args.patch, out=args.out)
    path, result = train_cards(config)
    sys.stdout.write(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB); held-out card accuracy "
                     f"{result.card_accuracy:.4f} on {result.faces} faces, face/not-face {result.face_accuracy:.4f}\n")
    return 0


def run_train_chips(args: argparse.Namespace, *, chip_boxes: ChipBoxesFactory | None = None) -> int:
    from floorman.models.chips_train import DEFAULT_OUT, ChipTrainConfig, train_chips

    if args.detector_boxes and chip_boxes is None:
        raise ConfigError("--detector-boxes needs a detector, which the `floorman` command passes in (models may "
                          "not import vision): none was given", field="--detector-boxes")
    config = ChipTrainConfig(cache=args.cache, seed=args.seed, frames=args.frames, val_frames=args.val_frames,
                             minutes=args.minutes, steps=args.steps, threads=args.threads, lr=args.lr,
                             train_seed=args.train_seed, init=args.init, out=args.out or DEFAULT_OUT)
    path, error = train_chips(config, chip_boxes=chip_boxes() if args.detector_boxes and chip_boxes else None)
    sys.stdout.write(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB); held-out median offset error "
                     f"{error:.2f} patch px\n")
    return 0


def run_train(args: argparse.Namespace) -> int:
    best = train_detector(train_config(args))
    sys.stdout.write(f"best checkpoint: {best}\n")
    return 0


_TRAIN_FLAGS = {"workers": "--render-workers", "loader_workers": "--workers", "runs_dir": "--runs"}


def train_config(args: argparse.Namespace) -> TrainConfig:
    """The recipe's settings from the command line; a value out of range stops with a ConfigError naming its flag
    (it was a pydantic traceback, exit status 1, until session 21)."""
    from pydantic import ValidationError

    try:
        return TrainConfig(
            data=args.data, render=RenderSpec(count=args.count, seed=args.seed, size=args.size,
                                              workers=args.render_workers),
            levels=args.levels, imgsz=args.imgsz, model=args.model, weights=args.weights, freeze=args.freeze,
            optimizer=args.optimizer,
            lr0=args.lr0, lrf=args.lrf, warmup_epochs=args.warmup_epochs, threads=args.threads, epochs=args.epochs,
            time_hours=args.time_hours, batch=args.batch, device=args.device, loader_workers=args.workers,
            prep_workers=args.prep_workers, balance=args.balance, coarse_repeat=args.coarse_repeat,
            hsv_v=args.hsv_v, runs_dir=args.runs, name=args.name, resume=not args.no_resume,
        )
    except ValidationError as exc:
        raise flag_error(exc, flags=_TRAIN_FLAGS) from None


def run_export(args: argparse.Namespace) -> int:
    # onnx is export tooling (with the `train` extra), so it is imported only when exporting.
    from floorman.models.export import ExportConfig, calibration_images, export_detector

    if (args.weights is None) == (args.fp32 is None):
        raise ConfigError("expected either --weights (export a checkpoint) or --fp32 (quantise an ONNX), "
                          f"got {'both' if args.weights else 'neither'}", field="--weights")
    if args.fp32 is not None and args.no_int8:
        raise ConfigError("--fp32 quantises an existing ONNX: expected no --no-int8", field="--no-int8")
    if not args.no_int8 and args.calibration is None:
        raise ConfigError("expected --calibration DIR for the INT8 model (or --no-int8)", field="--calibration")
    images = () if args.no_int8 else calibration_images(args.calibration, count=args.calibration_count)
    result = export_detector(ExportConfig(
        weights=args.weights, fp32=args.fp32, out_dir=args.out, name=args.name, imgsz=args.imgsz, levels=args.levels,
        calibration_images=images, calibration_count=args.calibration_count, int8=not args.no_int8,
        calibration_method=args.calibration_method, calibration_percentile=args.percentile,
    ))
    for path in (None if args.fp32 is not None else result.fp32, result.int8):
        if path is not None:
            sys.stdout.write(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)\n")
    return 0


def run_recover(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from floorman.models.export import calibration_images
    from floorman.models.recover import RecoverConfig, recover_checkpoint

    if args.calibration_count < 1:
        raise ConfigError(f"expected at least 1, got {args.calibration_count}", field="--calibration-count")
    if not args.calibration.is_dir():
        raise ConfigError(f"expected a folder of images, got {args.calibration} (no such folder)",
                          field="--calibration")
    try:
        config = RecoverConfig(onnx_path=args.onnx, out=args.out, model=args.model, threads=args.threads,
                               images=calibration_images(args.calibration, count=args.calibration_count))
    except ValidationError as exc:
        raise flag_error(exc, flags={"onnx_path": "--onnx"}) from None
    result = recover_checkpoint(config)
    sys.stdout.write(f"wrote {result.out} ({result.out.stat().st_size / 1e6:.1f} MB): {result.convolutions} "
                     f"convolutions and {result.norms} batch norms from {args.onnx}, statistics from "
                     f"{result.windows} windows of {result.images} images; checkpoint vs ONNX on them: boxes "
                     f"within {result.box_px:.4f} px, scores within {result.score:.6f}\n")
    return 0


def run_info(args: argparse.Namespace) -> int:
    info = model_info(args.model)
    levels = ", ".join(str(level) for level in info.levels) or "whole frames"
    sys.stdout.write(f"{info.path}: imgsz {info.imgsz}, levels {levels}, {info.size_mb:.1f} MB, classes "
                     f"{', '.join(info.names)}\n")
    return 0
