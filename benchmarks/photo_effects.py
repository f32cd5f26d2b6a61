"""What a real camera does that the simulator does not: photo-like frames read end to end, once as rendered and once
through each of a set of camera effects, to see which of them the detector and the recognisers do not survive.

    .venv/bin/python benchmarks/photo_effects.py [--frames 20] [--seed 21300] [--size 3000x2000]
                                                 [--effects none,barrel,...] [--model M] [--classifier C]
                                                 [--straight-down] [--verbose]

The held-out real photographs of the issue (straight-down, 3000x2000, a light-wood table, cards about 200 px wide,
single chips in five colours) were taken with a camera the simulator never modelled: its lens bends straight lines
(barrel distortion), darkens the corners (vignetting) and splits the colours at the edges (lateral chromatic
aberration); its phone or camera sharpens, smooths noise away or compresses hard; its light may be warmer or
brighter than any training frame's (`Effects.random` draws 3200-6500 K and a gain of exp(N(0, 0.18))); and a photo
taken by hand is rarely square on (the simulator's photo camera tilts 0-3 degrees): `level`, `tilt10` and `tilt20`
render the scene again from a camera moved about the table point at the image centre, at the same distance, straight
down and 10 and 20 degrees off vertical (the view changes with it: compare the tilts with `level`). Each frame
is a home-style scene (`random_sample(..., style=SceneStyle.HOME)`, drawn from `SeedSequence(seed, spawn_key=(i,))`,
as `benchmarks/chips_photo.py` draws them; use a seed never used for anything else), rendered with the mild effects
of a good photograph (read noise 1.5, JPEG 92: `CLEAN`) and no random ones, so that each effect below is the only
one; a geometric effect moves the truth (boxes, card corners) with the pixels.

Per effect, as `floorman detect IMAGE --json` reads a photo (no calibration; the shipped INT8 detector unless
--model; the shipped card classifier unless --classifier): AP50 per class and their mean (COCO-style, as
`benchmarks/detector.py`; a photo holds a hand or two at most, so the hands' AP moves by a third with one hand); card
identity end to end on face-up cards at least 40 px wide and less than 30 % covered (a card counts as right when a
`card_face` box at IoU >= 0.5 reads its identity; a missed card counts as wrong); the chip objects whose top colour
is read right (matched to a chip box at IoU >= 0.5); the frames whose chips counted per colour (`chip_totals`) are
all exact. --verbose prints every card and chip top read wrong.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from floorman.core.chips import ChipSet
from floorman.core.geometry import short_side
from floorman.datasets.camera import Camera
from floorman.datasets.effects import Effects, temperature_gains
from floorman.datasets.random_scene import SceneStyle, random_sample
from floorman.datasets.render import ObjectTruth, Renderer, RenderResult
from floorman.datasets.render_cli import parse_size
from floorman.datasets.render_dataset import TRAINING_OPTIONS
from floorman.datasets.scene import DetectorClass
from floorman.vision.cards_cnn import CardClassifier
from floorman.vision.chips import ChipRecogniser
from floorman.vision.detect_cli import chip_totals, counted_chips, default_model, read_cards, read_chips
from floorman.vision.detector import Detector, OnnxDetectorConfig, box_iou, create_detector
from floorman.vision.metrics import MeanAveragePrecision

MATCH_IOU = 0.5
MIN_CARD_PX = 40.0
MAX_COVERED = 0.3
CLEAN = Effects(noise_sigma=1.5, jpeg_quality=92)

Image = np.ndarray
Points = np.ndarray  # (N, 2) pixel coordinates


@dataclass(frozen=True)
class CameraEffect:
    """An effect on a rendered frame: its pixels, and for a geometric one where each source pixel lands."""

    name: str
    what: str
    pixels: Callable[[Image], Image]
    moves: Callable[[Points, tuple[int, int]], Points] | None = None
    tilt_deg: float | None = None  # not an effect on the pixels: the scene rendered again from a camera tilted so


def tilted(camera: Camera, tilt_deg: float, *, azimuth_deg: float) -> Camera:
    """The camera moved on a sphere about the table point at its image centre (same distance, field of view and
    image size) to look at it `tilt_deg` from vertical, coming from `azimuth_deg`: a photo taken by hand."""
    forward = camera.rotation[2]
    eye = camera.eye
    distance = -eye[2] / forward[2]  # along the optical axis down to the felt
    target = eye + distance * forward
    t, a = np.radians(tilt_deg), np.radians(azimuth_deg)
    new_eye = target + distance * np.array([np.sin(t) * np.cos(a), np.sin(t) * np.sin(a), np.cos(t)])
    hfov = float(np.degrees(2.0 * np.arctan(camera.width / 2.0 / camera.fx)))
    return Camera.look_at(eye=(float(new_eye[0]), float(new_eye[1]), float(new_eye[2])),
                          target=(float(target[0]), float(target[1]), 0.0), size=(camera.width, camera.height),
                          hfov_deg=hfov)


def _radius(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, float]:
    """Each pixel's offset from the image centre (x, y) and the half-diagonal."""
    h, w = shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    return xs - (w - 1) / 2.0, ys - (h - 1) / 2.0, float(np.hypot(w, h) / 2.0)


def _lens(k: float) -> tuple[Callable[[Image], Image], Callable[[Points, tuple[int, int]], Points]]:
    """Radial distortion p_d = p_u (1 + k |p_u|^2) / (1 + k), |p| in half-diagonals: the corners stay where they are
    (a lens's image cropped to the sensor), k < 0 bows straight lines out (barrel), k > 0 in (pincushion)."""

    def forward(points: Points, size: tuple[int, int]) -> Points:
        w, h = size
        centre = np.array([(w - 1) / 2.0, (h - 1) / 2.0])
        half = float(np.hypot(w, h) / 2.0)
        p = (np.asarray(points, dtype=np.float64) - centre) / half
        r2 = (p**2).sum(axis=1, keepdims=True)
        return np.asarray(centre + p * (1.0 + k * r2) / (1.0 + k) * half)

    def pixels(image: Image) -> Image:
        dx, dy, half = _radius(image.shape)
        pd = np.stack([dx, dy], axis=-1) / half
        pu = pd.copy()
        for _ in range(8):  # invert forward(): p_u = p_d (1 + k) / (1 + k |p_u|^2)
            r2 = (pu**2).sum(axis=-1, keepdims=True)
            pu = pd * (1.0 + k) / (1.0 + k * r2)
        h, w = image.shape[:2]
        map_x = (pu[..., 0] * half + (w - 1) / 2.0).astype(np.float32)
        map_y = (pu[..., 1] * half + (h - 1) / 2.0).astype(np.float32)
        return np.asarray(cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE))

    return pixels, forward


def _vignetting(strength: float) -> Callable[[Image], Image]:
    """Light falling off to 1 - strength at the corners, with the square of the distance from the centre."""

    def pixels(image: Image) -> Image:
        dx, dy, half = _radius(image.shape)
        gain = 1.0 - strength * (dx**2 + dy**2) / half**2
        return np.clip(image * gain[..., None], 0, 255).astype(np.uint8)

    return pixels


def _chromatic(spread: float) -> Callable[[Image], Image]:
    """Lateral chromatic aberration: red magnified by 1 + spread about the centre, blue by 1 - spread."""

    def pixels(image: Image) -> Image:
        h, w = image.shape[:2]
        out = image.copy()
        for channel, scale in ((2, 1.0 + spread), (0, 1.0 - spread)):
            matrix = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), 0.0, scale)
            out[..., channel] = cv2.warpAffine(image[..., channel], matrix, (w, h), flags=cv2.INTER_LINEAR,
                                               borderMode=cv2.BORDER_REPLICATE)
        return out

    return pixels


def _sharpened(amount: float, sigma: float) -> Callable[[Image], Image]:
    """An unsharp mask, as phones sharpen: halos along every edge."""

    def pixels(image: Image) -> Image:
        blurred = cv2.GaussianBlur(image, (0, 0), sigma)
        return np.asarray(cv2.addWeighted(image, 1.0 + amount, blurred, -amount, 0.0))

    return pixels


def _gains(gains: tuple[float, float, float], exposure: float = 1.0) -> Callable[[Image], Image]:
    def pixels(image: Image) -> Image:
        return np.clip(image * (np.asarray(gains, dtype=np.float32) * exposure), 0, 255).astype(np.uint8)

    return pixels


def _jpeg(quality: int) -> Callable[[Image], Image]:
    def pixels(image: Image) -> Image:
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            raise RuntimeError(f"JPEG encoding at quality {quality} failed")
        return np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR))

    return pixels


def _resampled(factor: float) -> Callable[[Image], Image]:
    """Fewer real pixels than the frame has: down by `factor` (area) and back up (as a phone's digital zoom or its
    noise reduction leaves it)."""

    def pixels(image: Image) -> Image:
        h, w = image.shape[:2]
        small = cv2.resize(image, (round(w * factor), round(h * factor)), interpolation=cv2.INTER_AREA)
        return np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR))

    return pixels


def _noisy(sigma: float) -> Callable[[Image], Image]:
    def pixels(image: Image) -> Image:
        noise = np.random.default_rng(0).normal(0.0, sigma, size=image.shape)
        return np.clip(image + noise, 0, 255).astype(np.uint8)

    return pixels


def _defocused(sigma: float) -> Callable[[Image], Image]:
    def pixels(image: Image) -> Image:
        return np.asarray(cv2.GaussianBlur(image, (0, 0), sigma))

    return pixels


def _effects() -> list[CameraEffect]:
    barrel, barrel_moves = _lens(-0.12)
    pincushion, pincushion_moves = _lens(0.06)
    return [
        CameraEffect("none", "as rendered (read noise 1.5, JPEG 92)", lambda image: image),
        CameraEffect("barrel", "barrel distortion, k = -0.12 (lines bow ~2 % of the frame)", barrel, barrel_moves),
        CameraEffect("pincushion", "pincushion distortion, k = +0.06", pincushion, pincushion_moves),
        CameraEffect("vignetting", "corners 50 % darker", _vignetting(0.5)),
        CameraEffect("chromatic", "red and blue 3 px apart at the corners", _chromatic(0.0009)),
        CameraEffect("sharpened", "unsharp mask, amount 1.5, sigma 2 px", _sharpened(1.5, 2.0)),
        CameraEffect("tungsten", "2700 K light, white balance left alone", _gains(temperature_gains(2700.0))),
        CameraEffect("daylight", "9000 K light, white balance left alone", _gains(temperature_gains(9000.0))),
        CameraEffect("bright", "exposure x1.6 (highlights clip)", _gains((1.0, 1.0, 1.0), 1.6)),
        CameraEffect("dark", "exposure x0.45", _gains((1.0, 1.0, 1.0), 0.45)),
        CameraEffect("jpeg30", "JPEG quality 30", _jpeg(30)),
        CameraEffect("half_res", "half the resolution, scaled back up", _resampled(0.5)),
        CameraEffect("noise", "read noise sigma 10", _noisy(10.0)),
        CameraEffect("defocus", "Gaussian defocus, sigma 3 px", _defocused(3.0)),
        CameraEffect("level", "the scene rendered again from straight above its centre (the tilts' baseline)",
                     lambda image: image, tilt_deg=0.0),
        CameraEffect("tilt10", "rendered again from 10 degrees off vertical, same distance", lambda image: image,
                     tilt_deg=10.0),
        CameraEffect("tilt20", "rendered again from 20 degrees off vertical, same distance", lambda image: image,
                     tilt_deg=20.0),
    ]


@dataclass
class Score:
    """One effect's counts over the frames."""

    ap: MeanAveragePrecision = field(default_factory=lambda: MeanAveragePrecision(len(DetectorClass)))
    cards: int = 0
    cards_right: int = 0
    chips: int = 0
    chips_right: int = 0
    frames: int = 0
    frames_exact: int = 0
    seconds: float = 0.0


def _moved_box(box: tuple[float, ...], moves: Callable[[Points, tuple[int, int]], Points],
               size: tuple[int, int]) -> tuple[float, float, float, float]:
    """The bounding box of a box's outline (9 points a side) after a geometric effect."""
    x1, y1, x2, y2 = box
    t = np.linspace(0.0, 1.0, 9)
    outline = np.concatenate([np.stack([x1 + (x2 - x1) * t, np.full_like(t, y1)], 1),
                              np.stack([x1 + (x2 - x1) * t, np.full_like(t, y2)], 1),
                              np.stack([np.full_like(t, x1), y1 + (y2 - y1) * t], 1),
                              np.stack([np.full_like(t, x2), y1 + (y2 - y1) * t], 1)])
    moved = moves(outline, size)
    w, h = size
    return (float(np.clip(moved[:, 0].min(), 0, w)), float(np.clip(moved[:, 1].min(), 0, h)),
            float(np.clip(moved[:, 0].max(), 0, w)), float(np.clip(moved[:, 1].max(), 0, h)))


def _card_width(obj: ObjectTruth, moves: Callable[[Points, tuple[int, int]], Points] | None,
                size: tuple[int, int]) -> float:
    corners = np.asarray(obj.corners_px, dtype=np.float64)
    if moves is not None:
        corners = moves(corners, size)
    return short_side(corners)


def score_frame(score: Score, effect: CameraEffect, image: Image, objects: list[ObjectTruth], chipset: ChipSet, *,
                detector: Detector, verbose: str, classifier: CardClassifier | None = None,
                straight_down: bool = False) -> None:
    size = (image.shape[1], image.shape[0])
    seen = effect.pixels(image)
    started = time.perf_counter()
    detections = detector.detect(seen)
    names = detector.names
    identities = read_cards(seen, detections, names=names, classifier=classifier)
    readings = read_chips(seen, detections, names=names, recogniser=ChipRecogniser(chipset),
                          straight_down=straight_down)
    score.seconds += time.perf_counter() - started
    boxes = [o.box if effect.moves is None else _moved_box(o.box, effect.moves, size) for o in objects]
    kept = [i for i, b in enumerate(boxes) if b[2] > b[0] and b[3] > b[1]]
    truth_xyxy = np.array([boxes[i] for i in kept], dtype=np.float64).reshape(-1, 4)
    score.ap.update(detections, truth_xyxy, np.array([int(objects[i].cls) for i in kept], dtype=np.int64))
    xyxy = detections.xyxy.astype(np.float64).reshape(-1, 4)
    card_rows = [i for i in range(len(detections)) if names.get(int(detections.class_id[i])) == "card_face"]
    chip_rows = sorted(readings)
    for i in kept:
        obj, box = objects[i], boxes[i]
        if obj.cls == DetectorClass.CARD_FACE and obj.face_up and obj.corners_px is not None:
            if _card_width(obj, effect.moves, size) < MIN_CARD_PX or 1.0 - obj.visible_fraction >= MAX_COVERED:
                continue
            score.cards += 1
            read, best = None, 0.0
            if card_rows:
                overlaps = box_iou(np.asarray(box, dtype=np.float64), xyxy[card_rows])[0]
                best = float(overlaps.max())
                if best >= MATCH_IOU:
                    read = identities[card_rows[int(np.argmax(overlaps))]][0]
            score.cards_right += int(read == obj.card)
            if read != obj.card and verbose:
                what = (f"read {read}" if read is not None else "unread") if best >= MATCH_IOU else \
                    f"no card_face box (best IoU {best:.2f})"
                sys.stdout.write(f"  {verbose} {effect.name}: {obj.card} {what} at {[round(v) for v in box]}\n")
        elif obj.cls == DetectorClass.CHIP and obj.chips:
            score.chips += 1
            if chip_rows:
                overlaps = box_iou(np.asarray(box, dtype=np.float64), xyxy[chip_rows])[0]
                if float(overlaps.max()) >= MATCH_IOU:
                    top = readings[chip_rows[int(np.argmax(overlaps))]].top
                    score.chips_right += int(top == obj.chips[-1])
                    if top != obj.chips[-1] and verbose:
                        sys.stdout.write(f"  {verbose} {effect.name}: chip {obj.chips} top read {top} at "
                                         f"{[round(v) for v in box]}\n")
    counted = counted_chips(readings, detections, image_size=size, every_box=straight_down)
    predicted = {t.value: t.chips for t in chip_totals(counted, chipset)}
    truth = Counter(v for i in kept if objects[i].cls == DetectorClass.CHIP for v in (objects[i].chips or ()))
    score.frames += 1
    score.frames_exact += int(all(predicted.get(v, 0) == truth.get(v, 0) for v in chipset.values))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--seed", type=int, default=21300)
    parser.add_argument("--size", type=parse_size, default=(3000, 2000))
    parser.add_argument("--effects", default="all", help="comma-separated effect names, or all")
    parser.add_argument("--model", help="ONNX detector (default: the shipped INT8 photo detector)")
    parser.add_argument("--classifier", type=Path, help="card classifier ONNX (default: the shipped one)")
    parser.add_argument("--straight-down", action="store_true", help="chips counted as `floorman detect "
                        "--straight-down` counts them")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    every = _effects()
    known = [e.name for e in every]
    wanted = known if args.effects == "all" else args.effects.split(",")
    unknown = [name for name in wanted if name not in known]
    if unknown or args.frames < 1:
        parser.error(f"--effects: expected names of {', '.join(known)} or all, got {args.effects!r}" if unknown
                     else f"--frames: expected at least 1, got {args.frames}")
    effects = [e for e in every if e.name in wanted]
    detector = create_detector(OnnxDetectorConfig(model=args.model or default_model(photos=True)))
    classifier = None if args.classifier is None else CardClassifier(args.classifier)
    scores = {e.name: Score() for e in effects}
    started = time.perf_counter()
    for index in range(args.frames):
        rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(index,)))
        scene, camera = random_sample(rng, size=args.size, style=SceneStyle.HOME)
        azimuth = float(rng.uniform(0.0, 360.0))
        renders: dict[float | None, RenderResult] = {}
        for effect in effects:
            if effect.tilt_deg not in renders:
                view = camera if effect.tilt_deg is None else tilted(camera, effect.tilt_deg, azimuth_deg=azimuth)
                render_rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(index, 1)))
                renders[effect.tilt_deg] = Renderer(view, options=TRAINING_OPTIONS).render(scene, effects=CLEAN,
                                                                                           rng=render_rng)
            result = renders[effect.tilt_deg]
            objects = [o for o in result.objects if o.box[2] > o.box[0] and o.box[3] > o.box[1]]
            score_frame(scores[effect.name], effect, result.image, objects, scene.chipset, detector=detector,
                        verbose=f"frame {index}" if args.verbose else "", classifier=classifier,
                        straight_down=args.straight_down)
    out = sys.stdout
    how = ", chips counted straight down" if args.straight_down else ""
    out.write(f"photo-like frames through camera effects: {args.frames} home-style frames of {args.size[0]}x"
              f"{args.size[1]}, seed {args.seed}, no calibration{how}, {time.perf_counter() - started:.0f} s\n\n")
    classes = " | ".join(f"{c.name.lower()} AP50" for c in DetectorClass)
    out.write(f"| effect | what | mAP50 | {classes} | cards right | chips' top right | frames' chips exact "
              f"| s/frame |\n|{'---|' * (len(DetectorClass) + 7)}\n")
    for effect in effects:
        s = scores[effect.name]
        map50, _, per_class = s.ap.compute()
        aps = " | ".join("—" if np.isnan(v) else f"{v:.3f}" for v in per_class)
        out.write(f"| {effect.name} | {effect.what} | {map50:.3f} | {aps} | "
                  f"{100.0 * s.cards_right / max(s.cards, 1):.1f} % of {s.cards} | "
                  f"{100.0 * s.chips_right / max(s.chips, 1):.1f} % of {s.chips} | "
                  f"{100.0 * s.frames_exact / max(s.frames, 1):.0f} % | {s.seconds / max(s.frames, 1):.2f} |\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
