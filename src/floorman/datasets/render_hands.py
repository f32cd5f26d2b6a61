"""Drawing hands and forearms: 3-D capsules (forearm, sleeve, palm, fingers) projected with a cylindrical
shading, and their soft cast shadow on whatever lies below."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from floorman.core.geometry import FloatArray
from floorman.datasets.camera import Camera
from floorman.datasets.render_draw import Canvas, convex_hull
from floorman.datasets.render_objects import Drawn
from floorman.datasets.scene import DetectorClass, HandObject, HandPose, Lighting

_RING = 14
_SHADES = ((1.0, 0.7), (0.86, 0.8), (0.68, 0.89), (0.45, 0.96))  # (radius fraction, brightness), outside in
_UPPER_ARM_MM = 320.0


@dataclass(frozen=True, slots=True)
class Capsule:
    a: FloatArray  # (3,) mm
    b: FloatArray  # (3,) mm
    radius: float
    bgr: tuple[int, int, int]
    labelled: bool = True  # False: drawn, but not part of the hand object (mask 0): the arm


def _unit(v: FloatArray) -> FloatArray:
    n = float(np.linalg.norm(v))
    result: FloatArray = v / n if n > 1e-9 else np.array([1.0, 0.0])
    return result


def _fingers(hand: HandObject, start: FloatArray, fwd: FloatArray, side: FloatArray, skin: tuple[int, int, int],
             tip_z: float) -> list[Capsule]:
    w, length = hand.width_mm, hand.hand_length_mm
    curl = {HandPose.FLAT: 1.0, HandPose.CUPPED: 0.5, HandPose.FIST: 0.0}[hand.pose]
    parts: list[Capsule] = []
    if curl > 0:
        for offset, share, spread in ((-0.34, 0.36, -6.0), (-0.12, 0.43, -2.0), (0.11, 0.45, 2.0), (0.33, 0.40, 6.0)):
            t = math.radians(spread * curl)
            direction = fwd * math.cos(t) + side * math.sin(t)
            base = start + side * offset * w * 0.85
            tip = base + direction * share * length * curl
            a = np.array([base[0], base[1], start_z(hand)])
            b = np.array([tip[0], tip[1], tip_z])
            parts.append(Capsule(a, b, 0.095 * w, skin))
    thumb_angle = math.radians(35.0 + 30.0 * (1.0 - curl))
    thumb_side = side if hand.seat is None or hand.seat % 2 == 0 else -side
    root = start - fwd * 0.3 * length + thumb_side * 0.42 * w
    direction = fwd * math.cos(thumb_angle) + thumb_side * math.sin(thumb_angle)
    tip = root + direction * (0.18 + 0.12 * curl) * length
    parts.append(Capsule(np.array([root[0], root[1], start_z(hand)]), np.array([tip[0], tip[1], tip_z + 4.0]),
                         0.11 * w, skin))
    return parts


def start_z(hand: HandObject) -> float:
    return max(6.0, hand.wrist[2] - 6.0)


def hand_parts(hand: HandObject) -> list[Capsule]:
    """The capsules of one arm and hand in drawing order: upper arm, forearm, sleeve, fingers, palm (the back
    of the hand covers the finger roots and the wrist end of the forearm). The arm is scenery: the `hand` object
    (its mask pixels and box) is the palm, fingers and thumb. A box over the forearm too would end at the elbow,
    which nothing in the image shows (the sleeve or skin carries on up the arm)."""
    elbow = np.asarray(hand.elbow, dtype=np.float64)
    wrist = np.asarray(hand.wrist, dtype=np.float64)
    fwd = _unit(wrist[:2] - elbow[:2])
    side = np.array([-fwd[1], fwd[0]])
    skin = (hand.skin_rgb[2], hand.skin_rgb[1], hand.skin_rgb[0])
    w, length = hand.width_mm, hand.hand_length_mm
    tip_z = max(6.0, wrist[2] - 35.0)
    palm_z = start_z(hand)
    palm_len = (0.45 if hand.pose == HandPose.FIST else 0.5) * length
    palm_start = wrist[:2] + fwd * 0.08 * length
    palm_end = wrist[:2] + fwd * palm_len
    forearm_r = 0.36 * w
    # The upper arm carries on past the elbow, away from the table and up toward the shoulder.
    back = np.array([*(-fwd * _UPPER_ARM_MM), 140.0])
    sleeve = skin if hand.sleeve_rgb is None else (hand.sleeve_rgb[2], hand.sleeve_rgb[1], hand.sleeve_rgb[0])
    parts = [Capsule(elbow + np.array([0.0, 0.0, 6.0]), elbow + back, forearm_r * 1.3, sleeve, labelled=False),
             Capsule(wrist + (elbow - wrist) * 0.02, elbow, forearm_r, skin, labelled=False)]
    if hand.sleeve_rgb is not None:
        cuff = elbow + (wrist - elbow) * 0.62
        lift = np.array([0.0, 0.0, 4.0])
        parts.append(Capsule(cuff + lift, elbow + lift, forearm_r * 1.18, sleeve, labelled=False))
    parts.extend(_fingers(hand, palm_end, fwd, side, skin, tip_z))
    palm_r = (0.46 if hand.pose == HandPose.FIST else 0.42) * w
    a = np.array([*palm_start, palm_z])
    b = np.array([*(palm_end - fwd * palm_r * 0.55), palm_z])
    parts.append(Capsule(a, b, palm_r, skin))
    return parts


def _capsule_outline(camera: Camera, cap: Capsule, radius_factor: float,
                     offset_px: FloatArray) -> FloatArray | None:
    ends, depth = camera.project(np.stack([cap.a, cap.b]))
    if np.any(depth <= 1.0):
        return None
    angles = np.linspace(0.0, 2.0 * math.pi, _RING, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    radii = camera.fx * cap.radius * radius_factor / depth
    pts = np.vstack([ends[0] + ring * radii[0], ends[1] + ring * radii[1]]) + offset_px
    return convex_hull(pts)


def _shadow(canvas: Canvas, camera: Camera, parts: list[Capsule], lighting: Lighting) -> None:
    if lighting.shadow_strength <= 0.0:
        return
    dx, dy = lighting.shadow_offset_mm
    polys = []
    heights = []
    for cap in parts:
        a = cap.a + np.array([dx * cap.a[2] / 10.0, dy * cap.a[2] / 10.0, -cap.a[2]])
        b = cap.b + np.array([dx * cap.b[2] / 10.0, dy * cap.b[2] / 10.0, -cap.b[2]])
        poly = _capsule_outline(camera, Capsule(a, b, cap.radius, cap.bgr), 1.0, np.zeros(2))
        if poly is not None:
            polys.append(poly)
            heights.append((cap.a[2] + cap.b[2]) / 2.0)
    if not polys:
        return
    height = float(np.mean(heights))
    palm = parts[-1].a
    scale = camera.pixels_per_mm(float(palm[0]), float(palm[1]))
    canvas.shade(polys, strength=lighting.shadow_strength * 0.85, blur_px=(3.0 + 0.08 * height) * scale)


def draw_hand(canvas: Canvas, camera: Camera, hand: HandObject, *, lighting: Lighting) -> Drawn | None:
    parts = hand_parts(hand)
    _shadow(canvas, camera, parts, lighting)
    light = -np.asarray(lighting.shadow_offset_mm, dtype=np.float64)
    light_dir = light / (np.linalg.norm(light) or 1.0)
    outlines: list[FloatArray] = []
    for cap in parts:
        centre = (cap.a + cap.b) / 2.0
        scale = camera.pixels_per_mm(float(centre[0]), float(centre[1]))
        for fraction, brightness in _SHADES:
            shift = light_dir * (1.0 - fraction) * cap.radius * 0.45 * scale * np.array([1.0, -1.0])
            poly = _capsule_outline(camera, cap, fraction, shift if fraction < 1.0 else np.zeros(2))
            if poly is None:
                break
            colour = tuple(min(255.0, c * brightness) for c in cap.bgr)
            is_outer = fraction == 1.0
            mask_id = (hand.id if cap.labelled else 0) if is_outer else None
            canvas.fill_polygons([poly], colour=(colour[0], colour[1], colour[2]), object_id=mask_id)
            if is_outer and cap.labelled:
                outlines.append(poly)
    if not outlines:
        return None
    hull = convex_hull(np.concatenate(outlines))
    _soften(canvas, hull, object_id=hand.id, sigma=0.08 * parts[-1].radius * camera.pixels_per_mm(*hand_centre(hand)))
    return Drawn(hand.id, DetectorClass.HAND, hull)


def _soften(canvas: Canvas, hull: FloatArray, *, object_id: int, sigma: float) -> None:
    """Blur the steps between the shading layers, inside the hand's own pixels only."""
    if sigma < 0.6:
        return
    roi = canvas.roi(hull, pad=2.0)
    if roi.empty:
        return
    sub = canvas.image[roi.slices]
    blurred = cv2.GaussianBlur(sub, (0, 0), sigma)
    inside = canvas.mask[roi.slices] == object_id
    np.copyto(sub, blurred, where=inside[:, :, None])


def hand_centre(hand: HandObject) -> tuple[float, float]:
    """The hand's position on the table: the middle of the hand, past the wrist."""
    elbow = np.asarray(hand.elbow[:2], dtype=np.float64)
    wrist = np.asarray(hand.wrist[:2], dtype=np.float64)
    fwd = _unit(wrist - elbow)
    centre = wrist + fwd * hand.hand_length_mm * 0.45
    return float(centre[0]), float(centre[1])
