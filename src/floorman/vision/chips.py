"""Chip recogniser: each chip's denomination and a stack's count from a full-resolution crop of a `chip` box.

- Count (geometry): with a camera model (`TableCamera`, from the calibration), the stack's base position and
  count are the cylinder whose projection best fits the box (`chips_geometry.fit_stack`): a stack grows in the
  image along the direction away from the camera by about `px_per_chip` pixels per chip. `count_confidence` is
  the count's posterior probability given the box, its sides off by `box_sigma_px` (a detector's error by
  default; an instance mask's rounding is BOX_SIGMA_PX) and the stack's lean: a camera straight above a stack
  sees only its top, so there the count is a guess and says so. When the calibration's camera height was
  assumed (straight down, no height given), the count must hold for every height over CAMERA_HEIGHTS_MM.
  Without a camera the count is not measured at all (1, confidence 0). With `refine` (the default) the box's fit
  only starts the count: the stack's silhouette is fitted to the image's edges near it (`chips_refine`), and the
  count comes from the top's offset over the base found there, with that fit's own error (a detector's box is
  off by ~1-2 px a side, the silhouette's centres by a few tenths); the box adds its evidence to the edges' (a
  detector's with its sides first found again in the image, `chips_box`, and taken as off by REFINED_BOX_SCALE
  times their spread). Where too few edges are found (a chip the felt's
  colour, the image's border) the box's count stands. Counts are weighed by a prior (`log_prior`; by default a
  single chip SINGLE_SHARE of the time, else up to USUAL_MAX_COUNT chips): where the side shows little, the count
  is the likeliest one, not any one of many equally likely. Where the camera's height was assumed, a frame's stacks
  tell it together (`read_frame`, `frame_heights`): each count's evidence is kept per camera height, and a stack is
  read over the heights as the frame's other stacks weigh them (measured at 3840x2160, seed 94035, truth boxes
  without the height: count exact 73.5 -> 81.6 %, 82.7 % with the height known; detector boxes, fresh seeds: +0 to
  +3 points, their boxes being too loose to tell a height but from the stacks whose side shows); the frame's heights
  choose a count, never make it surer than it is over all heights. A stack read again at the same place (`previous`)
  keeps its last count and values where the evidence leaves them about as likely: repeatable reads from video.
  With the chip offset net (`chips_cnn`, `floorman models train-chips`; used where its model file is present), each
  box's patch, cut by the camera's geometry, gives the top's offset over the base as a CNN reads it, and that
  evidence per count and camera model is added to the geometry's, the sum tempered by LEARNED_TEMPERATURE (measured
  with `benchmarks/chips.py --size mixed --seed 8900`, camera height given: count exact 59.8 -> 70.0 % on detector
  boxes, 74.4 -> 78.9 % on truth boxes, counts given 0.8+ 93.3 -> 98.1 % and 92.3 -> 96.8 % exact).
  A detector's box that stops short of a tall stack's base (its side left out of the box) is run on where the
  side goes on past it and read again, that reading kept where its count is surer (`extend`, `chips_extend`; held-out
  3840x2160 seats, seed 50104, camera height given: count exact 77.4 -> 79.4 %; mixed sizes unchanged). One cut
  across the stack's top disc (a touching neighbour's side taken for its end) may first be run on up the stack's axis
  to where its rim shows its spots' period and its colours fit, where the box's own fits poorly (`find_top`,
  TOP_*; held-out 3840x2160 seats 50104 count exact 81.5 -> 83.0 %; on since session 56, once the derivation no
  longer took a bet zone misread while the dealer gathers for a push: before, from video a right re-read it made had
  left two false C1 and a lost A8). Where the detector's second finer look (at the frame's own pixels:
  `OnnxDetectorConfig.refine_native_px`, off by default) boxed a crowded stack otherwise, both boxes are read and the
  surer count kept (`evidence(..., alternative=)`; session 57: held-out 3840x2160 seats 50104 count exact 83.0 ->
  85.7 %, but from video an alert lost and a false one made: not on by default). A detector's box's sides are first
  read again at the frame's own pixels by the learned box-side reader (`box_net`, `chips_box_net`; session 60), each
  taken where the net is surer of it than the detector's spread, before the edges near them are looked for; a side
  it reads far off (`chips_box.LOOSE_SIDE_SIGMA_PX`) at the base's end is the box cut there, and the run-on past it
  is then taken whatever its sureness (held-out 3840x2160 seats 50104, camera height given: count exact 81.0 -> 84.4
  %); such a box is run on even where the fit of the box alone (round the top disc, one chip) shows a side under
  `chips_extend.MIN_PX_PER_CHIP`, from CUT_MIN_PX_PER_CHIP (session 61).
- Top chip (colour): the top disc is sampled on a polar grid in its own plane; its pixels fall into body and
  edge-spot colours, matched to the chip set under an estimated light (`chips_colour.match_top`), with the
  spot count from the rim's angular pattern as a further cue. An unsure match is tried again a pixel off the
  fitted disc each way (a box's error, a stack's lean), and the best match wins. Without a camera the top disc
  is looked for where a box may hold it (`box_discs`: inscribed, in its corners, away from the image's centre,
  out past the image's border) and the best match wins too.
- The chips below (colour): where the side shows at least MIN_SIDE_PX pixels per chip, it is sampled at each
  chip's mid-height on a few vertical lines, each sample labelled with the nearest body colour under the light found
  on the top, and the chips are read as runs (`chips_side`: the most likely sequence of denominations given how
  often a chip's samples show its own colour, its spots' colour and the lightest body, a cost per change, the top's
  value fixed); thinner sides are not read and the stack is taken to be of the top chip's value (measured: reading
  1-px sides did worse than that assumption, chip by chip in session 11 and as runs in session 38). So mixed stacks
  are read only from tilted, close cameras. From 1.8 px per chip (was 2.5 until session 11; `benchmarks/chips.py`,
  detector boxes, 3840x2160 seed 99043 / mixed sizes 99013): stacks whose count and values are both given >= 0.8
  86 -> 87 and 74 -> 76, as exact (95.3 -> 95.4 %, 94.6 -> 94.7 %), each chip's value 85.0 -> 85.5 % and 83.2 ->
  83.0 %; a bet of one denomination seen from a tilted 4K camera (~2 px per chip) then has its values read sure.
  Read as runs since session 38, where each chip had been read alone (another denomination than the top's where 60 %
  of its samples that could not be the top's spots agreed; `benchmarks/chips.py --size mixed --seed 99656`, truth
  boxes, camera height given): stacks of one denomination counted right 97.3 -> 99.4 % read right, stacks given
  >= 0.8 on count and values 97.5 -> 100 % exact; mixed stacks stay unread (6 % right).
- The values' confidence (`ChipReading.confidence`), with a camera: how likely the top's value is right, measured
  against its colour match's score (`TOP_RIGHT`), times the least posterior of a chip below (`chips_side`; at most
  the share of the chip's side samples that agree with it, 0.9 where one of five does not (`_LONE_DISSENT`); at most
  0.5 where a chip's samples hold both its colours and those of the denomination with them swapped, and where the
  side is too thin to read).
  Without a camera it is the colour match's score.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.chip_box_strips import OUTWARD
from floorman.core.chips import ChipSet
from floorman.core.geometry import FloatArray
from floorman.vision.chips_box import LOOSE_SIDE_SIGMA_PX, detector_sigma_px, refine_box
from floorman.vision.chips_box_net import ChipBoxNet, LearnedSides, base_end_sides, default_box_net
from floorman.vision.chips_cnn import ChipOffsetNet, default_offset_net, learned_log_likelihood
from floorman.vision.chips_colour import (
    Bgr,
    ColourMatch,
    TopColours,
    classify_side,
    match_top,
    scene_light_and_white,
    two_means,
)
from floorman.vision.chips_discs import box_discs
from floorman.vision.chips_extend import extended_box
from floorman.vision.chips_geometry import (
    CAMERA_HEIGHTS_MM,
    Box,
    BoxSolution,
    StackFit,
    TableCamera,
    box_holding,
    count_posterior,
    count_prior,
    marginalise,
    side_points,
    solve_box,
    stack_outline,
)
from floorman.vision.chips_refine import Silhouette, refine_silhouette, silhouette_fit, silhouette_log_likelihood
from floorman.vision.chips_seams import MIN_PX_PER_CHIP, seam_log_evidence
from floorman.vision.chips_side import (
    PATTERN_ANGLES_DEG,
    PATTERN_MIN_PX,
    emission_log,
    pattern_log_evidence,
    pattern_posterior,
    read_side,
    spot_aliases,
    swapped_colours,
)
from floorman.vision.chips_side_net import ChipSideNet, default_side_net

logger = logging.getLogger(__name__)

Image = npt.NDArray[np.uint8]
_ANGLES = 96
# Without a camera (a photo), a box's top disc that fits no denomination within _HALF_DISC_FROM (`ColourMatch.error`)
# is read again on _HALF_DISCS half discs, and the best half wins where its error is _HALF_DISC_GAIN of the whole's
# or less (`ChipRecogniser._half_disc_match`; a chip under a finger). Chosen on the 13 dev photo sets (session 38).
_HALF_DISCS = 8
_HALF_DISC_FROM = 0.05
_HALF_DISC_GAIN = 0.5
_INNER = (0.62, 0.655, 0.69)  # body between the inlay's rim (0.6) and the printed ring (0.7)
_OUTER = (0.81, 0.86, 0.91, 0.95)  # the edge spots' band (0.78-1.0)
_SIDE_ANGLES_DEG = (-45.0, -22.5, 0.0, 22.5, 45.0)
_SPOT_COUNTS = range(2, 17)
MIN_SIDE_PX = 1.8  # below this many pixels per chip the side is not read (chips taken as the top one)
# A lower chip of a denomination whose colours are another's swapped (the default set's white 25 with blue spots and
# blue 5000 with white spots) shows both colours either way, in shares five side samples cannot tell apart: read
# as one of the pair, it is no surer than this (they were read sure and wrong both ways at 2-5 px per chip,
# `tests/vision/test_chips_side.py`).
_SWAPPED_AGREEMENT = 0.5
# ...unless its rim's spot pattern tells the two apart (`chips_side.pattern_posterior` at least this): on dev seeds
# 39001-39004, stacks counted right from 2.2 px per chip, values given >= 0.8 235 -> 319 of 630, wrong 5 -> 5.
_SWAPPED_RIMS_SURE = 0.9
# A chip's values are no surer than the share of its side samples that agree with it (its colour, or the top's spots
# where it is of the top's value), but for one sample of another colour among all five, where they are no surer than
# this: ten red 100s at 2.4 px per chip from a tilted 4K camera, one side sample in their shadow read black, had been
# given 0.8 x 0.995 and their bet taken for unsure (bet_sizing's under-raise). Fresh seeds 51001 (3840x2160 seats, 60
# frames), 51002 (1280x720 seats, 60), 51003 (mixed, 80), detector boxes, camera height given (`benchmarks/
# chips_confidence.py --sample 51001,60,3840x2160,seats ...`), stacks of more chips counted right: values given >= 0.8
# 219 -> 273, 217 -> 270 exact (99.1 -> 98.9 %), values exact 766 of 887 either way; whole stacks given >= 0.8 (count
# and values) 425 of 446 -> 453 of 475 exact (95.3 -> 95.4 %). Without the cap on the share at all: 291 of 295, but
# values exact 764 (the leaning and upright readings are chosen by it).
_LONE_DISSENT = 0.9
# How often the top chip's value is right, against the colour match's score (`ColourMatch.confidence`: the winner's
# separation times its fit), read with a camera: the score is no probability (stacks whose top scored 0.3-0.4 were
# right 98 % of the time, and the edge took their one-chip bets for unsure). Measured on the shipped detector's boxes
# (IoU >= 0.5 with a stack >= 90 % in sight), camera height given, `benchmarks/chips_confidence.py` on dev seeds
# 8960/8961 (seats, 3840x2160, 240 frames), 8962 (mixed sizes, 150) and 8963 (seats, 1280x720, 100): 4,325 tops, by
# score 0-0.05 / 0.05-0.1 / 0.1-0.15 / 0.15-0.2 / 0.2-0.25 / 0.25-0.35 / 0.35-0.4 / 0.4-0.5 / 0.5-0.6 / 0.6+ right
# 35 / 51 / 78 / 88 / 93 / 98 / 99 / 99.5 / 99.7 / 100 % (the last of 2,723); 1280x720 frames alone alike (the table
# was first fitted on the same frames read through the table state, 38 % in the first bin). The score maps to these
# (linear between), capped at 0.995: a camera's reading is never certain.
TOP_RIGHT = ((0.025, 0.38), (0.075, 0.51), (0.125, 0.78), (0.175, 0.875), (0.225, 0.93), (0.3, 0.97),
             (0.4, 0.985), (0.5, 0.99), (0.6, 0.995))
_HEIGHT_STEP_MM = 200.0  # camera heights tried over CAMERA_HEIGHTS_MM when the calibration's height was assumed
# A detector box's sides are off by about this much (the shipped detector against mask boxes: median 0.8 px, sd 2;
# counts from its boxes then come out calibrated). An instance mask's box: chips_geometry.BOX_SIGMA_PX.
DETECTOR_BOX_SIGMA_PX = 1.0
# Where the side's seams are read (`chips_seams`), the box's and silhouette's evidence is divided by this: a stack's
# lean makes its silhouette say one chip more or less, sure, where the seams say otherwise only softly (dev seeds
# 39001-39004, truth boxes, camera height given, stacks whose seams were read: counts given >= 0.8 503 of 514 exact
# -> 478 of 480, count exact 569 -> 573 of 617; on fresh 39657 the zones the rules would accuse on had held counts
# 13 read 12 at 0.97, 14 read 13 at 0.87).
SEAMS_SILHOUETTE_TEMPERATURE = 1.5
CUT_MIN_PX_PER_CHIP = 1.2  # a box the box-side reader says is cut is run on from this thin a side (`_extended`)
UNCONFIRMED_BOX_SIGMA_PX = 2.0  # the detector's measured spread: its box where no silhouette was found round it
# A detector's box beside the silhouette, its sides found again in the image (`chips_box`): taken as off by this many
# times their spread (measured on detector boxes of seeds 97011/97012/98011, 980 stacks: count exact 57.1 % with the
# box off by a tenth of its width as before, 60.0 / 59.8 / 60.6 % at 1.3 / 1.6 / 2.0; counts given 0.8+ 91.6 / 93.8 /
# 94.0 % exact).
REFINED_BOX_SCALE = 2.0
# A detector's box read again moved a pixel each way and grown and shrunk by one a side, the count evidence of the
# seven averaged (`ChipRecogniser.evidence`, `jitter`): its refined sides and silhouette start from the box, and a
# pixel there can change what they find (from a tilted 4K camera a lone 500 in a bet read 0.75 sure from one box,
# 0.93 from a box a pixel aside: 0.88 and 0.94 averaged). Used where the detector's sides are off by at least
# JITTER_FROM_SIGMA_PX (`chips_box.detector_sigma_px`: frames of 2240 px and more), where a pixel is under its
# spread; at 1280x720 it cost 3 of 151 stacks (seed 50102). Held-out 3840x2160 seats (`benchmarks/chips.py --scene
# seats --size 3840x2160 --frames 12`, detector boxes, camera height given): seed 50104 count exact 79.4 % either
# way, counts given >= 0.8 76 -> 78 stacks, wrong 5 -> 2; dev 50101 80.3 -> 82.2 %, 49006 73.0 -> 73.9 %. It
# costs seven reads a box (45 -> 207 ms per stack read at 3840x2160).
BOX_JITTER_PX = ((-1, 0, -1, 0), (1, 0, 1, 0), (0, -1, 0, -1), (0, 1, 0, 1), (-1, -1, 1, 1), (1, 1, -1, -1))
JITTER_FROM_SIGMA_PX = 1.2
_SURE_MATCH = 0.3  # a top disc matched this surely is not looked for off the fit
# With `find_top` (on since session 56: README, Chips, sessions 55-56), a detector's box cut across its stack's top
# disc (a touching neighbour's side taken for the stack's end: the box then reads a few chips where there are more, its
# top disc sampled on the side's stripes) is run on to where the top disc lies (`ChipRecogniser._found_top`): where the
# box's top disc fits its best denomination worse than TOP_POOR_FIT (`ColourMatch.error`), the disc is looked for up
# the stack's axis (to TOP_ALONG diameters) and across it (TOP_ACROSS either way; a box round the side alone is off
# across too), every TOP_STEP diameters, then to a pixel, by the rim's spot pattern (`rim_periodicity`: a top disc's
# rim shows its spots' period, a side's stripes do not), and taken where the disc there fits within TOP_FOUND_FIT,
# TOP_FOUND_RATIO times the box's error or better, its rim showing its denomination's spots (`TopColours.spot_power`)
# at least TOP_FOUND_SPOTS, at least TOP_MIN_SHIFT_PX up: the box is grown to hold it. On 13 cut boxes of dev
# 3840x2160 seats (49006, 50101, 55101) the rim's period put the disc within 1-2 px of the true top, 4-43 px up and up
# to 12 px across (its colours' error alone, looked for up the axis only, found 8 of them, none 3 px or more across,
# and slid another box onto a neighbour's top). `benchmarks/chips.py --scene seats --size 3840x2160 --frames 12
# [--no-find-top]`, detector boxes, camera height given, without -> with: dev 49006 / 50101 / 55101 count exact 78.0 ->
# 83.1 / 82.2 -> 83.6 / 77.6 -> 79.8 %, stack exact 75.4 -> 79.7 / 80.3 -> 82.2 / 75.3 -> 77.4 %; held-out 50104
# count exact 81.5 -> 83.0 %, stack exact 76.3 -> 77.8 %, zone value 57.5 -> 58.8 %, counts given >= 0.8 96.5 ->
# 97.7 % exact; mixed sizes (`--size mixed --frames 30 --seed 96001`) 72.5 -> 72.8 %, zone value 32.4 -> 33.1 %.
TOP_POOR_FIT = 0.15
TOP_FOUND_FIT = 0.1
TOP_FOUND_RATIO = 0.5
TOP_FOUND_SPOTS = 0.6
TOP_ALONG = 0.8
TOP_ACROSS = 0.25
TOP_STEP = 0.05
TOP_MIN_SHIFT_PX = 3.0
# A stack read again keeps its last reading's top value while that fits within this of the best (`ColourMatch.error`),
# and a lower chip's last value gets this much log-evidence more (`chips_side.read_side`: one side sample of another
# colour is about 2.7).
HOLD_COLOUR = 0.05
HOLD_SIDE = 2.0
_DISC_SHIFT_PX = 1.0  # the top disc is also sampled this far off the fit each way (a box's error, a stack's lean)
_FINGERPRINT_STEP = 16  # a frame is told from another on a grid of pixels this far apart
_AXIS_MM = 100.0  # a stack's axis in the image: from its foot to this far above it
_CIRCLE_POINTS = 32
_MIN_AXIS = 0.05  # an axis component under this does not reach the box's side that way
_END_SLACK_PX = 1.5  # a top disc this close to the box's end is at it
_MIN_INSIDE = 0.3  # a top disc with less of its samples in the image is not read (a chip cut by the border)
# Without a camera, a box's best fitting disc whose rim shows no spots' period (its largest share at one spot count
# under _APERIODIC_RIM) gives way to a disc whose rim does (_PERIODIC_RIM or more) fitting within _PERIODIC_FIT_RATIO
# times its error and under _PERIODIC_MAX_ERROR (`_periodic_choice`). Photo-like frames of single chips (session 30,
# dev seeds 30901-30905, 1,311 chips on detector boxes): tops wrong 17 -> 14 (three blue chips with a grey inlay
# read white no longer).
_APERIODIC_RIM = 0.5
_PERIODIC_RIM = 0.8
_PERIODIC_FIT_RATIO = 2.0
_PERIODIC_MAX_ERROR = 0.1
_WITHIN_MARGIN_PX = 1.0  # without a camera, a top disc's samples this far outside its box still count
# The counts' prior (`chips_geometry.count_prior`): a chip object on a table is a single chip more often than a
# stack of any one height (loose chips, change, one-chip bets), stacks rarely pass a standard stack of 20. Measured
# on detector boxes (`benchmarks/chips.py --size mixed`, seeds 96001/96002, 30 frames each): count exact +1 / +8
# points with a single-chip share of 0.1 (0.3: no more, and only 82 % of the 0.8+ counts exact). A count's
# confidence stays what the evidence alone gives it (`chips_geometry.count_choice`).
SINGLE_SHARE = 0.1
USUAL_MAX_COUNT = 20
BEYOND_SHARE = 0.02


# The net's evidence on a stack's top offset (`chips_cnn`) and the geometry's read the same pixels: their sum is
# tempered by this, or counts given 0.8+ come out less exact than they say (measured on a dev seed's stacks, see
# `learned_log_likelihood`).
LEARNED_TEMPERATURE = 1.6


# One stack's say against any camera height is capped at this (log units): a stack misread, or a neighbour's edges
# taken for its own, does not rule a height out alone (measured at 3840x2160, seed 94035, truth boxes: 2, 4, 8 or no
# cap gave the same counts).
HEIGHT_VETO = 4.0


@dataclass(frozen=True, slots=True)
class StackEvidence:
    """One box's count evidence, before the frame's camera height is weighed (`ChipRecogniser.evidence`; all None
    but the box without a camera model)."""

    box: Box
    solution: BoxSolution | None  # the box's fit per count and camera model
    silhouette: Silhouette | None  # its edges' fit, where found
    log_likelihood: FloatArray | None  # (M, N) per camera model (main, then alternatives) and count
    learned: LearnedSides | None = None  # the box's sides as the box-side reader read them, where it did


def frame_heights(evidence: Sequence[FloatArray | None], *, log_prior: Sequence[float] = ()) -> list[FloatArray | None]:
    """Per stack, the log-weights (M,) of the camera models (an assumed camera's other heights) that the frame's
    other stacks give: each stack's evidence (M, N), its counts weighed by `log_prior`, says how likely each model
    is, capped at HEIGHT_VETO against any one (a stack misread, a neighbour's edges); a stack's own evidence is left
    out of its weights, so that it is not counted twice. None where there is one model or no evidence."""
    says: dict[int, FloatArray] = {}
    prior = np.asarray(log_prior, dtype=np.float64) if len(log_prior) else None
    for index, logs in enumerate(evidence):
        if logs is None or len(logs) < 2:
            continue
        joint = logs + prior[None, :] if prior is not None else logs
        say = np.logaddexp.reduce(joint, axis=1)
        says[index] = np.maximum(say - say.max(), -HEIGHT_VETO)
    if not says:
        return [None] * len(evidence)
    total = np.sum(list(says.values()), axis=0)
    return [total - says[index] if index in says else total for index in range(len(evidence))]


@dataclass(frozen=True, slots=True)
class ChipReading:
    """A chip object's reading: denominations bottom to top (one per chip), confidences, base position."""

    denominations: tuple[int, ...]
    confidence: float  # of the denominations (the top chip's value right, `TOP_RIGHT`, and the side's agreement)
    count_confidence: float  # of the count (0 when it could not be measured)
    base_mm: tuple[float, float] | None = None  # the stack's foot on the felt (needs a camera model)
    px_per_chip: float = 0.0
    top_score: float = 0.0  # the top's colour match score (`ColourMatch.confidence`; no probability, see TOP_RIGHT)
    # log p(this camera's evidence | count) for counts 1..max_count, up to a constant (empty without a count): what
    # another camera's reading of the same stack is combined with (`vision.fusion`)
    count_log_likelihood: tuple[float, ...] = ()
    top_px: tuple[float, float] | None = None  # the top disc's centre in the image where its rim was seen (else None)

    @property
    def count(self) -> int:
        return len(self.denominations)

    @property
    def value(self) -> int:
        return sum(self.denominations)

    @property
    def top(self) -> int:
        return self.denominations[-1]


@dataclass(frozen=True)
class RimRecord:
    """A side's rim samples as read (`ChipRecogniser.side_record`): each lower chip's colours (chips, angles, 3) on
    `core.chip_sides.RIM_ANGLES_DEG` and which lie in the image, sampled upright or along the stack's `lean`, under
    the top's `illuminant`, for the fit of `count` chips standing at `base_mm`."""

    base_mm: tuple[float, float]
    count: int
    lean: bool
    rim: Bgr
    valid: npt.NDArray[np.bool_]
    illuminant: Bgr
    px_per_chip: float


@dataclass(frozen=True, slots=True)
class FrameLight:
    """A frame's light (`chips_colour.scene_light`: log channel gains) and white level (`scene_white`)."""

    gains: Bgr | None
    white: float | None


class ChipRecogniser:
    """Reads chip boxes against a club's chip set; `camera` (from the calibration) enables counts and bases."""

    def __init__(self, chipset: ChipSet, *, camera: TableCamera | None = None, max_count: int = 30,
                 box_sigma_px: float = DETECTOR_BOX_SIGMA_PX, refine: bool = True,
                 log_prior: Sequence[float] | None = None, height_from_frame: bool = True,
                 offset_net: ChipOffsetNet | Literal["default"] | None = "default", extend: bool = True,
                 jitter: bool = True, find_top: bool = True,
                 side_net: ChipSideNet | Literal["default"] | None = "default",
                 min_side_px: float = MIN_SIDE_PX,
                 box_net: ChipBoxNet | Literal["default"] | None = "default") -> None:
        if max_count < 1:
            raise ValueError(f"expected max_count >= 1, got {max_count}")
        if log_prior is None:
            log_prior = tuple(count_prior(max_count, single_share=SINGLE_SHARE, usual_max=USUAL_MAX_COUNT,
                                          beyond_share=BEYOND_SHARE))
        if len(log_prior) not in (0, max_count):
            raise ValueError(f"expected a log-prior of {max_count} counts (or none: flat), got {len(log_prior)}")
        self.log_prior = tuple(float(v) for v in log_prior)  # of counts 1..max_count (empty: flat)
        if not box_sigma_px > 0:
            raise ValueError(f"expected box_sigma_px > 0, got {box_sigma_px}")
        self.chipset = chipset
        self.camera = camera
        self.max_count = max_count
        self.box_sigma_px = box_sigma_px
        self.refine = refine  # fit the stack's silhouette to the image's edges (`chips_refine`), not the box alone
        self.height_from_frame = height_from_frame  # an assumed camera's height told by the frame's stacks
        self.extend = extend  # a detector's box that stops short of the stack's base run on (`chips_extend`)
        self.jitter = jitter  # a detector's box read again a pixel off each way on large frames (BOX_JITTER_PX)
        self.find_top = find_top  # a detector's box cut across its top disc run on to where one fits (TOP_*)
        # the learned offset's evidence beside the geometry's (`chips_cnn`; the shipped net where present)
        self.offset_net = default_offset_net() if offset_net == "default" else offset_net
        # the learned side reader for the chips under the top (`chips_side_net`; the shipped one where present)
        self.side_net = default_side_net() if side_net == "default" else side_net
        # the learned box-side reader for a detector's boxes (`chips_box_net`; the shipped one where present)
        self.box_net = default_box_net() if box_net == "default" else box_net
        self.side_record: list[RimRecord] | None = None  # a list to keep each side's rim samples in (training)
        self.min_side_px = min_side_px  # a side showing fewer pixels per chip is not read (chips taken as the top)
        # A camera height that was assumed, not measured: the count must hold for any plausible height.
        self.alternatives = camera.at_heights(_other_heights(camera)) if camera is not None else []
        self._spots = [spot_aliases(chipset, d.value) for d in chipset.denominations]
        self._swapped = [swapped_colours(chipset, d.value) for d in chipset.denominations]
        self._last_light: tuple[Image, Image, FrameLight] | None = None  # the last frame, its grid, its light

    @property
    def detector_boxes(self) -> bool:
        """Whether the boxes read are a detector's (their sides off by DETECTOR_BOX_SIGMA_PX or more: found again in
        the image, run on past a short base end, jittered on large frames), not an instance mask's."""
        return self.box_sigma_px >= DETECTOR_BOX_SIGMA_PX

    def read(self, image: Image, box: Box) -> ChipReading:
        """Read one chip box (pixels, xyxy) in the full-resolution BGR frame."""
        return self.read_frame(image, [box])[0]

    def read_frame(self, image: Image, boxes: Sequence[Box], *,
                   context: Sequence[StackEvidence] = ()) -> list[ChipReading]:
        """Read every chip box of one frame (`context`: the evidence of the frame's other stacks, read before)."""
        return self.read_evidence(image, [self.evidence(image, box) for box in boxes], context=context)

    def read_evidence(self, image: Image, evidence: Sequence[StackEvidence], *,
                      context: Sequence[StackEvidence] = (),
                      previous: Sequence[ChipReading | None] | None = None) -> list[ChipReading]:
        """The readings of one frame's stacks from their evidence. Where the camera's height was assumed, the
        frame's stacks (with `context`) tell it together: each stack's count is read with the heights weighted by
        what the other stacks say of them (`frame_heights`); a box alone is read over all heights equally.
        `previous` (one per stack, None where there is none) are the same stacks' last readings, at the same place:
        a count the evidence leaves about as likely as the likeliest stays (`chips_geometry.count_choice`)."""
        if previous is not None and len(previous) != len(evidence):
            raise ValueError(f"expected one previous reading (or None) per stack, {len(evidence)}, "
                             f"got {len(previous)}")
        last = list(previous) if previous is not None else [None] * len(evidence)
        if not self.height_from_frame:
            return [self._reading(image, e, model_log_weights=None, previous=p) for e, p in zip(evidence, last,
                                                                                             strict=True)]
        weights = frame_heights([e.log_likelihood for e in (*evidence, *context)], log_prior=self.log_prior)
        # the weights of `context` (after those of `evidence`) are not needed: those stacks were read before
        return [self._reading(image, e, model_log_weights=w, previous=p)
                for e, w, p in zip(evidence, weights[:len(evidence)], last, strict=True)]

    def _reading(self, image: Image, evidence: StackEvidence, *, model_log_weights: FloatArray | None,
                 previous: ChipReading | None = None) -> ChipReading:
        box = evidence.box
        fit = self._fit(evidence, model_log_weights=model_log_weights,
                        previous=None if previous is None else previous.count)
        light = self._frame_light(image)
        if fit is not None:
            match = self._match(image, self._top_discs(fit, box), sure=_SURE_MATCH, light=light)
        else:
            discs = box_discs(box, self.chipset.diameter_mm / 2.0, image_size=(image.shape[1], image.shape[0]),
                              image=image)
            match = self._match(image, discs, sure=math.inf, light=light, within=box, periodic_rim=True)
        if match is None:
            logger.debug("chip box %s: too little of its top disc lies in the image", box)
            return ChipReading(denominations=(self.chipset.denominations[0].value,), confidence=0.0,
                               count_confidence=0.0)
        if previous is not None and previous.top != match.value and (
                match.errors.get(previous.top, math.inf) <= match.error + HOLD_COLOUR):
            match = replace(match, value=previous.top)  # a top about as like the last one's: it stays
        if fit is None or self.camera is None:
            return ChipReading(denominations=(match.value,), confidence=match.confidence, count_confidence=0.0,
                               top_score=match.confidence)
        held = previous.denominations[:-1] if previous is not None and previous.count == fit.count else None
        below, agreement = self._side(image, fit, match, previous=held)
        return ChipReading(denominations=(*below, match.value), confidence=top_right(match.confidence) * agreement,
                           count_confidence=fit.count_confidence, base_mm=fit.base_mm, px_per_chip=fit.px_per_chip,
                           top_score=match.confidence, count_log_likelihood=fit.log_likelihood, top_px=fit.top_px)

    def _frame_light(self, image: Image) -> FrameLight:
        """The frame's light and white level (`chips_colour.scene_light_and_white`), found once per frame: the
        boxes of one frame are read one after another on the same array (one that changed in place since, seen on a
        coarse grid, is looked at again)."""
        fingerprint = image[::_FINGERPRINT_STEP, ::_FINGERPRINT_STEP].copy()
        last = self._last_light
        if last is not None and last[0] is image and np.array_equal(last[1], fingerprint):
            return last[2]
        gains, white = scene_light_and_white(image)
        light = FrameLight(gains=gains, white=white)
        self._last_light = (image, fingerprint, light)
        return light

    def _fit(self, evidence: StackEvidence, *, model_log_weights: FloatArray | None,
             previous: int | None = None) -> StackFit | None:
        """The stack's base and count from its evidence, the camera models weighted by `model_log_weights`; the
        count's confidence no more than it is with the models weighed equally: the frame's height may choose a
        count, not make it sure (measured on detector boxes, mixed sizes, seed 96001: without this cap, counts given
        0.8+ were 91 % exact, not 98 %, for no more exact counts)."""
        if self.camera is None or evidence.solution is None or evidence.log_likelihood is None:
            return None
        if evidence.silhouette is None:
            fit = evidence.solution.fit(evidence.log_likelihood, log_prior=self.log_prior,
                                        model_log_weights=model_log_weights, previous=previous)
        else:
            fit = silhouette_fit(self.camera, evidence.silhouette,
                                 marginalise(evidence.log_likelihood, model_log_weights),
                                 thickness_mm=self.chipset.thickness_mm, log_prior=self.log_prior, previous=previous)
        if model_log_weights is None:
            return fit
        equal = count_posterior(marginalise(evidence.log_likelihood))[fit.count - 1]
        return replace(fit, count_confidence=min(fit.count_confidence, float(equal)))

    def evidence(self, image: Image, box: Box, *, alternative: Box | None = None) -> StackEvidence:
        """A box's count evidence per camera model: from the box, then (with `refine`) from the silhouette's edges
        near it and the seams of its side, from the box run on to the stack's base where it stops short of it and
        that count is surer (with `extend`, a detector's box: `chips_extend`), and (with an `offset_net`) the
        learned top offset's on the box read. With `jitter`, a detector's box on a frame whose boxes are off by
        JITTER_FROM_SIGMA_PX or more is read again a pixel off each way (BOX_JITTER_PX), the evidence averaged. With
        `find_top`, a detector's box cut across its top disc is first run on to where one fits (`_found_top`).
        `alternative`: a second box of the same stack, from the detector's second finer look
        (`detections.ALTERNATIVE_BOX`), read alike; the evidence whose count is surer is kept."""
        found = self._evidence(image, box)
        if alternative is None or found.log_likelihood is None or not self.detector_boxes:
            return found
        chosen = self._surer(found, self._evidence(image, alternative))
        if chosen is not found:
            logger.debug("chip box %s read from its second box %s: its count is surer", box, alternative)
        return chosen

    def _evidence(self, image: Image, box: Box) -> StackEvidence:
        """`evidence` of one box."""
        if self.find_top and self.camera is not None and self.detector_boxes:
            box = self._found_top(image, box)
        found = self._box_evidence(image, box)
        if not (self.jitter and self.camera is not None and found.log_likelihood is not None
                and self.detector_boxes
                and detector_sigma_px(self.camera.image_size) >= JITTER_FROM_SIGMA_PX):
            return found
        height, width = image.shape[:2]
        evidence = [found.log_likelihood]
        for step in BOX_JITTER_PX:
            x1, y1, x2, y2 = (side + move for side, move in zip(box, step, strict=True))
            if x1 < 0 or y1 < 0 or x2 > width or y2 > height or x2 <= x1 or y2 <= y1:
                continue  # off the frame: that side is the frame's border, not the detector's guess
            other = self._box_evidence(image, (x1, y1, x2, y2)).log_likelihood
            if other is not None:
                evidence.append(other)
        return replace(found, log_likelihood=np.mean(evidence, axis=0))

    def _found_top(self, image: Image, box: Box) -> Box:
        """`box` grown to hold its stack's top disc found up the stack's axis, where the box's own top disc fits
        poorly and one there fits well (TOP_*), else `box`."""
        if self.camera is None:
            raise ValueError("expected a camera model to look for a top disc, got none")
        if not (box[2] > box[0] and box[3] > box[1]):
            raise ValueError(f"expected a box with x2 > x1 and y2 > y1, got {box}")
        spots = sorted({d.edge_spots for d in self.chipset.denominations if d.edge_spots >= min(_SPOT_COUNTS)})
        solution = solve_box(self.camera, box, diameter_mm=self.chipset.diameter_mm,
                             thickness_mm=self.chipset.thickness_mm, max_count=self.max_count)
        fit = solution.fit(solution.log_likelihood(self.box_sigma_px), log_prior=self.log_prior)
        disc = self._top_disc(fit)
        along = self._axis(fit)
        if along is None or not spots:
            return box  # straight under the camera the top is the box; a chip set without spots shows no period
        across = np.array([-along[1], along[0]])
        light = self._frame_light(image)
        radius = self.chipset.diameter_mm / 2.0

        def fitted(offset: FloatArray) -> tuple[float, float] | None:
            """The disc moved by `offset` px: its best match's error and its rim's spots for that denomination."""
            top = top_colours(image, _translation(float(offset[0]), float(offset[1])) @ disc, radius_mm=radius)
            if top is None:
                return None
            match = match_top(top, self.chipset, light=light.gains, white=light.white)
            return match.error, top.spot_power.get(self.chipset.by_value(match.value).edge_spots, 0.0)

        own = fitted(np.zeros(2))
        if own is None or own[0] <= TOP_POOR_FIT:
            return box
        centre, edge = _map(disc, np.array([[0.0, 0.0], [radius, 0.0]]))
        diameter = 2.0 * float(np.linalg.norm(edge - centre))
        step = max(1.0, TOP_STEP * diameter)
        ups = np.arange(0.0, TOP_ALONG * diameter + step / 2.0, step)
        sides = np.arange(0.0, TOP_ACROSS * diameter + step / 2.0, step)
        grid = np.array([(u, v) for u in ups for v in np.concatenate([-sides[:0:-1], sides])])
        best = grid[int(np.argmax(rim_periodicity(image, disc, grid @ np.stack([along, across]), radius_mm=radius,
                                                  spot_counts=spots)))]
        reach = math.ceil(step)
        moves = np.arange(-reach, reach + 1, dtype=np.float64)
        fine = best + np.array([(u, v) for u in moves for v in moves])
        fine = fine[fine[:, 0] >= 0.0]
        up, side = fine[int(np.argmax(rim_periodicity(image, disc, fine @ np.stack([along, across]), radius_mm=radius,
                                                      spot_counts=spots)))]
        offset = up * along + side * across
        found = fitted(offset) if up >= TOP_MIN_SHIFT_PX else None
        if (found is None or found[0] > TOP_FOUND_FIT or found[0] > TOP_FOUND_RATIO * own[0]
                or found[1] < TOP_FOUND_SPOTS):
            return box
        rim = self._outline(_translation(float(offset[0]), float(offset[1])) @ disc)
        grown = box_holding(box, rim, image_size=(image.shape[1], image.shape[0]))
        logger.debug("chip box %s run on to %s: its top disc lies %.0f px up its axis, %.0f across", box, grown, up,
                     side)
        return grown

    def _box_evidence(self, image: Image, box: Box) -> StackEvidence:
        """One box's evidence as `evidence` reads it, the box as given."""
        found = self._geometric_evidence(image, box)
        if self.extend and self.camera is not None and self.detector_boxes:
            found = self._extended(image, found)
        if self.offset_net is None or self.camera is None or found.log_likelihood is None:
            return found
        box = found.box
        learned = learned_log_likelihood(self.offset_net, image, box, self.camera, self.alternatives,
                                         diameter_mm=self.chipset.diameter_mm, thickness_mm=self.chipset.thickness_mm,
                                         max_count=self.max_count)
        return replace(found, log_likelihood=(found.log_likelihood + learned) / LEARNED_TEMPERATURE)

    def _extended(self, image: Image, found: StackEvidence) -> StackEvidence:
        """The evidence of the box run on past its base end where the stack's side goes on past it
        (`chips_extend`), where that count is surer than the box's own (a side run on into a neighbour is not); a box
        the box-side reader reads cut there is run on to felt, or where no felt ends the side to where its colour
        changes (`chips_extend.side_end`), and read so whatever its sureness."""
        if self.camera is None or found.solution is None or found.log_likelihood is None:
            return found
        fit = found.solution.fit(found.solution.log_likelihood(self.box_sigma_px), log_prior=self.log_prior)
        cut = bool(_cut_sides(found, self.camera))  # where no felt ends the side, its colour's change does
        longer = extended_box(image, found.box, fit=fit, camera=self.camera, chipset=self.chipset,
                              max_count=self.max_count, cut=cut)
        if longer == found.box and cut:
            # a box round the top disc alone fits one chip, whose side is thinner than the stack's: where the
            # box-side reader says the box is cut, its side is looked past from CUT_MIN_PX_PER_CHIP
            longer = extended_box(image, found.box, fit=fit, camera=self.camera, chipset=self.chipset,
                                  max_count=self.max_count, min_px_per_chip=CUT_MIN_PX_PER_CHIP, cut=True)
            if not _cut_short(found, longer, self.camera):
                return found
        if longer == found.box:
            return found
        other = self._geometric_evidence(image, longer)
        if _cut_short(found, longer, self.camera) and other.log_likelihood is not None:
            chosen = other  # the box-side reader says the box is cut where the side runs on: its count is no count
        else:
            chosen = self._surer(found, other)
        if chosen is not found:
            logger.debug("chip box %s run on to %s: its side goes on past its base end", found.box, longer)
        return chosen

    def _surer(self, found: StackEvidence, other: StackEvidence) -> StackEvidence:
        """`other` where its count is surer than `found`'s (`_sureness`), else `found` (which has evidence)."""
        if other.log_likelihood is None or found.log_likelihood is None:
            return found
        return other if self._sureness(other.log_likelihood) > self._sureness(found.log_likelihood) else found

    def _sureness(self, log_likelihood: FloatArray) -> float:
        """The likeliest count's posterior, the camera models weighed equally."""
        return float(count_posterior(marginalise(log_likelihood), self.log_prior).max())

    def _geometric_evidence(self, image: Image, box: Box) -> StackEvidence:
        if not (box[2] > box[0] and box[3] > box[1]):
            raise ValueError(f"expected a box with x2 > x1 and y2 > y1, got {box}")
        if self.camera is None:
            return StackEvidence(box, None, None, None)
        if self.refine and self.detector_boxes:  # sides found again
            return self._refined_evidence(image, box)
        solution = self._solve(box)
        tight = solution.log_likelihood(self.box_sigma_px)
        if not self.refine:
            return StackEvidence(box, solution, None, tight)
        fit = solution.fit(tight, log_prior=self.log_prior)
        silhouette = refine_silhouette(image, self.camera, fit, radius_mm=self.chipset.diameter_mm / 2.0,
                                       thickness_mm=self.chipset.thickness_mm)
        if silhouette is None:
            logger.debug("chip box %s: too few edges for its silhouette, the box's count stands", box)
            return StackEvidence(box, solution, None, tight)
        # A mask's box is off by rounding, independently of the edges: its evidence adds to theirs.
        return StackEvidence(box, solution, silhouette, self._with_silhouette(image, fit, silhouette, tight))

    def _refined_evidence(self, image: Image, box: Box) -> StackEvidence:
        """A detector box's evidence: its sides found again in the image and averaged in (`chips_box.refine_box`,
        near the outline the box's fit gives on the main camera model), that box's evidence (its sides off by their
        spread times REFINED_BOX_SCALE) beside the silhouette's."""
        if self.camera is None:
            raise ValueError("expected a camera model to refine a box, got none")
        radius, thickness = self.chipset.diameter_mm / 2.0, self.chipset.thickness_mm
        first = solve_box(self.camera, box, diameter_mm=self.chipset.diameter_mm, thickness_mm=thickness,
                          max_count=self.max_count)
        fit = first.fit(first.log_likelihood(self.box_sigma_px), log_prior=self.log_prior)
        outline = stack_outline(self.camera, fit, radius_mm=radius, thickness_mm=thickness)
        learned = self.box_net.sides(image, box, self.camera) if self.box_net is not None else None
        refined = refine_box(image, box, outline=outline, detector_sigma=detector_sigma_px(self.camera.image_size),
                             learned=learned)
        solution = self._solve(refined.box)
        sigma = np.asarray(refined.sigma_px) * REFINED_BOX_SCALE
        evidence = solution.log_likelihood(sigma)
        fit = solution.fit(evidence, log_prior=self.log_prior)
        silhouette = refine_silhouette(image, self.camera, fit, radius_mm=radius,
                                       thickness_mm=self.chipset.thickness_mm)
        if silhouette is None:
            # Unconfirmed by edges, a detector's box is taken as off by at least its full measured spread (with
            # DETECTOR_BOX_SIGMA_PX, 0.8+ counts of these boxes were right 2 times in 3).
            logger.debug("chip box %s: too few edges for its silhouette, the box's count stands", box)
            return StackEvidence(box, solution, None,
                                 solution.log_likelihood(np.maximum(sigma, UNCONFIRMED_BOX_SIGMA_PX)), learned)
        return StackEvidence(box, solution, silhouette, self._with_silhouette(image, fit, silhouette, evidence),
                             learned)

    def _with_silhouette(self, image: Image, fit: StackFit, silhouette: Silhouette,
                         box_evidence: FloatArray) -> FloatArray:
        """The box's evidence and the silhouette's, and the side's seams where they show (`chips_seams`)."""
        if self.camera is None:
            raise ValueError("expected a camera model to read a silhouette, got none")
        evidence = silhouette_log_likelihood(self.camera, silhouette, thickness_mm=self.chipset.thickness_mm,
                                             max_count=self.max_count, alternatives=self.alternatives) + box_evidence
        if fit.px_per_chip >= MIN_PX_PER_CHIP:
            seams = seam_log_evidence(image, self.camera, base_px=silhouette.base_px, top_px=silhouette.top_px,
                                      radius_mm=self.chipset.diameter_mm / 2.0, max_count=self.max_count)
            if seams is not None:
                evidence = evidence / SEAMS_SILHOUETTE_TEMPERATURE + seams[None, :]
        return evidence

    def _solve(self, box: Box) -> BoxSolution:
        if self.camera is None:
            raise ValueError("expected a camera model to solve a box, got none")
        return solve_box(self.camera, box, diameter_mm=self.chipset.diameter_mm,
                         thickness_mm=self.chipset.thickness_mm, max_count=self.max_count,
                         alternatives=self.alternatives)

    def _match(self, image: Image, discs: list[FloatArray], *, sure: float, light: FrameLight,
               within: Box | None = None, periodic_rim: bool = False) -> ColourMatch | None:
        """The best colour match over the candidate top discs (the first one alone when its match is `sure`), under
        the frame's `light` (`chips_colour.scene_light`), sampled `within` the box when given. With `periodic_rim`
        (a box read without a camera), a disc whose rim shows no spots' period gives way to one whose rim does when
        that fits about as well (`_periodic_choice`)."""
        best: ColourMatch | None = None
        best_disc = discs[0] if discs else None
        seen: list[tuple[ColourMatch, float]] = []
        for disc in discs:
            top = top_colours(image, disc, radius_mm=self.chipset.diameter_mm / 2.0, within=within)
            if top is None:
                continue
            match = match_top(top, self.chipset, light=light.gains, white=light.white)
            seen.append((match, max(top.spot_power.values(), default=0.0)))
            if best is None or match.error < best.error:
                best, best_disc = match, disc
            if best.on_chip >= sure:
                break
        if not periodic_rim or best is None or best_disc is None:
            return best
        chosen = _periodic_choice(seen, best)
        if chosen is best and best.error > _HALF_DISC_FROM:
            return self._half_disc_match(image, best_disc, best, light=light, within=within)
        return chosen

    def _half_disc_match(self, image: Image, disc: FloatArray, whole: ColourMatch, *, light: FrameLight,
                         within: Box | None) -> ColourMatch:
        """A top disc that fits its best denomination poorly, read again on each half (`_HALF_DISCS` of them): a
        finger or an arm over a chip spoils the whole disc's colours (a black chip under a finger read as a white
        one: the skin and the grey inlay take the body's place), not the half it leaves in sight. The best half's
        match is taken where it fits at least `_HALF_DISC_GAIN` times better than the whole, no surer than the
        whole."""
        best = whole
        for centre in np.arange(_HALF_DISCS) * 2.0 * math.pi / _HALF_DISCS:
            top = top_colours(image, disc, radius_mm=self.chipset.diameter_mm / 2.0, within=within,
                              sector=(float(centre), math.pi / 2.0))
            if top is None:
                continue
            match = match_top(top, self.chipset, light=light.gains, white=light.white)
            if match.error < best.error:
                best = match
        if best is whole or best.error > _HALF_DISC_GAIN * whole.error:
            return whole
        return replace(best, confidence=min(best.confidence, whole.confidence))

    def _top_discs(self, fit: StackFit, box: Box) -> list[FloatArray]:
        """Where the top disc may lie: as fitted, and a pixel off either way (a detector's box error or the stack's
        lean misplaces it by about that, enough to sample the felt on a small chip; measured on 60 frames of seed
        94101: top value 95.6 -> 97.1 % on truth boxes, 88.8 -> 92.7 % on detector boxes); last, slid up the
        stack's axis to the box's end (a tall stack whose count came out wrong)."""
        disc = self._top_disc(fit)
        step = _DISC_SHIFT_PX
        shifts = [(0.0, 0.0), (step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)]
        discs = [_translation(dx, dy) @ disc for dx, dy in shifts]
        end = self._box_end(fit, disc, box)
        return [*discs, end] if end is not None else discs

    def _box_end(self, fit: StackFit, disc: FloatArray, box: Box) -> FloatArray | None:
        """The fitted top disc slid along the stack's axis in the image until it meets the box's side at the top's
        end (up when the count came out short, down when long); None when it already does (within _END_SLACK_PX)."""
        axis = self._axis(fit)
        if axis is None:
            return None
        outline = self._outline(disc)
        lows, highs = np.array([box[0], box[1]]), np.array([box[2] - 1.0, box[3] - 1.0])
        room = [float((highs[k] - outline[:, k].max()) / axis[k]) if axis[k] > _MIN_AXIS
                else float((lows[k] - outline[:, k].min()) / axis[k]) if axis[k] < -_MIN_AXIS else math.inf
                for k in (0, 1)]
        slide = min(room)
        if not math.isfinite(slide) or abs(slide) <= _END_SLACK_PX:
            return None
        result: FloatArray = _translation(slide * axis[0], slide * axis[1]) @ disc
        return result

    def _axis(self, fit: StackFit) -> FloatArray | None:
        """(2,) the unit direction in the image from the stack's base up its axis; None straight under the camera (or
        without one)."""
        if self.camera is None:
            return None
        ends = self.camera.project(np.array([[*fit.base_mm, 0.0], [*fit.base_mm, _AXIS_MM]]))
        axis = ends[1] - ends[0]
        norm = float(np.linalg.norm(axis))
        if norm < 1e-6:
            return None
        result: FloatArray = axis / norm
        return result

    def _outline(self, disc: FloatArray) -> FloatArray:
        """(_CIRCLE_POINTS, 2) pixels round a top disc's rim (`disc`: pixels <- the disc's frame, mm)."""
        angles = np.linspace(0.0, 2.0 * math.pi, _CIRCLE_POINTS, endpoint=False)
        return _map(disc, np.stack([np.cos(angles), np.sin(angles)], axis=1) * self.chipset.diameter_mm / 2.0)

    def _top_disc(self, fit: StackFit) -> FloatArray:
        """3x3: pixels <- the top disc's own frame (mm, origin at the disc's centre)."""
        if self.camera is None:
            raise ValueError("expected a camera model to place the top disc, got none")
        z = fit.count * self.chipset.thickness_mm
        plane = self.camera.plane_to_image(z)
        centre = fit.base_mm
        if fit.top_px is not None:  # seen in the image: the stack's lean too
            seen = self.camera.to_plane(np.array([fit.top_px]), z=z)[0]
            centre = (float(seen[0]), float(seen[1]))
        result: FloatArray = plane @ _translation(centre[0], centre[1])
        return result

    def _side(self, image: Image, fit: StackFit, match: ColourMatch, *,
              previous: tuple[int, ...] | None = None) -> tuple[tuple[int, ...], float]:
        """Denominations of the chips under the top one (bottom first) and the least posterior among them (a stack's
        values are right only if every chip's is), read as runs of one denomination (`chips_side`); when the side
        is too thin to read, the chips below are taken to be like the top one. A chip's `previous` value (the same
        stack's last reading, of as many chips) is favoured by HOLD_SIDE."""
        below = fit.count - 1
        if below == 0:
            return (), 1.0
        if fit.px_per_chip < self.min_side_px or self.camera is None:
            return (match.value,) * below, 0.5
        upright = self._side_read(image, self.camera, fit, match, previous=previous, lean=False)
        if fit.top_px is None:
            return upright
        # A stack's chips may lie along its lean (built sloppily) or upright under a top put on askew (chips added
        # to a stack): the side is read both ways, the surer reading kept (the leaning one when as sure)
        leaning = self._side_read(image, self.camera, fit, match, previous=previous, lean=True)
        return leaning if leaning[1] >= upright[1] else upright

    def _side_read(self, image: Image, camera: TableCamera, fit: StackFit, match: ColourMatch, *,
                   previous: tuple[int, ...] | None, lean: bool) -> tuple[tuple[int, ...], float]:
        """`_side`'s reading with the side sampled upright over the base or (`lean`) along the stack's lean: by the
        learned side reader where there is one (`side_net`), else by the side's labels and (from PATTERN_MIN_PX) its
        rims' pattern."""
        radius, thickness = self.chipset.diameter_mm / 2.0, self.chipset.thickness_mm
        colours, valid = side_colours(image, camera, fit, radius_mm=radius, thickness_mm=thickness, lean=lean)
        index, _ = classify_side(colours.reshape(-1, 3), self.chipset, illuminant=match.illuminant)
        labels = index.reshape(colours.shape[:2])
        pattern = learned = None
        if self.side_net is not None or self.side_record is not None or fit.px_per_chip >= PATTERN_MIN_PX:
            rim, rim_valid = side_colours(image, camera, fit, radius_mm=radius, thickness_mm=thickness,
                                          angles_deg=PATTERN_ANGLES_DEG, lean=lean)
            if self.side_record is not None:
                self.side_record.append(RimRecord(base_mm=fit.base_mm, count=fit.count, lean=lean, rim=rim,
                                                  valid=rim_valid, illuminant=match.illuminant,
                                                  px_per_chip=fit.px_per_chip))
            if self.side_net is not None:
                learned = self.side_net.log_evidence(rim, rim_valid, illuminant=match.illuminant,
                                                     px_per_chip=fit.px_per_chip, chipset=self.chipset)
            elif fit.px_per_chip >= PATTERN_MIN_PX:
                pattern = pattern_log_evidence(rim, rim_valid, self.chipset, illuminant=match.illuminant)
        values = [d.value for d in self.chipset.denominations]
        top = values.index(match.value)
        held = None if previous is None else [values.index(v) if v in values else -1 for v in previous]
        emission = emission_log(self.chipset, px_per_chip=fit.px_per_chip, spots=self._spots)
        reading = read_side(labels, valid, emission, top=top, previous=held, hold=HOLD_SIDE, pattern=pattern,
                            learned=learned)
        rims = None if pattern is None else pattern_posterior(pattern)
        agree: list[float] = []
        for k, (chosen, posterior) in enumerate(zip(reading.chips, reading.posterior, strict=True)):
            seen = labels[k][valid[k]]
            if seen.size == 0:
                agree.append(0.0)
                continue
            agreeing = np.isin(seen, [chosen, *(self._spots[top] if chosen == top else [])])
            share = float(agreeing.mean())
            if agreeing.size - int(agreeing.sum()) == 1 and agreeing.size >= len(_SIDE_ANGLES_DEG):
                share = _LONE_DISSENT  # one sample of another colour among them all (a shadow, a seam)
            sure = min(posterior, share)
            # the rims' pattern, or the learned reader on its own, may tell a swapped pair apart
            told_apart = (rims is not None and rims[k, chosen] >= _SWAPPED_RIMS_SURE) or (
                learned is not None and math.exp(learned[k, chosen]) >= _SWAPPED_RIMS_SURE)
            if np.any(seen == chosen) and np.isin(seen, self._swapped[chosen]).any() and not told_apart:
                sure = min(sure, _SWAPPED_AGREEMENT)
            agree.append(sure)
        return tuple(values[i] for i in reading.chips), float(min(agree))


def _cut_sides(found: StackEvidence, camera: TableCamera) -> tuple[int, ...]:
    """The sides at the base's end of `found`'s box that the box-side reader read LOOSE_SIDE_SIGMA_PX or more off:
    where the box is cut short of its stack's base."""
    sides = found.learned
    if sides is None:
        return ()
    return tuple(k for k in base_end_sides(camera, found.box) if sides.sigma_px[k] >= LOOSE_SIDE_SIGMA_PX)


def _cut_short(found: StackEvidence, longer: Box, camera: TableCamera) -> bool:
    """Whether `longer` runs on past a side of `found`'s box where the box is cut (`_cut_sides`)."""
    return any(OUTWARD[k] * (longer[k] - found.box[k]) > 0.0 for k in _cut_sides(found, camera))


def top_right(score: float) -> float:
    """How likely a top chip's value read with a camera is right, from its colour match's score (`TOP_RIGHT`)."""
    knots, right = zip(*TOP_RIGHT, strict=True)
    return float(np.interp(score, knots, right))


def _translation(dx: float, dy: float) -> FloatArray:
    return np.array([[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]])


def _other_heights(camera: TableCamera) -> list[float]:
    """Where a camera whose height was assumed may hang instead, every _HEIGHT_STEP_MM over CAMERA_HEIGHTS_MM (its
    own height aside); none for a camera whose height is known."""
    if not camera.height_assumed:
        return []
    low, high = CAMERA_HEIGHTS_MM
    own = float(camera.eye[2])
    heights = np.arange(low, high + 1e-6, _HEIGHT_STEP_MM)
    return [float(h) for h in heights if abs(h - own) > _HEIGHT_STEP_MM / 2.0]


def _sample(image: Image, pixels: FloatArray) -> tuple[Bgr, npt.NDArray[np.bool_]]:
    """Bilinear colours (N, 3) at pixel points (N, 2) and whether each lies inside the image."""
    height, width = image.shape[:2]
    inside = ((pixels[:, 0] >= 0) & (pixels[:, 0] <= width - 1) & (pixels[:, 1] >= 0)
              & (pixels[:, 1] <= height - 1))
    grid = pixels.astype(np.float32).reshape(-1, 1, 2)
    values = cv2.remap(image, grid[..., 0], grid[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(values, dtype=np.float64).reshape(-1, 3), inside


def _map(h: FloatArray, points: FloatArray) -> FloatArray:
    pts = np.hstack([points, np.ones((len(points), 1))]) @ h.T
    result: FloatArray = pts[:, :2] / pts[:, 2:3]
    return result


def _periodic_choice(seen: list[tuple[ColourMatch, float]], best: ColourMatch) -> ColourMatch:
    """Of the colour matches of a box's candidate discs, each with its rim's periodicity (the largest share of the
    rim's angular variation at one spot count, `TopColours.spot_power`), the best fitting, unless its rim shows no
    period (under `_APERIODIC_RIM`) while a disc whose rim does (`_PERIODIC_RIM` or more) fits within
    `_PERIODIC_FIT_RATIO` times its error and under `_PERIODIC_MAX_ERROR`: a disc too small for the chip samples its
    inlay and body as two rings, which fit the inverse chip (another club's blue chip with white spots and a large
    grey inlay read as our white chip with blue spots), and the chip's own rim shows its spots."""
    periodicity = next(p for match, p in seen if match is best)
    if periodicity >= _APERIODIC_RIM:
        return best
    periodic = [match for match, p in seen if p >= _PERIODIC_RIM
                and match.error <= min(_PERIODIC_FIT_RATIO * best.error, _PERIODIC_MAX_ERROR)]
    return min(periodic, key=lambda match: match.error) if periodic else best


def rim_periodicity(image: Image, disc_to_image: FloatArray, offsets: FloatArray, *, radius_mm: float,
                    spot_counts: Sequence[int]) -> FloatArray:
    """(P,) for the top disc moved by each of `offsets` (P, 2 px), how periodic its rim's colours are round it: the
    largest share of their angular variation at one of `spot_counts` (as `TopColours.spot_power`, on the mean of
    the rim's rings; one sampling of the image for all P)."""
    angles = np.arange(_ANGLES) * 2.0 * math.pi / _ANGLES
    radii = np.array(_OUTER) * radius_mm
    ring = np.stack([np.cos(angles)[None, :] * radii[:, None], np.sin(angles)[None, :] * radii[:, None]], axis=-1)
    pixels = (_map(disc_to_image, ring.reshape(-1, 2))[None] + np.asarray(offsets)[:, None, :]).astype(np.float32)
    sampled = cv2.remap(image, pixels[..., 0], pixels[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    profile = np.asarray(sampled, dtype=np.float64).reshape(len(pixels), len(radii), _ANGLES, 3).mean(axis=1)
    profile -= profile.mean(axis=1, keepdims=True)
    power = (np.abs(np.fft.rfft(profile, axis=1)) ** 2).sum(axis=2)
    total = power[:, 1:17].sum(axis=1) + 1e-9
    result: FloatArray = power[:, list(spot_counts)].max(axis=1) / total
    return result


def top_colours(image: Image, disc_to_image: FloatArray, *, radius_mm: float,
                within: Box | None = None, sector: tuple[float, float] | None = None) -> TopColours | None:
    """Body and spot colours of a chip's top disc (None when too little of it is in the image, or `within` the
    chip's box: what lies outside the box is not the chip); with a `sector` (centre angle and half width, radians
    round the disc), of that part of it alone."""
    angles = np.arange(_ANGLES) * 2.0 * math.pi / _ANGLES
    radii = np.array(_INNER + _OUTER) * radius_mm
    ring = np.stack([np.cos(angles)[None, :] * radii[:, None], np.sin(angles)[None, :] * radii[:, None]], axis=-1)
    pixels = _map(disc_to_image, ring.reshape(-1, 2))
    colours, inside = _sample(image, pixels)
    if within is not None:
        x1, y1, x2, y2 = within
        m = _WITHIN_MARGIN_PX
        inside &= ((pixels[:, 0] >= x1 - m) & (pixels[:, 0] <= x2 - 1.0 + m) & (pixels[:, 1] >= y1 - m)
                   & (pixels[:, 1] <= y2 - 1.0 + m))
    size = inside.size
    if sector is not None:
        centre, half = sector
        off = np.abs((np.tile(angles, len(radii)) - centre + math.pi) % (2.0 * math.pi) - math.pi)
        inside &= off <= half
        size = int((off <= half).sum())
    if inside.sum() < _MIN_INSIDE * size:
        return None
    data = colours[inside].astype(np.float32)
    labels = two_means(data)
    major = int(np.bincount(labels, minlength=2).argmax())
    body = np.median(data[labels == major], axis=0).astype(np.float64)
    spot = np.median(data[labels != major], axis=0).astype(np.float64) if np.any(labels != major) else body
    outer = colours.reshape(len(radii), _ANGLES, 3)[len(_INNER):]
    profile = np.linalg.norm(outer - body[None, None, :], axis=2).mean(axis=0)
    power = np.abs(np.fft.rfft(profile - profile.mean())) ** 2
    total = float(power[1:17].sum()) + 1e-9
    spot_power = {n: float(power[n]) / total for n in _SPOT_COUNTS}
    points = _map(disc_to_image, np.array([[0.0, 0.0], [radius_mm, 0.0], [0.0, radius_mm]]))
    diameter_px = 2.0 * float(np.linalg.norm(points[1:] - points[0], axis=1).mean())
    return TopColours(body=body, spot=spot, mean=data.mean(axis=0).astype(np.float64), spot_power=spot_power,
                      samples=int(inside.sum()), diameter_px=diameter_px)


def side_colours(image: Image, camera: TableCamera, fit: StackFit, *, radius_mm: float, thickness_mm: float,
                 angles_deg: Sequence[float] = _SIDE_ANGLES_DEG,
                 lean: bool = True) -> tuple[Bgr, npt.NDArray[np.bool_]]:
    """(chips - 1, lines, 3) colours on the side facing the camera, at each lower chip's mid-height, on lines
    `angles_deg` round the rim from the side facing the camera. Where the top was seen (`fit.top_px`) off the point
    straight over the base, each chip k of n is moved that way by k / (n - 1) of it, as a sloppy stack's chips lie:
    across the stack's axis in the image always, along it only where the side is wide enough for its seams
    (`chips_seams.MIN_PX_PER_CHIP`; on thinner sides the silhouette's offset along the axis is the count's, and its
    bias, ~1 px on upright stacks, is half a chip there). Session 40, dev seed 40202 (3840x2160, 30 frames,
    `benchmarks/chips.py`), chips of stacks counted right read right: detector boxes, camera height given, 93.3 ->
    94.1 % of ~1,470 (across the axis only: 94.0 %; the whole lean everywhere: 94.2 %, but an upright stack's two-pixel
    side then lost its sure reading)."""
    heights: FloatArray = (np.arange(fit.count - 1, dtype=np.float64) + 0.5) * thickness_mm
    points = side_points(camera, fit.base_mm, radius_mm=radius_mm, angles_deg=angles_deg, heights_mm=heights)
    pixels = camera.project(points.reshape(-1, 3)).reshape(*points.shape[:2], 2)
    if lean and fit.top_px is not None and fit.count > 1:  # the top seen off its base: the chips lean with it
        ends = camera.project(np.array([[*fit.base_mm, 0.0], [*fit.base_mm, fit.count * thickness_mm]]))
        axis = (ends[1] - ends[0]) / max(float(np.linalg.norm(ends[1] - ends[0])), 1e-9)
        off = np.asarray(fit.top_px, dtype=np.float64) - ends[1]
        if fit.px_per_chip < MIN_PX_PER_CHIP:  # along the axis a lean is the count's to explain, unless seams are
            off = off - float(off @ axis) * axis  # read: the silhouette's top lies ~1 px up an upright stack
        pixels = pixels + (np.arange(fit.count - 1) / (fit.count - 1))[:, None, None] * off[None, None, :]
    colours, inside = _sample(image, pixels.reshape(-1, 2))
    return colours.reshape(*points.shape[:2], 3), inside.reshape(points.shape[:2])
