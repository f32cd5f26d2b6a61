"""A plain white chip boxed as the dealer button is counted as a chip; the button stays a button."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from floorman.vision.button_or_chip import buttons_as_chips, print_span
from floorman.vision.detections import Detections

NAMES = {0: "card_face", 1: "card_back", 2: "chip", 3: "dealer_button", 4: "hand"}
CHIP, BUTTON = 2, 3
RADIUS = 50


def white_disc(image: np.ndarray, centre: tuple[int, int], text: str, *, radius: int = RADIUS) -> None:
    cv2.circle(image, centre, radius, (236, 238, 238), -1, cv2.LINE_AA)
    cv2.circle(image, centre, int(radius * 0.8), (150, 150, 210), 2, cv2.LINE_AA)  # a printed ring
    scale = radius / 50.0 * (1.0 if len(text) <= 3 else 0.75)
    (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, scale, 2)
    cv2.putText(image, text, (centre[0] - w // 2, centre[1] + h // 2), cv2.FONT_HERSHEY_DUPLEX, scale, (25, 25, 25),
                2, cv2.LINE_AA)


def table() -> tuple[np.ndarray, list[tuple[float, float, float, float]]]:
    """Light wood with three red chips (the frame's chip size) at the top."""
    image = np.full((600, 900, 3), (150, 180, 205), np.uint8)
    chips = []
    for x in (100, 250, 400):
        cv2.circle(image, (x, 100), RADIUS, (40, 30, 190), -1, cv2.LINE_AA)
        chips.append((x - RADIUS - 1.0, 100 - RADIUS - 1.0, x + RADIUS + 1.0, 100 + RADIUS + 1.0))
    return image, chips


def detections(boxes: list[tuple[float, float, float, float]], classes: list[int]) -> Detections:
    return Detections(xyxy=np.array(boxes, np.float32), confidence=np.full(len(boxes), 0.8, np.float32),
                      class_id=np.array(classes, np.int64))


def square(centre: tuple[int, int], radius: int = RADIUS) -> tuple[float, float, float, float]:
    x, y = centre
    return x - radius - 1.0, y - radius - 1.0, x + radius + 1.0, y + radius + 1.0


def test_a_chips_value_is_short_and_the_buttons_word_long() -> None:
    image, _ = table()
    white_disc(image, (200, 350), "25")
    white_disc(image, (500, 350), "DEALER")
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    chip, button = print_span(gray, square((200, 350))), print_span(gray, square((500, 350)))
    assert chip is not None and button is not None
    assert chip < 0.75 < button
    assert print_span(gray, square((750, 450), 40)) is None  # bare wood: no print


def test_a_white_chip_boxed_as_the_button_is_a_chip_and_the_button_stays() -> None:
    image, chips = table()
    white_disc(image, (200, 350), "25")
    white_disc(image, (500, 350), "DEALER")
    white_disc(image, (750, 350), "DEALER", radius=78)  # a 60 mm button beside 39 mm chips
    found = detections([*chips, square((200, 350)), square((500, 350)), square((750, 350), 78)],
                       [CHIP, CHIP, CHIP, BUTTON, BUTTON, BUTTON])
    read = buttons_as_chips(image, found, names=NAMES)
    assert read.class_id.tolist() == [CHIP, CHIP, CHIP, CHIP, BUTTON, BUTTON]
    assert np.array_equal(read.xyxy, found.xyxy)


def test_a_chip_boxed_twice_keeps_its_chip_box_only() -> None:
    image, chips = table()
    white_disc(image, (200, 350), "25")
    found = detections([*chips, square((200, 350)), square((200, 350))], [CHIP, CHIP, CHIP, CHIP, BUTTON])
    read = buttons_as_chips(image, found, names=NAMES)
    assert read.class_id.tolist() == [CHIP] * 4


@pytest.mark.parametrize("case", ["border", "few chips", "no chip class"])
def test_what_cannot_be_told_is_left_as_detected(case: str) -> None:
    image, chips = table()
    white_disc(image, (RADIUS - 10, 400), "25")  # cut by the image's left border
    white_disc(image, (300, 400), "25")
    boxes = [(0.0, 400 - RADIUS - 1.0, RADIUS - 10 + RADIUS + 1.0, 400 + RADIUS + 1.0), square((300, 400))]
    names = dict(NAMES)
    if case == "few chips":
        chips = chips[:2]
    if case == "no chip class":
        names.pop(CHIP)
    found = detections([*chips, *boxes], [CHIP] * len(chips) + [BUTTON, BUTTON])
    read = buttons_as_chips(image, found, names=names)
    expected = [BUTTON, CHIP] if case == "border" else [BUTTON, BUTTON]
    assert read.class_id.tolist()[len(chips):] == expected
