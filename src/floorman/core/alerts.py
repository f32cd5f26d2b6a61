"""Alerts raised by the rules checker, and the expected alerts that scenario truth files carry."""

from __future__ import annotations

import enum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from floorman.core.events import Event
from floorman.core.rule_ids import RuleId


class Severity(enum.StrEnum):
    INFO = "info"
    WARNING = "warning"
    ALERT = "alert"


class Citation(BaseModel):
    """Where a rule comes from: seed file, rule number, the French text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rulebook: str = Field(description="Rulebook id: tda2024, ggc, club_000, club_004.")
    seed: str = Field(description="Seed file prefix, e.g. '003'.")
    rule: str = Field(description="Rule number as written, e.g. '8-16' or 'TDA 45 ex. 2'.")
    text_fr: str = Field(default="", description="The rule's French text.")


class Evidence(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    t_start: float = Field(ge=0, description="Start of the evidence window, seconds.")
    t_end: float = Field(ge=0, description="End of the evidence window, seconds.")
    frames: tuple[int, ...] = Field(default=(), description="Frame numbers worth looking at.")
    event_seqs: tuple[int, ...] = Field(default=(), description="Seq numbers of the triggering events.")

    @model_validator(mode="after")
    def _ordered(self) -> Evidence:
        if self.t_end < self.t_start:
            raise ValueError(f"t_end ({self.t_end}) is before t_start ({self.t_start})")
        return self


class Explanation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    fr: str = Field(description="Explanation in French.")
    en: str = Field(description="Explanation in English.")


class SuggestedSanction(BaseModel):
    """The sanction the rulebook's ladder suggests for the player at fault. A suggestion: never applied."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    player: str = Field(description="Who: 'table/seat N', or 'dealer'.")
    level: str | None = Field(default=None, description="Suggested ladder level; null for 'level: TD' or none.")
    name_fr: str = Field(default="", description="Level name in French.")
    name_en: str = Field(default="", description="Level name in English.")
    sanction_fr: str = Field(default="", description="What it entails, in French.")
    sanction_en: str = Field(default="", description="What it entails, in English.")
    fine: int | None = Field(default=None, ge=0, description="Fine in chips, when the level has one.")
    occurrence: int = Field(default=1, ge=1, description="Sanctions for this infraction in the register, plus one.")
    flagged: int = Field(default=1, ge=1, description="Alerts of this rule for this player in the tournament.")
    alternatives: tuple[str, ...] = Field(default=(), description="Other levels the rule names.")
    reasons: tuple[str, ...] = Field(default=(), description="Why this level, step by step (English).")
    applied: Literal[False] = Field(default=False, description="Always false: the director applies sanctions.")


class Alert(BaseModel):
    """One infraction flagged by the rules checker."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["alert"] = "alert"
    schema_version: Literal[1] = 1
    alert_id: str = Field(description="Unique id (table, hand, rule, seat, first seq).")
    table_id: str = Field(description="Table id.")
    hand_number: int = Field(ge=0, description="Hand number at the table (0 before the first hand).")
    rule: RuleId = Field(description="Catalog rule id.")
    seat: int | None = Field(default=None, ge=1, le=10, description="Seat at fault, if any.")
    severity: Severity = Field(description="Warning or alert, per the rulebook.")
    confidence: float = Field(ge=0, le=1, description="Confidence that the infraction happened.")
    provisional: bool = Field(default=False, description="True when a declaration the camera cannot hear decides.")
    citations: tuple[Citation, ...] = Field(default=(), description="Rules quoted.")
    evidence: Evidence = Field(description="Time range, frames and events.")
    explanation: Explanation = Field(description="Short explanation in French and English.")
    sanction: str | None = Field(default=None, description="Suggested sanction from the ladder, if any.")
    suggested_sanction: SuggestedSanction | None = Field(
        default=None, description="The ladder's suggestion for this player, from the tournament's register.")
    raised_at: float | None = Field(default=None, ge=0,
                                    description="Time (t) of the event that made the checker raise it, seconds.")


class ExpectedAlert(BaseModel):
    """In a scenario's truth: an alert the checker must raise (rule, seat, time window)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["expected_alert"] = "expected_alert"
    rule: RuleId = Field(description="Catalog rule id.")
    seat: int | None = Field(default=None, ge=1, le=10, description="Seat at fault, if any.")
    t_start: float = Field(ge=0, description="Earliest time the alert may be raised, seconds.")
    t_end: float = Field(ge=0, description="Latest time the alert may be raised, seconds.")
    note: str = Field(default="", description="What happens in the scenario.")

    @model_validator(mode="after")
    def _ordered(self) -> ExpectedAlert:
        if self.t_end < self.t_start:
            raise ValueError(f"t_end ({self.t_end}) is before t_start ({self.t_start})")
        return self


TruthRecord = Annotated[Event | ExpectedAlert, Field(discriminator="type")]
"""One line of a scenario's truth.jsonl: a ground-truth event or an expected alert."""

TRUTH_ADAPTER: TypeAdapter[TruthRecord] = TypeAdapter(TruthRecord)
ALERT_ADAPTER: TypeAdapter[Alert] = TypeAdapter(Alert)
