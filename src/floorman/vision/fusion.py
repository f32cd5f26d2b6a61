"""Several cameras' views of one table at one moment, fused in table millimetres into one `TableState`.

A stack's chips show as its side, and a camera sees no side of the stacks under it: from one camera looking
straight down, the stacks near its nadir keep their counts unsure (README, "Where to put the camera"). Two cameras
facing each other across the table see a side of every stack. Each calibrated camera's `TableStateBuilder` reads
its own frame; `fuse_states` then joins the objects that lie at the same place on the felt:

- a chip stack seen by several cameras (one stack per camera, their feet within `same_stack_mm`; with the cameras'
  places given, `eyes`, feet within `along_sight_mm` once each slid along its camera's line of sight by up to as
  much, across those lines within `across_sight_mm`: a camera that reads a stack's count wrong puts its foot off
  along that line, up to ~44 mm at 1.7 m, measured) gets the count
  that all their evidence makes likeliest: the cameras' count log-likelihoods (`SeenChips.count_log_likelihood`)
  summed under the recogniser's count prior, its confidence as `chips_geometry.count_choice` gives it. The values
  are those of the surest reading of that count (of no reading when none read that count: confidence 0), the
  place that reading's foot (when none read it, the foot of the reading whose count is nearest: session 66).
  Readings without a likelihood (a saved states file, an uncalibrated camera) give the surest count alone;
- a card seen by several cameras (centres within `same_card_mm`, the same face) keeps the surest identity (a
  camera that misread it is outvoted by a surer one, not printed as a second card); a card one camera alone
  boxes, less sure than `lone_card_confidence`, is left out (the others looked there and saw none);
- hands closer than `same_hand_mm` are one hand (the surest box; with the cameras' places, apart along their
  lines of sight by up to HAND_ALONG_SIGHT_MM each: a hand is over the felt); the dealer button is the surest one.

Other objects one camera alone saw are kept as it saw them. Boxes stay in the pixels of the camera whose reading was
kept, so the fused state's boxes are of mixed frames; positions and zones are what it is for. The cameras must be
calibrated to the same table layout (their states hold `position_mm`); objects without a position (no calibration)
cannot be matched and are kept as they are.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from floorman.core.table_state import PointMm, SeenCard, SeenChips, SeenHand, TableState
from floorman.vision.chips import BEYOND_SHARE, SINGLE_SHARE, USUAL_MAX_COUNT
from floorman.vision.chips_geometry import count_choice, count_prior

# One stack per camera within this of another camera's foot of it. Stacks side by side stand 39-42 mm apart (the
# scenarios' slots); two cameras' feet of one stack lie within ~10 mm (`benchmarks/chips_cameras.py`).
SAME_STACK_MM = 20.0
# Two hole cards of one seat overlap with their centres 20-40 mm apart; one card's centres from two cameras lie
# within ~10 mm (a box's centre mapped to the felt).
SAME_CARD_MM = 18.0
SAME_HAND_MM = 80.0
# A hand is over the felt, not on it: two cameras facing each other place it apart along their lines of sight, by
# about twice its height times the tangent of their tilt (~100 mm for a hand 100 mm up, 28 degrees from vertical).
HAND_ALONG_SIGHT_MM = 150.0
# With the cameras' places known: two cameras' feet of one stack read with one count lie within ~3 mm (90 %) and
# 10 mm (99 %); read with counts apart, up to ~44 mm apart along the cameras' lines of sight (`benchmarks/
# chips_cameras.py` dev seed 31000, detector boxes, two cameras 28 degrees from vertical facing each other).
ALONG_SIGHT_MM = 45.0
ACROSS_SIGHT_MM = 12.0
# The stack's top triangulated: two cameras' rays through its top disc's centre (`SeenChips.top_mm`) cross at the
# top, whose height is the count. Measured (dev seed 31000, 8 frames, detector boxes, 131 stacks seen by both): the
# height off by 0.78 mm (robust sd) but a tenth of the tops far off (a rim fitted to the wrong edges), which the rays
# do not always show by missing each other; so the height's say is a normal of TOP_SIGMA_MM with TOP_OUTLIER_SHARE
# of it spread over every count, and none when the rays miss each other by more than TOP_RESIDUAL_MM (rms).
TOP_SIGMA_MM = 1.0
TOP_OUTLIER_SHARE = 0.15
TOP_RESIDUAL_MM = 2.0

# A card one camera alone boxes, less sure than this, is left out of the fused state: the other cameras looked at the
# felt there and saw no card (cameras facing each other each see the whole table). Such boxes are most of camera A's
# unsure ones in the pair renders (a second box on a card landing, a card's edge under a hand: 9 % of its card boxes
# under 0.5, camera B's 1 %); kept, they cut a card's flight short or count as a card more.
LONE_CARD_CONFIDENCE = 0.5

Seen = TypeVar("Seen", SeenChips, SeenCard, SeenHand)
Eye = tuple[float, float, float]  # a camera's lens in table mm: x, y, height above the felt


@dataclass(frozen=True, slots=True)
class FusionSettings:
    """How near two cameras' objects must lie on the felt to be one object."""

    same_stack_mm: float = SAME_STACK_MM
    same_card_mm: float = SAME_CARD_MM
    same_hand_mm: float = SAME_HAND_MM
    along_sight_mm: float = ALONG_SIGHT_MM
    across_sight_mm: float = ACROSS_SIGHT_MM
    lone_card_confidence: float = LONE_CARD_CONFIDENCE

    def __post_init__(self) -> None:
        for name in ("same_stack_mm", "same_card_mm", "same_hand_mm", "along_sight_mm", "across_sight_mm"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"fusion: expected {name} > 0, got {value}")
        if not 0.0 <= self.lone_card_confidence <= 1.0:
            raise ValueError(f"fusion: expected lone_card_confidence in [0, 1], got {self.lone_card_confidence}")


def fuse_states(states: Sequence[TableState], *, eyes: Sequence[Eye] | None = None, thickness_mm: float | None = None,
                settings: FusionSettings | None = None) -> TableState:
    """One state of the table from several cameras' states of the same moment (module docstring); `eyes`: each
    camera's lens in table mm (x, y, height above the felt: `TableCamera.eye`), one per state; with them and the
    chips' `thickness_mm`, a stack's top seen by two cameras is triangulated (its height is its count)."""
    if not states:
        raise ValueError("fusion: expected at least one camera's state, got none")
    ids = [s.camera_id for s in states]
    if len(set(ids)) != len(ids):
        raise ValueError(f"fusion: expected one state per camera, got cameras {ids}")
    if eyes is not None and len(eyes) != len(states):
        raise ValueError(f"fusion: expected one camera place per state ({len(states)}), got {len(eyes)}")
    limits = settings or FusionSettings()

    stacks_apart: Callable[[SeenChips, int, SeenChips, int], float | None] = _sighted(
        eyes, alone_mm=limits.same_stack_mm, along_mm=limits.along_sight_mm, across_mm=limits.across_sight_mm,
        reach_mm=limits.along_sight_mm)
    chips = [fuse_stacks([v for _, v in group], thickness_mm=thickness_mm,
                         eyes=None if eyes is None else [eyes[camera] for camera, _ in group])
             for group in _groups([s.chips for s in states], stacks_apart)]
    cards = [max((c for _, c in group), key=_card_sureness)
             for group in _groups([s.cards for s in states], _within(limits.same_card_mm, agree=_same_card))
             if len(states) == 1 or len(group) > 1 or group[0][1].confidence >= limits.lone_card_confidence]
    hands_apart: Callable[[SeenHand, int, SeenHand, int], float | None] = _sighted(
        eyes, alone_mm=limits.same_hand_mm, along_mm=HAND_ALONG_SIGHT_MM, across_mm=limits.same_hand_mm,
        reach_mm=2 * HAND_ALONG_SIGHT_MM)
    hands = [max((h for _, h in group), key=lambda h: h.confidence)
             for group in _groups([s.hands for s in states], hands_apart)]
    button = max((s.button for s in states if s.button is not None), key=lambda b: b.confidence, default=None)
    extra = {f"{s.camera_id}.{key}": value for s in states for key, value in s.extra.items()}
    return TableState(frame=states[0].frame, t=states[0].t, camera_id="+".join(ids), cards=tuple(cards),
                      chips=tuple(chips), hands=tuple(hands), button=button, size=None, extra=extra)


def fuse_stacks(views: Sequence[SeenChips], *, eyes: Sequence[Eye] | None = None,
                thickness_mm: float | None = None) -> SeenChips:
    """One stack from several cameras' readings of it: the count all their likelihoods make likeliest, with the
    height of its top where two cameras (`eyes`, one per view) saw the top's rim (`top_height`)."""
    if not views:
        raise ValueError("fusion: expected at least one reading of the stack, got none")
    surest = max(views, key=lambda v: (v.count_confidence, v.denomination_confidence))
    likelihoods = [np.asarray(v.count_log_likelihood, dtype=np.float64) for v in views if v.count_log_likelihood]
    if len(views) == 1 or not likelihoods:
        return surest
    counts = min(len(ll) for ll in likelihoods)
    joint = np.sum([ll[:counts] for ll in likelihoods], axis=0)
    if eyes is not None and thickness_mm is not None:
        tops = [(v.top_mm, eye) for v, eye in zip(views, eyes, strict=True) if v.top_mm is not None]
        height = top_height(tops) if len(tops) >= 2 else None
        if height is not None and height[1] <= TOP_RESIDUAL_MM:
            joint = joint + height_log_likelihood(height[0], thickness_mm=thickness_mm, counts=counts)
    prior = count_prior(counts, single_share=SINGLE_SHARE, usual_max=USUAL_MAX_COUNT, beyond_share=BEYOND_SHARE)
    best, confidence = count_choice(joint, tuple(float(v) for v in prior))  # the recogniser's own prior
    count = best + 1
    agreeing = [v for v in views if v.count == count]
    if agreeing:
        chosen = max(agreeing, key=lambda v: (v.denomination_confidence, v.count_confidence))
        denominations, values_confidence = chosen.denominations, chosen.denomination_confidence
    else:  # no camera read this count: the top chip as the surest read it, the values under it unknown, the foot
        # of the reading whose count is nearest (a count read k chips off puts the foot k chips' slide off along its
        # camera's line of sight: a tall stack's top disc read as one chip, 0.9 sure, lay 55 mm from its foot)
        chosen = min(views, key=lambda v: (abs(v.count - count), -v.count_confidence))
        top = surest.denominations[-1] if surest.denominations else 0
        denominations, values_confidence = ((top,) * count if top else ()), 0.0
    return replace(chosen, denominations=denominations, denomination_confidence=values_confidence,
                   count_confidence=confidence, visible_fraction=max(v.visible_fraction for v in views),
                   count_log_likelihood=tuple(float(v) for v in joint))


def top_height(tops: Sequence[tuple[PointMm, Eye]]) -> tuple[float, float] | None:
    """Where two or more cameras' rays through a stack's top cross: the top's height above the felt and how far
    the rays miss that point (rms, mm); each ray from its `Eye` through the point where it meets the felt. None when
    the rays are parallel (cameras in line with the stack: no height in their crossing)."""
    rows: list[list[float]] = []
    values: list[float] = []
    for (x, y), (ex, ey, ez) in tops:
        if ez <= 0:
            raise ValueError(f"fusion: expected a camera above the felt, got one {ez} mm up")
        ux, uy = (x - ex) / ez, (y - ey) / ez  # the ray's drift on the felt per mm of height
        rows += [[1.0, 0.0, ux], [0.0, 1.0, uy]]  # top + height * drift = where the ray meets the felt
        values += [x, y]
    a, b = np.asarray(rows), np.asarray(values)
    if np.linalg.matrix_rank(a) < 3:
        return None
    solution, *_ = np.linalg.lstsq(a, b, rcond=None)
    residual = float(np.sqrt(np.mean((a @ solution - b) ** 2)))
    return float(solution[2]), residual


def height_log_likelihood(height_mm: float, *, thickness_mm: float, counts: int) -> npt.NDArray[np.float64]:
    """(counts,) log-likelihood of counts 1..counts given a triangulated top `height_mm` (TOP_SIGMA_MM, with
    TOP_OUTLIER_SHARE spread over all counts)."""
    n = np.arange(1, counts + 1, dtype=np.float64)
    z = (height_mm - n * thickness_mm) / TOP_SIGMA_MM
    scale = math.log(thickness_mm / (TOP_SIGMA_MM * math.sqrt(2.0 * math.pi)))  # per count, as the spread share's
    near = math.log(1.0 - TOP_OUTLIER_SHARE) - 0.5 * z**2 + scale
    result: npt.NDArray[np.float64] = np.logaddexp(near, math.log(TOP_OUTLIER_SHARE / counts))
    return result


def _card_sureness(card: SeenCard) -> tuple[float, float]:
    return (card.identity_confidence if card.identity else 0.0, card.confidence)


def _same_card(a: SeenCard, b: SeenCard) -> bool:
    """Two cameras' cards may be one card: the same face."""
    return a.face_up == b.face_up


def _within(mm: float, *, agree: Callable[[Seen, Seen], bool] | None = None,
            ) -> Callable[[Seen, int, Seen, int], float | None]:
    """Two objects' distance on the felt when within `mm` and agreeing (`agree`), else None."""
    def distance(a: Seen, _: int, b: Seen, __: int) -> float | None:
        assert a.position_mm is not None and b.position_mm is not None
        plain = math.dist(a.position_mm, b.position_mm)
        return plain if plain <= mm and (agree is None or agree(a, b)) else None
    return distance


def _sighted(eyes: Sequence[Eye] | None, *, alone_mm: float, along_mm: float, across_mm: float,
             reach_mm: float) -> Callable[[Seen, int, Seen, int], float | None]:
    """Two cameras' objects' distance on the felt when they may be one object, else None: without the cameras'
    places (`eyes`), within `alone_mm`; with them, within `reach_mm`, and within `across_mm` once each is slid along
    its camera's line of sight by up to `along_mm` (`_across_sights`)."""
    def distance(a: Seen, camera_a: int, b: Seen, camera_b: int) -> float | None:
        assert a.position_mm is not None and b.position_mm is not None
        plain = math.dist(a.position_mm, b.position_mm)
        if eyes is None:
            return plain if plain <= alone_mm else None
        across = _across_sights(a.position_mm, eyes[camera_a][:2], b.position_mm, eyes[camera_b][:2],
                                along_mm=along_mm)
        return plain if plain <= reach_mm and across <= across_mm else None
    return distance


def _across_sights(a: PointMm, eye_a: tuple[float, float], b: PointMm, eye_b: tuple[float, float], *,
                   along_mm: float) -> float:
    """How far apart feet `a` and `b` lie once each may slide up to `along_mm` along its camera's line of sight (the
    direction to the point under that camera): min |a - b - s u_a + t u_b| over |s|, |t| <= along_mm."""
    v = np.subtract(a, b, dtype=np.float64)
    p = _unit(np.subtract(eye_a, a, dtype=np.float64))
    q = -_unit(np.subtract(eye_b, b, dtype=np.float64))
    candidates: list[tuple[float, float]] = []
    gram = np.array([[p @ p, p @ q], [p @ q, q @ q]])
    if abs(float(np.linalg.det(gram))) > 1e-9:
        s, t = np.linalg.solve(gram, np.array([p @ v, q @ v]))
        if abs(s) <= along_mm and abs(t) <= along_mm:
            candidates.append((float(s), float(t)))
    for fixed in (-along_mm, along_mm):  # the box's edges: one slide at its limit, the other the best within
        candidates.append((fixed, float(np.clip((q @ (v - fixed * p)) / (q @ q), -along_mm, along_mm))))
        candidates.append((float(np.clip((p @ (v - fixed * q)) / (p @ p), -along_mm, along_mm)), fixed))
    return min(float(np.linalg.norm(v - s * p - t * q)) for s, t in candidates)


def _unit(v: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 1e-9 else np.zeros(2)


def _groups(per_camera: Sequence[Sequence[Seen]],
            distance: Callable[[Seen, int, Seen, int], float | None]) -> list[list[tuple[int, Seen]]]:
    """The cameras' objects grouped by place: camera by camera, each object joins the nearest group (by the
    group's first object, `distance` None where they cannot be one) holding none of its own camera's, the nearest
    pairs first; else it starts a group. Objects without a position stay alone. Each object with its camera's
    index."""
    groups: list[list[tuple[int, Seen]]] = []
    firsts: list[tuple[Seen, int]] = []  # each group's first object and its camera
    for camera, objects in enumerate(per_camera):
        taken: set[int] = set()  # groups joined by this camera's objects
        pairs: list[tuple[float, int, int]] = []
        for i, obj in enumerate(objects):
            if obj.position_mm is None:
                continue
            for g, (first, first_camera) in enumerate(firsts):
                if first.position_mm is None:
                    continue
                apart = distance(first, first_camera, obj, camera)
                if apart is not None:
                    pairs.append((apart, i, g))
        placed: set[int] = set()
        for _, i, g in sorted(pairs):
            if i in placed or g in taken:
                continue
            groups[g].append((camera, objects[i]))
            placed.add(i)
            taken.add(g)
        for i, obj in enumerate(objects):
            if i not in placed:
                groups.append([(camera, obj)])
                firsts.append((obj, camera))
    return groups
