"""Learning a club's chip colours from a few frames (`floorman chips calibrate`).

Every chip box's top face gives a body and an edge-spot colour (`chips.top_colours`). The body colours are
clustered into as many groups as denominations to learn; each cluster goes to the denomination whose nominal
colours it fits best under one light (`chips_colour.match_top`'s score), one cluster per denomination (the
assignment with the least total error). The chip set written keeps everything else (values, names, spot
counts, sizes) and replaces the learned denominations' colours by what the camera sees.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from floorman.core.chips import ChipDenomination, ChipSet
from floorman.core.errors import FloormanError
from floorman.vision.chips import Image, box_discs, top_colours
from floorman.vision.chips_colour import Bgr, TopColours, match_top
from floorman.vision.chips_geometry import Box

logger = logging.getLogger(__name__)
_MAX_EXHAUSTIVE = 8


class ChipCalibrationError(FloormanError):
    """The frames do not show enough chips to learn the chip set's colours."""


@dataclass(frozen=True, slots=True)
class LearnedColour:
    value: int
    body: Bgr
    spot: Bgr
    chips: int  # chips of the cluster
    error: float  # fit of the nominal colours to the learned ones (0 = the same up to light)
    nearest: int  # the denomination these colours fit best on their own (differs: a doubtful assignment)


def chip_tops(frames: Sequence[tuple[Image, Sequence[Box]]], *, radius_mm: float) -> list[TopColours]:
    """The top colours of every chip box of every frame (boxes too small or cut by the border are skipped)."""
    tops: list[TopColours] = []
    for image, boxes in frames:
        for box in boxes:
            if min(box[2] - box[0], box[3] - box[1]) < 8:
                continue
            top = top_colours(image, box_discs(box, radius_mm)[0], radius_mm=radius_mm)
            if top is not None:
                tops.append(top)
    return tops


def learn_colours(tops: Sequence[TopColours], chipset: ChipSet, *,
                  values: Sequence[int] | None = None) -> list[LearnedColour]:
    """Cluster the chips' body colours and give each cluster a denomination (of `values`, default all)."""
    targets = [chipset.by_value(v) for v in values] if values else list(chipset.denominations)
    k = len(targets)
    if len(tops) < k:
        raise ChipCalibrationError(f"expected at least {k} chips (one per denomination to learn), got {len(tops)}")
    bodies = np.stack([t.body for t in tops]).astype(np.float32)
    lab = cv2.cvtColor(np.clip(bodies, 0, 255).astype(np.uint8).reshape(-1, 1, 3), cv2.COLOR_BGR2LAB)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 50, 0.2)
    _, labels, _ = cv2.kmeans(lab.reshape(-1, 3).astype(np.float32), k, np.empty(0), criteria, 8,
                              cv2.KMEANS_PP_CENTERS)
    labels = labels.reshape(-1)
    clusters = []
    for c in range(k):
        members = [tops[i] for i in np.flatnonzero(labels == c).tolist()]
        body = np.median(np.stack([m.body for m in members]), axis=0)
        spot = np.median(np.stack([m.spot for m in members]), axis=0)
        clusters.append(TopColours(body=body, spot=spot, mean=(1 - 0.33) * body + 0.33 * spot, spot_power={},
                                   samples=len(members)))
    subset = ChipSet(name=chipset.name, diameter_mm=chipset.diameter_mm, thickness_mm=chipset.thickness_mm,
                     denominations=tuple(targets))
    cost = np.array([[match_top(cluster, subset).errors[d.value] for d in targets] for cluster in clusters])
    assignment = _assign(cost)
    logger.debug("chip colour clusters: sizes %s, assignment %s", [c.samples for c in clusters], assignment)
    return [LearnedColour(value=targets[d].value, body=clusters[c].body, spot=clusters[c].spot,
                          chips=clusters[c].samples, error=float(cost[c, d]),
                          nearest=match_top(clusters[c], chipset).value) for c, d in enumerate(assignment)]


def _assign(cost: np.ndarray[tuple[int, int], np.dtype[np.float64]]) -> list[int]:
    """Denomination index per cluster with the least total cost (exhaustive up to 8, greedy beyond)."""
    k = cost.shape[0]
    if k <= _MAX_EXHAUSTIVE:
        best = min(itertools.permutations(range(k)), key=lambda p: sum(cost[c, p[c]] for c in range(k)))
        return list(best)
    taken: set[int] = set()
    result = [-1] * k
    for flat in np.argsort(cost, axis=None):
        c, d = divmod(int(flat), k)
        if result[c] < 0 and d not in taken:
            result[c] = d
            taken.add(d)
    return result


def _hex(bgr: Bgr) -> str:
    b, g, r = (int(np.clip(round(float(v)), 0, 255)) for v in bgr)
    return f"#{r:02x}{g:02x}{b:02x}"


def calibrated_chipset(chipset: ChipSet, learned: Sequence[LearnedColour], *, name: str | None = None) -> ChipSet:
    """`chipset` with the learned denominations' body and spot colours replaced by the observed ones."""
    by_value = {item.value: item for item in learned}
    denominations: list[ChipDenomination] = []
    for d in chipset.denominations:
        item = by_value.get(d.value)
        if item is None:
            denominations.append(d)
            continue
        spot = _hex(item.spot) if d.edge_spots else d.edge_colour
        denominations.append(d.model_copy(update={"colour": _hex(item.body), "edge_colour": spot,
                                                  "inlay_colour": d.inlay_colour}))
    return ChipSet(name=name or f"{chipset.name}-calibrated", diameter_mm=chipset.diameter_mm,
                   thickness_mm=chipset.thickness_mm, denominations=tuple(denominations))
