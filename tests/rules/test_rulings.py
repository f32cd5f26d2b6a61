"""Bet rulings, from the seeds' own worked examples (test ids name the rule and its citation)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from floorman.core.chips import count_chips
from floorman.core.errors import SchemaError
from floorman.core.rule_ids import RuleId
from floorman.rules.rulebook import load_rulebook
from floorman.rules.ruling_models import BetRuling, BetSituation, situation_from_data, situation_from_json
from floorman.rules.rulings import minimum_raise_to, rule_bet


def situation(*, blinds: tuple[int, int] = (50, 100), street: str = "flop", facing: int = 0, in_before: int = 0,
              last: int | None = None, trips: tuple[tuple[int, ...], ...] = (), declaration: Any = None,
              stack: int | None = None, facing_all_in: bool = False) -> dict[str, Any]:
    """A situation as the JSON a caller sends; `trips` lists each chip's value."""
    return {
        "blinds": list(blinds), "street": street, "facing_bet_to": facing, "actor_in_before": in_before,
        "last_raise_size": last if last is not None else max(facing, blinds[1]),
        "trips": [[c.model_dump() for c in count_chips(trip)] for trip in trips],
        "declaration": declaration, "stack_before": stack, "facing_all_in": facing_all_in,
    }


def rule(book: str, data: dict[str, Any]) -> BetRuling:
    return rule_bet(situation=BetSituation.model_validate(data), rulebook=load_rulebook(book))


@dataclass(frozen=True)
class Case:
    """A worked example: the situation and the expected ruling (action, total, add, returned, reopens, next)."""

    id: str
    book: str
    data: dict[str, Any]
    expected: tuple[str, int, int, int, bool, int]
    provisional: bool | None = None
    cites: tuple[str, ...] = ()
    rule_ids: tuple[RuleId, ...] = ()
    options: tuple[tuple[str, int], ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


TDA_1B = {"blinds": (250, 500), "street": "preflop", "facing": 1100, "last": 600}
TDA_4 = {"blinds": (250, 500), "street": "flop", "facing": 1400, "last": 1400}
OPEN_200 = {"blinds": (50, 100), "street": "flop", "facing": 200, "last": 200}
RERAISE_600 = {"blinds": (50, 100), "street": "flop", "facing": 600, "last": 400}

CASES = [
    # --- TDA Rule 45 (seed 001) -------------------------------------------------------------------------------
    Case("multi_chip_tda_45_ex_1a", "tda2024",
         situation(blinds=(100, 200), facing=1200, trips=((1000, 1000),)),
         ("call", 1200, 0, 800, False, 2400), provisional=True, cites=("TDA 45 A",),
         rule_ids=(RuleId.MULTIPLE_CHIP_BET,)),
    Case("multi_chip_tda_45_ex_1b", "tda2024", situation(**TDA_1B, trips=((500, 1000),)),
         ("call", 1100, 0, 400, False, 1700), provisional=True, cites=("TDA 45 A",)),
    Case("multi_chip_tda_45_ex_2", "tda2024", situation(**TDA_1B, trips=((1000, 100, 100, 100, 100, 100),)),
         ("raise", 1700, 200, 0, True, 2300), provisional=True, cites=("TDA 45 B", "TDA 45 ex. 2"),
         rule_ids=(RuleId.MULTIPLE_CHIP_BET, RuleId.UNDER_RAISE)),
    Case("multi_chip_tda_45_ex_3", "tda2024", situation(**TDA_1B, trips=((1000, 100, 100, 100),)),
         ("call", 1100, 0, 200, False, 1700), provisional=True, cites=("TDA 45 ex. 3",)),
    Case("multi_chip_tda_45_ex_4a", "tda2024", situation(**TDA_4, trips=((1000, 500, 500, 500),)),
         ("raise", 2800, 300, 0, True, 4200), provisional=True),
    Case("multi_chip_tda_45_ex_4b", "tda2024", situation(**TDA_4, trips=((1000, 500, 500),)),
         ("call", 1400, 0, 600, False, 2800), provisional=True),
    Case("multi_chip_tda_45_ex_4a_all_in_b2", "tda2024", situation(**TDA_4, trips=((1000, 500, 500, 500),), stack=2500),
         ("all_in", 2500, 0, 0, False, 3900), provisional=True, cites=("TDA 45 B.2",),
         extra={"all_in": True}),
    Case("multi_chip_tda_45_ex_4b_all_in_b2", "tda2024", situation(**TDA_4, trips=((1000, 500, 500),), stack=2000),
         ("all_in", 2000, 0, 0, False, 3400), provisional=True, cites=("TDA 45 B.2",)),
    Case("multi_chip_tda_45_a_last_chips_all_needed", "tda2024",
         situation(blinds=(100, 200), facing=1200, trips=((1000, 1000),), stack=2000),
         ("call", 1200, 0, 800, False, 2400), provisional=True, extra={"all_in": False}),
    Case("multi_chip_tda_45_declared_raise_first", "tda2024",
         situation(blinds=(100, 200), facing=1200, trips=((1000, 1000),), declaration="raise"),
         ("raise", 2400, 400, 0, True, 3600), provisional=False),
    # --- TDA Rule 52-A (seed 002): open 600, minimum raise 1200 ---------------------------------------------------
    Case("min_raise_tda_52a_open_600", "tda2024", situation(blinds=(100, 200), trips=((500, 100),)),
         ("bet", 600, 0, 0, True, 1200)),
    Case("under_raise_tda_52a_silent_1000", "tda2024",
         situation(blinds=(100, 200), facing=600, trips=((100,) * 10,)),
         ("raise", 1200, 200, 0, True, 1800), provisional=True),
    Case("under_raise_tda_52a_declared_1000", "tda2024",
         situation(blinds=(100, 200), facing=600, trips=((500, 500),), declaration={"raise_to": 1000}),
         ("raise", 1200, 200, 0, True, 1800), provisional=False, rule_ids=(RuleId.VERBAL_DECLARATION,
                                                                            RuleId.UNDER_RAISE)),
    # --- minimum raise: 000 9-8 (300) vs ggc 8-8 (400) -------------------------------------------------------------
    Case("min_raise_000_9_8", "club_000", situation(facing=100, trips=((100, 100),)),
         ("raise", 200, 0, 0, True, 300), provisional=False, cites=("9-8",)),
    Case("min_raise_004_9_8", "club_004", situation(facing=100, trips=((100, 100),)),
         ("raise", 200, 0, 0, True, 300), cites=("9-8",)),
    Case("min_raise_ggc_8_8", "ggc", situation(facing=100, trips=((100, 100),)),
         ("raise", 200, 0, 0, True, 400), cites=("8-8",)),
    Case("min_raise_tda_52a_open_100", "tda2024", situation(facing=100, trips=((100, 100),)),
         ("raise", 200, 0, 0, True, 300)),
    # --- short all-in raises: 000 9-13, 004 9-13, ggc 8-9 -----------------------------------------------------------
    Case("short_allin_000_9_13_100_190", "club_000",
         situation(facing=100, trips=((100, 25, 25, 25, 10, 5),), stack=190),
         ("all_in", 190, 0, 0, False, 290), cites=("9-13",), rule_ids=(RuleId.SHORT_ALLIN_RERAISE,)),
    Case("short_allin_000_9_13_then_290", "club_000",
         situation(facing=190, last=100, facing_all_in=True, trips=((100, 100, 50, 25, 10, 5),)),
         ("raise", 290, 0, 0, True, 390), cites=("9-13",)),
    Case("short_allin_004_9_13_200_290", "club_004",
         situation(facing=200, trips=((100, 100, 25, 25, 25, 10, 5),), stack=290),
         ("all_in", 290, 0, 0, False, 490), cites=("9-13",)),
    Case("short_allin_004_9_13_big_blind_floor", "club_004",
         situation(blinds=(100, 200), facing=300, last=100, facing_all_in=True, trips=((100, 100, 100),)),
         ("call", 300, 0, 0, False, 500)),
    Case("short_allin_000_9_13_no_big_blind_floor", "club_000",
         situation(blinds=(100, 200), facing=300, last=100, facing_all_in=True, trips=((100, 100, 100),)),
         ("call", 300, 0, 0, False, 400)),
    Case("short_allin_ggc_8_9_290", "ggc", situation(facing=200, trips=((100, 100, 25, 25, 25, 10, 5),), stack=290),
         ("all_in", 290, 0, 0, False, 580), cites=("8-9",)),
    Case("short_allin_tda_last_full_raise", "tda2024",
         situation(facing=200, trips=((100, 100, 25, 25, 25, 10, 5),), stack=290),
         ("all_in", 290, 0, 0, False, 490)),
    # --- all-in below the big blind: 004 9-7 (BB 100, 30 → call 30, raise to 130), 000 9-6 ------------------------
    Case("allin_below_bb_004_9_7_all_in_30", "club_004", situation(trips=((10, 10, 10),), stack=30),
         ("all_in", 30, 0, 0, True, 130), cites=("9-7",), rule_ids=(RuleId.ALLIN_BELOW_BIG_BLIND,)),
    Case("allin_below_bb_004_9_7_call_30", "club_004", situation(facing=30, last=100, trips=((10, 10, 10),)),
         ("call", 30, 0, 0, False, 130)),
    Case("allin_below_bb_004_9_7_raise_130", "club_004", situation(facing=30, last=100, trips=((100, 25, 5),)),
         ("raise", 130, 0, 0, True, 230), cites=("9-7",)),
    Case("allin_below_bb_000_9_6_preflop_bb_is_the_bet", "club_000",
         situation(blinds=(100, 200), street="preflop", facing=150, last=200, trips=((100, 100),)),
         ("call", 200, 0, 0, False, 400)),
    # --- 50% rule, each rulebook ----------------------------------------------------------------------------------
    Case("under_raise_000_9_9_over_50", "club_000", situation(**OPEN_200, trips=((100, 100, 100, 25),)),
         ("raise", 400, 75, 0, True, 600), provisional=True, cites=("9-9",)),
    Case("under_raise_000_9_9_under_50_td_asks", "club_000", situation(**OPEN_200, trips=((100, 100, 25, 25, 25),)),
         ("player_choice", 275, 0, 0, False, 400), provisional=True, cites=("9-9",),
         options=(("call", 200), ("raise", 400))),
    Case("under_raise_004_9_9_over_50", "club_004", situation(**OPEN_200, trips=((100, 100, 100, 25),)),
         ("raise", 400, 75, 0, True, 600), provisional=True, cites=("9-9",)),
    Case("under_raise_004_9_9_under_50_call", "club_004", situation(**OPEN_200, trips=((100, 100, 25, 25, 25),)),
         ("call", 200, 0, 75, False, 400), provisional=True, cites=("9-9",)),
    Case("under_raise_ggc_8_10_over_50", "ggc", situation(**OPEN_200, trips=((100, 100, 100, 25),)),
         ("raise", 400, 75, 0, True, 800), provisional=True, cites=("8-10",)),
    Case("under_raise_ggc_8_10_under_50_call", "ggc", situation(**OPEN_200, trips=((100, 100, 25, 25, 25),)),
         ("call", 200, 0, 75, False, 400), provisional=True, cites=("8-10",)),
    Case("under_raise_ggc_8_8_double_reraise_850", "ggc", situation(**RERAISE_600, trips=((500, 100, 100, 100, 50),)),
         ("call", 600, 0, 250, False, 1200), provisional=True),
    Case("under_raise_004_9_8_reraise_850", "club_004", situation(**RERAISE_600, trips=((500, 100, 100, 100, 50),)),
         ("raise", 1000, 150, 0, True, 1400), provisional=True),
    Case("under_raise_000_9_9_declared", "club_000", situation(**OPEN_200, trips=((100, 100, 50),),
                                                               declaration="raise"),
         ("raise", 400, 150, 0, True, 600), provisional=False, cites=("9-9",)),
    Case("under_call_004_9_9", "club_004", situation(**OPEN_200, trips=((100, 50),)),
         ("call", 200, 50, 0, False, 400), cites=("9-9",), rule_ids=(RuleId.UNDER_CALL,)),
    Case("under_call_all_in_000", "club_000", situation(**OPEN_200, trips=((100, 50),), stack=150),
         ("all_in", 150, 0, 0, False, 400), extra={"all_in": True}),
    Case("min_opening_bet_004_9_5", "club_004", situation(trips=((25, 25),)),
         ("bet", 100, 50, 0, True, 200), rule_ids=(RuleId.MIN_OPENING_BET,), cites=("9-5",)),
    # --- single oversized chip: 000 9-17, 004 9-18 -----------------------------------------------------------------
    Case("single_chip_000_9_17_facing_bet", "club_000", situation(**OPEN_200, trips=((1000,),)),
         ("call", 200, 0, 800, False, 400), provisional=True, cites=("9-17",),
         rule_ids=(RuleId.SINGLE_OVERSIZED_CHIP,)),
    Case("single_chip_000_9_17_preflop_big_blind", "club_000",
         situation(blinds=(100, 200), street="preflop", facing=200, trips=((1000,),)),
         ("call", 200, 0, 800, False, 400), provisional=True, cites=("9-17",)),
    Case("single_chip_000_9_17_postflop_open", "club_000", situation(street="turn", trips=((1000,),)),
         ("bet", 1000, 0, 0, True, 2000), provisional=True, cites=("9-17",)),
    Case("single_chip_004_9_18_facing_bet", "club_004", situation(**OPEN_200, trips=((1000,),)),
         ("call", 200, 0, 800, False, 400), provisional=True, cites=("9-18",)),
    Case("single_chip_004_9_18_postflop_open", "club_004", situation(street="river", trips=((1000,),)),
         ("bet", 1000, 0, 0, True, 2000), provisional=True, cites=("9-18",)),
    Case("single_chip_004_9_18_declared_raise_no_amount", "club_004",
         situation(**OPEN_200, trips=((1000,),), declaration="raise"),
         ("raise", 1000, 0, 0, True, 1800), provisional=False, cites=("9-18",)),
    Case("single_chip_004_9_18_declared_raise_small_chip", "club_004",
         situation(**OPEN_200, trips=((250,),), declaration="raise"),
         ("raise", 400, 150, 0, True, 600), cites=("9-18", "9-9")),
    Case("single_chip_tda_not_in_seeds_default_call", "tda2024", situation(**OPEN_200, trips=((1000,),)),
         ("call", 200, 0, 800, False, 400), provisional=True),
    Case("single_chip_ggc_silent_50_pct_rule", "ggc", situation(**OPEN_200, trips=((1000,),)),
         ("raise", 1000, 0, 0, True, 2000), provisional=False),
    Case("single_chip_004_9_18_last_chip_all_in", "club_004", situation(**OPEN_200, trips=((1000,),), stack=1000),
         ("all_in", 1000, 0, 0, True, 1800), extra={"all_in": True}),
    # --- string bets: 004 9-17 (first step only) vs 000 9-16 / ggc 8-16 (flag) -------------------------------------
    Case("string_bet_004_9_17", "club_004", situation(**OPEN_200, trips=((100, 100), (100, 100))),
         ("call", 200, 0, 200, False, 400), provisional=True, cites=("9-17",),
         rule_ids=(RuleId.STRING_BET,), extra={"string_bet": True}),
    Case("string_bet_004_9_17_first_step_raise", "club_004", situation(**OPEN_200, trips=((100,) * 4, (100, 100))),
         ("raise", 400, 0, 200, True, 600), provisional=True, extra={"string_bet": True}),
    Case("string_bet_000_9_16_flag", "club_000", situation(**OPEN_200, trips=((100, 100), (100, 100))),
         ("raise", 400, 0, 0, True, 600), provisional=True, cites=("9-16",),
         options=(("raise", 400), ("call", 200)), extra={"string_bet": True}),
    Case("string_bet_ggc_8_16_flag", "ggc", situation(**OPEN_200, trips=((100, 100), (100, 100))),
         ("raise", 400, 0, 0, True, 800), provisional=True, cites=("8-16",),
         options=(("raise", 400), ("call", 200)), extra={"string_bet": True}),
    Case("string_bet_tda_not_in_seeds_flag", "tda2024", situation(**OPEN_200, trips=((100, 100), (100, 100))),
         ("raise", 400, 0, 0, True, 600), provisional=True, options=(("raise", 400), ("call", 200)),
         extra={"string_bet": True}),
    Case("string_bet_004_9_17_call_in_two_trips_is_no_string_bet", "club_004",
         situation(**OPEN_200, trips=((100,), (100,))), ("call", 200, 0, 0, False, 400),
         extra={"string_bet": False}),
    Case("string_bet_004_9_3_declared_raise_is_legal", "club_004",
         situation(**OPEN_200, trips=((100, 100), (100, 100)), declaration="raise"),
         ("raise", 400, 0, 0, True, 600), provisional=False, extra={"string_bet": False}),
    # --- declarations and checks -----------------------------------------------------------------------------------
    Case("verbal_call_binds_000_9_2", "club_000", situation(**OPEN_200, trips=((1000,),), declaration="call"),
         ("call", 200, 0, 800, False, 400), provisional=False, cites=("9-2",)),
    Case("verbal_all_in_with_stack", "ggc", situation(**OPEN_200, trips=((1000,),), declaration="all-in", stack=5000),
         ("all_in", 5000, 4000, 0, True, 10000), extra={"all_in": True}),
    Case("verbal_bet_below_big_blind_004_9_5", "club_004",
         situation(blinds=(100, 200), trips=((100,),), declaration={"bet": 150}),
         ("bet", 200, 100, 0, True, 400), cites=("9-5",)),
    Case("check_no_bet", "tda2024", situation(), ("check", 0, 0, 0, False, 100)),
    Case("check_big_blind_option", "tda2024",
         situation(blinds=(100, 200), street="preflop", facing=200, in_before=200), ("check", 200, 0, 0, False, 400)),
    Case("single_chip_000_9_17_big_blind_option_is_check", "club_000",
         situation(blinds=(100, 200), street="preflop", facing=200, in_before=200, trips=((1000,),)),
         ("check", 200, 0, 1000, False, 400), provisional=True),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_ruling(case: Case) -> None:
    ruling = rule(case.book, case.data)
    got = (ruling.action, ruling.total_to, ruling.chips_to_add, ruling.chips_returned, ruling.reopens_betting,
           ruling.next_min_raise_to)
    assert got == case.expected
    if case.provisional is not None:
        assert ruling.provisional is case.provisional
    rules_cited = {citation.rule for citation in ruling.citations}
    assert set(case.cites) <= rules_cited, rules_cited
    assert all(citation.rulebook == case.book and citation.text_fr for citation in ruling.citations)
    assert set(case.rule_ids) <= set(ruling.rule_ids)
    assert tuple((o.action, o.total_to) for o in ruling.options) == case.options
    for name, value in case.extra.items():
        assert getattr(ruling, name) == value, name
    assert ruling.explanation.fr and ruling.explanation.en


def test_player_choice_000_9_9_options_say_what_moves() -> None:
    ruling = rule("club_000", situation(**OPEN_200, trips=((100, 100, 25, 25, 25),)))
    call, full = ruling.options
    assert (call.chooser, call.chips_returned, call.chips_to_add, call.reopens_betting) == ("player", 75, 0, False)
    assert (full.chooser, full.chips_to_add, full.next_min_raise_to, full.reopens_betting) == ("player", 125, 600, True)


def test_string_bet_000_9_16_director_options_first_trip_returns_the_rest() -> None:
    ruling = rule("club_000", situation(**OPEN_200, trips=((100, 100), (100, 100))))
    as_pushed, first_only = ruling.options
    assert as_pushed.chooser == first_only.chooser == "director"
    assert (first_only.action, first_only.chips_returned) == ("call", 200)


def test_chain_next_fields_feed_the_next_ruling_000_9_13() -> None:
    """100 - 190 (all-in) - 290: the outputs of one ruling are the inputs of the next."""
    first = rule("club_000", situation(facing=100, trips=((100, 50, 25, 10, 5),), stack=190))
    nxt = situation(facing=first.next_facing_bet_to, last=first.next_last_raise_size, facing_all_in=True,
                    trips=((100, 50, 25, 10, 5),))
    second = rule("club_000", nxt)
    assert (second.min_raise_to, second.action) == (290, "call")


def test_ruling_is_pure() -> None:
    data = situation(**TDA_1B, trips=((1000, 100, 100, 100, 100, 100),))
    assert rule("tda2024", data) == rule("tda2024", data)


BAD = [
    ("blinds", {"blinds": [200, 100]}, "blinds", "[200, 100]"),
    ("street", {"street": "showdown"}, "street", "'showdown'"),
    ("game", {"game": "plo"}, "game", "'plo'"),
    ("actor_in_before", {"facing_bet_to": 200, "actor_in_before": 300}, "actor_in_before", "300"),
    ("last_raise_size_zero", {"last_raise_size": 0}, "last_raise_size", "0"),
    ("last_raise_size_above_facing", {"facing_bet_to": 200, "last_raise_size": 400}, "last_raise_size", "400"),
    ("empty_trip", {"trips": [[]]}, "trips", "trip 0 is empty"),
    ("chip_denom", {"trips": [[{"denom": 0, "count": 1}]]}, "trips[0][0].denom", "got 0"),
    ("declaration_word", {"declaration": "fold"}, "declaration", "'fold'"),
    ("declaration_bet_facing", {"facing_bet_to": 200, "declaration": {"bet": 300}}, "declaration.bet", "200"),
    ("declaration_raise_to_low", {"facing_bet_to": 200, "declaration": {"raise_to": 150}}, "declaration.raise_to",
     "150"),
    ("stack_below_push", {"trips": [[{"denom": 100, "count": 3}]], "stack_before": 200}, "stack_before", "200"),
    ("unknown_field", {"seat": 3}, "seat", "unknown field"),
    ("no_action_facing", {"facing_bet_to": 200, "trips": []}, "trips", "facing 200"),
    ("preflop_no_blind", {"street": "preflop", "facing_bet_to": 0}, "facing_bet_to", "got 0"),
]


@pytest.mark.parametrize(("change", "field_name", "value"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_invalid_situation_names_field_and_value(change: dict[str, Any], field_name: str, value: str) -> None:
    data = {"blinds": [50, 100], "street": "flop", "facing_bet_to": 0, "last_raise_size": 100,
            "trips": [[{"denom": 100, "count": 1}]], **change}
    with pytest.raises(SchemaError, match=r"situation\.json: ") as info:
        situation_from_data(data, source="situation.json")
    assert field_name in str(info.value)
    assert value in str(info.value)


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object, got list"),
])
def test_invalid_json_is_a_schema_error(text: str, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        situation_from_json(text, source="x.json")


@pytest.mark.parametrize(("book", "expected"), [("tda2024", 1200), ("club_000", 1200), ("club_004", 1200),
                                               ("ggc", 1200)])
def test_minimum_raise_to_after_open_600_tda_52a(book: str, expected: int) -> None:
    data = BetSituation.model_validate(situation(blinds=(100, 200), facing=600, declaration="call"))
    assert minimum_raise_to(situation=data, rulebook=load_rulebook(book)) == expected


@pytest.mark.parametrize(("book", "expected"), [("tda2024", 1000), ("club_000", 1000), ("club_004", 1000),
                                               ("ggc", 1200)])
def test_minimum_reraise_after_raise_to_600_000_9_8_vs_ggc_8_8(book: str, expected: int) -> None:
    data = BetSituation.model_validate(situation(blinds=(100, 200), facing=600, last=400, declaration="call"))
    assert minimum_raise_to(situation=data, rulebook=load_rulebook(book)) == expected
