from __future__ import annotations

import pytest

from floorman.core.cards import Card, Rank, Suit, full_deck


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10H", Card(Rank.TEN, Suit.HEARTS)),
        ("TH", Card(Rank.TEN, Suit.HEARTS)),
        ("ah", Card(Rank.ACE, Suit.HEARTS)),
        (" 2c ", Card(Rank.TWO, Suit.CLUBS)),
        ("Q\u2660", Card(Rank.QUEEN, Suit.SPADES)),
        ("kd", Card(Rank.KING, Suit.DIAMONDS)),
    ],
)
def test_parse(text: str, expected: Card) -> None:
    assert Card.parse(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected a card string"),
        ("H", "expected a card string"),
        ("1H", "expected a rank"),
        ("11S", "expected a rank"),
        ("10X", "expected a suit"),
        ("AHH", "expected a rank"),
    ],
)
def test_parse_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Card.parse(text)


def test_str_is_canonical_and_round_trips() -> None:
    deck = full_deck()
    assert len(deck) == 52
    assert len(set(deck)) == 52
    assert str(Card.parse("th")) == "10H"
    for card in deck:
        assert Card.parse(str(card)) == card
        assert Card.from_index(card.index) == card


def test_index_bounds() -> None:
    with pytest.raises(ValueError, match=r"0\.\.51"):
        Card.from_index(52)


def test_suit_properties() -> None:
    assert Suit.HEARTS.is_red and Suit.DIAMONDS.is_red
    assert not Suit.SPADES.is_red and not Suit.CLUBS.is_red
    order = sorted(Suit, key=lambda s: s.race_order, reverse=True)
    assert order == [Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS]
