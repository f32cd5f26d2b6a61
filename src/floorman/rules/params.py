"""The parameters where the rulebooks disagree (rules/CATALOG.md section 4), typed, each with its citation.

Every parameter is a `Param`: the value, where it comes from (`source`) and the rule numbers it rests on
(`cite`, "000 9-8"). A value the seeds do not give (`not_in_seeds` for the TDA rules the seeds only name,
`silent` where a club says nothing) is a configured default, and says so.
"""

from __future__ import annotations

import enum
import re
from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

T = TypeVar("T")

CITE_PATTERN = re.compile(r"^(?P<seed>\d{3}) (?P<rule>\S.*)$")


class Source(enum.StrEnum):
    """Where a parameter's value comes from."""

    STATED = "stated"
    """The seed states it."""
    READING = "reading"
    """The seed is ambiguous; the value is our reading (CATALOG section 5), explained in `note`."""
    NOT_IN_SEEDS = "not_in_seeds"
    """The TDA rule exists but is not in the seeds: a configured default."""
    SILENT = "silent"
    """The rulebook says nothing: a configured default."""


class Param(BaseModel, Generic[T]):
    """One rulebook parameter: the value and the citation next to it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: T = Field(description="The value of the parameter.")
    source: Source = Field(description="stated, reading (our reading of an ambiguous text), not_in_seeds, silent.")
    cite: tuple[str, ...] = Field(default=(), description="Rule references, '<seed> <rule>', e.g. '000 9-8'.")
    note: str = Field(default="", description="Why this value, when it is a reading or a default.")

    @field_validator("cite")
    @classmethod
    def _check_cite(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for ref in value:
            if not CITE_PATTERN.match(ref):
                raise ValueError(f"expected a reference like '000 9-8', got {ref!r}")
        return value

    @model_validator(mode="after")
    def _check_source(self) -> Param[T]:
        if self.source in (Source.STATED, Source.READING) and not self.cite:
            raise ValueError(f"a {self.source.value} value needs a citation in 'cite'")
        if self.source in (Source.NOT_IN_SEEDS, Source.SILENT, Source.READING) and not self.note:
            raise ValueError(f"a {self.source.value} value needs a 'note' saying why")
        if str(self.value) == "unspecified" and self.source is Source.STATED:
            raise ValueError("an 'unspecified' value cannot be 'stated'")
        return self


class MinFirstRaise(enum.StrEnum):
    INCREMENT_AT_LEAST_BET = "increment_at_least_bet"
    DOUBLE_BET = "double_bet"
    INCREMENT_AT_LEAST_BET_AND_BIG_BLIND = "increment_at_least_bet_and_big_blind"


class MinReraise(enum.StrEnum):
    PREVIOUS_TOTAL_PLUS_INCREMENT = "previous_total_plus_increment"
    DOUBLE_PREVIOUS_TOTAL = "double_previous_total"


class ShortAllinMinReraise(enum.StrEnum):
    ALLIN_PLUS_LAST_FULL_RAISE = "allin_plus_last_full_raise"
    ALLIN_PLUS_ORIGINAL_INCREMENT = "allin_plus_original_increment"
    ALLIN_PLUS_MAX_BIG_BLIND_ORIGINAL_INCREMENT = "allin_plus_max_big_blind_original_increment"
    DOUBLE_ALLIN = "double_allin"


class ShortAllinReopen(enum.StrEnum):
    FULL_RAISE_ONLY = "full_raise_only"
    NOT_FOR_PLAYERS_PLACED_BEFORE = "not_for_players_placed_before"
    NOT_FOR_PLAYERS_WHO_BET = "not_for_players_who_bet"


class ReopenByAccumulation(enum.StrEnum):
    FULL_RAISE = "full_raise"
    OWN_BET_DOUBLED = "own_bet_doubled"


class AllinBelowBigBlindPreflop(enum.StrEnum):
    CALL_BIG_BLIND_RAISE_TO_DOUBLE = "call_big_blind_raise_to_double_big_blind"


class AllinBelowBigBlindPostflop(enum.StrEnum):
    CALL_ALLIN_RAISE_BY_BIG_BLIND = "call_allin_raise_by_big_blind"


class FiftyPctBase(enum.StrEnum):
    MIN_RAISE_INCREMENT = "min_raise_increment"
    MIN_RAISE_TOTAL = "min_raise_total"


class Under50Silent(enum.StrEnum):
    CALL_RETURN_SURPLUS = "call_return_surplus"
    DIRECTOR_ASKS = "director_asks_call_or_min_raise"


class DeclaredUnderRaise(enum.StrEnum):
    COMPLETE_TO_MINIMUM = "complete_to_minimum"


class MultiChipRule(enum.StrEnum):
    REMOVE_ONE_LOWEST_CHIP = "remove_one_lowest_chip"
    NONE = "none"


class SingleChipFacingBet(enum.StrEnum):
    CALL = "call"
    NONE = "none"


class SingleChipPostflopOpen(enum.StrEnum):
    BET_CHIP_VALUE = "bet_chip_value"


class SingleChipDeclaredRaise(enum.StrEnum):
    RAISE_TO_CHIP_VALUE = "raise_to_chip_value"
    UNSPECIFIED = "unspecified"


class StringBetEffect(enum.StrEnum):
    FIRST_STEP_ONLY = "first_step_only"
    FLAG_ONLY = "flag_only"


class CorrectionDeadline(enum.StrEnum):
    NEXT_CARD = "next_card"
    CHIPS_GATHERED = "chips_gathered"


class AfterCorrection(enum.StrEnum):
    CALLERS_RAISED_TO_CORRECTED = "callers_raised_to_corrected_amount"
    LATER_BETS_REPLAYED = "later_bets_replayed"
    LATER_PLAYERS_MAY_CHANGE = "later_players_may_change"


class PotLimitMiscount(enum.StrEnum):
    TDA_52B = "reduce_if_over_complete_if_under_before_substantial_action"
    UNSPECIFIED = "unspecified"


class OutOfTurn(enum.StrEnum):
    BINDS_UNLESS_CHIPS_ADDED = "binds_unless_chips_added"
    BINDS_UNLESS_BET_OR_RAISE = "binds_unless_bet_or_raise"
    LOSES_RIGHT_TO_RAISE = "loses_right_to_raise"
    UNSPECIFIED = "unspecified"


class SkippedPlayer(enum.StrEnum):
    LOSES_BET_RIGHT_OR_DEAD_HAND = "loses_bet_right_or_dead_hand"
    UNSPECIFIED = "unspecified"


class VerbalVsAct(enum.StrEnum):
    VERBAL_BINDS = "verbal_binds"
    VERBAL_BINDS_ACTS_JUDGED_WITHOUT_DEALER = "verbal_binds_acts_judged_without_dealer"
    VERBAL_PREVAILS = "verbal_prevails"
    UNSPECIFIED = "unspecified"


class OddChipAnchor(enum.StrEnum):
    FIRST_AFTER_DEALER = "first_after_dealer"
    LEFT_OF_BUTTON = "left_of_button"
    UNSPECIFIED = "unspecified"


class ChipRaceStart(enum.StrEnum):
    BUTTON_OR_DEALER = "button_or_dealer"
    LEFT_OF_BUTTON = "left_of_button"
    UNSPECIFIED = "unspecified"


class ChipRaceRounding(enum.StrEnum):
    ROUND_UP = "round_up"
    NEAREST_MEDIAN_TO_PLAYERS = "nearest_median_to_players"
    UNSPECIFIED = "unspecified"


class SuitOrder(enum.StrEnum):
    SPADES_HEARTS_DIAMONDS_CLUBS = "spades_hearts_diamonds_clubs"
    UNSPECIFIED = "unspecified"


class RabbitHunting(enum.StrEnum):
    FORBIDDEN = "forbidden"
    FORBIDDEN_UNLESS_ALL_AGREE = "forbidden_unless_all_agree"
    UNSPECIFIED = "unspecified"


class HoleCardPosition(enum.StrEnum):
    ABOVE_TABLE_VISIBLE = "above_table_visible"
    ON_TABLE_VISIBLE_IN_FRONT_OF_STACK = "on_table_visible_in_front_of_stack"
    UNSPECIFIED = "unspecified"


class OutsideChipsSanction(enum.StrEnum):
    REMOVED_AND_AVERTISSEMENT = "chips_removed_and_avertissement"
    REMOVED_AND_FAUTE_LOURDE_OR_GRAVE = "chips_removed_and_faute_lourde_or_grave"
    UNSPECIFIED = "unspecified"


class SplashSanction(enum.StrEnum):
    AVERTISSEMENTS = "avertissements"
    SANCTIONS = "sanctions"
    UNSPECIFIED = "unspecified"


class NextHandStart(enum.StrEnum):
    SHUFFLE = "shuffle"
    BLINDS = "blinds"
    UNSPECIFIED = "unspecified"


class ShowdownShowing(enum.StrEnum):
    ALL_MUST_SHOW = "all_must_show"
    LAST_RAISER_FIRST_CLOCKWISE = "last_raiser_first_clockwise_losers_may_muck"
    UNSPECIFIED = "unspecified"


class WinnerByFoldShow(enum.StrEnum):
    IF_SHOWN_TO_ONE_SHOW_ALL = "if_shown_to_one_show_all"
    NONE_PART_OR_ALL_TO_ALL = "none_part_or_all_to_all"
    UNSPECIFIED = "unspecified"


class SanctionLadderKind(enum.StrEnum):
    WARNING_FINE_EXCLUSION = "warning_warning_fine_exclusion"
    GGC_FIVE_LEVELS = "ggc_five_levels"
    CONFIGURED_DEFAULT = "configured_default"


class StackRules(BaseModel):
    """What a club requires of a player's chip stacks (000 13-2, 003 13-2, 13-3)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    no_hidden_chips: bool = Field(description="No chip may be hidden.")
    no_loose_piles: bool = Field(description="No loose piles (tas en vrac).")
    no_mixed_piles: bool = Field(description="No mixed denominations in one pile.")
    racks_only_when_moving: bool = Field(description="Racks are used only to move tables.")
    count_on_request: bool = Field(description="A player must state his count when asked.")


class ClockRule(BaseModel):
    """Calling the clock (003 5-6): wait, then a minute, then a counted-down end; then the hand is dead."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_wait_s: int = Field(gt=0, description="Seconds a player must have had before time may be called.")
    clock_s: int = Field(gt=0, description="Seconds granted once time is called.")
    countdown_s: int = Field(ge=0, description="Seconds counted aloud after the clock, then the hand is dead.")


class Parameters(BaseModel):
    """Every parameter of CATALOG section 4, in its order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_first_raise: Param[MinFirstRaise] = Field(description="Minimum raise over a blind or an opening bet.")
    min_reraise_rule: Param[MinReraise] = Field(description="Minimum re-raise after a raise.")
    short_allin_min_reraise: Param[ShortAllinMinReraise] = Field(
        description="Minimum re-raise after an all-in raise that is not a full raise.")
    short_allin_reopen: Param[ShortAllinReopen] = Field(
        description="Who may re-raise after an all-in raise that is not a full raise.")
    reopen_by_accumulation_threshold: Param[ReopenByAccumulation] = Field(
        description="When several short all-ins give a player who already bet the right to re-raise.")
    allin_below_bb_preflop: Param[AllinBelowBigBlindPreflop] = Field(
        description="Pre-flop all-in for less than the big blind.")
    allin_below_bb_postflop: Param[AllinBelowBigBlindPostflop] = Field(
        description="Post-flop all-in for less than the big blind.")
    fifty_pct_base: Param[FiftyPctBase] = Field(description="What the 50% rule takes 50% of.")
    under_50_silent: Param[Under50Silent] = Field(description="A silent raise below the 50% threshold.")
    declared_under_raise: Param[DeclaredUnderRaise] = Field(description="A declared raise below the minimum.")
    multi_chip_rule: Param[MultiChipRule] = Field(description="Silent multiple-chip push facing a bet.")
    single_chip_facing_bet: Param[SingleChipFacingBet] = Field(
        description="Silent single oversized chip facing a bet (pre-flop the big blind is a bet).")
    single_chip_postflop_open: Param[SingleChipPostflopOpen] = Field(
        description="Silent single chip as the opening bet after the flop.")
    single_chip_declared_raise_no_amount: Param[SingleChipDeclaredRaise] = Field(
        description="Single chip with 'raise' declared but no amount.")
    string_bet_effect: Param[StringBetEffect] = Field(description="What counts when a raise comes in several trips.")
    correction_deadline: Param[CorrectionDeadline] = Field(description="Until when a wrong bet is corrected.")
    after_correction_others: Param[AfterCorrection] = Field(description="What happens to later bets on a correction.")
    pot_limit_miscount: Param[PotLimitMiscount] = Field(description="A pot-limit bet on a wrong pot count.")
    out_of_turn_binding: Param[OutOfTurn] = Field(description="Whether an out-of-turn action binds.")
    skipped_after_three_actions: Param[SkippedPlayer] = Field(
        description="A skipped player after three players acted.")
    verbal_vs_act: Param[VerbalVsAct] = Field(description="Words against acts.")
    odd_chip_anchor: Param[OddChipAnchor] = Field(description="Who gets the odd chip of a split pot.")
    chip_race_start: Param[ChipRaceStart] = Field(description="Where the chip-race deal starts.")
    chip_race_rounding: Param[ChipRaceRounding] = Field(description="Rounding of the number of chips raced.")
    chip_race_suit_order: Param[SuitOrder] = Field(description="Suit order breaking chip-race ties.")
    rabbit_hunting: Param[RabbitHunting] = Field(description="Looking at the cards that would have come.")
    hole_card_position: Param[HoleCardPosition] = Field(description="Where hole cards must be kept.")
    outside_chips_sanction: Param[OutsideChipsSanction] = Field(description="Chips brought from outside.")
    stack_rules: Param[StackRules] = Field(description="How stacks must be arranged.")
    splash_sanction: Param[SplashSanction] = Field(description="Repeated bets into the centre.")
    next_hand_start: Param[NextHandStart] = Field(description="When the next hand starts (retroactivity).")
    showdown_showing: Param[ShowdownShowing] = Field(description="Who shows at showdown, in which order.")
    winner_by_fold_show: Param[WinnerByFoldShow] = Field(description="What a winner by folds may show.")
    clock: Param[ClockRule | None] = Field(description="Calling the clock; null when the rulebook has none.")
    phone_kills_hand: Param[bool] = Field(description="Handling a phone kills the hand.")
    sanction_ladder: Param[SanctionLadderKind] = Field(description="Which sanction ladder (see 'sanctions').")

    def citations(self) -> dict[str, tuple[str, ...]]:
        """Every parameter's references, by parameter name."""
        out: dict[str, tuple[str, ...]] = {}
        for name in type(self).model_fields:
            param = getattr(self, name)
            if isinstance(param, Param):
                out[name] = param.cite
        return out
