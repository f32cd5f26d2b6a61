"""The table simulator's renderer: a `Scene` through a `Camera` to an image, an instance mask and the truth.

Painter's algorithm: the table (cached per camera), then objects on the felt (cards by height, then solid
objects far to near), then raised objects, then hands; each object casts its soft shadow on what lies below
before it is drawn. Every primitive writes the object's id into the instance mask in the same pass as its
pixels, so each label can be checked against the pixels. The scene's lighting is applied next, then the
optional camera `Effects`; neither changes the mask.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from floorman.core.geometry import FloatArray
from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.datasets.effects import Effects, GlossLookup, PixelGlare, apply_effects
from floorman.datasets.render_draw import Canvas, FloatImage, ImageU8, MaskI32, Roi, on_image_fraction
from floorman.datasets.render_hands import draw_hand, hand_centre
from floorman.datasets.render_light import lighting_gain
from floorman.datasets.render_objects import Drawn, draw_button, draw_card, draw_chip_stack, draw_deck
from floorman.datasets.render_table import render_table, surface_gloss
from floorman.datasets.render_zones import zone_names_at
from floorman.datasets.scene import (
    CardObject,
    ChipStack,
    DealerButton,
    DeckStub,
    DetectorClass,
    HandObject,
    Lighting,
    Scene,
    TableAppearance,
)
from floorman.datasets.textures import deck_design, index_regions

Box = tuple[float, float, float, float]

_GLOSS = {DetectorClass.CARD_FACE: 1.0, DetectorClass.CARD_BACK: 0.9, DetectorClass.CHIP: 0.55,
          DetectorClass.DEALER_BUTTON: 0.6, DetectorClass.HAND: 0.3}
_RAISED_MM = 5.0


@dataclass(frozen=True)
class ObjectTruth:
    """One rendered object as the detector and the recognisers should see it."""

    id: int
    cls: DetectorClass
    box: Box  # visible pixels, xyxy (x1, y1 exclusive), from the instance mask
    full_box: Box  # the whole projected object ignoring occlusion, clipped to the image
    visible_fraction: float  # visible pixels / projected pixels (off-image parts count as hidden)
    position_mm: tuple[float, float]
    zone: str | None
    card: str | None = None  # identity, also for a face-down card
    face_up: bool | None = None
    corners_px: tuple[tuple[float, float], ...] | None = None  # TL, TR, BR, BL of the upright card
    chips: tuple[int, ...] | None = None  # a stack's denominations, bottom to top
    count: int | None = None  # chips in a stack, cards in a deck stub
    card_to_image: tuple[tuple[float, ...], ...] | None = None  # 3x3: pixels <- upright card frame mm
    index_regions_px: tuple[tuple[tuple[float, float], ...], ...] | None = None  # each corner index's 4 corners


@dataclass
class RenderResult:
    image: ImageU8  # (H, W, 3) BGR
    instance_mask: MaskI32  # (H, W) 0 = background, else the id of the top-most object
    objects: list[ObjectTruth]


@dataclass(frozen=True)
class RenderOptions:
    """Renderer settings. `table_pixels_factor` caps the cached top-down table raster at that many times the
    image's pixel count (at least 1 MP, at most 16 MP), which bounds the cost of a new camera."""

    table_pixels_factor: float = 2.5
    shadows: bool = True
    lighting: bool = True


SceneObject = CardObject | DeckStub | ChipStack | DealerButton | HandObject


@dataclass(frozen=True, slots=True)
class _Item:
    key: tuple[float, float, int]
    obj: SceneObject


@dataclass(slots=True)
class _Layer:
    """The canvas after the scene's leading still objects (all but hands), reused while they stay the same."""

    layout: TableLayout
    appearance: TableAppearance
    lighting: Lighting
    objects: list[SceneObject]
    image: ImageU8
    mask: MaskI32
    drawn: list[Drawn]
    pixels: list[int]

    def matches(self, scene: Scene, lighting: Lighting, items: list[_Item]) -> bool:
        if self.layout is not scene.layout or self.appearance != scene.appearance or self.lighting != lighting:
            return False
        n = len(self.objects)
        return len(items) >= n and all(items[i].obj == self.objects[i] for i in range(n))


class Renderer:
    """Renders scenes through one camera.

    Cached between calls: the empty-table layer for the last (layout, appearance), and the canvas after the
    scene's still objects (everything drawn before the first hand) while those objects stay equal, so a video
    where only hands move redraws only the hands. Caching never changes the output.
    """

    def __init__(self, camera: Camera, *, options: RenderOptions | None = None) -> None:
        self.camera = camera
        self.options = options or RenderOptions()
        self._background_key: tuple[TableLayout, TableAppearance] | None = None
        self._background: ImageU8 | None = None
        self._layer: _Layer | None = None
        self._renders = 0
        self._zones: dict[tuple[int, float, float], str | None] = {}

    def background(self, layout: TableLayout, appearance: TableAppearance) -> ImageU8:
        """The camera's view of the empty table (cached; do not modify)."""
        key = self._background_key
        if self._background is not None and key is not None and key[0] is layout and key[1] == appearance:
            return self._background
        pixels = self.camera.width * self.camera.height * self.options.table_pixels_factor
        self._background = render_table(self.camera, layout, appearance, max_pixels=min(16e6, max(1e6, pixels)))
        self._background_key = (layout, appearance)
        return self._background

    def render(self, scene: Scene, *, effects: Effects | None = None, rng: np.random.Generator) -> RenderResult:
        scene.check_ids()
        lighting = scene.lighting if self.options.shadows else replace(scene.lighting, shadow_strength=0.0)
        items = sorted(self._draw_list(scene), key=lambda item: item.key)
        canvas, drawn, pixels, start = self._start(scene, lighting, items)
        for item in items[start:]:
            result = self._draw(canvas, item.obj, scene, lighting)
            if result is not None:
                drawn.append(result)
                pixels.append(canvas.count(result.object_id, canvas.roi(result.hull, pad=3.0)))
        self._renders += 1
        objects = self._truth(scene, canvas, drawn, pixels)
        gloss = self._gloss(scene, canvas.mask, drawn)
        light = lighting_gain(self.camera, scene.lighting) if self.options.lighting else None
        glare = self._glare(scene) if self.options.lighting else ()
        image = apply_effects(canvas.image, effects or Effects(), rng=rng, gloss=gloss, light=light, light_glare=glare)
        return RenderResult(image=image, instance_mask=canvas.mask, objects=objects)

    def _start(self, scene: Scene, lighting: Lighting,
               items: list[_Item]) -> tuple[Canvas, list[Drawn], list[int], int]:
        """The canvas to draw on and how many leading items it already holds."""
        layer = self._layer
        if layer is not None and layer.matches(scene, lighting, items):
            canvas = Canvas(layer.image.copy(), layer.mask.copy())
            return canvas, list(layer.drawn), list(layer.pixels), len(layer.objects)
        canvas = Canvas(self.background(scene.layout, scene.appearance).copy())
        if self._renders == 0:  # a one-off render (training images) keeps no layer
            return canvas, [], [], 0
        still = next((i for i, item in enumerate(items) if isinstance(item.obj, HandObject)), len(items))
        drawn: list[Drawn] = []
        pixels: list[int] = []
        for item in items[:still]:
            result = self._draw(canvas, item.obj, scene, lighting)
            if result is not None:
                drawn.append(result)
                pixels.append(canvas.count(result.object_id, canvas.roi(result.hull, pad=3.0)))
        self._layer = _Layer(scene.layout, scene.appearance, lighting, [item.obj for item in items[:still]],
                             canvas.image.copy(), canvas.mask.copy(), list(drawn), list(pixels))
        return canvas, drawn, pixels, still

    # --- drawing order --------------------------------------------------------------------------------

    def _draw_list(self, scene: Scene) -> list[_Item]:
        """Cards on the felt by height, then solid objects far to near, then raised objects, then hands."""
        eye = self.camera.eye
        items: list[_Item] = []

        def far(x: float, y: float) -> float:
            return -math.hypot(x - eye[0], y - eye[1])

        for i, card in enumerate(scene.cards):
            items.append(_Item((0.0, card.z, i) if card.z < _RAISED_MM else (2.0, card.z, i), card))
        for i, deck in enumerate(scene.decks):
            items.append(_Item((1.0, far(deck.x, deck.y), i), deck))
        for i, stack in enumerate(scene.chips):
            items.append(_Item((1.0, far(stack.x, stack.y), i) if stack.z < _RAISED_MM else (2.0, stack.z, i), stack))
        for i, button in enumerate(scene.buttons):
            items.append(_Item((1.0, far(button.x, button.y), i), button))
        for i, hand in enumerate(scene.hands):
            items.append(_Item((3.0, min(hand.wrist[2], hand.elbow[2]), i), hand))
        return items

    def _draw(self, canvas: Canvas, obj: SceneObject, scene: Scene, lighting: Lighting) -> Drawn | None:
        cam = self.camera
        if isinstance(obj, CardObject):
            return draw_card(canvas, cam, obj, lighting=lighting)
        if isinstance(obj, DeckStub):
            return draw_deck(canvas, cam, obj, lighting=lighting)
        if isinstance(obj, ChipStack):
            return draw_chip_stack(canvas, cam, obj, chipset=scene.chipset, lighting=lighting)
        if isinstance(obj, DealerButton):
            return draw_button(canvas, cam, obj, lighting=lighting)
        return draw_hand(canvas, cam, obj, lighting=lighting)

    def _zone_names(self, layout: TableLayout, positions: list[tuple[float, float]]) -> list[str | None]:
        """Zone names under the positions, remembered per layout and position (objects mostly stand still)."""
        if len(self._zones) > 20_000:
            self._zones.clear()
        keys = [(id(layout), x, y) for x, y in positions]
        missing = [i for i, key in enumerate(keys) if key not in self._zones]
        if missing:
            names = zone_names_at(layout, [positions[i] for i in missing])
            for i, name in zip(missing, names, strict=True):
                self._zones[keys[i]] = name
        return [self._zones[key] for key in keys]

    # --- truth ----------------------------------------------------------------------------------------

    def _truth(self, scene: Scene, canvas: Canvas, drawn: list[Drawn], pixels: list[int]) -> list[ObjectTruth]:
        everything: list[SceneObject] = [*scene.cards, *scene.decks, *scene.chips, *scene.buttons, *scene.hands]
        by_id = {o.id: o for o in everything}
        positions = [_position(by_id[d.object_id]) for d in drawn]
        zones = self._zone_names(scene.layout, positions)
        objects: list[ObjectTruth] = []
        for d, drawn_pixels, position, zone in zip(drawn, pixels, positions, zones, strict=True):
            visible, visible_box = _visible(canvas, d.object_id, canvas.roi(d.hull, pad=3.0))
            fraction = on_image_fraction(d.hull, width=canvas.width, height=canvas.height)
            full = drawn_pixels / fraction if fraction > 1e-6 else 0.0
            fraction = 0.0 if full <= 0 else min(1.0, visible / full)
            objects.append(_object_truth(by_id[d.object_id], d, box=visible_box,
                                         full_box=_clipped_box(d.hull, canvas.width, canvas.height),
                                         fraction=fraction, position=position, zone=zone))
        return objects

    # --- light ----------------------------------------------------------------------------------------

    def _gloss(self, scene: Scene, mask: MaskI32, drawn: list[Drawn]) -> GlossLookup:
        """Per-pixel shininess from the instance mask: cards most, felt least (computed per glare spot)."""
        ids = np.array([d.object_id for d in drawn], dtype=np.int64)
        values = np.array([_GLOSS[d.cls] for d in drawn], dtype=np.float32)
        order = np.argsort(ids)
        ids, values = ids[order], values[order]
        base = np.float32(surface_gloss(scene.appearance))

        def lookup(rows: slice, cols: slice) -> FloatImage:
            sub = mask[rows, cols]
            if ids.size == 0:
                return np.full(sub.shape, base, dtype=np.float32)
            pos = np.clip(np.searchsorted(ids, sub), 0, ids.size - 1)
            result: FloatImage = np.where(ids[pos] == sub, values[pos], base).astype(np.float32)
            return result

        return lookup

    def _glare(self, scene: Scene) -> tuple[PixelGlare, ...]:
        spots: list[PixelGlare] = []
        for spot in scene.lighting.glare:
            uv, depth = self.camera.project(np.array([[spot.x, spot.y, 0.0]]))
            if depth[0] > 0:
                radius = spot.radius * self.camera.pixels_per_mm(spot.x, spot.y)
                spots.append(PixelGlare((float(uv[0, 0]), float(uv[0, 1])), radius, spot.strength))
        return tuple(spots)


def _position(obj: SceneObject) -> tuple[float, float]:
    if isinstance(obj, HandObject):
        return hand_centre(obj)
    return float(obj.x), float(obj.y)


def _visible(canvas: Canvas, object_id: int, roi: Roi) -> tuple[int, Box]:
    """The number of mask pixels of an object and their box (x1, y1 exclusive)."""
    if roi.empty:
        return 0, (0.0, 0.0, 0.0, 0.0)
    ys, xs = np.nonzero(canvas.mask[roi.slices] == object_id)
    if xs.size == 0:
        return 0, (0.0, 0.0, 0.0, 0.0)
    return int(xs.size), (float(xs.min() + roi.x0), float(ys.min() + roi.y0),
                          float(xs.max() + roi.x0 + 1), float(ys.max() + roi.y0 + 1))


def _clipped_box(hull: FloatArray, width: int, height: int) -> Box:
    x0 = float(np.clip(hull[:, 0].min(), 0, width))
    y0 = float(np.clip(hull[:, 1].min(), 0, height))
    x1 = float(np.clip(hull[:, 0].max(), 0, width))
    y1 = float(np.clip(hull[:, 1].max(), 0, height))
    return x0, y0, x1, y1


def _object_truth(obj: SceneObject, d: Drawn, *, box: Box, full_box: Box, fraction: float,
                  position: tuple[float, float], zone: str | None) -> ObjectTruth:
    truth = ObjectTruth(id=d.object_id, cls=d.cls, box=box, full_box=full_box, visible_fraction=fraction,
                        position_mm=position, zone=zone)
    if isinstance(obj, CardObject) and d.card_to_image is not None and d.card_size_mm is not None:
        w, h = d.card_size_mm
        corners = _map(d.card_to_image, np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]]))
        return replace(truth, card=str(obj.card), face_up=obj.face_up,
                       corners_px=tuple((float(x), float(y)) for x, y in corners),
                       index_regions_px=_index_regions(d.card_to_image, design=obj.design, size_mm=d.card_size_mm),
                       card_to_image=tuple(tuple(float(v) for v in row) for row in d.card_to_image))
    if isinstance(obj, ChipStack):
        return replace(truth, chips=obj.chips, count=obj.count)
    if isinstance(obj, DeckStub):
        return replace(truth, face_up=False, count=obj.count)
    return truth


def _index_regions(card_to_image: FloatArray, *, design: int,
                   size_mm: tuple[float, float]) -> tuple[tuple[tuple[float, float], ...], ...]:
    """The corner-index boxes of the card's design, as 4 pixel corners each (TL, TR, BR, BL on the card)."""
    design_w, design_h = deck_design(design).size_mm
    sx, sy = size_mm[0] / design_w, size_mm[1] / design_h
    regions = []
    for x0, y0, x1, y1 in index_regions(design):
        quad = np.array([[x0 * sx, y0 * sy], [x1 * sx, y0 * sy], [x1 * sx, y1 * sy], [x0 * sx, y1 * sy]])
        regions.append(tuple((float(x), float(y)) for x, y in _map(card_to_image, quad)))
    return tuple(regions)


def _map(h: FloatArray, points: npt.NDArray[np.float64]) -> FloatArray:
    pts = np.hstack([points, np.ones((points.shape[0], 1))]) @ h.T
    result: FloatArray = pts[:, :2] / pts[:, 2:3]
    return result
