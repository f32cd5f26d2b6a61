"""The input and output of a bet ruling (`floorman ruling`): the situation, the options and the ruling.

`BetSituation` is the JSON a caller sends; `BetRuling` the JSON it gets back. Both are frozen pydantic models
with extra="forbid"; `situation_from_json` turns a bad payload into a `SchemaError` naming the field.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from floorman.core.alerts import Citation, Explanation
from floorman.core.chips import ChipCount, chips_value
from floorman.core.config import field_path
from floorman.core.errors import SchemaError
from floorman.core.rule_ids import RuleId

Street = Literal["preflop", "flop", "turn", "river"]
Action = Literal["call", "bet", "raise", "all_in", "check", "player_choice"]
DeclarationWord = Literal["call", "raise", "all-in"]


class RaiseTo(BaseModel):
    """A declared raise with its amount ("raise to N")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    raise_to: int = Field(gt=0, description="Declared total of the raise.")


class BetAmount(BaseModel):
    """A declared opening bet with its amount."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bet: int = Field(gt=0, description="Declared bet.")


class BetSituation(BaseModel):
    """What the ruling needs: the betting round so far, the chips the actor pushed, and what he said."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rulebook: str = Field(default="tda2024", description="Rulebook id or path (the CLI may override it).")
    game: Literal["nlhe"] = Field(default="nlhe", description="Game; no-limit hold'em.")
    blinds: tuple[int, int] = Field(description="Small blind and big blind.")
    street: Street = Field(description="preflop, flop, turn or river.")
    facing_bet_to: int = Field(ge=0, description="Total bet the actor faces this street; 0 if none.")
    actor_in_before: int = Field(default=0, ge=0, description="What the actor already put in this street.")
    last_raise_size: int = Field(gt=0, description="Last full bet/raise increment this street (BB if none).")
    trips: tuple[tuple[ChipCount, ...], ...] = Field(default=(), description="Chips pushed, one list per trip.")
    declaration: DeclarationWord | RaiseTo | BetAmount | None = Field(
        default=None, description="null (none heard) | call | raise | all-in | {raise_to: N} | {bet: N}.")
    stack_before: int | None = Field(default=None, ge=0, description="Chips the actor had before pushing.")
    facing_all_in: bool = Field(
        default=False, description="The bet faced is an all-in raise below a full raise (picks CATALOG A4).")

    @field_validator("blinds")
    @classmethod
    def _check_blinds(cls, value: tuple[int, int]) -> tuple[int, int]:
        small, big = value
        if big <= 0 or small < 0 or small > big:
            raise ValueError(f"expected [small, big] with 0 <= small <= big and big > 0, got {list(value)}")
        return value

    @field_validator("declaration", mode="before")
    @classmethod
    def _check_declaration(cls, value: object) -> object:
        if value is None or value in ("call", "raise", "all-in") or isinstance(value, RaiseTo | BetAmount):
            return value
        if isinstance(value, dict) and len(value) == 1:
            key, amount = next(iter(value.items()))
            if key in ("raise_to", "bet") and isinstance(amount, int) and not isinstance(amount, bool) and amount > 0:
                return RaiseTo(raise_to=amount) if key == "raise_to" else BetAmount(bet=amount)
        raise ValueError("expected null, \"call\", \"raise\", \"all-in\", {\"raise_to\": N} or {\"bet\": N} "
                         f"with N > 0, got {value!r}")

    @field_validator("trips")
    @classmethod
    def _check_trips(cls, value: tuple[tuple[ChipCount, ...], ...]) -> tuple[tuple[ChipCount, ...], ...]:
        for index, trip in enumerate(value):
            if not trip:
                raise ValueError(f"trip {index} is empty, expected at least one chip")
        return value

    @model_validator(mode="after")
    def _check_amounts(self) -> BetSituation:
        if self.facing_bet_to == 0 and self.street == "preflop":
            raise ValueError(f"facing_bet_to: expected at least the posted big blind pre-flop, got 0 "
                             f"(blinds {list(self.blinds)})")
        if self.actor_in_before > self.facing_bet_to:
            raise ValueError(f"actor_in_before: expected at most facing_bet_to ({self.facing_bet_to}), got "
                             f"{self.actor_in_before}")
        if self.facing_bet_to >= self.blinds[1] and self.last_raise_size > self.facing_bet_to:
            raise ValueError(f"last_raise_size: expected at most facing_bet_to ({self.facing_bet_to}), got "
                             f"{self.last_raise_size}")
        pushed = sum(chips_value(trip) for trip in self.trips)
        if self.stack_before is not None and pushed > self.stack_before:
            raise ValueError(f"stack_before: the trips hold {pushed} in chips, expected stack_before >= {pushed}, "
                             f"got {self.stack_before}")
        owed = self.facing_bet_to - self.actor_in_before
        if isinstance(self.declaration, BetAmount) and self.facing_bet_to > 0:
            raise ValueError(f"declaration.bet: expected no bet to face, got facing_bet_to {self.facing_bet_to}; "
                             "declare {\"raise_to\": N} instead")
        if isinstance(self.declaration, RaiseTo) and self.declaration.raise_to <= self.facing_bet_to:
            raise ValueError(f"declaration.raise_to: expected more than facing_bet_to ({self.facing_bet_to}), "
                             f"got {self.declaration.raise_to}")
        if not self.trips and self.declaration is None and owed > 0:
            raise ValueError(f"trips: no chips and no declaration while facing {owed} to call; a ruling needs "
                             "chips pushed or a declaration")
        return self


class RulingOption(BaseModel):
    """One choice the rulebook leaves to the player or to the director."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chooser: Literal["player", "director"] = Field(description="Who chooses.")
    action: Action = Field(description="The action if this option is chosen.")
    total_to: int = Field(ge=0, description="The actor's total this street.")
    chips_to_add: int = Field(ge=0, description="Chips the actor must add.")
    chips_returned: int = Field(ge=0, description="Chips given back to the actor.")
    reopens_betting: bool = Field(description="Whether it reopens the betting.")
    next_min_raise_to: int = Field(ge=0, description="Minimum raise-to for the next player.")
    label: Explanation = Field(description="The option in French and English.")


class BetRuling(BaseModel):
    """The ruling. The first nine fields are the `floorman ruling` contract; the rest are additions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: Action = Field(description="call, bet, raise, all_in, check, or player_choice (see options).")
    total_to: int = Field(ge=0, description="The actor's total this street after the ruling.")
    chips_to_add: int = Field(ge=0, description="Chips the actor must add to what he pushed.")
    chips_returned: int = Field(ge=0, description="Chips given back to the actor.")
    reopens_betting: bool = Field(description="A bet or full raise: players who acted may raise again.")
    next_min_raise_to: int = Field(ge=0, description="Minimum raise-to for the next player.")
    options: tuple[RulingOption, ...] = Field(default=(), description="Choices left to the player or director.")
    citations: tuple[Citation, ...] = Field(description="The rules applied, with their French text.")
    explanation: Explanation = Field(description="Why, in French and English.")
    rulebook: str = Field(description="Rulebook id.")
    rule_ids: tuple[RuleId, ...] = Field(description="Catalog topics applied.")
    provisional: bool = Field(description="A declaration the camera cannot hear would change the ruling.")
    all_in: bool = Field(description="The actor has no chips left after the ruling (stack known).")
    string_bet: bool = Field(description="The push took several trips beyond the call, with no declaration.")
    to_call: int = Field(ge=0, description="What the actor owed before acting.")
    min_raise_to: int = Field(ge=0, description="Minimum legal raise-to (or opening bet) before the action.")
    next_facing_bet_to: int = Field(ge=0, description="The bet the next player faces.")
    next_last_raise_size: int = Field(gt=0, description="The last full increment the next player faces.")
    notes: tuple[str, ...] = Field(default=(), description="Assumptions made (unknown stack, defaults used).")


def situation_from_data(data: Any, *, source: str) -> BetSituation:
    """Validate decoded JSON; SchemaError names the source, the field and the value."""
    if not isinstance(data, dict):
        raise SchemaError(f"{source}: expected a JSON object, got {type(data).__name__}")
    try:
        return BetSituation.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = field_path(tuple(first["loc"]))
        value = first.get("input")
        message = "required field is missing" if first["type"] == "missing" else first["msg"]
        message = message.removeprefix("Value error, ")
        shown = "" if isinstance(value, dict) or "got " in message else f" (got {value!r})"
        if first["type"] == "extra_forbidden":
            message = "unknown field"
        if where == "<root>":  # a cross-field check: its message names the field itself
            raise SchemaError(f"{source}: {message}") from None
        raise SchemaError(f"{source}: field '{where}': {message}{shown}") from None


def situation_from_json(text: str, *, source: str) -> BetSituation:
    """Parse a JSON situation; SchemaError for invalid JSON or an invalid field."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{source}: not valid JSON: {exc}") from None
    return situation_from_data(data, source=source)
