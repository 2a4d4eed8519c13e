"""The training stage of the main job (examples/demo.py launches it under torchrun).

Every rank trains the same embedding model with DistributedDataParallel on its share
of the shuffled training Parquet files that the ETL wrote, and rank 0 measures the
loss and the AUC on the validation files after each epoch. The model: an embedding
per user and per movie, the multi-hot genres through an EmbeddingBag (mean), an MLP
on top, a binary target (rating >= 4). The batches come from

    --loader ladle    ladle.Loader over the Parquet files (row groups dealt out per
                      rank, shuffled per epoch, prepared on a background thread);
    --loader memory   ladle.Loader over in-memory tensors (the files read first: the
                      bound for a loader that never starves the step);
    --loader torch    the baseline: torch.utils.data.DataLoader over a TensorDataset
                      with a DistributedSampler, genres padded to the longest list.

    python -m torch.distributed.run --standalone --nproc-per-node 2 \\
        examples/demo_train.py --data build/demo --loader ladle --epochs 3

Writes <data>/train-<loader>.json (per epoch: time, rows/s, loss, AUC; rank 0).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn

CATS = ("userId", "movieId")
BAG = "genres"
LABEL = "label"


class Recommender(nn.Module):
    """Embeddings of user and movie, a bag of genre embeddings, an MLP: one logit."""

    def __init__(self, sizes: dict[str, tuple[int, int]], hidden: int = 64, padding: int | None = None) -> None:
        super().__init__()
        self.emb = nn.ModuleDict({c: nn.Embedding(sizes[c][0], sizes[c][1]) for c in CATS})
        n, d = sizes[BAG]
        # the baseline pads its genre lists with one more index
        self.bag = nn.EmbeddingBag(n + (1 if padding is not None else 0), d, mode="mean", padding_idx=padding)
        width = sum(sizes[c][1] for c in CATS) + d
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, cats: dict[str, torch.Tensor], bag: tuple[torch.Tensor, torch.Tensor | None]) -> torch.Tensor:
        parts = [self.emb[c](cats[c]) for c in CATS]
        values, offsets = bag
        parts.append(self.bag(values, offsets))
        return self.mlp(torch.cat(parts, dim=1)).squeeze(1)


def auc(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """The area under the ROC curve: the chance that a positive scores above a
    negative, ties counting half (Mann-Whitney U from the ranks of the scores)."""
    labels = labels.to(torch.bool)
    pos = int(labels.sum())
    neg = labels.numel() - pos
    if pos == 0 or neg == 0:
        return float("nan")
    order = torch.argsort(scores)
    s = scores[order]
    ranks = torch.empty_like(scores, dtype=torch.float64)
    # average rank over each run of equal scores
    starts = torch.ones_like(s, dtype=torch.bool)
    starts[1:] = s[1:] != s[:-1]
    run = torch.cumsum(starts.to(torch.int64), 0) - 1
    first = torch.nonzero(starts).squeeze(1)
    ends = torch.cat([first[1:], torch.tensor([s.numel()])])
    mean_rank = (first + ends - 1).to(torch.float64) / 2 + 1
    ranks[order] = mean_rank[run]
    u = ranks[labels].sum() - pos * (pos + 1) / 2
    return float(u / (pos * neg))


def _files(d: Path) -> list[str]:
    return sorted(str(p) for p in d.glob("*.parquet"))


def _read_all(files: list[str]) -> dict[str, Any]:
    """Every row of the files as tensors; genres as (values, offsets) of one bag per row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.concat_tables([pq.read_table(f, columns=[*CATS, BAG, LABEL]) for f in files]).combine_chunks()
    out: dict[str, Any] = {c: torch.from_numpy(t.column(c).to_numpy().astype("int64")) for c in CATS}
    out[LABEL] = torch.from_numpy(t.column(LABEL).to_numpy().astype("float32"))
    lst = t.column(BAG).chunk(0)
    offs = torch.from_numpy(lst.offsets.to_numpy().astype("int64"))
    out[BAG] = (torch.from_numpy(lst.values.to_numpy().astype("int64")), offs)
    return out


def _padded(bag: tuple[torch.Tensor, torch.Tensor], pad: int) -> torch.Tensor:
    """Genre lists as a [rows, longest] matrix padded with `pad` (the baseline's way to
    get ragged lists through a TensorDataset)."""
    values, offsets = bag
    lens = offsets[1:] - offsets[:-1]
    width = max(int(lens.max()) if lens.numel() else 1, 1)
    out = torch.full((lens.numel(), width), pad, dtype=torch.int64)
    col = torch.arange(width).unsqueeze(0)
    mask = col < lens.unsqueeze(1)
    out[mask] = values[offsets[0]: offsets[-1]]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--loader", choices=["ladle", "memory", "torch"], default="ladle")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=8192)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--max-steps", type=int, default=0, help="stop each epoch after this many steps (0: all)")
    ap.add_argument("--gpu", action="store_true", help="train on this rank's GPU (NCCL)")
    args = ap.parse_args()

    gpu = args.gpu and torch.cuda.is_available()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if gpu:
        torch.cuda.set_device(local)
    dist.init_process_group("nccl" if gpu else "gloo", timeout=timedelta(seconds=300))
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device(f"cuda:{local}" if gpu else "cpu")
    if not gpu:
        torch.set_num_threads(max(1, (os.cpu_count() or 2) // world))
    torch.manual_seed(0)

    import ladle

    meta = json.loads((args.data / "embeddings.json").read_text())
    sizes = {c: (int(v[0]), int(v[1])) for c, v in meta.items()}
    train_files = _files(args.data / "train")
    pad = sizes[BAG][0] if args.loader == "torch" else None
    model = Recommender(sizes, padding=pad).to(device)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local] if gpu else None)
    opt = torch.optim.Adam(ddp.parameters(), lr=args.lr)
    lossf = nn.BCEWithLogitsLoss()
    columns = [*CATS, BAG, LABEL]

    if args.loader == "ladle":
        loader: Any = ladle.Loader(train_files, batch_size=args.batch_size, shuffle=True, seed=0,
                                   drop_last=True, device=device if gpu else None, columns=columns)
    elif args.loader == "memory":
        whole = _read_all(train_files)
        loader = ladle.Loader(whole, batch_size=args.batch_size, shuffle=True, seed=0, drop_last=True,
                              device=device if gpu else None, columns=columns)
    else:
        from torch.utils.data import DataLoader, TensorDataset
        from torch.utils.data.distributed import DistributedSampler

        whole = _read_all(train_files)
        ds = TensorDataset(whole["userId"], whole["movieId"], _padded(whole[BAG], pad or 0), whole[LABEL])
        sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=0, drop_last=True)
        loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, drop_last=True)

    valid = _read_all(_files(args.data / "valid")) if rank == 0 else None

    def unpack(batch: Any) -> tuple[dict[str, torch.Tensor], tuple[torch.Tensor, torch.Tensor | None], torch.Tensor]:
        if args.loader == "torch":
            u, m, g, y = (t.to(device, non_blocking=True) for t in batch)
            return {"userId": u, "movieId": m}, (g, None), y
        cats = {c: batch[c].to(device).long() for c in CATS}
        values, offsets = batch[BAG]
        return cats, (values.to(device).long(), offsets.to(device).long()), batch[LABEL].to(device).float()

    history: list[dict[str, Any]] = []
    for epoch in range(args.epochs):
        if args.loader == "torch":
            loader.sampler.set_epoch(epoch)  # type: ignore[union-attr]
        else:
            loader.set_epoch(epoch)
        ddp.train()
        dist.barrier()
        t0 = time.perf_counter()
        total, steps, rows = 0.0, 0, 0
        wait = 0.0
        # a progress line on rank 0 when stderr is a terminal
        tty = rank == 0 and sys.stderr.isatty()
        planned = len(loader) if not args.max_steps else min(len(loader), args.max_steps)
        it = iter(loader)
        while True:
            tw = time.perf_counter()
            try:
                batch = next(it)
            except StopIteration:
                break
            wait += time.perf_counter() - tw
            cats, bag, y = unpack(batch)
            opt.zero_grad(set_to_none=True)
            loss = lossf(ddp(cats, bag), y)
            loss.backward()
            opt.step()
            total += float(loss.detach())
            steps += 1
            rows += y.numel()
            if tty and steps % 10 == 0:
                sys.stderr.write(f"\r  [train {args.loader}] epoch {epoch}: step {steps}/{planned} "
                                 f"loss {total / steps:.4f} {time.perf_counter() - t0:6.1f} s")
                sys.stderr.flush()
            if args.max_steps and steps >= args.max_steps:
                break
        if gpu:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        if tty:
            sys.stderr.write("\r" + " " * 100 + "\r")
        counts = torch.tensor([steps, rows], dtype=torch.int64, device=device)
        dist.all_reduce(counts)
        rec: dict[str, Any] = {"epoch": epoch, "seconds": seconds, "steps": steps, "waited": wait,
                               "rows_all_ranks": int(counts[1]), "train_loss": total / max(steps, 1)}
        if rank == 0 and valid is not None:
            model.eval()
            with torch.no_grad():
                scores, vloss, k = [], 0.0, 0
                n = valid[LABEL].numel()
                vals, offs = valid[BAG]
                for a in range(0, n, 65536):
                    b = min(n, a + 65536)
                    cats = {c: valid[c][a:b].to(device) for c in CATS}
                    if args.loader == "torch":
                        g = _padded((vals, offs[a:b + 1]), pad or 0).to(device)
                        bag: tuple[torch.Tensor, torch.Tensor | None] = (g, None)
                    else:
                        lo, hi = int(offs[a]), int(offs[b])
                        bag = (vals[lo:hi].to(device), (offs[a:b] - lo).to(device))
                    s = model(cats, bag)
                    y = valid[LABEL][a:b].to(device)
                    vloss += float(lossf(s, y)) * (b - a)
                    k += b - a
                    scores.append(s.cpu())
                rec["valid_loss"] = vloss / max(k, 1)
                rec["valid_auc"] = auc(torch.cat(scores) if scores else torch.empty(0), valid[LABEL])
            print(f"[train {args.loader}] epoch {epoch}: {seconds:.2f} s, {rec['rows_all_ranks'] / seconds:,.0f} rows/s, "
                  f"loss {rec['train_loss']:.4f}, valid loss {rec['valid_loss']:.4f}, AUC {rec['valid_auc']:.4f}",
                  flush=True)
        history.append(rec)
        dist.barrier()
    if rank == 0:
        (args.data / f"train-{args.loader}.json").write_text(json.dumps(
            {"loader": args.loader, "ranks": world, "batch_size": args.batch_size, "gpu": gpu, "epochs": history},
            indent=1))
    # every rank out of its collectives before any tears its group down (gloo
    # aborted a rank once, "terminate called without an active exception",
    # when the other was still writing)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    code = main()
    # Leave without the interpreter's finalisation: one rank in about fifteen
    # aborted there ("terminate called without an active exception", no Python
    # frame on the stack) after destroy_process_group had returned, when torch's
    # C++ threads met the interpreter's teardown; the work and its record are
    # done and flushed by now.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
