"""Handmade event streams for the rules tests, in the order docs/events.md gives for each happening."""

from __future__ import annotations

from typing import Any

from floorman.core.chips import ChipCount, count_chips
from floorman.core.events import (
    BlindsLevel,
    ButtonMoved,
    CardDealt,
    ChipsPushed,
    Declaration,
    EventBase,
    HandZone,
    Shuffle,
    Tap,
    ZoneCards,
    ZoneChips,
)


class Stream:
    """Builds events with increasing seq, t and frame; keeps each seat's stack to emit zone_chips."""

    def __init__(self, *, table_id: str = "t1", stacks: dict[int, int] | None = None) -> None:
        self.table_id = table_id
        self.seq = 0
        self.stacks = dict(stacks or {})

    def _common(self) -> dict[str, Any]:
        common = {"table_id": self.table_id, "seq": self.seq, "t": self.seq * 0.5, "frame": self.seq * 15}
        self.seq += 1
        return common

    def level(self, small: int, big: int) -> list[EventBase]:
        return [BlindsLevel(**self._common(), level=1, small_blind=small, big_blind=big)]

    def button(self, seat: int) -> list[EventBase]:
        return [ButtonMoved(**self._common(), seat=seat)]

    def seat_stacks(self) -> list[EventBase]:
        return [self._stack(seat) for seat in sorted(self.stacks)]

    def _stack(self, seat: int, visible: float = 1.0) -> EventBase:
        value = self.stacks[seat]
        chips = (ChipCount(denom=25, count=value // 25),) if value >= 25 else ()
        return ZoneChips(**self._common(), zone=f"stack_{seat}", seat=seat, chips=chips, value=value,
                         visible_fraction=visible)

    def shuffle(self) -> list[EventBase]:
        return [Shuffle(**self._common())]

    def deal(self, seats: list[int]) -> list[EventBase]:
        events: list[EventBase] = []
        for _ in range(2):
            for seat in seats:
                events.append(CardDealt(**self._common(), to_zone=f"hole_{seat}", seat=seat))
        return events

    def board(self, *cards: str) -> list[EventBase]:
        events: list[EventBase] = [CardDealt(**self._common(), to_zone="muck")]
        events += [CardDealt(**self._common(), to_zone="board", face_up=True, card=card) for card in cards]
        return events

    def push(self, seat: int, *chips: int, trip: int = 1) -> list[EventBase]:
        """hand_zone enter, zone_chips(stack) after pick-up, hand_zone leave, chips_pushed."""
        value = sum(chips)
        self.stacks[seat] -= value
        common = self._common()
        return [
            HandZone(**common, zone=f"stack_{seat}", seat=seat, action="enter"),
            self._stack(seat),
            HandZone(**self._common(), zone=f"stack_{seat}", seat=seat, action="leave", holding="chips"),
            ChipsPushed(**self._common(), seat=seat, trip=trip, chips=count_chips(chips), value=value,
                        t_start=common["t"], landed_zone=f"bet_{seat}"),
        ]

    def tap(self, seat: int) -> list[EventBase]:
        return [Tap(**self._common(), seat=seat)]

    def fold(self, seat: int) -> list[EventBase]:
        return [HandZone(**self._common(), zone=f"hole_{seat}", seat=seat, action="enter"),
                ZoneCards(**self._common(), zone=f"hole_{seat}", seat=seat),
                ZoneCards(**self._common(), zone="muck", face_down=2)]

    def declare(self, seat: int, word: str, amount: int | None = None) -> list[EventBase]:
        return [Declaration.model_validate({**self._common(), "seat": seat, "declaration": word, "amount": amount})]
