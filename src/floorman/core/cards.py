"""Playing cards: ranks, suits, `Card.parse("10H")` and the 52-card deck."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Suit(enum.StrEnum):
    """The four suits. The value is the one-letter code used in card strings."""

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @property
    def symbol(self) -> str:
        return {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}[self.value]

    @property
    def is_red(self) -> bool:
        return self in (Suit.HEARTS, Suit.DIAMONDS)

    @property
    def race_order(self) -> int:
        """Chip-race tie-break order (000 rule 12-3, 003 rule 12-3): spades > hearts > diamonds > clubs."""
        return {"S": 4, "H": 3, "D": 2, "C": 1}[self.value]


class Rank(enum.IntEnum):
    """Ranks from two to ace; the value is the rank's strength (ace high)."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def code(self) -> str:
        """The rank as printed in a card string: 2..9, 10, J, Q, K, A."""
        return _RANK_CODES[self]

    @property
    def index_glyph(self) -> str:
        """The rank as printed in a card's corner index (10 is printed as '10')."""
        return _RANK_CODES[self]

    @property
    def is_court(self) -> bool:
        return self in (Rank.JACK, Rank.QUEEN, Rank.KING)

    @classmethod
    def parse(cls, text: str) -> Rank:
        key = text.strip().upper()
        if key == "T":
            key = "10"
        for rank, code in _RANK_CODES.items():
            if code == key:
                return rank
        raise ValueError(f"expected a rank among 2-10, J, Q, K, A (or T), got {text!r}")


_RANK_CODES: dict[Rank, str] = {
    Rank.TWO: "2",
    Rank.THREE: "3",
    Rank.FOUR: "4",
    Rank.FIVE: "5",
    Rank.SIX: "6",
    Rank.SEVEN: "7",
    Rank.EIGHT: "8",
    Rank.NINE: "9",
    Rank.TEN: "10",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
    Rank.ACE: "A",
}


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One playing card. `str(card)` gives the canonical string, e.g. ``"10H"`` or ``"AS"``."""

    rank: Rank
    suit: Suit

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``"10H"``, ``"TH"``, ``"ah"``, ``"Q♠"``: a rank then a suit letter or symbol."""
        if not isinstance(text, str):
            raise ValueError(f"expected a card string such as '10H', got {text!r}")
        stripped = text.strip()
        if len(stripped) < 2:
            raise ValueError(f"expected a card string such as '10H', got {text!r}")
        suit_part = stripped[-1]
        suit = _SUIT_BY_CHAR.get(suit_part.upper())
        if suit is None:
            raise ValueError(f"expected a suit among S, H, D, C in card {text!r}, got {suit_part!r}")
        try:
            rank = Rank.parse(stripped[:-1])
        except ValueError as exc:
            raise ValueError(f"invalid card {text!r}: {exc}") from None
        return cls(rank, suit)

    @property
    def index(self) -> int:
        """A stable 0..51 index: suits in S, H, D, C order, ranks 2..A within a suit."""
        return _SUITS.index(self.suit) * 13 + (self.rank - 2)

    @classmethod
    def from_index(cls, index: int) -> Card:
        if not 0 <= index < 52:
            raise ValueError(f"expected a card index in 0..51, got {index}")
        return cls(Rank(index % 13 + 2), _SUITS[index // 13])

    def __str__(self) -> str:
        return f"{self.rank.code}{self.suit.value}"

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"


_SUITS: tuple[Suit, ...] = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)
_SUIT_BY_CHAR: dict[str, Suit] = {s.value: s for s in Suit} | {s.symbol: s for s in Suit}


def full_deck() -> tuple[Card, ...]:
    """The 52 cards in index order."""
    return tuple(Card.from_index(i) for i in range(52))
