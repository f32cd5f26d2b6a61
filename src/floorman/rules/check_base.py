"""The shape every check has: the events it reads, the rules it can raise, and what it sees of the table."""

from __future__ import annotations

from dataclasses import dataclass

from floorman.core.events import EventBase
from floorman.core.rule_ids import RuleId
from floorman.rules.findings import CheckerSettings, Finding
from floorman.rules.rulebook import Rulebook
from floorman.rules.state import HandAction, HandState


@dataclass(frozen=True)
class View:
    """What a check sees: the rulebook, the settings and the hand state after the event."""

    book: Rulebook
    settings: CheckerSettings
    state: HandState

    def chips_sure(self, *confidences: float) -> bool:
        """Whether chip readings this sure may accuse anyone (`ledger_min_confidence`): counts a camera could not
        make sure of move the record but prove nothing (D2, D3, B1 and every betting ruling of the hand)."""
        return min(confidences, default=1.0) >= self.settings.ledger_min_confidence


class Check:
    """A check reads some event types (or every event) and the actions they complete; it returns findings."""

    rules: tuple[RuleId, ...] = ()
    """The rules it can raise; the checker runs it only if the rulebook turns one of them on."""
    events: tuple[type[EventBase], ...] = ()
    """The event types it reads."""
    reads_actions = False
    """Whether it reads the actions the state machine completed."""
    ticks = False
    """Whether it also reads every other event while `busy` (time limits: a stack covered too long)."""

    @property
    def busy(self) -> bool:
        """Something is pending that a later event's time may settle."""
        return False

    def observe(self, event: EventBase, view: View) -> list[Finding]:
        """Findings from one event (called after the state machine took it)."""
        del event, view
        return []

    def on_actions(self, actions: tuple[HandAction, ...], view: View) -> list[Finding]:
        """Findings from completed actions."""
        del actions, view
        return []


def enabled(view: View, rule: RuleId) -> bool:
    """Whether the rulebook turns `rule` on."""
    entry = view.book.rule(rule)
    return entry is not None and entry.enabled
