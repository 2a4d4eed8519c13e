"""The main job end to end at a small size (make demo's script): the ETL on ladle
equals the Polars baseline's (the script checks it and exits non-zero otherwise),
torchrun trains on 2 CPU ranks with gloo fed by ladle.Loader, and the training loss
falls while the validation AUC beats chance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_demo_trains_on_two_ranks(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py"), "--rows", "60000", "--out", str(out),
         "--epochs", "4", "--batch-size", "1024", "--threads", "2", "--nproc", "2"],
        capture_output=True, text=True, timeout=900, env=env,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-5000:]
    assert "same rows as Polars' (checked)" in p.stdout
    report = json.loads((out / "demo.json").read_text())
    assert report["ranks"] == 2
    for stage in ("csv_to_parquet", "join_and_fit", "transform_and_write"):
        assert report["ladle"][stage] > 0 and report["polars"][stage] > 0
    for name, run in report["training"].items():
        epochs = run["epochs"]
        assert len(epochs) == 4 and run["ranks"] == 2, name
        # every rank saw the same number of batches (DDP would hang otherwise) and the
        # two ranks together covered the training rows
        assert all(e["rows_all_ranks"] > 0 for e in epochs), name
        assert epochs[-1]["train_loss"] < epochs[0]["train_loss"], (name, [e["train_loss"] for e in epochs])
        assert epochs[-1]["valid_auc"] > 0.6, (name, [e["valid_auc"] for e in epochs])
    assert (out / "demo.png").stat().st_size > 10_000
    # the shuffled training files: files_per_rank (2) x 2 ranks
    assert len(list((out / "ladle" / "train").glob("*.parquet"))) == 4


def test_demo_auc_matches_a_direct_count() -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    import torch
    from demo_train import auc

    g = torch.Generator().manual_seed(1)
    scores = torch.randint(0, 20, (500,), generator=g).to(torch.float32)  # many ties
    labels = torch.randint(0, 2, (500,), generator=g)
    pos, neg = scores[labels == 1], scores[labels == 0]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    assert auc(scores, labels) == pytest.approx(float(wins) / (pos.numel() * neg.numel()), abs=1e-12)
    assert auc(torch.tensor([1.0, 2.0]), torch.tensor([1, 1])) != auc(torch.tensor([1.0, 2.0]), torch.tensor([1, 1]))  # nan
