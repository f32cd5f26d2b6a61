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
    RailCrossing,
    RailDirection,
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
        self.t = 0.0
        self.stacks = dict(stacks or {})
        self.bets: dict[int, int] = {}
        self.pot = 0
        self.muck = 0

    def _common(self) -> dict[str, Any]:
        common = {"table_id": self.table_id, "seq": self.seq, "t": self.t, "frame": round(self.t * 30)}
        self.seq += 1
        self.t += 0.5
        return common

    def wait(self, seconds: float) -> list[EventBase]:
        """Let time pass (no event)."""
        self.t += seconds
        return []

    def level(self, small: int, big: int, *, ante: int = 0) -> list[EventBase]:
        return [BlindsLevel(**self._common(), level=1, small_blind=small, big_blind=big, ante=ante)]

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

    def push(self, seat: int, *chips: int, trip: int = 1, splash: bool = False, confidence: float = 1.0,
             leave: bool = False) -> list[EventBase]:
        """hand_zone enter, zone_chips(stack) after pick-up, hand_zone leave, chips_pushed (read as sure as
        `confidence`), zone_chips(bet or pot), and with `leave` the hand_zone(bet) leave that follows a push landed
        in the bet zone."""
        value = sum(chips)
        self.stacks[seat] -= value
        common = self._common()
        landed = "pot" if splash else f"bet_{seat}"
        events: list[EventBase] = [
            HandZone(**common, zone=f"stack_{seat}", seat=seat, action="enter"),
            self._stack(seat),
            HandZone(**self._common(), zone=f"stack_{seat}", seat=seat, action="leave", holding="chips"),
            ChipsPushed(**self._common(), seat=seat, trip=trip, chips=count_chips(chips), value=value,
                        t_start=common["t"], landed_zone=landed, confidence=confidence),
        ]
        if splash:
            self.pot += value
            events.append(self._zone("pot", None, self.pot))
        else:
            self.bets[seat] = self.bets.get(seat, 0) + value
            events.append(self._zone(f"bet_{seat}", seat, self.bets[seat]))
            if leave:
                events.append(HandZone(**self._common(), zone=f"bet_{seat}", seat=seat, action="leave"))
        return events

    def _zone(self, zone: str, seat: int | None, value: int, *, unit: int = 25) -> EventBase:
        chips = (ChipCount(denom=unit, count=value // unit),) if value >= unit else ()
        return ZoneChips(**self._common(), zone=zone, seat=seat, chips=chips, value=value)

    def gather(self) -> list[EventBase]:
        """Per bet zone: the dealer's hand, the bet zone emptied, the pot grown."""
        events: list[EventBase] = []
        for seat in sorted(self.bets):
            self.pot += self.bets.pop(seat)
            events += [HandZone(**self._common(), zone=f"bet_{seat}", action="enter"),
                       self._zone(f"bet_{seat}", seat, 0), self._zone("pot", None, self.pot)]
        return events

    def award(self, shares: dict[int, int], *, unit: int = 25) -> list[EventBase]:
        """The pot emptied, then each winner's stack grown by his share."""
        events = [self._zone("pot", None, 0)]
        self.pot = 0
        for seat, share in shares.items():
            self.stacks[seat] += share
            events.append(self._stack(seat))
        del unit
        return events

    def rail(self, seat: int, value: int, *, direction: str) -> list[EventBase]:
        """Chips over the rail at a seat: in (then onto the stack) or out (after the pick-up from the stack)."""
        chips = count_chips([100] * (value // 100))
        crossing = {"direction": RailDirection(direction), "seat": seat, "objects": "chips", "chips": chips,
                    "value": value, "position": (0.0, 600.0)}
        if direction == "in":
            self.stacks[seat] += value
            return [HandZone(**self._common(), zone="rail_edge", seat=seat, action="enter", holding="chips"),
                    RailCrossing(**self._common(), **crossing), self._stack(seat)]
        self.stacks[seat] -= value
        return [HandZone(**self._common(), zone=f"stack_{seat}", seat=seat, action="enter"), self._stack(seat),
                RailCrossing(**self._common(), **crossing)]

    def cover(self, seat: int, *, fraction: float, hold: float) -> list[EventBase]:
        """A hand resting on part of the stack for `hold` seconds."""
        events = [HandZone(**self._common(), zone=f"stack_{seat}", seat=seat, action="enter"),
                  self._stack(seat, visible=1.0 - fraction)]
        self.t += hold
        return [*events, self._stack(seat), HandZone(**self._common(), zone=f"stack_{seat}", seat=seat,
                                                     action="leave")]

    def change(self, seat: int, back: int) -> list[EventBase]:
        """The dealer makes change in the bet zone; the player takes `back` to his stack."""
        self.bets[seat] -= back
        self.stacks[seat] += back
        return [HandZone(**self._common(), zone=f"bet_{seat}", action="enter"),
                self._zone(f"bet_{seat}", seat, self.bets[seat]), self._stack(seat)]

    def protect(self, seat: int, value: int, *, remove: bool = False) -> list[EventBase]:
        """A chip from the stack onto the hole cards as a card protector (or back)."""
        self.stacks[seat] += value if remove else -value
        hole = self._zone(f"hole_{seat}", seat, 0 if remove else value)
        return [hole, self._stack(seat)] if remove else [self._stack(seat), hole]

    def card(self, zone: str, *, card: str | None = None, seat: int | None = None) -> list[EventBase]:
        """One card from the stub to a zone (face up when `card` is given)."""
        return [CardDealt(**self._common(), to_zone=zone, seat=seat, face_up=card is not None, card=card)]

    def show(self, seat: int, *cards: str) -> list[EventBase]:
        return [ZoneCards(**self._common(), zone=f"hole_{seat}", seat=seat, face_up=cards)]

    def tap(self, seat: int) -> list[EventBase]:
        return [Tap(**self._common(), seat=seat)]

    def fold(self, seat: int) -> list[EventBase]:
        self.muck += 2
        return [HandZone(**self._common(), zone=f"hole_{seat}", seat=seat, action="enter"),
                ZoneCards(**self._common(), zone=f"hole_{seat}", seat=seat),
                ZoneCards(**self._common(), zone="muck", face_down=self.muck)]

    def lift(self, seat: int, *, hold: float) -> list[EventBase]:
        """The hole cards leave the table (held in the hand) for `hold` seconds, then come back."""
        events: list[EventBase] = [ZoneCards(**self._common(), zone=f"hole_{seat}", seat=seat)]
        self.t += hold
        return [*events, ZoneCards(**self._common(), zone=f"hole_{seat}", seat=seat, face_down=2)]

    def declare(self, seat: int, word: str, amount: int | None = None) -> list[EventBase]:
        return [Declaration.model_validate({**self._common(), "seat": seat, "declaration": word, "amount": amount})]
