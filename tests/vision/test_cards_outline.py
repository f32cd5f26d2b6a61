"""Card outlines from straight edges (`cards_outline.edge_quads`, `line_quads`) and how `recognise_card` uses
them: a card merged in colour with the card under it, in a detector box off its centre; a card with one end under
another card; a card seen at a slant (`line_quads`); the classifier unsure because a chip hides pips, or fooled
by an outline spanning two cards; a card cut by the image frame (`frame_quads`)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from floorman.core.cards import Card
from floorman.datasets.textures import N_DECK_DESIGNS, card_face
from floorman.vision import cards
from floorman.vision.cards import MIN_CONFIDENCE, order_corners, recognise_card
from floorman.vision.cards_cnn import CardClassifier, CnnReading
from floorman.vision.cards_matcher import IndexReading
from floorman.vision.cards_outline import edge_quads, frame_quads, line_quads
from tests.vision.test_cards import table


def paste_card(image: np.ndarray, card: str, *, design: int, angle_deg: float, centre: tuple[float, float],
               px_per_mm: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """Paste `card` turned by `angle_deg` with its middle at `centre`; returns its corners and its mask."""
    face = card_face(Card.parse(card), design=design, px_per_mm=px_per_mm)
    h, w = face.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle_deg, 1.0)
    matrix[:, 2] += (centre[0] - w / 2.0, centre[1] - h / 2.0)
    warped = cv2.warpAffine(np.ascontiguousarray(face), matrix, (image.shape[1], image.shape[0]),
                            flags=cv2.INTER_LINEAR)
    alpha = warped[..., 3:4].astype(np.float32) / 255.0
    image[:] = (warped[..., :3] * alpha + image * (1.0 - alpha)).astype(np.uint8)
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64) @ matrix[:, :2].T + matrix[:, 2]
    return corners, alpha[..., 0] > 0.5


def outline_error(quad: np.ndarray, truth: np.ndarray) -> float:
    """The largest corner distance between two outlines (matched in any turn), a share of the card's width."""
    truth = order_corners(truth.astype(np.float32))
    ordered = order_corners(np.asarray(quad, dtype=np.float32))
    width = min(np.linalg.norm(truth[1] - truth[0]), np.linalg.norm(truth[2] - truth[1]))
    return min(float(np.abs(np.roll(ordered, k, axis=0) - truth).max()) for k in range(4)) / float(width)


def merged_scene(card: str, under: str, *, design: int, angles: tuple[float, float],
                 offset: float) -> tuple[np.ndarray, tuple[float, float, float, float], np.ndarray]:
    """`card` lying over `under` (same paper colour: one region) on felt; a detector box around `card` that
    is off its centre (cut 2 % short on the left, 10 % long on the right, 9 % long at the top)."""
    image = table(seed=design, size=300)
    paste_card(image, under, design=design, angle_deg=angles[1], centre=(150.0 - offset, 150.0))
    corners, _ = paste_card(image, card, design=design, angle_deg=angles[0], centre=(150.0, 150.0))
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    size = hi - lo
    box = (lo[0] - 0.02 * size[0], lo[1] - 0.09 * size[1], hi[0] + 0.1 * size[0], hi[1])
    return image, box, corners


MERGED = [("5H", "8C", (40.0, 10.0), 60.0), ("7D", "9S", (25.0, -5.0), 55.0)]


@pytest.mark.parametrize(("card", "under", "angles", "offset"), MERGED)
def test_edge_quads_find_a_card_merged_with_the_card_under_it(card: str, under: str, angles: tuple[float, float],
                                                               offset: float) -> None:
    image, box, corners = merged_scene(card, under, design=0, angles=angles, offset=offset)
    pixel_box = (int(box[0]), int(box[1]), int(np.ceil(box[2])), int(np.ceil(box[3])))
    found = edge_quads(image, pixel_box)
    assert found
    assert min(outline_error(q.corners, corners) for q in found) < 0.07
    colour_outlines = [c for q in cards.find_card_quads(image, pixel_box) for c in cards.quad_candidates(q)]
    assert min(outline_error(q, corners) for q in colour_outlines + cards.box_quads(pixel_box)) > 0.08


@pytest.mark.parametrize("design", range(N_DECK_DESIGNS))
@pytest.mark.parametrize(("card", "under", "angles", "offset"), MERGED)
def test_reads_a_card_merged_with_the_card_under_it_from_an_off_centre_box(
        design: int, card: str, under: str, angles: tuple[float, float], offset: float) -> None:
    image, box, _ = merged_scene(card, under, design=design, angles=angles, offset=offset)
    reading = recognise_card(image, box=box)
    assert reading.card == card
    assert reading.confidence >= MIN_CONFIDENCE


def test_edge_quads_complete_a_card_with_one_end_under_another_card() -> None:
    image = table(seed=0, size=320)
    corners, covered = paste_card(image, "9H", design=0, angle_deg=20.0, centre=(160.0, 170.0))
    _, over = paste_card(image, "KS", design=1, angle_deg=70.0, centre=(160.0, 90.0))
    visible = covered & ~over
    assert 0.5 < visible.sum() / covered.sum() < 0.75
    ys, xs = np.nonzero(visible)
    found = edge_quads(image, (int(xs.min()) - 5, int(ys.min()) - 5, int(xs.max()) + 6, int(ys.max()) + 6))
    completed = [q for q in found if not q.complete]
    assert completed
    assert min(outline_error(q.corners, corners) for q in completed) < 0.05


class StubClassifier(CardClassifier):
    """Reads every outline as `card` at `confidence` (a classifier fooled by what covers the pips)."""

    def __init__(self, card: str, confidence: float) -> None:  # no model: nothing of the parent is used
        self.card, self.confidence, self.outlines_read = card, confidence, 0

    def read(self, _image: np.ndarray, outlines: list[np.ndarray]) -> list[CnnReading]:
        self.outlines_read += len(outlines)
        return [CnnReading(card=self.card, confidence=self.confidence, face=1.0) for _ in outlines]


def test_the_edge_search_runs_only_when_the_classifier_is_unsure(monkeypatch: pytest.MonkeyPatch) -> None:
    image = table(seed=1, size=300)
    corners, _ = paste_card(image, "QC", design=2, angle_deg=15.0, centre=(150.0, 150.0))
    calls: list[tuple[int, int, int, int]] = []

    def counting(image_bgr: np.ndarray, box: tuple[int, int, int, int], *, limit: int = 4) -> list[object]:
        calls.append(box)
        return edge_quads(image_bgr, box, limit=limit)

    monkeypatch.setattr(cards, "edge_quads", counting)
    box = (*(corners.min(axis=0) - 8.0), *(corners.max(axis=0) + 8.0))
    sure = recognise_card(image, box=box, classifier=StubClassifier("QC", 0.97))
    assert (sure.card, sure.source, len(calls)) == ("QC", "classifier", 0)
    unsure = StubClassifier("QC", 0.6)
    recognise_card(image, box=box, classifier=unsure)
    assert len(calls) == 1


@pytest.mark.parametrize(("classifier_says", "source"), [("3D", "index"), ("2H", "index"), ("3H", "classifier")])
def test_index_corners_outvote_an_unsure_classifier_on_rank_or_suit_alone(classifier_says: str, source: str) -> None:
    """Both index corners read 2D; a classifier at 0.6 saying 3D (it counted a chip as a pip) is outvoted, and
    since session 9 one saying 2H (on a card this wide, 159 px, two index pips agreeing are clear; a red chip made
    the classifier read AD for an AH); one saying 3H, differing in both, is not (three corners would be needed)."""
    image = table(seed=3, size=300)
    corners, _ = paste_card(image, "2D", design=0, angle_deg=10.0, centre=(150.0, 150.0), px_per_mm=2.5)
    cv2.circle(image, (150, 150), 30, (40, 40, 170), thickness=-1)
    box = (*(corners.min(axis=0) - 8.0), *(corners.max(axis=0) + 8.0))
    reading = recognise_card(image, box=box, classifier=StubClassifier(classifier_says, 0.6))
    assert reading.source == source
    assert (reading.card == "2D") == (source == "index")


@pytest.mark.parametrize(("classifier_says", "index_says", "index_confidence", "source"), [
    ("8D", "7D", 0.63, "index"), ("8D", "7D", 0.5, "classifier"), ("8S", "7D", 0.7, "classifier")])
def test_one_index_corner_outvotes_the_classifier_on_rank_only(classifier_says: str, index_says: str,
                                                                index_confidence: float, source: str) -> None:
    """A covered card shows one index corner: read at 0.6 or more, it outvotes a classifier at 0.8 that differs
    in rank only (it counted a pip too many, or too few, around what covers the card), not one that differs in
    suit."""
    quad = np.array([[0, 0], [63, 0], [63, 88], [0, 88]], dtype=np.float32)
    index = IndexReading(card=index_says, confidence=index_confidence, corners_read=1, corners_agreeing=1)
    reading = cards._combine((CnnReading(card=classifier_says, confidence=0.8, face=1.0), quad), index, quad)
    assert (reading.source, reading.card) == (source, index_says if source == "index" else classifier_says)


def cut_scene(*, side: int, angle_deg: float) -> tuple[np.ndarray, tuple[int, int, int, int], np.ndarray]:
    """A 7 of clubs on a light-wood table, a third of it past side `side` (0 left .. 3 bottom) of the image,
    and its detector box (5 % margin), clipped to the image."""
    big = table(seed=4, size=600, colour=(150, 194, 222))
    corners, _ = paste_card(big, "7C", design=1, angle_deg=angle_deg, centre=(300.0, 300.0))
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    cut = lo + (hi - lo) * 0.35  # the image keeps 65 % of the card's bounding box
    x0, y0, x1, y1 = 0, 0, 600, 600
    if side == 0:
        x0 = round(cut[0])
    elif side == 1:
        y0 = round(cut[1])
    elif side == 2:
        x1 = round(hi[0] - (cut[0] - lo[0]))
    else:
        y1 = round(hi[1] - (cut[1] - lo[1]))
    image = np.ascontiguousarray(big[y0:y1, x0:x1])
    corners = corners - (x0, y0)
    margin = 0.05 * (hi - lo)
    box_lo = np.maximum(corners.min(axis=0) - margin, 0)
    box_hi = np.minimum(corners.max(axis=0) + margin, image.shape[1::-1])
    return image, (int(box_lo[0]), int(box_lo[1]), int(box_hi[0]), int(box_hi[1])), corners


@pytest.mark.parametrize("side", range(4))
def test_frame_quads_run_a_card_cut_by_the_frame_on_past_it(side: int) -> None:
    image, box, corners = cut_scene(side=side, angle_deg=28.0)
    found = frame_quads(image, box)
    assert found
    assert min(outline_error(q, corners) for q in found) < 0.12
    inner = (box[0] + 30, box[1] + 30, box[2] - 30, box[3] - 30)
    assert frame_quads(image, inner) == []  # a box away from the frame: no card cut by it


@pytest.mark.parametrize(("side", "angle"), [(3, -35.0), (0, 60.0)])
def test_reads_a_card_cut_by_the_frame(side: int, angle: float) -> None:
    image, box, _ = cut_scene(side=side, angle_deg=angle)
    reading = recognise_card(image, box=box)
    assert reading.card == "7C"


SLANTED = [("5H", "8C", 10.0), ("7D", "9S", -15.0), ("QS", "3H", 20.0)]


def slanted_scene(card: str, under: str, *, design: int,
                  angle_deg: float) -> tuple[np.ndarray, tuple[int, int, int, int], np.ndarray]:
    """`card` over `under` on felt seen by a low camera (the table squeezed to 0.75 in depth and sheared: the
    card is a parallelogram with no right angle, nearly square), and its detector box (5 % margin)."""
    image = table(seed=design, size=360)
    paste_card(image, under, design=design, angle_deg=angle_deg - 30.0, centre=(140.0, 200.0))
    corners, _ = paste_card(image, card, design=design, angle_deg=angle_deg, centre=(200.0, 180.0))
    slant = np.array([[1.0, 0.2, -30.0], [0.0, 0.75, 45.0]])
    seen = cv2.warpAffine(image, slant, (360, 360), borderMode=cv2.BORDER_REPLICATE)
    truth = corners @ slant[:, :2].T + slant[:, 2]
    lo, hi = truth.min(axis=0), truth.max(axis=0)
    margin = 0.05 * (hi - lo)
    return seen, (int(lo[0] - margin[0]), int(lo[1] - margin[1]), int(hi[0] + margin[0]) + 1,
                  int(hi[1] + margin[1]) + 1), truth


@pytest.mark.parametrize(("card", "under", "angle"), SLANTED)
def test_line_quads_find_a_card_seen_at_a_slant(card: str, under: str, angle: float) -> None:
    image, box, truth = slanted_scene(card, under, design=0, angle_deg=angle)
    found = line_quads(image, box)
    assert min(outline_error(q.corners, truth) for q in found) < 0.05
    rectangles = [q.corners for q in edge_quads(image, box)] + cards.box_quads(box)
    rectangles += [c for q in cards.find_card_quads(image, box) for c in cards.quad_candidates(q)]
    assert min(outline_error(q, truth) for q in rectangles) > 0.1


@pytest.mark.parametrize("design", [0, 3])
@pytest.mark.parametrize(("card", "under", "angle"), SLANTED)
def test_reads_a_card_seen_at_a_slant(design: int, card: str, under: str, angle: float) -> None:
    image, box, _ = slanted_scene(card, under, design=design, angle_deg=angle)
    reading = recognise_card(image, box=box)
    assert reading.card == card
    assert reading.confidence >= MIN_CONFIDENCE


class ByOutlineClassifier(StubClassifier):
    """Reads the first outline as `first` at 0.95 (an outline spanning the card and its neighbour), every other
    as `card` at `confidence`."""

    def __init__(self, card: str, confidence: float, *, first: str) -> None:
        super().__init__(card, confidence)
        self.first = first

    def read(self, image: np.ndarray, outlines: list[np.ndarray]) -> list[CnnReading]:
        readings = super().read(image, outlines)
        return [CnnReading(card=self.first, confidence=0.95, face=1.0), *readings[1:]] if readings else []


@pytest.mark.parametrize(("others", "confidence", "expected"), [(3, 0.8, "4D"), (1, 0.8, "6D"), (3, 0.5, "6D")])
def test_the_outlines_vote_for_a_card(others: int, confidence: float, expected: str) -> None:
    image = table(seed=5, size=200)
    square = np.array([[60, 40], [130, 40], [130, 140], [60, 140]], dtype=np.float32)
    outlines = [square + 2.0 * i for i in range(others + 1)]
    net = ByOutlineClassifier("4D", confidence, first="6D")
    chosen = cards._classify(net, image, outlines)
    assert chosen is not None
    assert chosen[0].card == expected
    assert (chosen[1] is outlines[0]) == (expected == "6D")


def test_the_index_matcher_reads_the_colour_outlines_of_the_chosen_card_only() -> None:
    chosen = np.array([[100, 100], [163, 100], [163, 189], [100, 189]], dtype=np.float32)
    near, merged = chosen + 3.0, chosen.copy()
    merged[1:3, 0] += 60.0  # the card and its neighbour as one region
    assert [id(q) for q in cards._same_card([near, merged], chosen)] == [id(near), id(chosen)]


def test_nearly_square_outlines_are_read_both_ways() -> None:
    """A card foreshortened to nearly square by a low camera: which sides are its short ones is not clear, so
    the outline is offered turned a quarter too; a card-shaped one is not."""
    square = np.array([[0, 0], [100, 0], [100, 108], [0, 108]], dtype=np.float32)
    card = np.array([[0, 0], [100, 0], [100, 140], [0, 140]], dtype=np.float32)
    turned = cards._turned_a_quarter([square, card])
    assert len(turned) == 1
    assert np.array_equal(turned[0], np.roll(square, -1, axis=0))


def covered_scene(*, side: int, angle_deg: float,
                  px_per_mm: float = 2.0) -> tuple[np.ndarray, tuple[int, int, int, int], np.ndarray]:
    """A 7 of clubs on a light-wood table with the 30 % of its bounding box past one line (beyond side `side`,
    0 left .. 3 bottom) under a hand's flat colour, and a detector box around its visible part only (5 %
    margin), as a detector draws it."""
    image = table(seed=4, size=600, colour=(150, 194, 222))
    corners, _ = paste_card(image, "7C", design=1, angle_deg=angle_deg, centre=(300.0, 300.0), px_per_mm=px_per_mm)
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    axis = side % 2
    seen_lo, seen_hi = lo.copy(), hi.copy()
    if side < 2:
        seen_lo[axis] = lo[axis] + 0.3 * (hi[axis] - lo[axis])
    else:
        seen_hi[axis] = hi[axis] - 0.3 * (hi[axis] - lo[axis])
    along = np.indices(image.shape[:2])[1 - axis]
    hidden = along < seen_lo[axis] if side < 2 else along > seen_hi[axis]
    hand = np.random.default_rng(side).normal((70.0, 100.0, 160.0), 4.0, size=image.shape)
    image[hidden] = np.clip(hand, 0, 255).astype(np.uint8)[hidden]
    margin = 0.05 * (seen_hi - seen_lo)
    box = np.concatenate([seen_lo - margin, seen_hi + margin])
    return image, (int(box[0]), int(box[1]), int(box[2]), int(box[3])), corners


@pytest.mark.parametrize("side", range(4))
def test_box_cut_quads_run_a_covered_card_on_past_its_box(side: int) -> None:
    """Since session 9: a box around the visible part of a card (a hand over the rest; 96041 frame 69, a 10S)
    is taken for a frame cutting the card, side by side (`_box_cut_quads`); one of the outlines is the card."""
    image, box, corners = covered_scene(side=side, angle_deg=28.0)
    found = cards._box_cut_quads(image, box)
    assert min(outline_error(q, corners) for q in found) < 0.08
    assert min(outline_error(q, corners) for q in cards.box_quads(box)) > 0.15  # the box's own fits are not


def test_the_box_cut_search_runs_only_when_the_edge_search_leaves_the_classifier_unsure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    image, box, _ = covered_scene(side=1, angle_deg=28.0)
    calls: list[tuple[int, int, int, int]] = []

    def counting(_image: np.ndarray, pixel_box: tuple[int, int, int, int]) -> list[np.ndarray]:
        calls.append(pixel_box)
        return []

    monkeypatch.setattr(cards, "_box_cut_quads", counting)
    recognise_card(image, box=box, classifier=StubClassifier("7C", 0.95))
    assert calls == []
    recognise_card(image, box=box, classifier=StubClassifier("7C", 0.6))
    assert len(calls) == 1
    small, small_box, _ = covered_scene(side=1, angle_deg=28.0, px_per_mm=0.8)  # 51 px wide
    recognise_card(small, box=small_box, classifier=StubClassifier("7C", 0.6))
    assert len(calls) == 1  # under `_CUT_MIN_PX`: the outlines past the box swayed small cards' suits either way


class ReadsTheseApart:
    """A stand-in classifier: the outlines among `these` read `apart`, all others `others`."""

    def __init__(self, these: list[np.ndarray], *, others: tuple[str, float], apart: tuple[str, float]) -> None:
        self.these, self.others, self.apart = these, others, apart

    def read(self, _image: np.ndarray, outlines: list[np.ndarray]) -> list[CnnReading]:
        out = []
        for outline in outlines:
            card, confidence = self.apart if any(np.allclose(outline, q) for q in self.these) else self.others
            out.append(CnnReading(card=card, confidence=confidence, face=1.0))
        return out


@pytest.mark.parametrize("cut_reads", [("7C", 0.95), ("6C", 0.8)])
def test_the_outlines_past_the_box_count_when_they_read_another_card(cut_reads: tuple[str, float]) -> None:
    """The outlines run past the box (`_box_cut_quads`) choose the reading when they make the classifier read
    another card; not when they only add votes to the card it read unsure from the other outlines."""
    image, box, _ = covered_scene(side=1, angle_deg=28.0)
    cut = cards._box_cut_quads(image, box)
    net = ReadsTheseApart(cut, others=("6C", 0.6), apart=cut_reads)
    candidates = [c for q in cards.find_card_quads(image, box) for c in cards.quad_candidates(q)]
    learned = cards._classify_in_stages(net, image, candidates, box=box)
    assert learned is not None
    assert learned[0].card == cut_reads[0]
    from_cut = any(np.allclose(learned[1], q) for q in cut)
    assert from_cut == (cut_reads[0] != "6C")
