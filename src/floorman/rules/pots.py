"""Blind positions (dead button) and pots (side pots) of one hand: pure functions of the seats and the money.

Blinds, 003 7-5 (the dead-button system: the big blind always advances one seat and drives the rest), 7-9 (no
small blind when its seat is empty: only the big blind never skips) and 7-11 (heads-up: the small blind is on the
button). The other seeds say nothing on the button; the state machine uses the same system for every rulebook,
and the button puck only places the first hand.

Pots: every chip a player put in this hand (antes, blinds, bets) is layered by the all-in amounts of the players
still in: the main pot is what everyone matched up to the smallest all-in, each side pot the next layer. A layer
only one live player reached is his uncalled excess, given back, not won (`Pot.uncalled`). Folded players'
chips stay in the layers they reached (dead money).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class BlindSeats:
    small: int | None
    big: int | None


def blind_seats(*, seats: Iterable[int], button: int | None, previous_big: int | None) -> BlindSeats:
    """Who posts the blinds among the occupied `seats` (clockwise = increasing seat numbers).

    With the previous hand's big blind known, the big blind moves to the next occupied seat after it and the
    small blind is that previous big blind's seat, if still occupied (003 7-5, 7-9). Otherwise (first hand) the
    two seats after the button post. Heads-up, the small blind is the seat that is not the big blind (003 7-11).
    """
    order = sorted(set(seats))
    if len(order) < 2:
        return BlindSeats(small=None, big=None)
    if previous_big is not None:
        big = _first_after(order, previous_big)
        small: int | None = previous_big if previous_big in order and previous_big != big else None
    elif button is not None:
        after = [s for s in order if s > button] + [s for s in order if s <= button]
        if len(order) == 2:
            small = button if button in order else after[0]
            return BlindSeats(small=small, big=next(s for s in order if s != small))
        small, big = after[0], after[1]
    else:
        return BlindSeats(small=None, big=None)
    if len(order) == 2:
        small = next(s for s in order if s != big)
    return BlindSeats(small=small, big=big)


def _first_after(order: list[int], seat: int) -> int:
    return next((s for s in order if s > seat), order[0])


@dataclass(frozen=True)
class Pot:
    """One pot: its chips and the live seats that can win it."""

    amount: int
    eligible: tuple[int, ...]

    @property
    def uncalled(self) -> bool:
        """Only one live seat reached this layer: it is his own excess, given back."""
        return len(self.eligible) == 1


def side_pots(contributions: Mapping[int, int], *, live: Iterable[int], all_in: Iterable[int]) -> list[Pot]:
    """The main pot then the side pots, from what each seat put in this hand (`live`: not folded)."""
    live_seats = {s for s in live if contributions.get(s, 0) > 0}
    caps = sorted({contributions[s] for s in set(all_in) & live_seats})
    top = max((contributions[s] for s in live_seats), default=0)
    if not caps or caps[-1] < top:
        caps.append(top)
    pots: list[Pot] = []
    floor = 0
    for cap in caps:
        amount = sum(min(c, cap) - min(c, floor) for c in contributions.values())
        eligible = tuple(sorted(s for s in live_seats if contributions[s] >= cap))
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(amount=pots[-1].amount + amount, eligible=eligible)
        elif amount > 0:
            pots.append(Pot(amount=amount, eligible=eligible))
        floor = cap
    dead_above = sum(max(0, c - floor) for c in contributions.values())
    if dead_above and pots:  # folded players put in more than any live player: it goes to the last pot
        pots[-1] = Pot(amount=pots[-1].amount + dead_above, eligible=pots[-1].eligible)
    return pots
