"""Scripted scenarios: the YAML format (pydantic models) and loading, with errors naming the file and field.

A scenario describes one recording: the table (layout, appearance, lighting, camera), the players and their
starting stacks, and a timeline of physical actions (pushes, deals, folds, ...) including infractions, each
infraction declaring the alert the rules checker must raise. The engine (`floorman.datasets.timeline`)
turns it into scenes, truth events and expected alerts. The format is documented in docs/scenarios.md.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from floorman.core.cards import Card
from floorman.core.chips import ChipSet
from floorman.core.config import model_from_yaml_file, model_from_yaml_text
from floorman.core.errors import ConfigError
from floorman.core.layout import TableLayout, bundled_layout_names
from floorman.core.rule_ids import RuleId

FPS = 30
RULEBOOKS = ("tda2024", "ggc", "club_000", "club_004")

ChipMap = dict[Annotated[int, Field(gt=0)], Annotated[int, Field(ge=1)]]
"""Chips as {denomination: count}, e.g. ``{100: 4, 25: 2}``."""


def _check_cards(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [str(Card.parse(v)) for v in values]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExpectSpec(_Model):
    """An alert the rules checker must raise because of this action."""

    rule: RuleId = Field(description="Catalog rule id ('A8') or name ('string_bet').")
    seat: int | None = Field(default=None, ge=1, le=10,
                             description="Seat at fault; defaults to the action's seat (none for dealer errors).")
    window: tuple[float, float] | None = Field(
        default=None, description="[t_start, t_end] in seconds; default: the act's time span plus 5 s.")
    note: str = Field(default="", description="What happens, for the reader of the truth file.")

    @field_validator("rule", mode="before")
    @classmethod
    def _rule(cls, value: object) -> object:
        return RuleId.parse(value) if isinstance(value, str) else value

    @field_validator("window")
    @classmethod
    def _window(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and not 0 <= value[0] <= value[1]:
            raise ValueError(f"expected 0 <= t_start <= t_end, got {list(value)}")
        return value


class ActionBase(_Model):
    """Fields every timeline action has: when it starts, and the alerts it should raise."""

    at: float | None = Field(default=None, ge=0, description="Absolute start time in seconds.")
    after: float | None = Field(
        default=None, ge=0,
        description="Start this many seconds after the previous action ends (default 0.5 s when `at` is not set).")
    expect: list[ExpectSpec] | None = Field(
        default=None, description="Expected alerts; default: the action type's own (none for legal acts).")

    @model_validator(mode="after")
    def _one_time(self) -> ActionBase:
        if self.at is not None and self.after is not None:
            raise ValueError("give either 'at' or 'after', not both")
        return self


class SeatAction(ActionBase):
    seat: int = Field(ge=1, le=10, description="Seat that acts.")


class PushFields(SeatAction):
    chips: ChipMap | None = Field(default=None, description="Chips pushed, {denomination: count}, all trips.")
    amount: int | None = Field(default=None, gt=0,
                               description="Value pushed when `chips` is not given (chips picked from the stack).")
    trips: int = Field(default=1, ge=1, le=5, description="Forward trips of the hand (chips split evenly).")
    trip_duration: float = Field(default=1.2, ge=0.6, le=4.0, description="Seconds per trip, there and back.")
    gap: float = Field(default=0.35, ge=0, le=5, description="Pause between trips, seconds.")
    splash: bool = Field(default=False, description="The chips land in the pot instead of the bet zone.")

    @model_validator(mode="after")
    def _what(self) -> PushFields:
        if (self.chips is None) == (self.amount is None):
            raise ValueError("give exactly one of 'chips' or 'amount'")
        return self


class Push(PushFields):
    """A bet, call or raise: chips carried from the stack beyond the bet line, in one or more trips."""

    do: Literal["push"] = Field(description="Action type.")


class StringBet(PushFields):
    """Infraction A8: a raise in several trips without a prior declaration."""

    do: Literal["string_bet"] = Field(description="Action type.")
    trips: int = Field(default=2, ge=2, le=5, description="Forward trips (at least 2).")


class Splash(PushFields):
    """Infraction B1: a push whose chips land in the pot."""

    do: Literal["splash"] = Field(description="Action type.")
    splash: bool = Field(default=True, description="Always true for this action.")


class OutOfTurn(SeatAction):
    """Infraction C1: a seat acts before the one whose turn it is (push, tap or fold)."""

    do: Literal["out_of_turn"] = Field(description="Action type.")
    act: Literal["push", "tap", "fold"] = Field(description="What the seat does out of turn.")
    chips: ChipMap | None = Field(default=None, description="Chips, when act is push.")
    amount: int | None = Field(default=None, gt=0, description="Value, when act is push and chips are not given.")

    @model_validator(mode="after")
    def _what(self) -> OutOfTurn:
        if self.act == "push" and (self.chips is None) == (self.amount is None):
            raise ValueError("act 'push': give exactly one of 'chips' or 'amount'")
        return self


class PostBlinds(ActionBase):
    """The small and big blind (plus ante on the big blind) pushed by the two seats after the button."""

    do: Literal["post_blinds"] = Field(description="Action type.")


class Shuffle(ActionBase):
    """The dealer collects every card into the deck and shuffles (a new seeded order)."""

    do: Literal["shuffle"] = Field(description="Action type.")
    duration: float = Field(default=3.0, ge=1.0, le=20.0, description="Seconds of shuffling.")


class ExposedCard(_Model):
    seat: int = Field(ge=1, le=10, description="Seat whose card lands face up.")
    index: Literal[1, 2] = Field(default=1, description="First or second card of that seat.")


class Deal(ActionBase):
    """Two hole cards to every seat in the hand, one at a time clockwise from the button's left."""

    do: Literal["deal"] = Field(description="Action type.")
    seats: list[int] | None = Field(default=None, description="Seats dealt in (default: every seated player).")
    cards: dict[int, list[str]] | None = Field(
        default=None, description="Explicit hole cards per seat, e.g. {3: [AS, KD]}; others from the deck.")
    exposed: ExposedCard | None = Field(default=None, description="A card that lands face up.")
    card_time: float = Field(default=0.3, ge=0.15, le=1.5, description="Seconds per card.")

    @field_validator("cards")
    @classmethod
    def _cards(cls, value: dict[int, list[str]] | None) -> dict[int, list[str]] | None:
        if value is None:
            return None
        checked: dict[int, list[str]] = {}
        for seat, cards in value.items():
            if len(cards) != 2:
                raise ValueError(f"seat {seat}: expected 2 hole cards, got {len(cards)}")
            checked[seat] = _check_cards(cards) or []
        return checked


class Tap(SeatAction):
    """A check: the player taps the table in front of the stack."""

    do: Literal["tap"] = Field(description="Action type.")
    count: int = Field(default=2, ge=1, le=5, description="Number of taps.")


class Fold(SeatAction):
    """The player's hole cards go face down to the muck."""

    do: Literal["fold"] = Field(description="Action type.")


class Burn(ActionBase):
    """The dealer burns one card face down to the muck."""

    do: Literal["burn"] = Field(description="Action type.")


class BoardFields(ActionBase):
    cards: list[str] | None = Field(default=None, description="Explicit board cards (default: from the deck).")
    burn: bool = Field(default=True, description="Burn a card first; false is a burn error (E4).")
    premature: bool = Field(default=False,
                            description="Dealt before the betting round ended: expects E2 by default.")

    @field_validator("cards")
    @classmethod
    def _cards(cls, value: list[str] | None) -> list[str] | None:
        return _check_cards(value)


class Flop(BoardFields):
    """Burn, then three board cards face up."""

    do: Literal["flop"] = Field(description="Action type.")

    @field_validator("cards")
    @classmethod
    def _three(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(value) != 3:
            raise ValueError(f"expected 3 flop cards, got {len(value)}")
        return value


class Turn(BoardFields):
    """Burn, then the fourth board card."""

    do: Literal["turn"] = Field(description="Action type.")


class River(BoardFields):
    """Burn, then the fifth board card."""

    do: Literal["river"] = Field(description="Action type.")


class Gather(ActionBase):
    """The dealer sweeps every bet zone into the pot."""

    do: Literal["gather"] = Field(description="Action type.")


class Award(SeatAction):
    """The dealer pushes the whole pot to the winner's stack."""

    do: Literal["award"] = Field(description="Action type.")


class Showdown(ActionBase):
    """Seats turn their hole cards face up in place."""

    do: Literal["showdown"] = Field(description="Action type.")
    seats: list[int] = Field(min_length=1, description="Seats that show, in order.")


class DeclarationAction(SeatAction):
    """A verbal declaration typed on the floor keypad (no motion)."""

    do: Literal["declaration"] = Field(description="Action type.")
    declaration: Literal["call", "raise", "all-in", "check", "fold", "bet", "raise_to", "time",
                         "agree_rabbit"] = Field(description="What was declared.")
    amount: int | None = Field(default=None, ge=0, description="Amount for bet / raise_to.")


class PocketChips(SeatAction):
    """Infraction D2: a hand brings chips over the rail from below the table and adds them to the stack."""

    do: Literal["pocket_chips"] = Field(description="Action type.")
    chips: ChipMap = Field(description="Chips brought in.")


class HideChips(SeatAction):
    """Infraction D1 (covered: a hand rests on the stack) or D3 (removed: chips taken off over the rail)."""

    do: Literal["hide_chips"] = Field(description="Action type.")
    mode: Literal["covered", "removed"] = Field(description="Covered by a resting hand, or removed off table.")
    chips: ChipMap | None = Field(default=None, description="Chips removed (mode removed).")
    fraction: float = Field(default=0.6, gt=0, lt=1, description="Share of the stack covered (mode covered).")
    hold: float = Field(default=5.0, ge=1, le=60, description="Seconds the hand rests (mode covered).")

    @model_validator(mode="after")
    def _chips(self) -> HideChips:
        if self.mode == "removed" and not self.chips:
            raise ValueError("mode 'removed': give the 'chips' taken")
        return self


class RabbitHunt(ActionBase):
    """Infraction F6: after the hand ended, cards turned face up from the deck stub."""

    do: Literal["rabbit_hunt"] = Field(description="Action type.")
    count: int = Field(default=2, ge=1, le=5, description="Cards turned.")
    to: Literal["board", "deck"] = Field(default="board", description="Where they land: next board slots, or "
                                         "spread beside the stub.")
    seat: int | None = Field(default=None, ge=1, le=10, description="Seat that asked for it (the one at fault).")
    by: Literal["dealer", "player"] = Field(
        default="dealer", description="Whose hand turns the cards: the dealer's (at the seat's request: the camera "
        "cannot see who asked), or the player's own (`seat`), reaching into the deck zone."
    )

    @model_validator(mode="after")
    def _player_needs_seat(self) -> RabbitHunt:
        if self.by == "player" and self.seat is None:
            raise ValueError("by: player needs the seat of the player who turns the cards")
        return self


class Protect(SeatAction):
    """Look-alike: a single chip placed on the hole cards as a card protector."""

    do: Literal["protect"] = Field(description="Action type.")
    chip: int = Field(gt=0, description="Denomination of the protector chip.")
    remove: bool = Field(default=False, description="Take the protector back from the cards to the stack.")


class Square(SeatAction):
    """Look-alike: the player squares the chips already in his bet zone (no chips added)."""

    do: Literal["square"] = Field(description="Action type.")
    duration: float = Field(default=1.5, ge=0.8, le=5, description="Seconds.")


class Change(SeatAction):
    """Look-alike: the dealer makes change, taking chips from the bet zone and giving chips back."""

    do: Literal["change"] = Field(description="Action type.")
    take: ChipMap = Field(description="Chips the dealer takes from the bet zone to the tray.")
    bet: ChipMap | None = Field(default=None, description="Chips the dealer puts into the bet zone.")
    back: ChipMap | None = Field(default=None, description="Chips the dealer slides back to the player's stack.")


class MoveButton(ActionBase):
    """The dealer moves the button to a seat (default: the next seated player clockwise)."""

    do: Literal["move_button"] = Field(description="Action type.")
    seat: int | None = Field(default=None, ge=1, le=10, description="New button seat.")


Action = Annotated[
    Push | StringBet | Splash | OutOfTurn | PostBlinds | Shuffle | Deal | Tap | Fold | Burn | Flop | Turn | River
    | Gather | Award | Showdown | DeclarationAction | PocketChips | HideChips | RabbitHunt | Protect | Square
    | Change | MoveButton,
    Field(discriminator="do"),
]
ACTION_TYPES = ("push", "string_bet", "splash", "out_of_turn", "post_blinds", "shuffle", "deal", "tap", "fold",
                "burn", "flop", "turn", "river", "gather", "award", "showdown", "declaration", "pocket_chips",
                "hide_chips", "rabbit_hunt", "protect", "square", "change", "move_button")


class LevelSpec(_Model):
    level: int = Field(default=1, ge=1, description="Level number.")
    small_blind: int = Field(default=100, ge=0, description="Small blind.")
    big_blind: int = Field(default=200, gt=0, description="Big blind.")
    ante: int = Field(default=0, ge=0, description="Big-blind ante, posted with the big blind.")


class CameraSpec(_Model):
    """A preset view, optionally overridden point by point."""

    preset: Literal["overhead", "tilted"] = Field(
        default="overhead", description="overhead: the whole table straight down; tilted: from behind the dealer.")
    eye: tuple[float, float, float] | None = Field(default=None, description="Camera position, table mm.")
    target: tuple[float, float, float] | None = Field(default=None, description="Point looked at, table mm.")
    size: tuple[Annotated[int, Field(ge=16, le=8192)], Annotated[int, Field(ge=16, le=8192)]] = Field(
        default=(1280, 720), description="Image width and height in pixels.")
    hfov_deg: float | None = Field(default=None, ge=5, le=150, description="Horizontal field of view, degrees.")


class AppearanceSpec(_Model):
    surface: Literal["felt", "wood"] = Field(default="felt", description="Table surface material.")
    colour: str = Field(default="#266e3e", description="Surface colour '#rrggbb'.")
    texture_seed: int = Field(default=0, ge=0, description="Seed of the surface texture.")
    bet_line_colour: str = Field(default="#d7cda0", description="Printed bet line colour.")
    bet_line_visible: bool = Field(default=True, description="Whether the bet line is printed.")
    rail_colour: str = Field(default="#1e1816", description="Rail colour.")
    logo: bool = Field(default=False, description="Print a logo in the centre.")


class LightingSpec(_Model):
    colour_temperature_k: float = Field(default=4500.0, ge=2000, le=9000, description="Colour temperature, K.")
    intensity: float = Field(default=1.0, gt=0.2, le=2.0, description="Overall light level.")
    gradient_direction_deg: float = Field(default=0.0, description="Direction of the brightness gradient.")
    gradient_strength: float = Field(default=0.0, ge=0, le=0.8, description="0 flat; 0.3 = 30 % darker on a side.")
    shadow_strength: float = Field(default=0.35, ge=0, le=1, description="Object shadow darkness.")


class EffectsSpec(_Model):
    """Camera image effects (floorman.datasets.effects.Effects), fixed for the whole video; the sensor noise is
    drawn anew for every frame."""

    colour_temperature_k: float | None = Field(default=None, ge=2000, le=9000,
                                               description="White-balance error: the light's temperature, K.")
    intensity: float = Field(default=1.0, gt=0.2, le=3.0, description="Exposure gain.")
    gradient_direction_deg: float = Field(default=0.0, description="Direction of the image brightness gradient.")
    gradient_strength: float = Field(default=0.0, ge=0, le=0.8, description="0.3 = 30 % darker on one side.")
    focus_blur_sigma_px: float = Field(default=0.0, ge=0, le=5, description="Out-of-focus blur, pixels.")
    noise_sigma: float = Field(default=0.0, ge=0, le=30, description="Gaussian read noise, 8-bit levels.")
    shot_noise: float = Field(default=0.0, ge=0, le=5, description="Poisson-like noise factor.")
    jpeg_quality: int | None = Field(default=None, ge=5, le=100, description="JPEG round-trip quality.")


class SeatPlayer(_Model):
    seat: int = Field(ge=1, le=10, description="Seat number in the layout.")
    player: str = Field(default="", description="Player name.")
    stack: ChipMap = Field(description="Starting stack, {denomination: count}.")


class ScenarioSpec(_Model):
    """One scripted recording."""

    name: str = Field(pattern=r"^[a-z0-9_]+$", description="Identifier (file stem for bundled scenarios).")
    description: str = Field(default="", description="What happens, in a sentence or two.")
    duration: float = Field(gt=0, le=600, description="Length of the video in seconds.")
    seed: int = Field(default=0, ge=0, description="Seed of the deck shuffles and small random variations.")
    table_id: str = Field(default="sim", pattern=r"^[A-Za-z0-9_.-]+$", description="Table id in the events.")
    layout: str = Field(default="oval9", description="Bundled layout name, or a path relative to this file.")
    rulebook: Literal["tda2024", "ggc", "club_000", "club_004"] = Field(
        default="tda2024", description="Rulebook the checker should run.")
    level: LevelSpec = Field(default_factory=LevelSpec, description="Blinds level at the start.")
    camera: CameraSpec = Field(default_factory=CameraSpec, description="The fixed camera.")
    appearance: AppearanceSpec = Field(default_factory=AppearanceSpec, description="Table look.")
    lighting: LightingSpec = Field(default_factory=LightingSpec, description="Lighting.")
    effects: EffectsSpec | None = Field(default=None, description="Image effects (none by default).")
    seats: list[SeatPlayer] = Field(min_length=2, description="Seated players and their starting stacks.")
    button: int = Field(ge=1, le=10, description="Seat of the dealer button.")
    timeline: list[Action] = Field(min_length=1, description="The actions, in time order.")

    @field_validator("appearance")
    @classmethod
    def _colours(cls, value: AppearanceSpec) -> AppearanceSpec:
        from floorman.core.chips import parse_hex_colour

        for colour in (value.colour, value.bet_line_colour, value.rail_colour):
            parse_hex_colour(colour)
        return value

    @property
    def seat_numbers(self) -> tuple[int, ...]:
        return tuple(sorted(s.seat for s in self.seats))


class LoadedScenario(BaseModel):
    """A validated scenario with its resolved layout and chip set, and where it came from."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    spec: ScenarioSpec
    source: str
    layout: TableLayout
    chipset: ChipSet
    text: str


def scenario_folder() -> Path:
    return Path(str(resources.files("floorman.datasets").joinpath("scenarios")))


def bundled_scenario_names() -> list[str]:
    folder = scenario_folder()
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def resolve_scenario_path(name_or_path: str) -> Path:
    """A path to an existing file, or the bundled scenario of that name."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ConfigError("file not found", source=str(path))
        return path
    names = bundled_scenario_names()
    if name_or_path not in names:
        raise ConfigError(f"no such file or bundled scenario {name_or_path!r}; bundled: {', '.join(names)}",
                          source=name_or_path)
    return scenario_folder() / f"{name_or_path}.yaml"


def load_scenario(name_or_path: str | Path) -> LoadedScenario:
    path = resolve_scenario_path(str(name_or_path))
    spec = model_from_yaml_file(ScenarioSpec, path)
    return finish_loading(spec, source=str(path), text=path.read_text(encoding="utf-8"), base=path.parent)


def scenario_from_text(text: str, *, source: str = "<scenario>", base: Path | None = None) -> LoadedScenario:
    spec = model_from_yaml_text(ScenarioSpec, text, source=source)
    return finish_loading(spec, source=source, text=text, base=base or Path.cwd())


def finish_loading(spec: ScenarioSpec, *, source: str, text: str, base: Path) -> LoadedScenario:
    """Resolve the layout and check seats, chips and cards against the table; ConfigError names the field."""
    if spec.layout in bundled_layout_names():
        layout = TableLayout.bundled(spec.layout)
    else:
        layout_path = Path(spec.layout) if Path(spec.layout).is_absolute() else base / spec.layout
        if not layout_path.is_file():
            raise ConfigError(f"expected a bundled layout {bundled_layout_names()} or a file, got {spec.layout!r}",
                              source=source, field="layout")
        layout = TableLayout.load(layout_path)
    chipset = ChipSet.default()
    _check_against_table(spec, layout=layout, chipset=chipset, source=source)
    return LoadedScenario(spec=spec, source=source, layout=layout, chipset=chipset, text=text)


def _check_against_table(spec: ScenarioSpec, *, layout: TableLayout, chipset: ChipSet, source: str) -> None:
    def fail(field: str, message: str) -> ConfigError:
        return ConfigError(message, source=source, field=field)

    numbers = [p.seat for p in spec.seats]
    if len(set(numbers)) != len(numbers):
        raise fail("seats", f"each seat may appear once, got {numbers}")
    if spec.button not in numbers:
        raise fail("button", f"expected a seated player's seat {sorted(numbers)}, got {spec.button}")
    for index, player in enumerate(spec.seats):
        if player.seat not in layout.seat_numbers:
            raise fail(f"seats[{index}].seat", f"layout {layout.name!r} has seats {list(layout.seat_numbers)}, "
                       f"got {player.seat}")
        _check_chips(player.stack, chipset=chipset, field=f"seats[{index}].stack", fail=fail)
    seated = set(spec.seat_numbers)
    for index, action in enumerate(spec.timeline):
        where = f"timeline[{index}]"
        for name in ("seat",):
            seat = getattr(action, name, None)
            if seat is not None and seat not in seated:
                raise fail(f"{where}.{name}", f"expected a seated player's seat {sorted(seated)}, got {seat}")
        for name in ("seats",):
            seats = getattr(action, name, None) or []
            bad = [s for s in seats if s not in seated]
            if bad:
                raise fail(f"{where}.{name}", f"expected seated players' seats {sorted(seated)}, got {bad}")
        for name in ("chips", "take", "bet", "back"):
            chips = getattr(action, name, None)
            if isinstance(chips, dict):
                _check_chips(chips, chipset=chipset, field=f"{where}.{name}", fail=fail)
        if isinstance(action, Protect):
            _check_chips({action.chip: 1}, chipset=chipset, field=f"{where}.chip", fail=fail)
        if isinstance(action, Deal) and action.cards is not None:
            bad = [s for s in action.cards if s not in seated]
            if bad:
                raise fail(f"{where}.cards", f"expected seated players' seats {sorted(seated)}, got {bad}")


def _check_chips(chips: ChipMap, *, chipset: ChipSet, field: str, fail: Callable[[str, str], ConfigError]) -> None:
    unknown = sorted(d for d in chips if d not in chipset.values)
    if unknown:
        raise fail(field, f"chip set {chipset.name!r} has denominations {list(chipset.values)}, got {unknown}")
