"""A tall stack's box that stops short of its base, run on to where its side meets the felt.

Seen from the side, a tall stack shows a long side between its top disc and its base, and the detector boxes it
short at times (its training windows held few such sides): from a tilted 4K camera a dark stack's side on a dark
felt, or a side under a touching neighbour, is left out of the box and the box reads a few chips where there are
16 (`benchmarks/chips.py --scene seats --size 3840x2160`, seeds 49006 and 50101: 15 and 14 of the 53 and 108
touching stacks fully in sight boxed short, one box on under 90 % of the stack, and 11 and 1 split into a box round
the top disc and one round the side below it; the box's top end, round the top disc, is sound).
`extended_box` holds the top disc where the box's fit puts it and looks at the slab of image each further chip
would add at the base's end (the side's near end, towards the point under the camera): a slab holding felt (the
felt's colour round the box, or its shadow: `chips_refine.felt_mask`, `shadow_mask`) on at least `HIGH_SHARE` of
its samples ends the stack. Where the `RUN` chips past the box's own count are chips (felt on less than
`LOW_SHARE` of each slab), the box is run on to the stack whose last chip is the one before the first felt slab (the
slabs tell the end to about a chip; the silhouette's edges then find it to a fraction). The reading on it replaces
the box's only where its count is surer (`ChipRecogniser.evidence`): a side running on into a neighbour along the
lean reads less sure than the box did. Only where a chip's slab is `MIN_PX_PER_CHIP` deep or more (4K seats: 3-5
px): on thinner ones the mixed sizes' seats lost boxes to neighbours for a gain of 0.3 point (seed 50102). The
recogniser lowers that guard (`min_px_per_chip`) for a box the box-side reader reads cut at its base's end
(`ChipRecogniser._extended`): a box round a tall stack's top disc alone fits one chip, whose side is thinner than the
stack's (session 61: a 500 stack of 18 seen at 2.4 px per chip, boxed round its top, fitted at 1.8). Such a box
(`cut`) whose side meets no felt past its base (a card lies there, a touching neighbour's side, or slabs only half felt)
is run on to where the side's colour changes (`side_end`: a slab's mean colour far from the side's in the box; session
64: a 1000 stack of 16 boxed round its top half, read as 8 at 0.96, the slabs past its base half felt, then a card;
4K seats, dev seed 64003, counts exact 125 -> 127 of 155).
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.chips import ChipSet
from floorman.core.geometry import FloatArray
from floorman.vision.chips_box import felt_colour
from floorman.vision.chips_geometry import Box, StackFit, TableCamera, box_holding, stack_outline
from floorman.vision.chips_refine import felt_mask, shadow_mask
from floorman.vision.detector import Image

LOW_SHARE = 0.6  # a slab with felt on less of it than this is the stack's side going on ...
HIGH_SHARE = 0.7  # ... and one with felt on this much of it lies past the stack's base
RUN = 2  # slabs past the box's count that must be side before the box is run on
MIN_PX_PER_CHIP = 2.0  # a chip's slab at least this deep (px): thinner ones tell felt from side by a pixel's blur
# A box read cut at its base's end whose side meets no felt (a card, a neighbour's side, a half-felt slab past it) ends
# where a slab's mean colour is this far (CIE Lab, OpenCV's 8-bit scale) from the side's in the box: a side of one
# denomination keeps its slabs' means within ~5-9 of theirs from 4K (dev seed 64003), ~12 where its spots are sharp (a
# render without camera effects).
SIDE_CHANGE = 16.0
SIDE_SPREAD = 2.5  # ... or this many times as far as the side's own slabs lie from their mean, where that is more
_ALONG = 4  # samples across a slab's depth ...
_ACROSS = 15  # ... and across the stack's width
_RIM = 24  # points round the base's rim


def extended_box(image: Image, box: Box, *, fit: StackFit, camera: TableCamera, chipset: ChipSet,
                 max_count: int, min_px_per_chip: float = MIN_PX_PER_CHIP, cut: bool = False) -> Box:
    """`box` run on past its base end where the stack's side goes on past it (`fit`: the box's own fit on
    `camera`), or `box` itself; not where the fit's chips show under `min_px_per_chip` of side. `cut`: the box-side
    reader reads the box cut at its base's end; where no felt ends the side, it ends where the side's colour changes
    (`side_end`)."""
    if fit.count + RUN >= max_count or fit.px_per_chip < min_px_per_chip:
        return box
    felt = felt_colour(image, box)
    if felt is None:
        return box
    thickness = chipset.thickness_mm
    top = camera.project(np.array([[*fit.base_mm, fit.count * thickness]]))[0]
    within = fit.count - 1  # the slabs of the chips under the top that the box holds
    counts = np.arange(2, max_count + 1)
    colours = slab_colours(image, camera, top, counts=counts, chipset=chipset)
    shares = (felt_mask(colours[within:], felt) | shadow_mask(colours[within:], felt)).mean(axis=1)
    if not np.all(shares[:RUN] < LOW_SHARE):
        return box
    counts, shares = counts[within + RUN:], shares[RUN:]
    past = (shares >= HIGH_SHARE) & np.append(shares[1:] >= HIGH_SHARE, True)  # two felt slabs, or the last
    if past.any():
        count = int(counts[int(np.argmax(past))]) - 1
    elif cut and (end := side_end(colours[within:], held=colours[:within])) is not None:  # no felt past it
        count = fit.count + end
    else:
        return box
    base_mm = camera.to_plane(top[None], z=count * thickness)[0]
    stack = replace(fit, base_mm=(float(base_mm[0]), float(base_mm[1])), count=count)
    outline = stack_outline(camera, stack, radius_mm=chipset.diameter_mm / 2.0, thickness_mm=thickness)
    return box_holding(box, outline, image_size=(image.shape[1], image.shape[0]))


def felt_shares(image: Image, camera: TableCamera, top_px: FloatArray, *, counts: npt.NDArray[np.int64],
                chipset: ChipSet, felt: FloatArray) -> FloatArray:
    """(len(counts),) per count k, the share of felt in the slab the k-th chip adds at the base's end of a stack
    whose top disc's centre lies at `top_px` (`slab_colours`)."""
    colours = slab_colours(image, camera, top_px, counts=counts, chipset=chipset)
    result: FloatArray = (felt_mask(colours, felt) | shadow_mask(colours, felt)).mean(axis=1)
    return result


def side_end(colours: FloatArray, *, held: FloatArray) -> int | None:
    """Of a cut box's slabs past it (`slab_colours`, (K, S, 3) BGR), the number that are still the stack's side: those
    before the first whose mean colour lies far from the side's that the box `held` (its chips under the top, at
    least `RUN`): SIDE_CHANGE, or SIDE_SPREAD times as far as those slabs lie from their mean where that is more (a
    side's spots vary its slabs' means). None where the first `RUN` past the box are not its side (a lone chip on a
    card), or where none changes (the side runs on into a neighbour of its own colour, or out of the image)."""
    if len(held) < RUN:
        return None
    side = _lab_means(held)
    centre = side.mean(axis=0)
    limit = max(SIDE_CHANGE, SIDE_SPREAD * float(np.linalg.norm(side - centre, axis=1).max()))
    far = np.linalg.norm(_lab_means(colours) - centre, axis=1) >= limit
    if far[:RUN].any():
        return None
    return int(np.argmax(far)) if far.any() else None


def _lab_means(colours: FloatArray) -> FloatArray:
    """(K, 3) each slab's mean colour in CIE Lab (OpenCV's 8-bit scale) of slabs' BGR samples (K, S, 3)."""
    lab = cv2.cvtColor(np.clip(colours, 0, 255).astype(np.uint8).reshape(1, -1, 3), cv2.COLOR_BGR2LAB)
    means: FloatArray = lab.reshape(colours.shape).astype(np.float64).mean(axis=1)
    return means


def slab_colours(image: Image, camera: TableCamera, top_px: FloatArray, *, counts: npt.NDArray[np.int64],
                 chipset: ChipSet) -> FloatArray:
    """(len(counts), S, 3) BGR per count k, the colours of the slab the k-th chip adds at the base's end of a
    stack whose top disc's centre lies at `top_px`: between the base's near end for k - 1 chips and for k (across
    the middle of the stack's width; `counts` consecutive)."""
    thickness = chipset.thickness_mm
    ks = np.concatenate([[counts[0] - 1], counts]).astype(np.float64)
    bases = camera.ray_points(top_px, ks * thickness)  # (K + 1, 2) mm: the bases under the top, per count
    centres = camera.project(np.column_stack([bases, np.zeros(len(bases))]))
    axis = top_px[None, :] - centres
    axis /= np.maximum(np.linalg.norm(axis, axis=1, keepdims=True), 1e-9)
    across = np.column_stack([-axis[:, 1], axis[:, 0]])
    rims = _rims(camera, bases, radius=chipset.diameter_mm / 2.0)  # (K + 1, R, 2)
    offsets = rims - centres[:, None, :]
    reach = np.einsum("krc,kc->kr", offsets, axis).min(axis=1)
    ends = centres + reach[:, None] * axis  # the base's near end on the axis
    widths = np.ptp(np.einsum("krc,kc->kr", offsets, across), axis=1)
    starts, stops = ends[:-1], ends[1:]
    depth = np.linspace(0.0, 1.0, _ALONG)
    side = np.linspace(-0.5, 0.5, _ACROSS)
    points = (starts[:, None, None, :] + (stops - starts)[:, None, None, :] * depth[None, :, None, None]
              + (across[1:] * widths[1:, None])[:, None, None, :] * side[None, None, :, None])
    grid = points.reshape(len(counts), -1, 2).astype(np.float32)
    sampled = cv2.remap(image, grid[..., 0], grid[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    colours: FloatArray = np.asarray(sampled, dtype=np.float64).reshape(len(counts), -1, 3)
    return colours


def _rims(camera: TableCamera, centres: FloatArray, *, radius: float) -> FloatArray:
    """(N, R, 2) pixels round discs of `radius` on the felt centred at `centres` (N, 2 mm)."""
    angles = np.linspace(0.0, 2.0 * np.pi, _RIM, endpoint=False)
    points = np.zeros((len(centres), _RIM, 3))
    points[..., :2] = centres[:, None, :] + np.column_stack([np.cos(angles), np.sin(angles)])[None] * radius
    result: FloatArray = camera.project(points.reshape(-1, 3)).reshape(len(centres), _RIM, 2)
    return result
