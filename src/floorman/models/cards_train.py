"""`floorman models train-cards`: train the card classifier on rendered patches and export it to ONNX.

The network (`CardNet`, about 0.2 M parameters) reads a card patch (`PatchSpec`: the card warped upright to
64 x 88 px, BGR 0..255) and gives three outputs: the rank (13-way softmax), the suit (4-way softmax) and
whether the patch is a card face at all (sigmoid; trained on patches of face-down cards, chips, hands and the
button, and off outlines). It standardises each patch itself (exposure and white balance vary), so the
exported graph takes raw pixels. Training draws each batch from the patch cache (`cards_data`) with
augmentation: the card turned 180 degrees (indices sit in opposite corners), exposure, white balance, noise,
blur and a covering blob on part of the card; optionally (`chip_share`) a casino chip lying on the card, over
its pips or an index, or (`small_share`) the patch shrunk to a small card's pixels. Runs on one CPU thread by
default; on CUDA when present. With `init` it starts from an exported model's weights (`load_onnx_weights`: no
PyTorch checkpoint is kept), to fine-tune it at a lower learning rate.

The ONNX model carries its patch geometry as metadata (`floorman_patch`: "64,88,2"), which
`floorman.vision.cards_cnn` reads, so training and inference cut patches alike. With `patch="index"` (`floorman
models train-cards --patch index`) the same network learns the index reader: the card's top-left corner
(`PATCHES["index"]`, metadata `floorman_region` too), each index corner a patch labelled only when its index shows,
neither turned nor covered in training; written to `vision/data/card_index.onnx`.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn
from torch.nn import functional

from floorman.core.card_patch import INDEX_REGION, PatchSpec
from floorman.core.errors import ConfigError
from floorman.datasets.random_scene import TILT_LIMITS_DEG, Tilt, tilt_in_limits
from floorman.models.cards_data import (
    CHIP_TO_CARD,
    RANK_CODES,
    SUIT_CODES,
    Samples,
    build_cache,
    build_composites,
    load_cache,
    random_chip,
)

logger = logging.getLogger(__name__)

PATCH_KEY = "floorman_patch"
REGION_KEY = "floorman_region"
CLASSES_KEY = "floorman_classes"
_PLAN_AFTER = 20  # a time-limited run plans its schedule after this many steps, and again every as many
SMALL_COMPOSITE_WIDTHS = (36.0, 80.0)  # `small_composites`: the cards the classifier misreads most
SMALL_WIDTHS = (36, 60)  # `_shrink`: the patch widths (px) of cards 36-60 px wide, drawn uniformly
SLANT_WIDTHS = (24, 60)  # `_foreshorten`: the card widths (px) drawn uniformly, before the slant
SLANT_RATIOS = (1.2, 2.2)  # and how much more one axis is shrunk: a camera 34-63 degrees from square on
DEFOCUS_SIGMAS = (0.6, 2.0)  # `_defocus`: the Gaussian's sigma in patch pixels, drawn uniformly per batch
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "vision" / "data" / "card_classifier.onnx"
DEFAULT_INDEX_OUT = DEFAULT_OUT.with_name("card_index.onnx")
# What `--patch` trains: the card classifier on the whole card, or the index reader on its top-left corner at twice
# the classifier's pixels per mm (`card_patch.INDEX_REGION`, 19 x 27 mm of a poker card in 40 x 56 px)
PATCHES = {"card": PatchSpec(), "index": PatchSpec(width=40, height=56, region=INDEX_REGION)}


@dataclass(frozen=True)
class CardTrainConfig:
    """The shipped recipe's settings (see CARDS_MODEL_CARD.md)."""

    cache: Path = Path("/tmp/floorman_cards")
    seed: int = 7100
    frames: int = 750
    val_frames: int = 50  # the last frames of the seed, held out for the validation figure
    composites: int = 8500  # card faces pasted on plain tables (`cards_data.composite_sample`)
    composite_seed: int = 7200
    render_workers: int = 1
    minutes: float = 36.0
    steps: int | None = None  # a fixed number of steps instead of minutes (reproducible on any machine)
    batch: int = 128
    lr: float = 3e-3
    weight_decay: float = 1e-4
    threads: int = 1
    train_seed: int = 0
    chip_share: float = 0.0  # patches given a chip lying on them in training (`augment`); 0.3 tried, see the card
    small_share: float = 0.0  # patches shrunk to a small card's pixels and back (`augment`)
    slant_share: float = 0.0  # patches shrunk to the pixels of a small card seen at a slant and back (`augment`)
    defocus_share: float = 0.0  # patches blurred as a lens out of focus blurs them (`augment`, `DEFOCUS_SIGMAS`)
    tilted_frames: int = 0  # more rendered frames, casino scenes whose cameras are tilted `tilt` (all for training)
    tilted_seed: int = 7300
    tilt: Tilt = (35.0, 60.0)  # degrees from vertical, drawn uniformly (`random_camera`)
    init: Path | None = None  # start from this exported model's weights (`load_onnx_weights`) instead of at random
    composite_chips: bool = False  # casino chips among the composites' covers (`cards_data.composite_sample`)
    small_composites: int = 0  # more composites, of cards SMALL_COMPOSITE_WIDTHS px wide, chips among the covers
    # "any" (since session 17): court cards show random court figures in the renders and composites, so the net
    # reads a jack from its corner index, not from our figure (real decks' figures are not ours); "own" before
    court_figures: str = "any"
    # "any" (since session 18): cards' suit symbols take other decks' shapes in the renders and composites, so the
    # net does not read a spade with a thin flared stem as a club (it did: 84.3 % of number cards on a deck with
    # DejaVu Sans's suit symbols); "own" before
    suit_shapes: str = "any"
    # "card" (the card classifier, the whole card) or "index" (the index reader, its corner: `PATCHES`)
    patch: str = "card"
    out: Path | None = None  # default: the shipped file of `patch` (DEFAULT_OUT, DEFAULT_INDEX_OUT)

    @property
    def spec(self) -> PatchSpec:
        return PATCHES[self.patch]

    @property
    def out_path(self) -> Path:
        return self.out if self.out is not None else DEFAULT_OUT if self.patch == "card" else DEFAULT_INDEX_OUT

    def __post_init__(self) -> None:
        if self.patch not in PATCHES:
            raise ValueError(f"expected patch {' or '.join(PATCHES)}, got {self.patch!r}")
        if self.frames <= self.val_frames or self.val_frames < 0:
            raise ValueError(f"expected frames > val_frames >= 0, got {self.frames} and {self.val_frames}")
        for name, share in (("chip_share", self.chip_share), ("small_share", self.small_share),
                            ("slant_share", self.slant_share), ("defocus_share", self.defocus_share)):
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"expected {name} from 0 to 1, got {share}")
        if self.tilted_frames < 0 or not tilt_in_limits(self.tilt):
            raise ValueError(f"expected tilted frames >= 0 and a tilt range within {TILT_LIMITS_DEG} degrees, got "
                             f"{self.tilted_frames} and {self.tilt}")
        if self.court_figures not in ("own", "any"):
            raise ValueError(f"expected court figures own or any, got {self.court_figures!r}")
        if self.suit_shapes not in ("own", "any"):
            raise ValueError(f"expected suit shapes own or any, got {self.suit_shapes!r}")
        if self.minutes <= 0 or self.batch < 1 or self.threads < 1 or (self.steps is not None and self.steps < 1):
            raise ValueError(f"expected positive minutes, batch and threads, got {self.minutes}, {self.batch}, "
                             f"{self.threads}")


class CardNet(nn.Module):
    """A small convolutional classifier: a stride-2 convolution, then three conv stages (24-48-64 channels, BN,
    ReLU, max-pool), one hidden layer over the 5 x 4 map and three heads (rank, suit, face)."""

    def __init__(self, spec: PatchSpec | None = None) -> None:
        super().__init__()
        spec = spec or PatchSpec()

        def conv(cin: int, cout: int, *, stride: int = 1) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

        self.features = nn.Sequential(*conv(3, 16, stride=2), *conv(16, 24), nn.MaxPool2d(2), *conv(24, 48),
                                      nn.MaxPool2d(2), *conv(48, 64), nn.MaxPool2d(2))
        cells = (spec.height // 16) * (spec.width // 16)
        self.hidden = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(64 * cells, 160), nn.ReLU())
        self.rank = nn.Linear(160, len(RANK_CODES))
        self.suit = nn.Linear(160, len(SUIT_CODES))
        self.face = nn.Linear(160, 1)

    def forward(self, patch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Raw BGR pixels (N, 3, H, W), 0..255 -> rank, suit and face logits."""
        mean = patch.mean(dim=(1, 2, 3), keepdim=True)
        std = patch.std(dim=(1, 2, 3), keepdim=True) + 8.0
        hidden = self.hidden(self.features((patch - mean) / std))
        return self.rank(hidden), self.suit(hidden), self.face(hidden).squeeze(1)


class _Exported(nn.Module):
    """CardNet with probabilities as outputs, for ONNX."""

    def __init__(self, net: CardNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, patch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rank, suit, face = self.net(patch)
        return functional.softmax(rank, dim=1), functional.softmax(suit, dim=1), torch.sigmoid(face)


def augment(batch: torch.Tensor, generator: torch.Generator, *, chips: torch.Tensor | None = None,
            chip_share: float = 0.0, small_share: float = 0.0, slant_share: float = 0.0,
            defocus_share: float = 0.0, whole_card: bool = True) -> torch.Tensor:
    """(N, 3, H, W) float 0..255: random 180-degree turn, a chip from `chips` (`chip_bank`) lying on a share
    `chip_share` of the patches, a share `small_share` shrunk to a small card's pixels (`_shrink`), a share
    `slant_share` to a small card's seen at a slant (`_foreshorten`), a share `defocus_share` out of focus
    (`_defocus`), exposure and white balance, blur, noise, and one covering blob (a flat colour) over part of one
    in three patches. A patch of a part of the card (not `whole_card`: the index reader's corner) is neither turned
    (its other corner is its own patch) nor covered (its label says whether its index shows)."""
    n = batch.shape[0]
    if whole_card:
        turn = torch.rand(n, generator=generator) < 0.5
        batch = torch.where(turn[:, None, None, None], batch.flip(2, 3), batch)
    if chips is not None and chip_share > 0.0:
        batch = _lay_chips(batch, generator, chips=chips, share=chip_share)
    if small_share > 0.0:
        batch = _shrink(batch, generator, share=small_share)
    if slant_share > 0.0:
        batch = _foreshorten(batch, generator, share=slant_share)
    if defocus_share > 0.0:
        batch = _defocus(batch, generator, share=defocus_share)
    gain = torch.exp(torch.randn(n, 1, 1, 1, generator=generator) * 0.25)
    balance = 1.0 + torch.randn(n, 3, 1, 1, generator=generator) * 0.08
    offset = torch.randn(n, 1, 1, 1, generator=generator) * 15.0
    batch = batch * gain * balance + offset
    blurred = functional.avg_pool2d(functional.pad(batch, (1, 1, 1, 1), mode="replicate"), 3, stride=1)
    amount = (torch.rand(n, 1, 1, 1, generator=generator) < 0.25).float() * torch.rand(n, 1, 1, 1,
                                                                                        generator=generator)
    batch = batch * (1.0 - amount) + blurred * amount
    batch = batch + torch.randn(batch.shape, generator=generator) * torch.rand(n, 1, 1, 1, generator=generator) * 8.0
    return (_cover(batch, generator) if whole_card else batch).clamp(0.0, 255.0)


def chip_bank(rng: np.random.Generator, *, count: int = 256, size: int = 48) -> torch.Tensor:
    """`count` chip tops of random colours and edge spots (`cards_data.random_chip`), (count, 4, size, size):
    BGR 0..255 premultiplied by the disc's alpha, and that alpha 0..1."""
    chips = []
    for _ in range(count):
        chip = random_chip(rng, diameter_px=float(size))
        chips.append(cv2.resize(chip, (size, size), interpolation=cv2.INTER_AREA) if chip.shape[0] != size else chip)
    bank = torch.from_numpy(np.stack(chips).transpose(0, 3, 1, 2).copy()).float()
    bank[:, 3] /= 255.0
    bank[:, :3] *= bank[:, 3:4]
    return bank


def _lay_chips(batch: torch.Tensor, generator: torch.Generator, *, chips: torch.Tensor,
               share: float) -> torch.Tensor:
    """A chip (a card's width times `CHIP_TO_CARD` across, give or take 15 %) centred anywhere over the card
    on a share `share` of the patches, over a soft shadow: a chip lying on the pips or an index."""
    n, _, h, w = batch.shape
    chosen = (torch.rand(n, generator=generator) < share).float().view(n, 1, 1, 1)
    pick = torch.randint(len(chips), (n,), generator=generator)
    diameter = w * CHIP_TO_CARD * (0.85 + 0.3 * torch.rand(n, generator=generator))
    cx = w * (0.1 + 0.8 * torch.rand(n, generator=generator))
    cy = h * (0.08 + 0.84 * torch.rand(n, generator=generator))

    def place(dx: torch.Tensor, dy: torch.Tensor, grow: float) -> torch.Tensor:
        d = diameter * grow
        theta = torch.zeros(n, 2, 3)
        theta[:, 0, 0], theta[:, 1, 1] = w / d, h / d
        theta[:, 0, 2], theta[:, 1, 2] = (w / 2.0 - cx - dx) * 2.0 / d, (h / 2.0 - cy - dy) * 2.0 / d
        grid = functional.affine_grid(theta, [n, 4, h, w], align_corners=False)
        return functional.grid_sample(chips[pick], grid, padding_mode="zeros", align_corners=False)

    shift = torch.randn(2, n, generator=generator) * diameter * 0.05
    shadow = place(shift[0], shift[1], 1.08)[:, 3:4] * chosen
    chip = place(torch.zeros(n), torch.zeros(n), 1.0)
    alpha = chip[:, 3:4] * chosen
    batch = batch * (1.0 - 0.4 * shadow)
    return batch * (1.0 - alpha) + chip[:, :3] * chosen


def _shrink(batch: torch.Tensor, generator: torch.Generator, *, share: float) -> torch.Tensor:
    """A share `share` of the patches area-averaged down to `SMALL_WIDTHS` px wide (one width per batch) and
    back up bilinearly: what the patch of a card that few pixels wide holds (the warp only interpolates it)."""
    n, _, h, w = batch.shape
    low, high = SMALL_WIDTHS
    width = int(torch.randint(low, high + 1, (1,), generator=generator))
    small = functional.interpolate(batch, size=(round(h * width / w), width), mode="area")
    back = functional.interpolate(small, size=(h, w), mode="bilinear", align_corners=False)
    chosen = (torch.rand(n, generator=generator) < share).view(n, 1, 1, 1)
    return torch.where(chosen, back, batch)


def _foreshorten(batch: torch.Tensor, generator: torch.Generator, *, share: float) -> torch.Tensor:
    """A share `share` of the patches area-averaged down to a card `SLANT_WIDTHS` px wide, one of its axes (drawn
    per batch) shrunk `SLANT_RATIOS` times more than the other, and back up bilinearly: what the patch of a card
    foreshortened by a camera low over the table holds (the outline's warp undoes its shape, not the pixels lost;
    the rendered training frames' cameras tilt 35 degrees at most, the scenarios' tilted preset ~50)."""
    n, _, h, w = batch.shape
    low, high = SLANT_WIDTHS
    width = int(torch.randint(low, high + 1, (1,), generator=generator))
    ratio = SLANT_RATIOS[0] + (SLANT_RATIOS[1] - SLANT_RATIOS[0]) * float(torch.rand(1, generator=generator))
    height = h * width / w
    along_height = bool(torch.rand(1, generator=generator) < 0.5)
    size = (max(4, round(height / ratio)), width) if along_height else (round(height), max(3, round(width / ratio)))
    small = functional.interpolate(batch, size=size, mode="area")
    back = functional.interpolate(small, size=(h, w), mode="bilinear", align_corners=False)
    chosen = (torch.rand(n, generator=generator) < share).view(n, 1, 1, 1)
    return torch.where(chosen, back, batch)


def _defocus(batch: torch.Tensor, generator: torch.Generator, *, share: float) -> torch.Tensor:
    """A share `share` of the patches blurred by a Gaussian of sigma `DEFOCUS_SIGMAS` patch pixels (one sigma per
    batch): a large card in a photo out of focus (a 200 px card under a 3 px blur is a patch under ~1 px; the
    rendered frames' focus blur, 0.4-2 px on a quarter of them, reaches that only on cards under ~100 px)."""
    n = batch.shape[0]
    low, high = DEFOCUS_SIGMAS
    sigma = low + (high - low) * float(torch.rand(1, generator=generator))
    radius = int(np.ceil(3.0 * sigma))
    taps = torch.exp(-0.5 * (torch.arange(-radius, radius + 1).float() / sigma) ** 2)
    taps = taps / taps.sum()
    channels = batch.shape[1]
    padded = functional.pad(batch, (radius, radius, radius, radius), mode="replicate")
    rows = functional.conv2d(padded, taps.view(1, 1, 1, -1).repeat(channels, 1, 1, 1), groups=channels)
    blurred = functional.conv2d(rows, taps.view(1, 1, -1, 1).repeat(channels, 1, 1, 1), groups=channels)
    chosen = (torch.rand(n, generator=generator) < share).view(n, 1, 1, 1)
    return torch.where(chosen, blurred, batch)


def _cover(batch: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A rectangle of flat colour over up to a quarter of the card, from one of its edges, on one in three."""
    n, _, h, w = batch.shape
    ys = torch.arange(h).view(1, h, 1).float()
    xs = torch.arange(w).view(1, 1, w).float()
    size = torch.rand(n, 2, generator=generator) * torch.tensor([0.5, 0.5]) + 0.1
    y0 = torch.rand(n, generator=generator) * h * (1.0 - size[:, 0])
    x0 = torch.where(torch.rand(n, generator=generator) < 0.5, torch.zeros(n), w * (1.0 - size[:, 1]))
    inside = ((ys >= y0.view(n, 1, 1)) & (ys < (y0 + size[:, 0] * h).view(n, 1, 1))
              & (xs >= x0.view(n, 1, 1)) & (xs < (x0 + size[:, 1] * w).view(n, 1, 1)))
    inside &= (torch.rand(n, generator=generator) < 0.33).view(n, 1, 1)
    colour = torch.rand(n, 3, 1, 1, generator=generator) * 255.0
    return torch.where(inside[:, None], colour.expand_as(batch), batch)


def _tensor(patches: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(patches.transpose(0, 3, 1, 2))).float()


def _loss(net: CardNet, batch: torch.Tensor, rank: torch.Tensor, suit: torch.Tensor) -> torch.Tensor:
    rank_logits, suit_logits, face_logit = net(batch)
    face = (rank >= 0).float()
    loss = functional.binary_cross_entropy_with_logits(face_logit, face)
    if bool((rank >= 0).any()):
        loss = loss + functional.cross_entropy(rank_logits, rank, ignore_index=-1, label_smoothing=0.05)
        loss = loss + functional.cross_entropy(suit_logits, suit, ignore_index=-1, label_smoothing=0.05)
    return loss


@dataclass(frozen=True)
class Evaluation:
    """Accuracy on held-out patches: card (rank and suit) right on faces, face/not-face right on all."""

    faces: int
    card_accuracy: float
    face_accuracy: float


def evaluate(net: CardNet, samples: Samples, *, batch: int = 256) -> Evaluation:
    net.eval()
    right, face_right = 0, 0
    with torch.no_grad():
        for start in range(0, len(samples), batch):
            stop = start + batch
            rank_logits, suit_logits, face_logit = net(_tensor(samples.patches[start:stop]))
            rank, suit = samples.rank[start:stop], samples.suit[start:stop]
            is_face = rank >= 0
            hit = (rank_logits.argmax(1).numpy() == rank) & (suit_logits.argmax(1).numpy() == suit)
            right += int((hit & is_face).sum())
            face_right += int(((face_logit.numpy() > 0) == is_face).sum())
    faces = int(samples.is_face.sum())
    return Evaluation(faces=faces, card_accuracy=right / max(faces, 1), face_accuracy=face_right / max(len(samples), 1))


def fit(net: CardNet, train: Samples, *, config: CardTrainConfig, device: torch.device) -> int:
    """Train for `config.steps` steps, or when None for `config.minutes` (the steps that fit, estimated from
    the time per step so far, every `_PLAN_AFTER` steps); the learning rate warms up, then follows a cosine
    from step `_PLAN_AFTER` to the last. Returns the number of steps taken."""
    generator = torch.Generator().manual_seed(config.train_seed)
    order_rng = np.random.default_rng(config.train_seed)
    chips = chip_bank(np.random.default_rng([config.train_seed, 1])) if config.chip_share > 0.0 else None
    optimizer = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    deadline = float("inf") if config.steps else time.monotonic() + 60.0 * config.minutes
    start, step, planned = time.monotonic(), 0, config.steps or 0
    net.to(device).train()
    while time.monotonic() < deadline and not (planned and step >= planned):
        if step >= _PLAN_AFTER and step % _PLAN_AFTER == 0 and not config.steps:  # (re)plan to end at the deadline
            planned = step + int((deadline - time.monotonic()) / ((time.monotonic() - start) / step))
        fraction = step / planned if planned and step >= _PLAN_AFTER else 0.0
        lr = config.lr * min(1.0, (step + 1) / 200.0) * 0.5 * (1.0 + np.cos(np.pi * min(fraction, 1.0)))
        for group in optimizer.param_groups:
            group["lr"] = float(lr)
        pick = order_rng.integers(0, len(train), size=config.batch)
        batch = augment(_tensor(train.patches[pick]), generator, chips=chips, chip_share=config.chip_share,
                        small_share=config.small_share, slant_share=config.slant_share,
                        defocus_share=config.defocus_share, whole_card=config.spec.whole_card)
        batch = batch.to(device)
        rank = torch.from_numpy(train.rank[pick]).to(device)
        suit = torch.from_numpy(train.suit[pick]).to(device)
        loss = _loss(net, batch, rank, suit)
        optimizer.zero_grad()
        torch.autograd.backward(loss)
        optimizer.step()
        step += 1
        if step % 200 == 0:
            logger.info("step %d/%d loss %.3f lr %.5f", step, planned, float(loss.detach()), lr)
    net.to(torch.device("cpu")).eval()
    return step


def load_onnx_weights(net: CardNet, path: Path, *, patches: torch.Tensor) -> None:
    """Load the weights of a CardNet exported by `export_onnx` (the shipped model: no PyTorch checkpoint is
    kept) into `net`, to train on from there. The exporter folds each batch norm into the convolution before it,
    so every convolution takes the folded kernel and its batch norm the folded bias, and the norm's running
    statistics become those of the convolution's output over `patches` (a sample of training patches) with its
    scale set to match: in eval mode the net computes what the ONNX model computes, and in training the batch
    statistics start near the running ones."""
    import onnx  # export tooling of the `train` extra
    from onnx import numpy_helper

    model = onnx.load(str(path))
    weights = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in model.graph.initializer}
    convs = [node for node in model.graph.node if node.op_type == "Conv"]
    layers = [m for m in net.features if isinstance(m, nn.Conv2d)]
    norms = [m for m in net.features if isinstance(m, nn.BatchNorm2d)]
    heads = {name.removeprefix("net."): value for name, value in weights.items() if name.startswith("net.")}
    expected = {name: value for name, value in net.state_dict().items() if not name.startswith("features.")}
    shapes = [tuple(weights[node.input[1]].shape) for node in convs]
    if shapes != [tuple(layer.weight.shape) for layer in layers] or heads.keys() != expected.keys() or any(
            heads[name].shape != value.shape for name, value in expected.items()):
        raise ConfigError(f"expected an exported CardNet in {path}, got convolutions {shapes} and layers "
                          f"{sorted(heads)}", source=str(path), field="init")
    net.load_state_dict(heads, strict=False)
    outputs: list[torch.Tensor] = []
    hooks = [layer.register_forward_hook(lambda _m, _i, out: outputs.append(out)) for layer in layers]
    biases = [weights[node.input[2]] for node in convs]
    with torch.no_grad():
        for node, layer, norm, bias in zip(convs, layers, norms, biases, strict=True):
            layer.weight.copy_(weights[node.input[1]])
            zero = torch.zeros_like(bias)
            _set_norm(norm, mean=zero, var=zero + 1.0 - norm.eps, bias=bias)
        net.eval()
        net(patches)  # each norm passes its input on plus the bias: the outputs are the ONNX model's
        for out, norm, bias in zip(outputs, norms, biases, strict=True):
            _set_norm(norm, mean=out.mean(dim=(0, 2, 3)), var=out.var(dim=(0, 2, 3), unbiased=False), bias=bias)
    for hook in hooks:
        hook.remove()


def _set_norm(norm: nn.BatchNorm2d, *, mean: torch.Tensor, var: torch.Tensor, bias: torch.Tensor) -> None:
    """`norm` with running statistics `mean` and `var`, scaled to pass its input on plus `bias` in eval mode."""
    norm.load_state_dict({"weight": torch.sqrt(var + norm.eps), "bias": bias + mean, "running_mean": mean,
                          "running_var": var}, strict=False)


def _export(net: CardNet, dummy: torch.Tensor, path: Path) -> None:
    torch.onnx.export(_Exported(net.eval()), (dummy,), str(path), input_names=["patch"],
                      output_names=["rank", "suit", "face"], dynamic_axes={"patch": {0: "n"}, "rank": {0: "n"},
                                                                          "suit": {0: "n"}, "face": {0: "n"}},
                      opset_version=17, dynamo=False)


def export_onnx(net: CardNet, path: Path, *, spec: PatchSpec) -> Path:
    """Write the network as ONNX (probabilities out, batch dimension dynamic) with its patch geometry."""
    import onnx  # export tooling of the `train` extra

    path.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 3, spec.height, spec.width)
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated but needs no onnxscript
        warnings.simplefilter("ignore", DeprecationWarning)
        _export(net, dummy, path)
    net.eval()  # the exporter restores the wrapper's training mode, and with it the net's
    model = onnx.load(str(path))
    for key, value in ((PATCH_KEY, f"{spec.width},{spec.height},{spec.supersample}"),
                       (CLASSES_KEY, ",".join(RANK_CODES) + ";" + ",".join(SUIT_CODES)),
                       *(() if spec.whole_card else ((REGION_KEY, spec.encode_region()),))):
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(path))
    return path


def train_cards(config: CardTrainConfig) -> tuple[Path, Evaluation]:
    """Render (or reuse) the patch cache, train, report the held-out accuracy, export the ONNX model."""
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.train_seed)
    spec = config.spec
    paths = build_cache(config.cache, seed=config.seed, frames=config.frames, spec=spec,
                        workers=config.render_workers, figures=config.court_figures, suits=config.suit_shapes)
    first_val = config.frames - config.val_frames
    val_paths = [p for p in paths if int(p.stem.rsplit("_", 1)[1]) >= first_val]
    train_paths = [p for p in paths if p not in val_paths]
    if config.composites:
        train_paths += build_composites(config.cache, seed=config.composite_seed, count=config.composites, spec=spec,
                                        chips=config.composite_chips, figures=config.court_figures,
                                        suits=config.suit_shapes)
    if config.tilted_frames:  # their own seed and cache files, so that the frames above stay the shipped recipe's
        train_paths += build_cache(config.cache, seed=config.tilted_seed, frames=config.tilted_frames, spec=spec,
                                   workers=config.render_workers, figures=config.court_figures,
                                   suits=config.suit_shapes, tilt=config.tilt)
    if config.small_composites:  # their own seed, so that the composites above stay those of the shipped recipe
        train_paths += build_composites(config.cache, seed=config.composite_seed + 1, count=config.small_composites,
                                        spec=spec, chips=True, widths=SMALL_COMPOSITE_WIDTHS,
                                        figures=config.court_figures, suits=config.suit_shapes)
    train = load_cache(train_paths, spec=spec)
    val = load_cache(val_paths, spec=spec)
    logger.info("training on %d patches (%d faces), validating on %d", len(train), int(train.is_face.sum()), len(val))
    net = CardNet(spec)
    if config.init is not None:
        sample = np.random.default_rng(config.train_seed).choice(len(train), size=min(len(train), 1024), replace=False)
        load_onnx_weights(net, config.init, patches=_tensor(train.patches[np.sort(sample)]))
        logger.info("starting from %s: held-out card accuracy %.4f", config.init, evaluate(net, val).card_accuracy)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    steps = fit(net, train, config=config, device=device)
    result = evaluate(net, val)
    logger.info("%d steps; held-out card accuracy %.4f on %d faces, face/not-face %.4f", steps,
                result.card_accuracy, result.faces, result.face_accuracy)
    return export_onnx(net, config.out_path, spec=spec), result

