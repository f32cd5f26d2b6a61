"""Photo-like frames and their truth as `floorman photos score` labels: the scorer checked where the truth is known.

    .venv/bin/python benchmarks/photo_labels.py --out DIR [--count 10] [--seed 23500] [--size 3000x2000]
                                                [--min-visible 0.7] [--chip-designs P]
                                                [--singles] [--rack drawn|always|never] [--min-chip-visible V]
                                                [--white-spots]
    floorman photos score DIR/labels.jsonl [--misses]

Each frame is drawn as `benchmarks/photo_effects.py` draws its frames as rendered (a home-style scene from
`SeedSequence(seed, spawn_key=(i,))`, rendered with the mild effects of a good photograph), written as
DIR/photo_NN.jpg, and labelled from its truth in DIR/labels.jsonl (`floorman.vision.photo_labels`): every face-up
card at least --min-visible in view with its identity, the face-down cards as much in view, and the chips per colour
word of every chip object in the frame (racks excluded; as `benchmarks/chips_photo.py` counts them). Use a seed never
used for anything else to measure; 23500 is the README's example. `--chip-designs P` plays that share of the frames
with another club's chips (`datasets.chip_designs`), labelled with the colour word of their colour (white, red,
green, black, blue), as whoever labels a photo of them would.

The issue's held-out photographs hold single chips and a chip rack at the side: `--singles --rack always` renders
that kind (each of the scene's loose stacks of 2-3 chips left as its top chip, upright; a rack beside the cards in
every frame; every other draw as without the flags), and `--min-chip-visible V` labels only chips at least that share
in view (a chip under a card, or a sliver at the photo's edge, is one no one labelling the photo would count; default
0: every chip object with a pixel in the frame, as before). Their chips have white edge spots (a white chip's do not
show): `--white-spots` gives another club's chips (`--chip-designs`) white spots only, every other draw as without it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import cv2
import numpy as np

from floorman.core.chips import ChipSet
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import SceneStyle, random_sample
from floorman.datasets.render import ObjectTruth, Renderer
from floorman.datasets.render_cli import parse_size
from floorman.datasets.render_dataset import TRAINING_OPTIONS
from floorman.datasets.scene import DetectorClass
from floorman.vision.detect_cli import colour_name
from floorman.vision.photo_labels import CardLabel, PhotoLabel, write_labels

CLEAN = Effects(noise_sigma=1.5, jpeg_quality=92)  # as benchmarks/photo_effects.py renders its frames


def _box(obj: ObjectTruth) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = (float(round(v)) for v in obj.box)
    return x1, y1, x2, y2


RACKS = {"drawn": None, "always": True, "never": False}


def photo_set(out: Path, *, count: int, seed: int, size: tuple[int, int], min_visible: float,
              chip_designs: float = 0.0, singles: bool = False, rack: bool | None = None,
              min_chip_visible: float = 0.0, white_spots: bool = False) -> list[PhotoLabel]:
    """Render `count` photo-like frames into `out` and return their truth as labels."""
    words = {d.value: colour_name(d.rgb) for d in ChipSet.default().denominations}
    out.mkdir(parents=True, exist_ok=True)
    labels = []
    for index in range(count):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))
        scene, camera = random_sample(rng, size=size, style=SceneStyle.HOME, chip_designs=chip_designs,
                                      home_rack=rack, white_spots=white_spots)
        if singles:
            scene.chips = [dataclasses.replace(s, chips=s.chips[-1:], lean_mm=(0.0, 0.0)) for s in scene.chips]
        render_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 1)))
        result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=CLEAN, rng=render_rng)
        name = f"photo_{index:02d}.jpg"
        cv2.imwrite(str(out / name), result.image)
        shown = [o for o in result.objects if o.box[2] > o.box[0] and o.box[3] > o.box[1]
                 and o.visible_fraction >= min_visible]
        cards = tuple(CardLabel(box=_box(o), card=o.card) for o in shown
                      if o.cls == DetectorClass.CARD_FACE and o.face_up)
        backs = tuple(_box(o) for o in shown if o.cls == DetectorClass.CARD_BACK)
        chips: dict[str, int] = {}
        in_frame = [o for o in result.objects if o.box[2] > o.box[0] and o.box[3] > o.box[1]
                    and o.visible_fraction >= min_chip_visible]
        for obj in in_frame:
            for value in (obj.chips or ()) if obj.cls == DetectorClass.CHIP else ():
                word = words[value]  # a club's red chip is labelled red, whatever its shade
                chips[word] = chips.get(word, 0) + 1
        labels.append(PhotoLabel(image=name, cards=cards, card_backs=backs, chips=chips))
    return labels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder for the photos and labels.jsonl")
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--seed", type=int, default=23500)
    parser.add_argument("--size", type=parse_size, default=(3000, 2000))
    parser.add_argument("--min-visible", type=float, default=0.7, help="cards at least this share in view")
    parser.add_argument("--chip-designs", type=float, default=0.0, metavar="P",
                        help="share of the frames played with another club's chips (default 0: the shipped set's)")
    parser.add_argument("--singles", action="store_true",
                        help="single chips only, as the held-out photographs (each loose stack left as its top chip)")
    parser.add_argument("--rack", choices=tuple(RACKS), default="drawn",
                        help="a chip rack beside the cards: drawn (half the frames, the default), always or never")
    parser.add_argument("--min-chip-visible", type=float, default=0.0, metavar="V",
                        help="label chips at least this share in view (default 0: every chip in the frame)")
    parser.add_argument("--white-spots", action="store_true",
                        help="another club's chips (--chip-designs) with white edge spots only, as the held-out "
                        "photographs' chips")
    args = parser.parse_args()
    if args.count < 1 or not 0.0 < args.min_visible <= 1.0 or not 0.0 <= args.min_chip_visible <= 1.0:
        parser.error(f"expected --count >= 1, --min-visible in (0, 1] and --min-chip-visible in [0, 1], got "
                     f"{args.count}, {args.min_visible} and {args.min_chip_visible}")
    if (args.out / "labels.jsonl").exists():
        parser.error(f"{args.out / 'labels.jsonl'} already exists; labels are never overwritten")
    labels = photo_set(args.out, count=args.count, seed=args.seed, size=args.size, min_visible=args.min_visible,
                       chip_designs=args.chip_designs, singles=args.singles, rack=RACKS[args.rack],
                       min_chip_visible=args.min_chip_visible, white_spots=args.white_spots)
    written = write_labels(args.out / "labels.jsonl", labels)
    cards = sum(len(label.cards) for label in labels)
    chips = sum(sum((label.chips or {}).values()) for label in labels)
    sys.stdout.write(f"wrote {args.out / 'labels.jsonl'}: {written} photos, {cards} face-up cards, "
                     f"{sum(len(label.card_backs or ()) for label in labels)} card backs, {chips} chips\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
