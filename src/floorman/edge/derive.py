"""Event derivation: a sequence of `TableState`s in, the semantic events of docs/events.md out.

`EventDeriver.update(state)` returns the events this frame completes (unnumbered: the publisher gives them their
`seq`). Everything has inertia: a zone's content, the zone under a hand, the button's seat must hold for
`settle_frames` analysed frames and `settle_s` seconds before they count, so flicker makes no events; a
stack reads as covered only after `cover_min_s` (a hand passing over it during a push does not count).

What is derived (see `derive_cards`, `derive_chips`, `derive_hands`):
- `zone_cards` per card zone (board, hole_<s>, muck, deck face-up cards) and `card_dealt` for each card that
  came from the deck stub and settled in a zone for the first time;
- `zone_chips` per chip zone (stack_<s>, bet_<s>, pot) when its chips change, or its cover starts or ends;
- `chips_pushed` when a seat's bet zone grows under the seat's own hand or after its pick-up (chips crossed
  its bet line; the dealer making change there is no push), or the pot grows right after a seat picked chips up
  (splash); chips landing within `trip_merge_s` are one trip; `trip` counts the seat's forward trips and
  restarts when another seat pushes, a card is dealt or the bets are gathered;
- `hand_zone` enter/leave for stack, hole, bet, board and deck zones (those of `hand_events`: by default the
  ones docs/events.md lists: a push, a fold, a gather, a player reaching for the stub); a player's visit to its
  own stack or hole zone is published only once confirmed (`confirmed_visits`: chips picked up, cards folded,
  or a hand resting on its stack), so a hand passing over them on its way to the bet line makes no event;
- `rail_crossing` for chips a player's hand brings onto the table (its own stack grows with nothing on the
  table to explain it) or takes off it (its hand picked chips up and left the table without landing them);
- `button_moved`.

Not derivable from objects, and so not derived: `blinds_level` (the tournament clock) and `declaration` (a
keypad). Two motions that change no object are derived from hands: `tap`, a player's hand that rests on its own
hole cards and leaves the table with nothing of the seat changed (emitted when the hand is gone), and
`shuffle`, the dealer's hand resting on the deck stub with no card leaving it (`shuffle_min_s`), once per hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from floorman.core.events import EventBase, Shuffle, ZoneChips
from floorman.core.layout import TableLayout
from floorman.core.table_state import TableState


class DeriveConfig(BaseModel):
    """How much inertia the derivation has, and the distances it reasons with (table mm)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    settle_frames: int = Field(default=3, ge=1, description="Analysed frames a new reading must hold to count.")
    settle_s: float = Field(default=0.06, ge=0, description="Seconds a new reading must hold to count.")
    still_mm: float = Field(default=12.0, gt=0, description="An object that moved less than this between two "
                            "frames is at rest; only objects at rest make a zone's content.")
    match_mm: float = Field(default=150.0, gt=0, description="Largest jump between frames for an object without "
                            "a track id to keep its track.")
    lost_s: float = Field(default=0.4, gt=0, description="An object unseen this long (and not under a hand) is "
                          "gone.")
    cover_mm: float = Field(default=150.0, gt=0, description="An unseen object this close to a hand is hidden by "
                            "it, not gone.")
    covered_below: float = Field(default=0.9, gt=0, le=1, description="A stack zone seen less than this share "
                                 "uncovered is covered.")
    cover_min_s: float = Field(default=1.0, ge=0, description="Seconds a cover must last to be reported.")
    reach_mm: float | None = Field(default=150.0, ge=0, description="Chips move only in a hand: a zone's chips "
                                   "change only once a hand came this close to the zone (or to one of its stacks) "
                                   "since its last change. A different reading of a zone no hand reached since is "
                                   "the same chips read again (a box a pixel off, a stack read against others) and "
                                   "is not published. None: every settled reading is published.")
    same_stack_mm: float = Field(default=40.0, gt=0, description="A stack this close to where one lay (about a "
                                 "chip's diameter) is where that one lay, for `reach_mm`.")
    lost_hold_s: float = Field(default=10.0, ge=0, description="Chips leave only in a hand: a stack at rest that "
                               "goes unseen with no hand within `cover_mm` of it since it was last seen (the "
                               "detector lost a weak box) is kept, as last read, for this long and no longer than a "
                               "stack had been seen there, under any of the vision's ids (0: not at all), or until a "
                               "hand comes to it and leaves without it being seen again.")
    same_card_mm: float = Field(default=35.0, gt=0, description="A new card track this close to a placed card (seen "
                                "now, or lost a moment ago) is that card again, not a card dealt.")
    hand_switch_mm: float | None = Field(default=150.0, gt=0, description="A hand given a new track id by the "
                                         "vision within this of where a hand with another id went unseen in this "
                                         "frame (or of where it would be, moving on for `hand_predict_s`) is that "
                                         "hand: its seat and visits go on (None: every new id is a new hand).")
    hand_predict_s: float = Field(default=0.04, ge=0, description="How far on a moving hand is followed for "
                                  "`hand_switch_mm` and for a hand box without a track id.")
    card_predict_s: float = Field(default=0.04, ge=0, description="A card box without a track id is matched to the "
                                  "card track it is nearest to, as the track was last seen or as it would be, moving "
                                  "on as it moved, up to this long after (0: as last seen): a card in flight whose "
                                  "last box was lost short of its landing keeps its track.")
    deck_mm: float = Field(default=150.0, ge=0, description="A card first seen this close to the deck zone came "
                           "from the stub.")
    flight_gap_s: float = Field(default=0.2, ge=0, description="A card from the stub lost in flight for at most "
                                "this long continues as the next new card track near its path (a dealt card flies "
                                "~170 mm per frame at 30 fps: more than a tracker links).")
    flight_speed_mm_s: float = Field(default=6000.0, gt=0, description="Fastest a dealt card flies: how far from "
                                     "where it was lost the continuing track may appear (plus match_mm).")
    gather_window_s: float = Field(default=8.0, gt=0, description="Chips gathered from bet zones explain pot "
                                   "increases for this long.")
    gather_misread_s: float = Field(default=2.0, ge=0, description="A pot read unsure (under tap_sure) that grows "
                                    "this soon after a gather by more than the gathered chips was read a few chips "
                                    "long: the rest is no splash (0: always a splash). From a tilted 4K camera the "
                                    "dealer's gather of 200 read as 300 at 0.29, 0.6 s after, had been a splash; at "
                                    "1280x720 a real splash into a pot read short since its gather 6 s before (the "
                                    "rest of the gather still unexplained) came within 8 s.")
    pickup_window_s: float = Field(default=6.0, gt=0, description="Chips picked up from a stack may land in the "
                                   "pot (a splash) for this long.")
    shuffle_min_s: float = Field(default=1.0, ge=0, description="A dealer's hand resting this long on the deck "
                                 "stub, with no card leaving it, is a shuffle (0: never derive shuffles).")
    stub_reach_mm: float = Field(default=60.0, ge=0, description="A dealer's hand this close to the deck zone "
                                 "(or in it) rests on the stub: the hand holding the deck covers it from behind.")
    tap_min_s: float = Field(default=0.3, ge=0, description="A player's hand resting this long on its own hole "
                             "cards and leaving the table with nothing of the seat changed is a tap. Measured on the "
                             "dev scenarios (clean_hand_01, rabbit_hunt_01; truth frames, 1280x720 and tilted 4K "
                             "video): taps rest there 0.40-0.70 s, hands pushing chips cross the cards in 0.10-0.20 s "
                             "(at 0.2 a pushing hand lost mid-way from a tilted 4K camera tapped). Timed frame to "
                             "frame while the hand is on its cards (`tap_reach_mm`), not by its settled visits to "
                             "the hole zone (each swing across the zone's edge cost the frames a visit takes to "
                             "settle).")
    tap_reach_mm: float = Field(default=30.0, ge=0, description="A hand this close to its own hole zone, and not "
                                "this close to its own bet zone, rests on its cards for `tap_min_s`: the vision "
                                "places a hand's middle 17-23 mm (median) from where it is (session 43, "
                                "benchmarks/hands.py), and a tap beside the cards by the stack zone's edge swings "
                                "across it (from the tilted 4K camera clean_hand_05's seat 8 tapped twice with its "
                                "point at 904-967 mm across an edge at ~940: rests of 0.27 and 0.20 s in the zone, "
                                "both taps lost, three false alerts). A pushing hand lost between its cards and its "
                                "bet zone is on its way, not resting.")
    tap_sure: float = Field(default=0.8, ge=0, le=1, description="A change of a seat's chips read less sure than this "
                            "(a zone_chips or rail crossing of lower confidence; a push always counts) does not keep a "
                            "hand resting on its cards from being a tap, which carries that doubt: from video a stack "
                            "is read again whenever a hand passes over it, and an unsure count can jump (0: every "
                            "change counts).")
    trip_merge_s: float = Field(default=0.3, ge=0, description="Chips of one seat landing within this time make "
                                "one forward trip.")
    hand_zone_kinds: tuple[str, ...] = Field(default=("stack", "hole", "bet", "board", "deck"),
                                             description="Zone kinds whose hands are followed.")
    hand_events: tuple[str, ...] = Field(
        default=("player:stack:enter", "player:stack:leave", "player:hole:enter", "player:bet:leave",
                 "player:deck:enter", "player:deck:leave", "player:board:enter", "player:board:leave",
                 "dealer:bet:enter"),
        description="The hand_zone events published, as 'player|dealer:zone kind:enter|leave' (docs/events.md: "
        "a push, a fold, a gather, a player reaching for the stub); '*' publishes every one.")
    confirmed_visits: tuple[str, ...] = Field(
        default=("player:stack", "player:hole"),
        description="Visits of a player's hand to its own zones of these kinds ('player:zone kind') are published "
        "(enter, and leave) only once they prove to be more than the hand passing by on its way: the zone loses "
        "chips or cards while the hand is there or within `confirm_window_s` after it left (a pick-up, a fold), or, "
        "for the kinds of `resting_visits`, the hand rests there `rest_s`.")
    resting_visits: tuple[str, ...] = Field(default=("player:stack",), description="Confirmed visits that a hand "
                                            "resting `rest_s` in the zone confirms (a hand covering a stack).")
    rest_s: float = Field(default=0.75, ge=0, description="Seconds a hand stays in a zone of `resting_visits` to "
                          "be resting there (a hand passing over a stack on its way stays about half a second).")
    confirm_window_s: float = Field(default=2.0, ge=0, description="How long after a hand left a zone a loss of "
                                    "the zone still confirms its visit.")
    button_card_mm: float = Field(default=30.0, ge=0, description="A card box whose centre lies this close to "
                                  "where the dealer button was last seen, and that is less sure than the button "
                                  "seen there, is the button read as a card (a real card there would hide the "
                                  "button; hole cards lie 60 mm and more from it). 0: every card box counts.")
    button_memory_s: float = Field(default=3.0, ge=0, description="How long after the button was last seen a card "
                                   "box where it lay is still the button (the detector may call it a card and no "
                                   "button for 2.4 s).")


_SET_ASIDE = frozenset({"zone_chips", "rail_crossing"})  # chip events `Emitter.sure_chips` may set aside
_ASIDE_KEPT = 64  # unsure chip events remembered per seat for `Emitter.doubt_since`
_HISTORY_S = 120.0  # how far back `Emitter.unchanged_since` can look (a hand rests on its cards for seconds)
_TOUCHING = frozenset({"zone_cards", "zone_chips", "card_dealt", "chips_pushed", "rail_crossing"})


@dataclass
class Emitter:
    """Stamps the events of one frame with the table, camera, time and frame number."""

    table_id: str
    camera_id: str
    t: float = 0.0
    frame: int = 0
    events: list[EventBase] = field(default_factory=list)

    sure_chips: float = 0.0
    """zone_chips and rail_crossing events less sure than this do not count as a seat's chips moving for
    `unchanged_since` (0: every one counts); a push always counts."""
    acted: dict[int, float] = field(default_factory=dict)
    """When each seat's cards or chips last moved: a card dealt to it, a push, chips over the rail."""
    _published: dict[tuple[str, str], list[tuple[float, tuple[str, int | None, str]]]] = field(default_factory=dict)
    """Per (event type, zone): what the zone was published to hold, and when. A hole zone has cards and chips (a
    card protector): each has a history of its own, or a chips reading would read as a change of its cards."""
    _set_aside: dict[int, list[tuple[float, float]]] = field(default_factory=dict)  # per seat: (t, confidence)
    _on_cards: dict[int, list[tuple[float, int]]] = field(default_factory=dict)
    """Per seat: the chips its hole zone was read to hold (at any sureness), and when: its last `_ASIDE_KEPT`
    readings (`laid_on_cards`)."""

    def emit(self, kind: type[EventBase], **fields: Any) -> EventBase:
        event = kind(table_id=self.table_id, camera_id=self.camera_id, seq=0, t=self.t, frame=self.frame, **fields)
        self.events.append(event)
        seat = fields.get("seat")
        name = kind.model_fields["type"].default
        if not isinstance(seat, int) or name not in _TOUCHING:
            return event
        if isinstance(event, ZoneChips) and event.zone == f"hole_{seat}":
            readings = self._on_cards.setdefault(seat, [])
            readings.append((self.t, sum(group.count for group in event.chips)))
            del readings[:-_ASIDE_KEPT]
        confidence = float(fields.get("confidence", 1.0))
        if name in _SET_ASIDE and confidence < self.sure_chips:  # chips read unsure: no evidence that they moved
            aside = self._set_aside.setdefault(seat, [])
            aside.append((self.t, confidence))
            del aside[:-_ASIDE_KEPT]
            return event
        if name in ("zone_cards", "zone_chips"):
            history = self._published.setdefault((name, str(fields["zone"])), [])
            history.append((self.t, _content_of(event)))
            old = [i for i, (when, _) in enumerate(history) if when < self.t - _HISTORY_S]
            if len(old) > 1:  # the last content older than that is what the zone held then: kept
                del history[:old[-1]]
        else:
            self.acted[seat] = self.t
        return event

    def doubt_since(self, seat: int, t: float) -> float:
        """How sure `unchanged_since(seat, t)` is: the least sure chip event of the seat it set aside (1.0: none)."""
        return min((confidence for when, confidence in self._set_aside.get(seat, ()) if when >= t), default=1.0)

    def laid_on_cards(self, seat: int, t: float) -> bool:
        """Whether the seat's hole zone, never read holding chips before `t`, is read holding some now, however
        unsure: a chip was laid on the cards (a card protector) by the hand there since. From video a hand took a
        chip from its stack and laid it on its cards in 1.1 s, both readings unsure (0.11, 0.22; clean_hand_02's seat
        4): that was no check. A protector read before is only read again (pocket_chips_02's stack of 25s on seat 5's
        cards, read 4, 5, none and 5 chips as hands pass)."""
        readings = self._on_cards.get(seat, [])
        if not readings or readings[-1][0] < t or readings[-1][1] == 0:
            return False
        return all(count == 0 for when, count in readings if when < t)

    def unchanged_since(self, seat: int, t: float) -> bool:
        """Whether nothing of `seat` moved since `t`: no card dealt to it, no push, nothing over the rail, and each
        of its zones holds what it held then (a zone read otherwise while a hand covered it, then read as before,
        is unchanged)."""
        if self.acted.get(seat, -1.0) >= t:
            return False
        for (_, zone), history in self._published.items():
            if zone_seat(zone) != seat or history[-1][0] < t:
                continue
            before = [content for when, content in history if when < t]
            if not before or not _holds_as_before(zone, before[-1], history[-1][1]):
                return False
        return True

    def start(self, state: TableState) -> None:
        self.t, self.frame, self.events = state.t, state.frame, []


def _content_of(event: EventBase) -> tuple[str, int | None, str]:
    """What a zone_cards or zone_chips event says the zone holds: its face-up cards, how many face down, its chips
    and how much of them is seen."""
    fields = event.model_dump()
    face_down = fields.get("face_down")
    return repr(fields.get("face_up")), face_down if isinstance(face_down, int) else None, repr(fields.get("chips"))


def _holds_as_before(zone: str, before: tuple[str, int | None, str], now: tuple[str, int | None, str]) -> bool:
    """Whether a zone read `now` holds what it held `before`. A hole zone read with more face-down cards does: no
    card comes to a seat but dealt (a deal is a move of its own), and a hand resting on the cards may leave a finger
    read as another card back (burnless_board_02 from video: a third back under seat 7's taps, which were lost);
    read with fewer, cards were taken up (a fold seen in stages)."""
    if zone.startswith("hole_") and before[0] == now[0] and before[2] == now[2] \
            and before[1] is not None and now[1] is not None:
        return now[1] >= before[1]
    return before == now


def zone_seat(zone: str) -> int | None:
    """3 for 'stack_3', None for shared zones."""
    head, _, tail = zone.rpartition("_")
    return int(tail) if head and tail.isdigit() else None


class EventDeriver:
    """TableStates of one camera in, events out (see the module docstring)."""

    def __init__(self, layout: TableLayout, *, table_id: str, camera_id: str,
                 config: DeriveConfig | None = None) -> None:
        from floorman.edge.derive_cards import CardDeriver
        from floorman.edge.derive_chips import ChipDeriver
        from floorman.edge.derive_hands import ButtonDeriver, HandDeriver

        self.layout = layout
        self.config = config or DeriveConfig()
        self.out = Emitter(table_id=table_id, camera_id=camera_id, sure_chips=self.config.tap_sure)
        self.hands = HandDeriver(layout, config=self.config, out=self.out)
        self.chips = ChipDeriver(layout, config=self.config, out=self.out, hands=self.hands)
        self.button = ButtonDeriver(layout, config=self.config, out=self.out)
        self.cards = CardDeriver(layout, config=self.config, out=self.out, hands=self.hands, button=self.button)
        self.frames = 0
        self._shuffles = 0
        self._last_t = -1.0

    def update(self, state: TableState) -> list[EventBase]:
        """The events completed by this frame, in the order of docs/events.md."""
        if state.t < self._last_t:
            raise ValueError(f"expected frames in time order, got t={state.t} after t={self._last_t}")
        self._last_t = state.t
        self.frames += 1
        self.out.start(state)
        self.button.update(state)
        self.hands.update(state)
        self.hands.emit_enters()
        dealt = self.cards.update(state)
        if dealt:
            self.chips.reset_trips()
        self.chips.update(state)
        self.hands.emit_leaves(picked_up=self.chips.picked_up_by)
        self.hands.emit_taps(landing=self.chips.landing, has_cards=lambda seat: self.cards.holds_cards(f"hole_{seat}"))
        self._shuffle(state.t)
        return list(self.out.events)

    def _shuffle(self, t: float) -> None:
        """The dealer's hand resting on the deck stub for `shuffle_min_s` with no card leaving it: a shuffle (once
        per hand: another needs a card dealt since)."""
        minimum = self.config.shuffle_min_s
        if minimum <= 0 or (self._shuffles and not self.cards.dealt_since_shuffle):
            return
        dwell = self.hands.dealer_dwell_at_stub(t)
        if dwell >= minimum and t - self.cards.last_from_deck > dwell:
            self.out.emit(Shuffle)
            self._shuffles += 1
            self.cards.dealt_since_shuffle = self.cards.absorbed = 0
            self.cards.hole_dealt.clear()
