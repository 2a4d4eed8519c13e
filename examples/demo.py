"""The main job: MovieLens from CSV to a trained recommender, on ladle.

    make demo                                  (2 CPU ranks with gloo, generated data)
    python examples/demo.py [--rows N] [--ml25m DIR] [--gpus N] [--epochs E]

The stages, each timed on ladle and (the baseline) on Polars' CPU engine with the same
thread count, then a plain torch DataLoader for the training:
1. the ratings and movies CSV files to Parquet, split into train and valid;
2. the movies' genres (multi-hot lists) joined onto the ratings; a ladle.workflow
   fitted on train: Categorify users, movies and genres, the rating binarised;
3. train and valid transformed and written as shuffled Parquet, a few files per rank;
4. an embedding model trained with DistributedDataParallel for a few epochs under
   torchrun (2 CPU ranks with gloo by default, --gpus N for N GPUs with NCCL), fed by
   ladle.Loader from those files; loss and AUC on valid after each epoch.

The ETL runs in this process on one multi-threaded engine (on the GPU with --gpus);
the training in the torchrun job it launches (examples/demo_train.py). ladle's ETL
output is checked equal to the baseline's. Writes <out>/demo.json (every number
printed) and <out>/demo.png (loss and AUC per epoch).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
GENRES = ["Action", "Adventure", "Animation", "Children", "Comedy", "Crime", "Documentary", "Drama",
          "Fantasy", "Film-Noir", "Horror", "IMAX", "Musical", "Mystery", "Romance", "Sci-Fi",
          "Thriller", "War", "Western"]


class Progress:
    """A progress bar on stderr for the long stages (silent when stderr is no terminal,
    except for the last line)."""

    def __init__(self, what: str, total: int) -> None:
        self.what, self.total, self.done, self.t0 = what, max(total, 1), 0, time.perf_counter()
        self.tty = sys.stderr.isatty()

    def step(self, k: int = 1) -> None:
        self.done += k
        if self.tty:
            w = 30
            f = min(self.done / self.total, 1.0)
            sys.stderr.write(f"\r  {self.what:34s} [{'#' * int(w * f):{w}s}] {100 * f:5.1f}% "
                             f"{time.perf_counter() - self.t0:6.1f} s")
            sys.stderr.flush()

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\r" + " " * 90 + "\r")
            sys.stderr.flush()


def frames(rows: int, seed: int = 0) -> tuple[Any, Any]:
    """MovieLens-shaped ratings (userId, movieId, rating, timestamp) and movies
    (movieId, genres with '|' between genres), with a signal to learn: a rating is a
    user's bias plus a movie's plus its genres' effects plus noise, on MovieLens'
    half-star scale; popular movies get most ratings."""
    import polars as pl

    rng = np.random.default_rng(seed)
    n_users = max(rows // 150, 10)
    n_movies = max(rows // 400, 10)
    user_bias = rng.normal(0, 0.6, n_users + 1)
    picks = rng.random((n_movies, len(GENRES))) < 0.14
    genre_effect = rng.normal(0, 0.4, len(GENRES))
    movie_bias = rng.normal(0, 0.5, n_movies + 1)
    counts = picks.sum(axis=1)
    movie_bias[1:] += np.where(counts > 0, (picks * genre_effect).sum(axis=1) / np.maximum(counts, 1), 0)
    genres = ["|".join(g for g, on in zip(GENRES, row) if on) or "(no genres listed)" for row in picks]
    movies = pl.DataFrame({"movieId": np.arange(1, n_movies + 1, dtype=np.int32), "genres": genres})
    user = rng.integers(1, n_users + 1, rows).astype(np.int32)
    movie = ((rng.pareto(1.1, rows) * n_movies / 30).astype(np.int64) % n_movies + 1).astype(np.int32)
    score = 3.4 + user_bias[user] + movie_bias[movie] + rng.normal(0, 0.7, rows)
    rating = np.clip(np.round(score * 2) / 2, 0.5, 5.0).astype(np.float32)
    ratings = pl.DataFrame({"userId": user, "movieId": movie, "rating": rating,
                            "timestamp": rng.integers(789_652_009, 1_574_327_703, rows)})
    return ratings, movies


def generate(rows: int, out: Path, seed: int = 0) -> tuple[Path, Path]:
    """frames() written as MovieLens' ratings.csv and movies.csv (movieId,title,genres;
    some titles quoted, with a comma, as in MovieLens)."""
    import polars as pl

    bar = Progress("generating ratings", 2)
    ratings, movies = frames(rows, seed)
    ids = movies["movieId"].to_numpy()
    titles = [f"Movie {i}, The ({1930 + i % 90})" if i % 7 == 0 else f"Movie {i} ({1930 + i % 90})" for i in ids]
    movies = movies.select("movieId", pl.Series("title", titles), "genres")
    bar.step()
    out.mkdir(parents=True, exist_ok=True)
    rp, mp = out / "ratings.csv", out / "movies.csv"
    ratings.write_csv(rp)
    movies.write_csv(mp)
    bar.step()
    bar.close()
    return rp, mp


# ------------------------------------------------------------------ the ETL


def etl(engine: Any, ratings_csv: Path, movies_csv: Path, out: Path, files_per_rank: int, ranks: int,
        seed: int) -> dict[str, Any]:
    """Stages 1-3 on `engine` (a ladle engine, or None for Polars' CPU engine) into
    out/{train,valid}/*.parquet; returns the stage times and the fitted workflow."""
    import polars as pl

    from ladle import workflow as wf

    def run(lf: pl.LazyFrame) -> Any:
        return engine.execute(lf) if engine is not None else lf.collect()

    def write(res: Any, path: Path) -> None:
        res.write_parquet(path)

    times: dict[str, float] = {}
    out.mkdir(parents=True, exist_ok=True)

    # 1. CSV to Parquet, train and valid split (one rating in ten to valid, by an
    #    arithmetic rule that every engine computes alike)
    t0 = time.perf_counter()
    schema = {"userId": pl.Int32, "movieId": pl.Int32, "rating": pl.Float32, "timestamp": pl.Int64}
    ratings = pl.scan_csv(ratings_csv, schema=schema)
    is_valid = ((pl.col("userId").cast(pl.Int64) * 7919 + pl.col("movieId").cast(pl.Int64) * 104729) % 10) == 0
    parsed = run(ratings.with_columns(is_valid.alias("_valid")))
    src = parsed.lazy()
    write(run(src.filter(~pl.col("_valid")).drop("_valid")), out / "train.parquet")
    write(run(src.filter(pl.col("_valid")).drop("_valid")), out / "valid.parquet")
    rows = len(parsed)
    del parsed
    times["csv_to_parquet"] = time.perf_counter() - t0

    # 2. the genres: split into lists and categorified over the movies (a small
    #    table: 62k rows for MovieLens-25M; multi-hot: explode, a join and implode
    #    on the engine, docs/workflow.md); then joined onto the ratings and the
    #    workflow for the ratings, users and movies categorified and the rating
    #    binarised, fitted on train
    t0 = time.perf_counter()
    genre_wf = wf.Workflow(["movieId"] + (["genres"] >> wf.Categorify()))
    movies = pl.scan_csv(movies_csv, schema={"movieId": pl.Int32, "title": pl.String, "genres": pl.String})
    movies = movies.select("movieId", pl.col("genres").str.split("|"))
    genre_wf.fit(movies, engine=engine)
    write(run(genre_wf.transform(movies, engine=engine)), out / "movies.parquet")
    times["genres"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    movies_lf = pl.scan_parquet(out / "movies.parquet")

    def joined(split: str) -> pl.LazyFrame:
        return pl.scan_parquet(out / f"{split}.parquet").join(movies_lf, on="movieId", how="left")

    cats = ["userId", "movieId"] >> wf.Categorify()
    label = ["rating"] >> wf.LambdaOp((pl.element() >= 4.0).cast(pl.Float32)) >> wf.Rename(name="label")
    workflow = wf.Workflow(cats + ["genres"] + label)
    workflow.fit(joined("train"), engine=engine)
    times["join_and_fit"] = time.perf_counter() - t0

    # 3. train and valid transformed and written shuffled, files_per_rank per rank
    t0 = time.perf_counter()
    for split in ("train", "valid"):
        d = out / split
        shutil.rmtree(d, ignore_errors=True)
        wf.write_shuffled(workflow.transform(joined(split)), d, n_files=files_per_rank * ranks,
                          engine=engine, seed=seed)
    times["transform_and_write"] = time.perf_counter() - t0
    return {"times": times, "workflow": workflow, "genres": genre_wf, "rows": rows}


def checksum(d: Path) -> dict[str, Any]:
    """Order-free fingerprint of a directory of Parquet files: rows and column sums."""
    import polars as pl

    df = pl.read_parquet(sorted(d.glob("*.parquet")))
    return {
        "rows": df.height,
        "userId": int(df["userId"].sum()),
        "movieId": int(df["movieId"].sum()),
        "genres": int(df["genres"].list.sum().sum()),
        "genre_items": int(df["genres"].list.len().sum()),
        "label": float(df["label"].sum()),
    }


def train(data: Path, loader: str, nproc: int, epochs: int, gpus: int, batch_size: int, max_steps: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
           str(HERE / "demo_train.py"), "--data", str(data), "--loader", loader, "--epochs", str(epochs),
           "--batch-size", str(batch_size)]
    if max_steps:
        cmd += ["--max-steps", str(max_steps)]
    if gpus:
        cmd.append("--gpu")
    env = dict(os.environ, OMP_NUM_THREADS=str(max(1, (os.cpu_count() or 2) // nproc)))
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, text=True)
    if p.returncode != 0:
        raise SystemExit(f"training with --loader {loader} failed (exit {p.returncode})")
    rec = json.loads((data / f"train-{loader}.json").read_text())
    rec["wall"] = time.perf_counter() - t0
    return rec


def plot(runs: dict[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for name, rec in runs.items():
        ep = [e["epoch"] + 1 for e in rec["epochs"]]
        ax[0].plot(ep, [e["train_loss"] for e in rec["epochs"]], marker="o", label=f"{name} train")
        ax[0].plot(ep, [e["valid_loss"] for e in rec["epochs"]], marker="x", ls="--", label=f"{name} valid")
        ax[1].plot(ep, [e["valid_auc"] for e in rec["epochs"]], marker="o", label=name)
    ax[0].set(xlabel="epoch", ylabel="BCE loss", title="loss")
    ax[1].set(xlabel="epoch", ylabel="AUC", title="valid AUC")
    for a in ax:
        a.legend()
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000, help="generated ratings (25000000: MovieLens-25M size)")
    ap.add_argument("--ml25m", type=Path, help="a real ml-25m directory (ratings.csv, movies.csv) instead")
    ap.add_argument("--out", type=Path, default=Path("build/demo"))
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--nproc", type=int, default=2, help="training ranks (CPU, gloo) without --gpus")
    ap.add_argument("--gpus", type=int, default=0, help="train on N GPUs (NCCL) and run the ETL on the GPU")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=8192)
    ap.add_argument("--max-steps", type=int, default=0, help="steps per epoch at most (0: all)")
    ap.add_argument("--files-per-rank", type=int, default=2)
    ap.add_argument("--no-baseline", action="store_true", help="skip the Polars + DataLoader baseline")
    ap.add_argument("--etl-only", action="store_true", help="stop after the ETL (no training)")
    args = ap.parse_args()
    os.environ["POLARS_MAX_THREADS"] = str(args.threads)  # before polars is imported

    import polars as pl

    import ladle
    from ladle import workflow as wf

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()
    if args.ml25m:
        ratings_csv, movies_csv = args.ml25m / "ratings.csv", args.ml25m / "movies.csv"
        for f in (ratings_csv, movies_csv):
            if not f.is_file():
                raise SystemExit(f"--ml25m {args.ml25m}: no {f.name} there")
    else:
        t0 = time.perf_counter()
        ratings_csv, movies_csv = generate(args.rows, out / "csv")
        print(f"generated {args.rows:,} ratings in {time.perf_counter() - t0:.1f} s ({ratings_csv.parent})")
    ranks = args.gpus or args.nproc
    device = "cuda" if args.gpus else "cpu"
    # on a GPU, what has no GPU kernel runs on ladle's CPU kernels with a FallbackWarning
    engine = ladle.Engine(device=device, threads=args.threads, raise_on_fail=device == "cpu")
    print(f"ladle {ladle.__version__} ({device}, {args.threads} threads) vs polars {pl.__version__} "
          f"(POLARS_MAX_THREADS={args.threads}); training on {ranks} "
          f"{'GPU' if args.gpus else 'CPU'} rank{'s' if ranks > 1 else ''}\n")

    report: dict[str, Any] = {"threads": args.threads, "device": device, "ranks": ranks}
    mine = etl(engine, ratings_csv, movies_csv, out / "ladle", args.files_per_rank, ranks, seed=0)
    report["ladle"] = mine["times"]
    rows = report["rows"] = mine["rows"]  # the ratings the ETL parsed (no second read of the CSV)
    print(f"{rows:,} ratings")
    def sizes(run: dict[str, Any]) -> dict[str, list[int]]:
        both = {**wf.get_embedding_sizes(run["genres"]), **wf.get_embedding_sizes(run["workflow"])}
        return {c: list(v) for c, v in both.items()}

    (out / "ladle" / "embeddings.json").write_text(json.dumps(sizes(mine)))
    if not args.no_baseline:
        base = etl(None, ratings_csv, movies_csv, out / "polars", args.files_per_rank, ranks, seed=0)
        report["polars"] = base["times"]
        (out / "polars" / "embeddings.json").write_text(json.dumps(sizes(base)))
        for split in ("train", "valid"):
            a, b = checksum(out / "ladle" / split), checksum(out / "polars" / split)
            if a != b:
                raise SystemExit(f"ladle's {split} data differs from Polars': {a} vs {b}")
        print("ladle's shuffled train and valid files hold the same rows as Polars' (checked)\n")

    print(f"{'stage':34s} {'ladle':>9s} {'baseline':>9s} {'ratio':>7s} {'ladle rows/s':>14s}")
    total_l = total_b = 0.0
    labels = {"genres": "genres split + categorified"}
    for stage in ("csv_to_parquet", "genres", "join_and_fit", "transform_and_write"):
        tl = report["ladle"][stage]
        total_l += tl
        line = f"{labels.get(stage, stage.replace('_', ' ')):34s} {tl:8.2f}s"
        if "polars" in report:
            tb = report["polars"][stage]
            total_b += tb
            line += f" {tb:8.2f}s {tl / tb:7.2f}"
        else:
            line += " " * 18
        print(line + f" {rows / tl:14,.0f}")
    if "polars" in report:
        print(f"{'ETL total':34s} {total_l:8.2f}s {total_b:8.2f}s {total_l / total_b:7.2f} {rows / total_l:14,.0f}")
    print()

    if args.etl_only:
        (out / "demo.json").write_text(json.dumps(report, indent=1, default=str))
        return 0
    runs = {"ladle.Loader": train(out / "ladle", "ladle", ranks, args.epochs, args.gpus, args.batch_size,
                                  args.max_steps)}
    if not args.no_baseline:
        runs["in-memory tensors"] = train(out / "ladle", "memory", ranks, args.epochs, args.gpus,
                                          args.batch_size, args.max_steps)
        runs["torch DataLoader"] = train(out / "ladle", "torch", ranks, args.epochs, args.gpus,
                                         args.batch_size, args.max_steps)
    report["training"] = runs
    print(f"\n{'training, per epoch':34s} {'median s':>9s} {'rows/s':>14s} {'last AUC':>9s}")
    for name, rec in runs.items():
        secs = sorted(e["seconds"] for e in rec["epochs"])
        med = secs[len(secs) // 2]
        rate = np.median([e["rows_all_ranks"] / e["seconds"] for e in rec["epochs"]])
        print(f"{name:34s} {med:9.2f} {rate:14,.0f} {rec['epochs'][-1]['valid_auc']:9.4f}")
    try:
        plot(runs, out / "demo.png")
        wrote = f"{out / 'demo.png'} and "
    except ImportError:  # matplotlib is a demo dependency (make installs it)
        wrote = "(no matplotlib: no demo.png) "
    report["total_seconds"] = time.perf_counter() - t_all
    (out / "demo.json").write_text(json.dumps(report, indent=1, default=str))
    print(f"\nwrote {wrote}{out / 'demo.json'}; total {report['total_seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
