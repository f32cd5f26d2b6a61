"""`floorman models average`: two checkpoints' weights averaged tensor by tensor (WiSE-FT)."""

from __future__ import annotations

from pathlib import Path

import pytest

from floorman.core.errors import ConfigError

torch = pytest.importorskip("torch")
average = pytest.importorskip("floorman.models.average")


def _checkpoint(path: Path, *, seed: int, width: int = 3, batches: int = 0, ema: bool = False) -> dict[str, object]:
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(4, width), torch.nn.BatchNorm1d(width))
    net[1].running_mean.uniform_(-1.0, 1.0)
    net[1].num_batches_tracked.fill_(batches)
    checkpoint = {"model": None if ema else net, "ema": net if ema else None, "epoch": 7, "best_fitness": 0.5}
    torch.save(checkpoint, str(path))
    return {name: value.clone() for name, value in net.state_dict().items()}


def test_the_weights_are_averaged_and_the_tuned_checkpoint_kept(tmp_path: Path) -> None:
    base = _checkpoint(tmp_path / "base.pt", seed=1, batches=10)
    tuned = _checkpoint(tmp_path / "tuned.pt", seed=2, batches=99, ema=True)  # as Ultralytics' best.pt holds it
    result = average.average_checkpoints(tmp_path / "base.pt", tmp_path / "tuned.pt", share=0.25,
                                         out=tmp_path / "out" / "soup.pt")
    assert (result.averaged, result.kept) == (6, 1)  # weight, bias, norm weight, bias, mean, var; the batch count
    written = torch.load(str(result.out), weights_only=False)
    state = written["model"].float().state_dict()
    for name in ("0.weight", "0.bias", "1.running_mean", "1.running_var"):
        assert torch.allclose(state[name], 0.75 * base[name] + 0.25 * tuned[name], atol=2e-3), name
    assert int(state["1.num_batches_tracked"]) == 99
    assert written["ema"] is None and written["epoch"] == -1 and written["best_fitness"] == 0.5
    assert "0.75 x" in written["floorman_averaged"] and not list((tmp_path / "out").glob("*.partial"))
    same = average.average_checkpoints(tmp_path / "base.pt", tmp_path / "tuned.pt", share=0.0, out=tmp_path / "b.pt")
    assert torch.allclose(torch.load(str(same.out), weights_only=False)["model"].float().state_dict()["0.weight"],
                          base["0.weight"], atol=2e-3)


def test_networks_of_another_shape_missing_files_and_bad_shares_are_refused(tmp_path: Path) -> None:
    _checkpoint(tmp_path / "base.pt", seed=1)
    _checkpoint(tmp_path / "wide.pt", seed=2, width=5)
    out = tmp_path / "soup.pt"
    with pytest.raises(ConfigError, match=r"tensor '0.weight' of shape \(3, 4\) in .*base.pt and \(5, 4\) in .*wide"):
        average.average_checkpoints(tmp_path / "base.pt", tmp_path / "wide.pt", share=0.5, out=out)
    with pytest.raises(ConfigError, match="no such file"):
        average.average_checkpoints(tmp_path / "base.pt", tmp_path / "none.pt", share=0.5, out=out)
    with pytest.raises(ConfigError, match=r"expected a share from 0 to 1, got 1\.5"):
        average.average_checkpoints(tmp_path / "base.pt", tmp_path / "base.pt", share=1.5, out=out)
    torch.save([1, 2], str(tmp_path / "list.pt"))
    with pytest.raises(ConfigError, match="expected an Ultralytics checkpoint"):
        average.average_checkpoints(tmp_path / "base.pt", tmp_path / "list.pt", share=0.5, out=out)
    assert not out.exists()


def test_the_command_prints_what_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from floorman.cli import main

    _checkpoint(tmp_path / "a.pt", seed=1)
    _checkpoint(tmp_path / "b.pt", seed=2)
    assert main(["models", "average", str(tmp_path / "a.pt"), str(tmp_path / "b.pt"), "--out",
                 str(tmp_path / "c.pt")]) == 0
    assert f"+ 0.5 x {tmp_path / 'b.pt'}, 6 tensors averaged, 1 integer ones taken from" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["models", "average", str(tmp_path / "a.pt"), str(tmp_path / "b.pt"), "--share", "2", "--out", "x.pt"])
    assert "--share: expected a number from 0 to 1, got '2'" in capsys.readouterr().err
