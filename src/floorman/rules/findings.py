"""What a check finds (a `Finding`, turned into an `Alert` by the checker) and the checker's sensing settings.

A check answers with a `Finding`: the rule, the seat, a dedupe key, the evidence (time range, frames, the seq
numbers of the events that triggered it) and a short explanation in French and English. The checker adds the
rulebook's citations, severity and suggested sanction, and merges findings with the same key.

`CheckerSettings` holds the thresholds that are about sensing, not about the rules (how long a stack may stay
covered before it counts as hidden, how long chips may travel before they must have landed somewhere). The
rules themselves and whether each check is on come from the rulebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from floorman.core.events import EventBase
from floorman.core.rule_ids import RuleId


class CheckerSettings(BaseModel):
    """Sensing thresholds of the checks (not rulebook parameters)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    covered_below: float = Field(default=0.75, gt=0, le=1,
                                 description="A stack seen below this visible fraction is covered (D1).")
    covered_min_s: float = Field(default=3.0, gt=0, description="Seconds a stack must stay covered to count (D1).")
    covered_below_unsure: float = Field(
        default=0.5, gt=0, le=1, description="A stack whose count is read unsure (below ledger_min_confidence) is "
        "covered only below this visible fraction (D1): the fraction is weighted by the stacks' counts, themselves "
        "unsure. From video (1280x720, session 48), a hand resting beside a stack gave 0.78-0.83 (no cover in "
        "truth); a hand over half a stack 0.32-0.35.")
    ledger_window_s: float = Field(default=8.0, gt=0,
                                   description="Seconds chips may be in transit between two zones (D2, D3).")
    ledger_min_confidence: float = Field(
        default=0.8, ge=0, le=1, description="A zone_chips reading less sure than this (the camera could not count "
        "the stacks) moves the ledger's baseline but accuses no one (D2, D3). Stack counts the chip recogniser "
        "gives 0.8-1.0 were 93-95 % exact on fresh renders, 0.5-0.8 about 72-77 % (benchmarks/chips.py).")
    hole_hidden_min_s: float = Field(default=4.0, gt=0,
                                     description="Seconds live hole cards may be off the table (E7).")
    award_window_s: float = Field(default=4.0, gt=0,
                                  description="Seconds after the pot empties in which awards are collected (F4).")
    declarations_heard: bool = Field(
        default=False, description="A declaration feed (keypad, audio) is live: silence means nothing was said.")


@dataclass(frozen=True)
class Finding:
    """One breach a check found, before the rulebook's citations, severity and sanction are added."""

    rule: RuleId
    seat: int | None
    key: str
    """Findings with the same hand, rule, seat and key are one alert (duplicates merged)."""
    t_start: float
    t_end: float
    fr: str
    en: str
    frames: tuple[int, ...] = ()
    seqs: tuple[int, ...] = ()
    confidence: float = 1.0
    provisional: bool = False
    refs: tuple[str, ...] = ()
    """Extra rulebook references (parameters) beyond the rule's own citations."""
    cleared: bool = False
    """A later event clears an earlier finding (GGC rabbit hunting agreed by all)."""


@dataclass
class Evidence:
    """Events collected as evidence: seq numbers, frames, first and last time."""

    seqs: list[int] = field(default_factory=list)
    frames: list[int] = field(default_factory=list)
    t_start: float = 0.0
    t_end: float = 0.0

    @classmethod
    def of(cls, *events: EventBase) -> Evidence:
        evidence = cls()
        for event in events:
            evidence.add(event)
        return evidence

    def add(self, event: EventBase) -> Evidence:
        if not self.seqs:
            self.t_start = event.t
        self.seqs.append(event.seq)
        self.frames.append(event.frame)
        self.t_start = min(self.t_start, event.t)
        self.t_end = max(self.t_end, event.t)
        return self

    def finding(self, *, rule: RuleId, seat: int | None, key: str, fr: str, en: str, confidence: float = 1.0,
                provisional: bool = False, refs: tuple[str, ...] = (), cleared: bool = False) -> Finding:
        return Finding(rule=rule, seat=seat, key=key, t_start=self.t_start, t_end=self.t_end, fr=fr, en=en,
                       frames=tuple(dict.fromkeys(self.frames)), seqs=tuple(dict.fromkeys(self.seqs)),
                       confidence=confidence, provisional=provisional, refs=refs, cleared=cleared)
