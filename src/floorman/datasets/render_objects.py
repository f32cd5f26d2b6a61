"""Drawing the rigid table objects: cards (perspective-warped textures), deck stubs (blocks), chip stacks and
dealer buttons (3-D cylinders with painted sides and a textured top face)."""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from floorman.core.chips import ChipDenomination, ChipSet
from floorman.core.geometry import FloatArray
from floorman.datasets.camera import Camera
from floorman.datasets.render_draw import (
    Canvas,
    ImageU8,
    circle_points,
    convex_hull,
    polygon_area,
    quantised_px_per_mm,
    texture_to_plane,
)
from floorman.datasets.scene import (
    CARD_THICKNESS_MM,
    CardObject,
    ChipStack,
    DealerButton,
    DeckStub,
    DetectorClass,
    Lighting,
)
from floorman.datasets.textures import card_back, card_face, chip_edge_colours, chip_top, dealer_button_top

_DECK_EDGE_BGR = (222, 226, 228)
_BUTTON_SIDE_BGR = (214, 216, 216)
_SIDE_SHADE = 0.78


@dataclass(frozen=True, slots=True)
class Drawn:
    """What the renderer needs to know about one drawn object to build its truth."""

    object_id: int
    cls: DetectorClass
    hull: FloatArray  # convex silhouette in pixels, not clipped to the image
    card_to_image: FloatArray | None = None  # image px <- upright card frame mm (origin top-left, y down)
    card_size_mm: tuple[float, float] | None = None
    card_design: int | None = None


def _rotation(angle_deg: float) -> FloatArray:
    t = math.radians(angle_deg)
    return np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])


def card_frame_to_plane(*, center: tuple[float, float], angle_deg: float, size_mm: tuple[float, float]) -> FloatArray:
    """Affine 3x3: table mm <- the upright card frame (mm, origin at the top-left corner, y down)."""
    w, h = size_mm
    r = _rotation(angle_deg)
    local = np.array([[1.0, 0.0, -w / 2.0], [0.0, -1.0, h / 2.0], [0.0, 0.0, 1.0]])
    place = np.eye(3)
    place[:2, :2] = r
    place[:2, 2] = center
    result: FloatArray = place @ local
    return result


def _apply(h: FloatArray, points: FloatArray) -> FloatArray:
    pts = np.hstack([points, np.ones((points.shape[0], 1))]) @ h.T
    result: FloatArray = pts[:, :2] / pts[:, 2:3]
    return result


def _screen_scale(corners_px: FloatArray, area_mm2: float) -> float:
    area = polygon_area(corners_px)
    return math.sqrt(max(area, 1e-9) / max(area_mm2, 1e-9))


def _shadow_points(points: FloatArray, lighting: Lighting) -> FloatArray:
    """3-D points cast onto the felt by the scene's light: offset per 10 mm of height."""
    dx, dy = lighting.shadow_offset_mm
    out = np.array(points, dtype=np.float64, copy=True)
    out[:, 0] += dx * out[:, 2] / 10.0
    out[:, 1] += dy * out[:, 2] / 10.0
    out[:, 2] = 0.0
    return out


def cast_shadow(canvas: Canvas, camera: Camera, points: FloatArray, *, lighting: Lighting, height_mm: float,
                scale: float | None = None) -> None:
    """A soft shadow under the convex hull of 3-D `points` (mm), darker and sharper for low objects; `scale`
    is the image scale there (px/mm), computed when not given."""
    if lighting.shadow_strength <= 0.0 or height_mm <= 0.2:
        return
    flat, depth = camera.project(_shadow_points(points, lighting))
    if np.any(depth <= 0):
        return
    if scale is None:
        scale = camera.pixels_per_mm(float(points[:, 0].mean()), float(points[:, 1].mean()))
    strength = lighting.shadow_strength * min(1.0, 0.45 + height_mm / 60.0)
    canvas.shade([convex_hull(flat)], strength=strength, blur_px=(1.5 + 0.12 * height_mm) * scale)


def draw_card(canvas: Canvas, camera: Camera, card: CardObject, *, lighting: Lighting) -> Drawn | None:
    w, h = card.size_mm
    frame = card_frame_to_plane(center=(card.x, card.y), angle_deg=card.angle_deg, size_mm=card.size_mm)
    corners_mm = _apply(frame, np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]]))
    z = card.z + CARD_THICKNESS_MM
    corners3 = np.hstack([corners_mm, np.full((4, 1), z)])
    corners_px, depth = camera.project(corners3)
    if np.any(depth <= 0):
        return None
    cast_shadow(canvas, camera, corners3, lighting=lighting, height_mm=card.z)
    level = quantised_px_per_mm(_screen_scale(corners_px, w * h))
    texture: ImageU8
    if card.face_up:
        texture = card_face(card.card, design=card.design, px_per_mm=level, figure=card.figure,
                            suit_shape=card.suit_shape)
    else:
        texture = card_back(card.back, size_mm=card.size_mm, px_per_mm=level)
    plane = camera.plane_homography(z)
    to_plane = texture_to_plane(center=(card.x, card.y), angle_deg=card.angle_deg, size_mm=card.size_mm,
                                texture_shape=texture.shape)
    canvas.warp_rgba(texture, plane @ to_plane, outline=corners_px, object_id=card.id)
    return Drawn(card.id, DetectorClass.CARD_FACE if card.face_up else DetectorClass.CARD_BACK, corners_px,
                 card_to_image=plane @ frame, card_size_mm=card.size_mm, card_design=card.design)


def draw_deck(canvas: Canvas, camera: Camera, deck: DeckStub, *, lighting: Lighting) -> Drawn | None:
    w, h = deck.size_mm
    frame = card_frame_to_plane(center=(deck.x, deck.y), angle_deg=deck.angle_deg, size_mm=deck.size_mm)
    corners_mm = _apply(frame, np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]]))
    top = max(1, deck.count) * CARD_THICKNESS_MM
    box = np.vstack([np.hstack([corners_mm, np.zeros((4, 1))]), np.hstack([corners_mm, np.full((4, 1), top)])])
    px, depth = camera.project(box)
    if np.any(depth <= 0):
        return None
    cast_shadow(canvas, camera, box, lighting=lighting, height_mm=top)
    hull = convex_hull(px)
    canvas.fill_polygons([hull], colour=_DECK_EDGE_BGR, object_id=deck.id)
    # Faint lines along the side: the edges of the stacked cards.
    steps = min(6, deck.count)
    lines = [camera.project(np.hstack([corners_mm, np.full((4, 1), top * (i + 0.5) / steps)]))[0]
             for i in range(steps)]
    canvas.polylines([np.vstack([ln, ln[:1]]) for ln in lines], colour=(176, 180, 184))
    level = quantised_px_per_mm(_screen_scale(px[4:], w * h))
    texture = card_back(deck.back, size_mm=deck.size_mm, px_per_mm=level)
    to_plane = texture_to_plane(center=(deck.x, deck.y), angle_deg=deck.angle_deg, size_mm=deck.size_mm,
                                texture_shape=texture.shape)
    canvas.warp_rgba(texture, camera.plane_homography(top) @ to_plane, outline=px[4:], object_id=deck.id)
    return Drawn(deck.id, DetectorClass.CARD_BACK, hull)


@lru_cache(maxsize=64)
def _body_bgr(denomination: ChipDenomination) -> tuple[int, int, int]:
    r, g, b = denomination.rgb
    return b, g, r


@lru_cache(maxsize=256)
def _edge_colours(denomination: ChipDenomination, segments: int) -> npt.NDArray[np.uint8]:
    colours = np.asarray(chip_edge_colours(denomination, segments=segments), dtype=np.uint8).reshape(segments, 3)
    return colours


@dataclass(frozen=True, slots=True)
class _Cylinder:
    """A pile of discs: centres (n, 3) of each disc's bottom face, radius, thickness, side colours (n, K, 3)."""

    bottoms: FloatArray
    radius: float
    thickness: float
    sides: npt.NDArray[np.uint8]
    body: npt.NDArray[np.uint8]  # (n, 3) the main side colour of each disc


def _draw_cylinder(canvas: Canvas, camera: Camera, cyl: _Cylinder, *, object_id: int) -> FloatArray | None:
    """Paint the discs' sides bottom-up (body, coloured segments, dark seams); return all projected points."""
    n, segments = cyl.sides.shape[:2]
    unit = circle_points(np.zeros(3), cyl.radius, samples=segments)
    rings = np.repeat(cyl.bottoms[:, None, None, :] + unit[None, None, :, :], 2, axis=1)
    rings[:, 1, :, 2] += cyl.thickness
    flat, depth = camera.project(rings.reshape(-1, 3))
    if np.any(depth <= 0):
        return None
    px = flat.reshape(n, 2, segments, 2)
    # Runs of discs with the same body colour are one convex solid: fill each run's hull once.
    start = 0
    for j in range(1, n + 1):
        if j == n or np.any(cyl.body[j] != cyl.body[start]):
            colour = tuple(float(c) * _SIDE_SHADE for c in cyl.body[start])
            canvas.fill_polygons([convex_hull(px[start:j].reshape(-1, 2))], colour=(colour[0], colour[1], colour[2]),
                                 object_id=object_id)
            start = j
    eye = camera.eye
    angles = (np.arange(segments) + 0.5) * 2.0 * math.pi / segments
    normals = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    to_eye = eye[None, None, :2] - cyl.bottoms[:, None, :2] - cyl.radius * normals[None]
    facing = (to_eye * normals[None]).sum(axis=2) > 0  # (n, K)
    side_px = float(np.median(np.linalg.norm(px[:, 1] - px[:, 0], axis=2)))
    if side_px >= 0.35:
        nxt = np.roll(np.arange(segments), -1)
        quads = np.stack([px[:, 0], px[:, 0, nxt], px[:, 1, nxt], px[:, 1]], axis=2)  # (n, K, 4, 2)
        spots = facing & np.any(cyl.sides != cyl.body[:, None, :], axis=2)
        colours = cyl.sides[spots].astype(np.int64)
        if colours.shape[0]:
            codes = (colours[:, 0] << 16) | (colours[:, 1] << 8) | colours[:, 2]
            selected = quads[spots]
            for code in np.unique(codes):
                b, g, r = (int(code) >> 16) & 255, (int(code) >> 8) & 255, int(code) & 255
                canvas.fill_polygons(selected[codes == code],
                                     colour=(b * _SIDE_SHADE, g * _SIDE_SHADE, r * _SIDE_SHADE), object_id=None)
    if side_px >= 1.5 and n > 1:
        nxt = np.roll(np.arange(segments), -1)
        seams = np.stack([px[1:, 0], px[1:, 0, nxt]], axis=2)[facing[1:]]  # (m, 2, 2)
        canvas.polylines(seams, colour=(28.0, 28.0, 28.0))
    result: FloatArray = flat
    return result


def _segments(scale: float, radius: float) -> int:
    return int(np.clip(round(2.0 * math.pi * radius * scale / 4.0), 12, 48)) // 2 * 2


def _draw_top(canvas: Canvas, camera: Camera, texture: ImageU8, *, center: FloatArray, angle_deg: float,
              diameter: float, object_id: int) -> None:
    to_plane = texture_to_plane(center=(float(center[0]), float(center[1])), angle_deg=angle_deg,
                                size_mm=(diameter, diameter), texture_shape=texture.shape)
    ring = circle_points(center, diameter / 2.0, samples=16)
    outline, _ = camera.project(ring)
    canvas.warp_rgba(texture, camera.plane_homography(float(center[2])) @ to_plane, outline=outline,
                     object_id=object_id)


def chip_turns_deg(stack: ChipStack) -> FloatArray:
    """(n,) each chip's turn about the stack's axis, bottom to top (degrees, the top face's convention): chips lie in
    a stack at random turns, so their edge spots do not line up into stripes down the side as one turn for all drew
    them until session 45. The bottom chip lies at the stack's `angle_deg` (a single chip's face as before); each one
    above is turned by a fraction of a turn drawn from the stack's id and the chip's place (CRC-32), not from the
    scene's random generator, so every seed draws the scenes it drew and a stack keeps its chips' turns from frame to
    frame."""
    turns = np.full(stack.count, float(stack.angle_deg))
    for k in range(1, stack.count):
        turns[k] += 360.0 * zlib.crc32(f"{stack.id}:{k}".encode()) / 2.0**32
    return turns


def _turned_sides(colours: npt.NDArray[np.uint8], turn_deg: float) -> npt.NDArray[np.uint8]:
    """A side's colours (segments, 3) for a chip turned by `turn_deg`: at angle phi it shows what the unturned chip
    shows at phi - turn. The top face's texture turned by the same angle puts its angle a at turn - a; the spots are
    symmetric about their centres, so the face's rim and the side show the same spots."""
    shift = round(turn_deg / 360.0 * len(colours)) % len(colours)
    result: npt.NDArray[np.uint8] = np.roll(colours, shift, axis=0)
    return result


def draw_chip_stack(canvas: Canvas, camera: Camera, stack: ChipStack, *, chipset: ChipSet,
                    lighting: Lighting) -> Drawn | None:
    n = stack.count
    if n == 0:
        return None
    radius = chipset.diameter_mm / 2.0
    t = chipset.thickness_mm
    lean = np.array([stack.lean_mm[0], stack.lean_mm[1], 0.0])
    steps = np.arange(n) / max(1, n - 1)
    bottoms = np.array([stack.x, stack.y, stack.z])[None, :] + steps[:, None] * lean[None, :]
    bottoms[:, 2] += np.arange(n) * t
    scale = camera.pixels_per_mm(stack.x, stack.y)
    segments = _segments(scale, radius)
    denominations = [chipset.by_value(v) for v in stack.chips]
    turns = chip_turns_deg(stack)
    sides = np.stack([_turned_sides(_edge_colours(d, segments), float(turn))
                      for d, turn in zip(denominations, turns, strict=True)])
    body = np.array([_body_bgr(d) for d in denominations], dtype=np.uint8)
    top_centre = bottoms[-1] + (0.0, 0.0, t)
    footprint = np.vstack([circle_points(bottoms[0], radius, samples=16),
                           circle_points(top_centre, radius, samples=16)])
    cast_shadow(canvas, camera, footprint, lighting=lighting, height_mm=n * t + stack.z, scale=scale)
    points = _draw_cylinder(canvas, camera, _Cylinder(bottoms, radius, t, sides, body), object_id=stack.id)
    if points is None:
        return None
    texture = chip_top(denominations[-1], diameter_mm=chipset.diameter_mm, px_per_mm=quantised_px_per_mm(scale))
    _draw_top(canvas, camera, texture, center=top_centre, angle_deg=float(turns[-1]),
              diameter=chipset.diameter_mm, object_id=stack.id)
    return Drawn(stack.id, DetectorClass.CHIP, convex_hull(points))


def draw_button(canvas: Canvas, camera: Camera, button: DealerButton, *, lighting: Lighting) -> Drawn | None:
    radius = button.diameter_mm / 2.0
    bottom = np.array([[button.x, button.y, 0.0]])
    scale = camera.pixels_per_mm(button.x, button.y)
    segments = _segments(scale, radius)
    side = np.array(_BUTTON_SIDE_BGR, dtype=np.uint8)
    cyl = _Cylinder(bottom, radius, button.thickness_mm, np.tile(side, (1, segments, 1)), side[None, :])
    top_centre = bottom[0] + (0.0, 0.0, button.thickness_mm)
    footprint = np.vstack([circle_points(bottom[0], radius, samples=16),
                           circle_points(top_centre, radius, samples=16)])
    cast_shadow(canvas, camera, footprint, lighting=lighting, height_mm=button.thickness_mm, scale=scale)
    points = _draw_cylinder(canvas, camera, cyl, object_id=button.id)
    if points is None:
        return None
    texture = dealer_button_top(diameter_mm=button.diameter_mm, px_per_mm=quantised_px_per_mm(scale))
    _draw_top(canvas, camera, texture, center=top_centre, angle_deg=button.angle_deg, diameter=button.diameter_mm,
              object_id=button.id)
    return Drawn(button.id, DetectorClass.DEALER_BUTTON, convex_hull(points))
