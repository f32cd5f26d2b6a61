"""Training patches for the card classifier and the index reader, cut from simulator renders.

Each rendered frame (`random_sample` on `image_rng(seed, index)`, the dataset renderer's own draw) gives, for
every face-up card at least `MIN_VISIBLE` visible and `MIN_WIDTH_PX` wide, a few views of the card warped to
the classifier's patch: its true outline with small and larger corner jitter (as an outline finder's error
would be), and the rotated rectangle around its visible pixels (what an outline finder sees of a partly
covered card). Other objects (face-down cards, chips, hands, the button) give negative patches the same way.
The patch geometry (`core.card_patch.PatchSpec`) is written into the exported model, and
`floorman.vision.cards_cnn` warps patches by it, so training and inference cut them alike. The index reader's
patch is a corner of the card (`PatchSpec.region`): each view then gives one patch per index corner (`turns`),
labelled with the card only when its index shows (`index_visible`, `MIN_INDEX_VISIBLE`), else as none.

Patches are cached on disk in chunks of `CHUNK` frames (`chunk_SEED_START.npz`; another patch than the classifier's
is named in the file name, `PatchSpec.tag`), so a build resumes and the training reads them back without rendering
again.
"""

from __future__ import annotations

import logging
import multiprocessing
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.card_patch import PatchSpec, warp_patch
from floorman.core.cards import Card, full_deck
from floorman.core.chips import ChipDenomination
from floorman.core.geometry import short_side
from floorman.datasets.effects import Effects, apply_effects
from floorman.datasets.random_scene import SceneStyle, Tilt, random_sample
from floorman.datasets.render import Renderer, RenderResult
from floorman.datasets.render_dataset import TRAINING_OPTIONS, image_rng
from floorman.datasets.scene import (
    COURT_FIGURE_MODES,
    COURTS,
    N_SUIT_SHAPES,
    DetectorClass,
    check_suit_shapes,
    with_court_figures,
    with_suit_shapes,
)
from floorman.datasets.textures import N_DECK_DESIGNS, card_face
from floorman.datasets.textures.chips import chip_top

logger = logging.getLogger(__name__)

RANK_CODES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUIT_CODES = ("S", "H", "D", "C")
CHUNK = 25  # frames per cache file
MIN_VISIBLE = 0.55
MIN_WIDTH_PX = 18.0
NEGATIVES_PER_FRAME = 3
COMPOSITE_WIDTHS = (22.0, 260.0)  # composite cards' widths in px (log-uniform)
_JITTER = (0.015, 0.04)  # corner jitter, fraction of the card width: a good and a rough outline
INDEX_AREA = (0.03, 0.025, 0.21, 0.27)  # where a deck's index lies (`card_patch.INDEX_REGION`), fractions of the card
_COVER_CHANGE = 12  # a composite's pixel changed this much by a cover (0..255, any channel) is covered
MIN_INDEX_VISIBLE = 0.9  # an index patch is labelled with its card when this much of its index area shows, else none

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Samples:
    """Patches (N, H, W, 3) BGR uint8 with rank and suit ids (-1 for a negative) and whether each is a face."""

    patches: Image
    rank: npt.NDArray[np.int64]
    suit: npt.NDArray[np.int64]

    @property
    def is_face(self) -> npt.NDArray[np.bool_]:
        return np.asarray(self.rank >= 0)

    def __len__(self) -> int:
        return int(self.patches.shape[0])

    @classmethod
    def concat(cls, parts: list[Samples], *, spec: PatchSpec) -> Samples:
        if not parts:
            return cls(patches=np.zeros((0, spec.height, spec.width, 3), np.uint8), rank=np.zeros(0, np.int64),
                       suit=np.zeros(0, np.int64))
        return cls(patches=np.concatenate([p.patches for p in parts]), rank=np.concatenate([p.rank for p in parts]),
                   suit=np.concatenate([p.suit for p in parts]))


def turns(spec: PatchSpec) -> tuple[int, ...]:
    """The quarter turns of a view's corners each patch is cut at: the whole card once (training turns it 180
    degrees); a corner of it (the index reader's) as it is and turned 180 degrees (its bottom-right corner)."""
    return (0,) if spec.whole_card else (0, 2)


def index_visible(covered: npt.NDArray[np.bool_], corners: FloatArray) -> float:
    """The share of the index area (`INDEX_AREA` of the card whose outline is `corners`) not `covered` (an image
    mask: True where something lies over the card or the card is not there)."""
    x0, y0, x1, y1 = INDEX_AREA
    area = PatchSpec(width=32, height=32, supersample=1, region=(x0, y0, x1, y1))
    matrix = cv2.getPerspectiveTransform(np.asarray(corners, dtype=np.float32), area.target().astype(np.float32))
    warped = cv2.warpPerspective(covered.astype(np.uint8), matrix, (32, 32), flags=cv2.INTER_NEAREST,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=1)
    return 1.0 - float(warped.mean())


def _visible_rect(mask: npt.NDArray[np.bool_], *, near: FloatArray | None) -> FloatArray | None:
    """The rotated rectangle around the visible pixels, clockwise, portrait, and (given `near`) its corners in
    the order closest to `near`'s."""
    points = np.argwhere(mask)[:, ::-1].astype(np.float32)
    if len(points) < 20:
        return None
    rect = np.asarray(cv2.boxPoints(cv2.minAreaRect(points)), dtype=np.float32)
    centre = rect.mean(axis=0)
    rect = rect[np.argsort(np.arctan2(rect[:, 1] - centre[1], rect[:, 0] - centre[0]))]  # clockwise on screen
    if near is None:
        if np.linalg.norm(rect[1] - rect[0]) > np.linalg.norm(rect[2] - rect[1]):
            rect = np.roll(rect, -1, axis=0)
        return rect
    errors = [float(np.linalg.norm(np.roll(rect, -k, axis=0) - near)) for k in range(4)]
    return np.roll(rect, -int(np.argmin(errors)), axis=0).astype(np.float32)


def _jittered(corners: FloatArray, rng: np.random.Generator, *, fraction: float) -> FloatArray:
    width = short_side(corners)
    centre = corners.mean(axis=0)
    scale = float(rng.normal(1.0, fraction))
    out = centre + (corners - centre) * scale + rng.normal(0.0, fraction * width, size=(4, 2))
    return np.asarray(out, dtype=np.float32)


def frame_samples(result: RenderResult, rng: np.random.Generator, *, spec: PatchSpec) -> Samples:
    """The positive and negative patches of one rendered frame. The whole card (`spec.whole_card`): three views
    of each face-up card, two jittered outlines and the rectangle around its visible pixels. Its index corner (the
    index reader's): two jittered outlines, each read at the top-left and bottom-right corner, a patch labelled
    with the card when its index shows (`MIN_INDEX_VISIBLE`), else as none."""
    patches: list[Image] = []
    ranks: list[int] = []
    suits: list[int] = []
    negatives = 0
    for obj in result.objects:
        face = obj.cls == DetectorClass.CARD_FACE and bool(obj.face_up) and obj.corners_px is not None
        if face and obj.visible_fraction >= MIN_VISIBLE and obj.card is not None:
            corners = np.asarray(obj.corners_px, dtype=np.float32)
            if short_side(corners) < MIN_WIDTH_PX:
                continue
            card = Card.parse(obj.card)
            views = [_jittered(corners, rng, fraction=f) for f in _JITTER]
            mask = result.instance_mask == obj.id
            if spec.whole_card:
                rect = _visible_rect(mask, near=corners)
                views.append(rect if rect is not None and obj.visible_fraction < 0.97 else
                             _jittered(corners, rng, fraction=_JITTER[0]))
            for view in views:
                for turn in turns(spec):
                    seen = 1.0 if spec.whole_card else index_visible(~mask, np.roll(corners, -turn, axis=0))
                    shows = seen >= MIN_INDEX_VISIBLE
                    patches.append(warp_patch(result.image, np.roll(view, -turn, axis=0), spec=spec))
                    ranks.append(RANK_CODES.index(card.rank.code) if shows else -1)
                    suits.append(SUIT_CODES.index(card.suit.value) if shows else -1)
        elif not face and negatives < NEGATIVES_PER_FRAME and rng.random() < 0.5:
            rect = _visible_rect(result.instance_mask == obj.id, near=None)
            if rect is not None and short_side(rect) >= MIN_WIDTH_PX:
                patches.append(warp_patch(result.image, _jittered(rect, rng, fraction=_JITTER[0]), spec=spec))
                ranks.append(-1)
                suits.append(-1)
                negatives += 1
    if not patches:
        return Samples.concat([], spec=spec)
    return Samples(patches=np.stack(patches), rank=np.array(ranks, np.int64), suit=np.array(suits, np.int64))


def render_frame(seed: int, index: int, *, spec: PatchSpec, figures: str = "own", suits: str = "own",
                 tilt: Tilt | None = None) -> Samples:
    """Frame `index` of `seed`, drawn and rendered as `floorman datasets render --court-figures FIGURES
    --suit-shapes SUITS` draws it (with `tilt`, as `--style casino --camera-tilt MIN-MAX` does), cut into
    patches."""
    rng = image_rng(seed, index)
    if tilt is None:
        scene, camera = random_sample(rng, size=None)
    else:
        scene, camera = random_sample(rng, size=None, style=SceneStyle.CASINO, tilt_deg=tilt)
    scene = with_court_figures(scene, figures, np.random.default_rng([seed, index, 13]))
    scene = with_suit_shapes(scene, suits, np.random.default_rng([seed, index, 17]))
    effects = Effects.random(rng)
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=effects, rng=rng)
    return frame_samples(result, np.random.default_rng([seed, index, 7]), spec=spec)


_FACE_PPM = 4.0  # composites start from faces drawn at this scale (cached), shrunk to the wanted size
_TABLE_BGR = ((62, 110, 38), (52, 92, 24), (128, 72, 30), (36, 34, 34), (98, 94, 92), (128, 178, 212),
              (150, 194, 222), (104, 156, 196), (170, 208, 232), (72, 118, 168))


def _paste(canvas: Image, face: Image, matrix: FloatArray) -> None:
    """Warp the BGRA `face` by the 2x3 `matrix` onto `canvas` (in place), blending by its alpha."""
    h, w = canvas.shape[:2]
    warped = cv2.warpAffine(face, matrix, (w, h), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0, 0))
    alpha = warped[..., 3:4].astype(np.float32) / 255.0
    canvas[:] = (warped[..., :3] * alpha + canvas * (1.0 - alpha)).astype(np.uint8)


def _placed(face: Image, *, width_px: float, angle: float, centre: tuple[float, float]) -> FloatArray:
    """The 2x3 matrix putting `face` at `centre`, turned by `angle` degrees, `width_px` wide."""
    h, w = face.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle, width_px / w)
    matrix[:, 2] += (centre[0] - w / 2.0, centre[1] - h / 2.0)
    return np.asarray(matrix, dtype=np.float32)


def composite_sample(rng: np.random.Generator, *, spec: PatchSpec, chips: bool = False,
                     widths: tuple[float, float] = COMPOSITE_WIDTHS,
                     any_figure: bool = False, any_suits: bool = False) -> tuple[Image, int, int]:
    """One card face pasted on a plain table at a random size (`widths` px wide, log-uniform) and angle, maybe
    partly under another card or a round blob (a chip, a fingertip), or with `chips` a casino chip lying on
    it, through the camera effects; its jittered outline warped to the patch. With `any_figure` a court card
    shows a random court figure (only its indices tell its rank); with `any_suits` its suit symbols are one of
    the other decks' shapes (`scene.with_suit_shapes`). Returns the patch and the rank and suit ids."""
    return composite_samples(rng, spec=spec, chips=chips, widths=widths, any_figure=any_figure,
                             any_suits=any_suits)[0]


def composite_samples(rng: np.random.Generator, *, spec: PatchSpec, chips: bool = False,
                      widths: tuple[float, float] = COMPOSITE_WIDTHS, any_figure: bool = False,
                      any_suits: bool = False) -> list[tuple[Image, int, int]]:
    """`composite_sample`'s card as patches: one of the whole card, or (an index corner's `spec`) one of each
    index corner, labelled with the card when its index shows (`MIN_INDEX_VISIBLE`), else as none."""
    deck = full_deck()
    card = deck[int(rng.integers(len(deck)))]
    figure = COURTS[int(rng.integers(len(COURTS)))] if any_figure and card.rank.is_court else None
    shape = int(rng.integers(1, N_SUIT_SHAPES + 1)) if any_suits else 0
    face = card_face(card, design=int(rng.integers(N_DECK_DESIGNS)), px_per_mm=_FACE_PPM, figure=figure,
                     suit_shape=shape)
    width_px = float(np.exp(rng.uniform(np.log(widths[0]), np.log(widths[1]))))
    side = int(width_px * 2.2) + 8
    canvas = np.empty((side, side, 3), dtype=np.uint8)
    canvas[:] = _TABLE_BGR[int(rng.integers(len(_TABLE_BGR)))]
    canvas[:] = np.clip(canvas + rng.normal(0.0, rng.uniform(2.0, 10.0), size=canvas.shape), 0, 255).astype(np.uint8)
    centre = (side / 2.0, side / 2.0)
    matrix = _placed(face, width_px=width_px, angle=float(rng.uniform(0.0, 360.0)), centre=centre)
    _paste(canvas, face, matrix)
    h, w = face.shape[:2]
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32) @ matrix[:, :2].T + matrix[:, 2]
    pasted = canvas.copy()
    if rng.random() < (0.5 if chips else 0.4):
        _cover(canvas, rng, corners=corners, width_px=width_px, chips=chips)
    covered = np.abs(canvas.astype(np.int16) - pasted).max(axis=2) > _COVER_CHANGE
    image = apply_effects(canvas, Effects.random(rng), rng=rng)
    rank, suit = RANK_CODES.index(card.rank.code), SUIT_CODES.index(card.suit.value)
    out = []
    for turn in turns(spec):
        view = np.roll(_jittered(corners, rng, fraction=float(rng.choice(_JITTER))), -turn, axis=0)
        shows = spec.whole_card or index_visible(covered, np.roll(corners, -turn, axis=0)) >= MIN_INDEX_VISIBLE
        out.append((warp_patch(image, view, spec=spec), rank if shows else -1, suit if shows else -1))
    return out


def _cover(canvas: Image, rng: np.random.Generator, *, corners: FloatArray, width_px: float, chips: bool) -> None:
    """Another card over one end of the card, a round blob over one of its sides (a fingertip), or with
    `chips` (half the time) a casino chip lying on it, over its pips or an index (`_chip_on`)."""
    end = corners[:2].mean(axis=0) if rng.random() < 0.5 else corners[2:].mean(axis=0)
    side = corners[[0, 3]].mean(axis=0) if rng.random() < 0.5 else corners[[1, 2]].mean(axis=0)
    pick = rng.random()
    if pick < (0.3 if chips else 0.5):
        deck = full_deck()
        other = card_face(deck[int(rng.integers(len(deck)))], design=int(rng.integers(N_DECK_DESIGNS)),
                          px_per_mm=_FACE_PPM)
        away = end + (end - corners.mean(axis=0)) * float(rng.uniform(0.55, 1.0))
        _paste(canvas, other, _placed(other, width_px=width_px, angle=float(rng.uniform(0, 360)),
                                      centre=(float(away[0]), float(away[1]))))
    elif not chips or pick < 0.5:
        colour = tuple(int(v) for v in rng.integers(0, 256, size=3))
        radius = max(2, round(width_px * float(rng.uniform(0.15, 0.35))))
        centre = side + (side - corners.mean(axis=0)) * float(rng.uniform(0.0, 0.6))
        cv2.circle(canvas, (round(float(centre[0])), round(float(centre[1]))), radius, colour, thickness=-1)
    else:
        _chip_on(canvas, rng, corners=corners, width_px=width_px)


CHIP_TO_CARD = 39.0 / 63.5  # a casino chip's diameter over a poker card's width (reference/physical.md)
_CHIP_BODIES = ("#f2f2f2", "#c81e28", "#1e8c3c", "#181818", "#1e50b4", "#6a2c91", "#e6c81e", "#e8781e",
                "#9a9a9a", "#e07ab0", "#7a4a2a", "#20a0a0")  # white, red, green, black, blue, purple, ...


def random_chip(rng: np.random.Generator, *, diameter_px: float) -> Image:
    """The top face of a chip of a random colour (a common chip colour, shifted a little), with 0, 4, 6 or 8
    edge spots (white mostly), turned at random: BGRA, `diameter_px` across."""
    body = np.array([int(_CHIP_BODIES[int(rng.integers(len(_CHIP_BODIES)))][i:i + 2], 16) for i in (1, 3, 5)])
    body = np.clip(body + rng.normal(0.0, 12.0, size=3), 0, 255).astype(int)
    edge = (np.array([245, 245, 245]) if rng.random() < 0.7
            else np.clip(255 - body + rng.normal(0.0, 30.0, size=3), 0, 255).astype(int))
    denomination = ChipDenomination(value=int(rng.choice([1, 5, 25, 100, 500, 1000])),
                                    colour="#{:02x}{:02x}{:02x}".format(*body),
                                    edge_colour="#{:02x}{:02x}{:02x}".format(*edge),
                                    edge_spots=int(rng.choice([0, 4, 6, 6, 8, 8])))
    ppm = float(np.clip(diameter_px / 39.0, 0.2, 64.0))
    top = np.array(chip_top(denomination, diameter_mm=39.0, px_per_mm=ppm))
    size = top.shape[0]
    turn = cv2.getRotationMatrix2D((size / 2.0, size / 2.0), float(rng.uniform(0.0, 360.0)), 1.0)
    return np.asarray(cv2.warpAffine(top, turn, (size, size), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0, 0)),
                      dtype=np.uint8)


def _chip_on(canvas: Image, rng: np.random.Generator, *, corners: FloatArray, width_px: float) -> None:
    """A chip (or a short stack, its layers offset as a slanted view shows them) lying on the card, centred
    anywhere over the card's face, with a soft shadow."""
    u, v = float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.08, 0.92))
    top_edge = corners[0] + u * (corners[1] - corners[0])
    bottom_edge = corners[3] + u * (corners[2] - corners[3])
    centre = top_edge + v * (bottom_edge - top_edge)
    chip = random_chip(rng, diameter_px=width_px * CHIP_TO_CARD * float(rng.uniform(0.9, 1.1)))
    size = chip.shape[0]
    layers = 1 if rng.random() < 0.7 else int(rng.integers(2, 5))
    step = rng.normal(0.0, 0.02 * size, size=2)
    shadow = np.zeros_like(chip)
    shadow[..., 3] = (chip[..., 3] * float(rng.uniform(0.25, 0.5))).astype(np.uint8)
    shadow = np.asarray(cv2.GaussianBlur(shadow, (0, 0), max(0.5, 0.05 * size)), dtype=np.uint8)
    offset = rng.normal(0.0, 0.04 * size, size=2)
    for layer, image in ((-1, shadow), *((k, chip) for k in range(layers))):
        at = centre + (offset if layer < 0 else step * layer) - size / 2.0
        matrix = np.array([[1.0, 0.0, at[0]], [0.0, 1.0, at[1]]], dtype=np.float32)
        _paste(canvas, image, matrix)


COMPOSITE_CHUNK = 500  # composite patches per cache file


def build_composites(cache: Path, *, seed: int, count: int, spec: PatchSpec, chips: bool = False,
                     widths: tuple[float, float] = COMPOSITE_WIDTHS, figures: str = "own",
                     suits: str = "own") -> list[Path]:
    """`count` composite patches (rounded up to whole chunks; with `chips`, casino chips among the covers;
    cards `widths` px wide; court figures "own" or "any"; suit shapes "own" or "any"), chunk k drawn from seed
    (`seed`, k) and cached as its own file (skipped when saved; other widths than `COMPOSITE_WIDTHS`, figures
    "any" and suit shapes "any" are named in the file name)."""
    if figures not in ("own", "any"):
        raise ValueError(f"court figures: expected own or any, got {figures!r}")
    check_suit_shapes(suits)
    return [_composite_chunk(cache, seed=seed, chunk=k, spec=spec, chips=chips, widths=widths, figures=figures,
                             suits=suits) for k in range(-(-count // COMPOSITE_CHUNK))]


def _composite_chunk(cache: Path, *, seed: int, chunk: int, spec: PatchSpec, chips: bool,
                     widths: tuple[float, float], figures: str, suits: str) -> Path:
    sized = "" if widths == COMPOSITE_WIDTHS else f"_w{widths[0]:g}-{widths[1]:g}"
    path = cache / (f"composite{'_chips' if chips else ''}{sized}{_deck_tag(figures, suits)}{spec.tag}_{seed}_"
                    f"{chunk:04d}.npz")
    if path.is_file():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, chunk, 11])
    patches, ranks, suit_ids = [], [], []
    for _ in range(COMPOSITE_CHUNK):
        for patch, rank, suit in composite_samples(rng, spec=spec, chips=chips, widths=widths,
                                                   any_figure=figures == "any", any_suits=suits == "any"):
            patches.append(patch)
            ranks.append(rank)
            suit_ids.append(suit)
    partial = path.with_suffix(".partial.npz")
    np.savez(partial, patches=np.stack(patches), rank=np.array(ranks, np.int64), suit=np.array(suit_ids, np.int64))
    partial.replace(path)
    return path


def _deck_tag(figures: str, suits: str, tilt: Tilt | None = None) -> str:
    """What a cache file's name says of its deck and camera: "" for ours, "_anyfig", "_anysuit", "_shiftedfig" ...,
    then "_tilt35-60" for cameras tilted so."""
    return (("" if figures == "own" else f"_{figures}fig") + ("" if suits == "own" else f"_{suits}suit")
            + ("" if tilt is None else f"_tilt{tilt[0]:g}-{tilt[1]:g}"))


def chunk_path(cache: Path, *, seed: int, start: int, figures: str = "own", suits: str = "own",
               tilt: Tilt | None = None, spec: PatchSpec | None = None) -> Path:
    tag = "" if spec is None else spec.tag
    return cache / f"chunk_{seed}{_deck_tag(figures, suits, tilt)}{tag}_{start:07d}.npz"


ChunkJob = tuple[Path, int, int, int, PatchSpec, str, str, Tilt | None]


def build_chunk(job: ChunkJob) -> Path:
    """Render frames start .. start + count - 1 of `seed` and save their patches (skipped when saved)."""
    cache, seed, start, count, spec, figures, suits, tilt = job
    path = chunk_path(cache, seed=seed, start=start, figures=figures, suits=suits, tilt=tilt, spec=spec)
    if path.is_file():
        return path
    cv2.setNumThreads(1)
    samples = Samples.concat([render_frame(seed, i, spec=spec, figures=figures, suits=suits, tilt=tilt)
                              for i in range(start, start + count)], spec=spec)
    partial = path.with_suffix(".partial.npz")
    np.savez(partial, patches=samples.patches, rank=samples.rank, suit=samples.suit)
    partial.replace(path)
    logger.info("cached %d patches from frames %d..%d of seed %d", len(samples), start, start + count - 1, seed)
    return path


def build_cache(cache: Path, *, seed: int, frames: int, spec: PatchSpec, workers: int = 1,
                figures: str = "own", suits: str = "own", tilt: Tilt | None = None) -> list[Path]:
    """Render `frames` frames of `seed` (court figures and suit shapes as `scene.with_court_figures` and
    `scene.with_suit_shapes` draw them; with `tilt`, casino scenes whose cameras are tilted that range of degrees
    from vertical) into chunk files under `cache` (existing chunks are kept)."""
    if frames < 1 or workers < 1:
        raise ValueError(f"expected at least one frame and one worker, got frames={frames}, workers={workers}")
    if figures not in COURT_FIGURE_MODES:
        raise ValueError(f"court figures: expected one of {', '.join(COURT_FIGURE_MODES)}, got {figures!r}")
    check_suit_shapes(suits)
    cache.mkdir(parents=True, exist_ok=True)
    jobs: list[ChunkJob] = [(cache, seed, start, min(CHUNK, frames - start), spec, figures, suits, tilt)
                            for start in range(0, frames, CHUNK)]
    if workers == 1:
        return [build_chunk(job) for job in jobs]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return list(pool.imap(build_chunk, jobs))


def load_cache(paths: list[Path], *, spec: PatchSpec) -> Samples:
    parts = []
    for path in paths:
        with np.load(path) as data:
            parts.append(Samples(patches=data["patches"], rank=data["rank"], suit=data["suit"]))
    return Samples.concat(parts, spec=spec)
