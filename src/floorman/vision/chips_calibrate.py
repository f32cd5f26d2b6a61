"""Learning a club's chip colours from a few frames (`floorman chips calibrate`).

Every chip box's top face gives a body and an edge-spot colour (`chips.top_colours`), taken back to neutral
light and exposure with the frame's light (`chips_colour.scene_light_and_white`). Each chip goes to the
denomination whose colours it fits best under a light near neutral (`chips_colour.match_top`'s score), starting
from the chip set's nominal colours; each denomination learns the median colours of its chips, and the spot count
its chips' rims show when clear, and the chips are matched again against those. The chip set written keeps
everything else (values, names, sizes) and replaces the learned denominations' colours (and clear spot counts) by
what the camera sees. Measured when first written (24 frames of seed 94003 learned, 60 frames of seed 94001 read): top
value 99.8 % on truth boxes, 99.4 % on detector boxes, 93.1 % without a camera, against 99.6 / 98.1 / 92.0 %
with the shipped colours; clustering the body colours instead (k-means, one cluster per denomination) took
white chips for blue ones and read 79.6 / 79.6 / 74.9 %. Other clubs' chips: `benchmarks/chips_clubs.py`."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from floorman.core.chips import ChipDenomination, ChipSet
from floorman.core.errors import FloormanError
from floorman.vision.button_or_chip import buttons_as_chips
from floorman.vision.chips import Image, top_colours
from floorman.vision.chips_colour import SPOT_SHARE, WHITE_LEVEL, Bgr, TopColours, match_top, scene_light_and_white
from floorman.vision.chips_discs import box_discs
from floorman.vision.chips_geometry import Box

if TYPE_CHECKING:  # the CLI imports the detector (ONNX Runtime) only when it runs
    from floorman.vision.detector import Detector

logger = logging.getLogger(__name__)
_ROUNDS = 2  # label, learn, label again against the learned colours, learn again
# A box longer than this shows a stack's side too: where its top disc lies is not known without a camera, and
# the inscribed disc takes in the side's colours (measured: a cluster of such tops took a denomination).
_MAX_ELONGATION = 1.15
# Two denominations learned this close (BGR distance of both the body and the spot colours, in neutral light) read
# as one: a chip misread as a denomination absent from the frames took its colours (fresh seed 37995, another
# club's plain white chip read as the blue 5000 with the shipped colours; the 5000 learned white, 22 of 81 tops
# then read wrong). Measured on 21 clubs (`benchmarks/chips_clubs.py`'s, seeds 27995, 35995, 37995, 37001-37004,
# 4 frames each): the learned denominations' bodies lay 51 or more apart, the colliding pair's 29 (spots 16); with
# the exposure taken back to white print's and the clusters given one to one (below), 60 or more apart, and none
# collides: the rule is a safety net.
_SAME_COLOURS = 40.0
# The tops are taken back to neutral light (`chip_tops`), so each chip's own light is drawn towards neutral as the
# reader draws it towards the frame's (`match_top(light=...)`); left free, another club's red chips with 8 yellow
# spots fitted the black 1000 (8 spots) under a reddish light: fresh seed 37996's second club, all of its red chips
# learned as the 1000, 55 of 99 tops right after calibrating against 98 before.
_NEUTRAL_LIGHT: Bgr = np.zeros(3)
# A cluster's spot count is learned when its chips' median share of the rim's variation at that count is at least
# this (`TopColours.spot_power`; measured on ~100 px chips of fresh seed 37997: 0.52-0.99 at the true count, a plain
# chip's rim 0.29 at most at any count); otherwise the chip set's count is kept.
_CLEAR_SPOTS = 0.5


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
    spots: int | None = None  # the edge spots its chips' rims show (None: not clear, the chip set's count kept)


def chip_boxes(detector: Detector, image: Image) -> list[Box]:
    """The detector's `chip` boxes in `image` (at the detector's own confidence floor), as calibration takes them:
    with the plain white chips it boxed as the dealer button (`button_or_chip.buttons_as_chips`)."""
    chip_class = {name: i for i, name in detector.names.items()}.get("chip", -1)
    detections = buttons_as_chips(image, detector.detect(image), names=detector.names)
    return [(float(b[0]), float(b[1]), float(b[2]), float(b[3]))
            for b in detections.xyxy[detections.class_id == chip_class]]


def chip_tops(frames: Sequence[tuple[Image, Sequence[Box]]], *, radius_mm: float) -> list[TopColours]:
    """The top colours of every chip box of every frame (boxes too small, cut by the border or as long as a stack
    seen from the side are skipped), each frame's colours taken back to neutral light (`scene_light`) and to
    white print's exposure (`scene_white` at `WHITE_LEVEL`): frames under different lights then cluster by chip,
    not by light, and a chip's brightness is bounded as the reader bounds it (`match_top(white=...)`)."""
    tops: list[TopColours] = []
    for image, boxes in frames:
        light, white = scene_light_and_white(image)
        gains = np.ones(3) if light is None else np.exp(light)
        gains = gains if white is None else gains * white / WHITE_LEVEL
        for box in boxes:
            width, height = box[2] - box[0], box[3] - box[1]
            if min(width, height) < 8 or max(width, height) > _MAX_ELONGATION * min(width, height):
                continue
            top = top_colours(image, box_discs(box, radius_mm)[0], radius_mm=radius_mm)
            if top is not None:
                tops.append(dataclasses.replace(top, body=top.body / gains, spot=top.spot / gains,
                                                mean=top.mean / gains))
    return tops


def learn_colours(tops: Sequence[TopColours], chipset: ChipSet, *,
                  values: Sequence[int] | None = None) -> list[LearnedColour]:
    """Each chip goes to the denomination (of `values`, default all) whose colours it fits best under a light near
    neutral (the tops are in neutral light already); a denomination's learned colours are the median body and spot
    colours of its chips; then the chips are matched again against the learned colours, _ROUNDS times in all. A
    denomination no chip went to is left out (logged), and so is one that learned the colours another one learned
    from more chips (`_without_collisions`, logged): both keep their chip set's colours."""
    targets = [chipset.by_value(v) for v in values] if values else list(chipset.denominations)
    k = len(targets)
    if len(tops) < k:
        raise ChipCalibrationError(f"expected at least {k} chips (one per denomination to learn), got {len(tops)}")
    subset = ChipSet(name=chipset.name, diameter_mm=chipset.diameter_mm, thickness_mm=chipset.thickness_mm,
                     denominations=tuple(targets))
    current, learned = subset, []
    for round_ in range(_ROUNDS):
        # The first round goes by the colours alone: another club's spot counts need not be the chip set's (its
        # 8-spot green chips fitted the 8-spot black 1000 better than the 6-spot 500); then by the learned counts.
        labels = [match_top(top if round_ else dataclasses.replace(top, spot_power={}), current,
                            light=_NEUTRAL_LIGHT, white=WHITE_LEVEL).value for top in tops]
        learned = _medians(tops, labels, subset)
        current = calibrated_chipset(subset, learned, name=subset.name)
    relabelled = _one_to_one(tops, labels, subset)
    if relabelled != labels:
        learned = _medians(tops, relabelled, subset)
    missing = sorted({d.value for d in targets} - {item.value for item in learned})
    if missing:
        logger.warning("no chip was read as %s: their colours are not learned", missing)
    return _without_collisions(learned)


def _one_to_one(tops: Sequence[TopColours], labels: Sequence[int], chipset: ChipSet) -> list[int]:
    """`labels` with the clusters they make given to denominations one to one, the assignment whose clusters fit
    their denominations' colours best in sum (each cluster by its median colours). Chip by chip two kinds of chip
    can end in one cluster and swap their denominations: fresh seed 37997's second club, whose black chips with green
    spots fit our green 500 (0.04) better than our black 1000 (0.13), learned them as the 500 and its green chips as
    the 1000 (0.15 against 0.005 for the 500); one to one, the swap costs 0.19 against 0.13."""
    from scipy.optimize import linear_sum_assignment  # 0.4 s to import: only when calibrating

    values = sorted(set(labels))
    costs = []
    for value in values:
        summary = _summary([top for top, label in zip(tops, labels, strict=True) if label == value])
        errors = match_top(summary, chipset, light=_NEUTRAL_LIGHT, white=WHITE_LEVEL).errors
        costs.append([errors[d.value] for d in chipset.denominations])
    rows, columns = linear_sum_assignment(np.asarray(costs))  # a cluster per row, each given one denomination
    given = {values[int(row)]: chipset.denominations[int(column)].value for row, column in zip(rows, columns,
                                                                                                 strict=True)}
    if any(given[v] != v for v in values):
        logger.warning("denominations given one to one: %s", ", ".join(
            f"the chips read as {v} to {given[v]}" for v in values if given[v] != v))
    return [given[label] for label in labels]


def _without_collisions(learned: Sequence[LearnedColour]) -> list[LearnedColour]:
    """`learned` without the denominations whose colours another one learned as well (within _SAME_COLOURS on both
    body and spots): of two such, the one learned from fewer chips (then: fitting its nominal colours worse) is
    left out and keeps its chip set's colours (logged)."""
    ranked = sorted(learned, key=lambda item: (-item.chips, item.error))
    kept: list[LearnedColour] = []
    for item in ranked:
        twin = next((other for other in kept
                     if float(np.linalg.norm(item.body - other.body)) < _SAME_COLOURS
                     and float(np.linalg.norm(item.spot - other.spot)) < _SAME_COLOURS), None)
        if twin is None:
            kept.append(item)
        else:
            logger.warning("the %d chip(s) read as %d have the colours learned for %d (%d chips): %d's colours are "
                           "not learned", item.chips, item.value, twin.value, twin.chips, item.value)
    kept_values = {item.value for item in kept}
    return [item for item in learned if item.value in kept_values]


def _medians(tops: Sequence[TopColours], labels: Sequence[int], chipset: ChipSet) -> list[LearnedColour]:
    """Per denomination of `chipset` with chips labelled so, their median body and spot colours."""
    result = []
    for denomination in chipset.denominations:
        members = [top for top, label in zip(tops, labels, strict=True) if label == denomination.value]
        if not members:
            continue
        summary = _summary(members)
        match = match_top(summary, chipset, light=_NEUTRAL_LIGHT, white=WHITE_LEVEL)
        result.append(LearnedColour(value=denomination.value, body=summary.body, spot=summary.spot, chips=len(members),
                                    error=match.errors[denomination.value], nearest=match.value,
                                    spots=_spot_count(members)))
    return result


def _summary(members: Sequence[TopColours]) -> TopColours:
    """One cluster's chips as one top: their median body and spot colours, no spot evidence."""
    body = np.median(np.stack([m.body for m in members]), axis=0)
    spot = np.median(np.stack([m.spot for m in members]), axis=0)
    return TopColours(body=body, spot=spot, mean=(1.0 - SPOT_SHARE) * body + SPOT_SHARE * spot, spot_power={},
                      samples=len(members))


def _spot_count(members: Sequence[TopColours]) -> int | None:
    """The spot count whose median share of the members' rim variation is largest, if at least _CLEAR_SPOTS."""
    powers = [m.spot_power for m in members if m.spot_power]
    if not powers:
        return None
    counts = sorted(powers[0])
    medians = np.median(np.array([[p.get(n, 0.0) for n in counts] for p in powers]), axis=0)
    best = int(np.argmax(medians))
    return counts[best] if float(medians[best]) >= _CLEAR_SPOTS else None


def _hex(bgr: Bgr) -> str:
    b, g, r = (int(np.clip(round(float(v)), 0, 255)) for v in bgr)
    return f"#{r:02x}{g:02x}{b:02x}"


def calibrated_chipset(chipset: ChipSet, learned: Sequence[LearnedColour], *, name: str | None = None) -> ChipSet:
    """`chipset` with the learned denominations' body and spot colours, and their spot counts where clear, replaced
    by the observed ones."""
    by_value = {item.value: item for item in learned}
    denominations: list[ChipDenomination] = []
    for d in chipset.denominations:
        item = by_value.get(d.value)
        if item is None:
            denominations.append(d)
            continue
        spots = d.edge_spots if item.spots is None else item.spots
        spot = _hex(item.spot) if spots else d.edge_colour
        denominations.append(d.model_copy(update={"colour": _hex(item.body), "edge_colour": spot,
                                                  "edge_spots": spots, "inlay_colour": d.inlay_colour}))
    return ChipSet(name=name or f"{chipset.name}-calibrated", diameter_mm=chipset.diameter_mm,
                   thickness_mm=chipset.thickness_mm, denominations=tuple(denominations))
