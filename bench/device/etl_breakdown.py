"""Where the demo's ETL spends its time, step by step (issue 20's ETL target).

    python bench/device/etl_breakdown.py CSV_DIR OUT DEVICE THREADS [ROWS]

DEVICE is cpu, cuda or polars (Polars' CPU engine, the baseline). CSV_DIR holds the
demo's ratings.csv and movies.csv; when it does not, ROWS ratings are generated there
with examples/demo.py's generator. The steps are examples/demo.py's ETL, each query
and each write timed on its own (the shuffle's sort split from the transform; the
files cut as write_shuffled cuts them, slices of the rows sorted by file first)."""
import importlib.util
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("POLARS_MAX_THREADS", sys.argv[4])
import polars as pl, ladle
from ladle import workflow as wf
from ladle.workflow import _FILE, _KEY, _RID, shuffle_key
warnings.simplefilter("ignore")
csvd, out, dev, thr = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
out.mkdir(parents=True, exist_ok=True)
if not (csvd / "ratings.csv").is_file():
    spec = importlib.util.spec_from_file_location("demo", Path(__file__).resolve().parents[2] / "examples/demo.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    demo.generate(int(sys.argv[5]) if len(sys.argv) > 5 else 25_000_000, csvd)
eng = None if dev == "polars" else ladle.Engine(device=dev, threads=thr)
T = {}
def tick(name, t0):
    T[name] = T.get(name, 0) + time.perf_counter() - t0
    return time.perf_counter()
def run(lf):
    return eng.execute(lf) if eng is not None else lf.collect()
schema = {"userId": pl.Int32, "movieId": pl.Int32, "rating": pl.Float32, "timestamp": pl.Int64}
is_valid = ((pl.col("userId").cast(pl.Int64) * 7919 + pl.col("movieId").cast(pl.Int64) * 104729) % 10) == 0
t = time.perf_counter()
parsed = run(pl.scan_csv(csvd / "ratings.csv", schema=schema).with_columns(is_valid.alias("_valid"))); t = tick("1 parse", t)
src = parsed.lazy()
for name, pred in (("train", ~pl.col("_valid")), ("valid", pl.col("_valid"))):
    r = run(src.filter(pred).drop("_valid")); t = tick("1 filter", t)
    r.write_parquet(out / f"{name}.parquet"); t = tick("1 write", t)
del parsed, src, r
t = time.perf_counter()
genre_wf = wf.Workflow(["movieId"] + (["genres"] >> wf.Categorify()))
movies = pl.scan_csv(csvd / "movies.csv", schema={"movieId": pl.Int32, "title": pl.String, "genres": pl.String})
movies = movies.select("movieId", pl.col("genres").str.split("|"))
genre_wf.fit(movies, engine=eng)
run(genre_wf.transform(movies, engine=eng)).write_parquet(out / "movies.parquet"); t = tick("2 genres", t)
movies_lf = pl.scan_parquet(out / "movies.parquet")
def joined(split):
    return pl.scan_parquet(out / f"{split}.parquet").join(movies_lf, on="movieId", how="left")
cats = ["userId", "movieId"] >> wf.Categorify()
label = ["rating"] >> wf.LambdaOp((pl.element() >= 4.0).cast(pl.Float32)) >> wf.Rename(name="label")
workflow = wf.Workflow(cats + ["genres"] + label)
workflow.fit(joined("train"), engine=eng); t = tick("2 fit", t)
nfiles = 2
for split in ("train", "valid"):
    lf = workflow.transform(joined(split))
    keyed = lf.with_row_index(_RID).with_columns(shuffle_key(0).alias(_KEY))
    t = time.perf_counter()
    res = run(keyed); t = tick("3 transform+key", t)
    nf = pl.lit(nfiles, dtype=pl.Int64)
    res = run(res.lazy().with_columns((pl.col(_KEY) % nf).alias(_FILE)).sort([_FILE, _KEY, _RID]))
    t = tick("3 sort", t)
    sizes = run(res.lazy().group_by(_FILE).len())
    sizes = sizes if isinstance(sizes, pl.DataFrame) else sizes.to_polars()
    count = dict(zip(sizes[_FILE].to_list(), sizes["len"].to_list()))
    start = 0
    for j in range(nfiles):
        part = run(res.lazy().slice(start, count.get(j, 0)).drop([_KEY, _RID, _FILE])); t = tick("3 split", t)
        start += count.get(j, 0)
        part.write_parquet(out / f"{split}-{j}.parquet"); t = tick("3 write", t)
mb = sum(f.stat().st_size for f in out.glob("*.parquet")) / 1e6
print(dev, thr, "  ".join(f"{k} {v:.3f}" for k, v in sorted(T.items())), " total %.3f" % sum(T.values()),
      f" files {mb:.1f} MB", flush=True)
