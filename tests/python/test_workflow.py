"""ladle.workflow: every operator against a reference written here in plain
Python/numpy (not calling the workflow's code), fit on ladle (raise_on_fail, so
nothing falls back) and on Polars giving the same statistics, the transform run on
ladle equal to the same LazyFrame run on Polars, save/load, chains, shuffled
writing, SPMD ranks and the errors.

The hash references below are the formulas of docs/workflow.md written again in
Python integers (``>>`` for the floor shifts, ``% 2**64`` for the wrapping), so a
change to the workflow's hash fails here."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import ladle
from ladle.workflow import (
    Bucketize,
    Categorify,
    Clip,
    ColumnSelector,
    FillMedian,
    FillMissing,
    FormatVersionError,
    HashBucket,
    JoinExternal,
    JoinGroupby,
    LambdaOp,
    LogOp,
    Normalize,
    NormalizeMinMax,
    NotFittedError,
    Rename,
    TargetEncoding,
    Workflow,
    embedding_dim,
    get_embedding_sizes,
    write_shuffled,
)

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def eng() -> ladle.Engine:
    return ladle.Engine(threads=2, raise_on_fail=True)


# ---------------------------------------------------------------------------
# reference hashes: the documented formulas in Python integers

M64 = 1 << 64


def s64(v: int) -> int:
    v %= M64
    return v - M64 if v >= 1 << 63 else v


def ref_mix(x: int, seed: int) -> int:
    h = s64(x + (seed + 1) * 0x9E3779B97F4A7C15)
    h = s64(h * 0xBF58476D1CE4E5B9)
    h = s64(h + (h >> 32))  # Python's >> on a negative int floors, as // does
    h = s64(h * 0x94D049BB133111EB)
    return s64(h + (h >> 29))


def ref_fnv(s: str) -> int:
    h = 0xCBF29CE484222325
    for byte in s.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) % M64
    return s64(h)


def ref_bucket(v: Any, seed: int, n: int) -> int:
    if isinstance(v, str):
        x = ref_fnv(v)
    elif isinstance(v, bool):
        x = int(v)
    else:
        x = s64(int(v))
    return ref_mix(x, seed) % n


def test_reference_hash_sanity() -> None:
    # FNV-1a 64 test vectors (the published ones) and the mix's spread
    assert ref_fnv("") == s64(0xCBF29CE484222325)
    assert ref_fnv("a") == s64(0xAF63DC4C8601EC8C)
    assert ref_fnv("foobar") == s64(0x85944171F73967E8)
    counts = Counter(ref_bucket(i, 0, 8) for i in range(8000))
    assert len(counts) == 8 and min(counts.values()) > 850


# ---------------------------------------------------------------------------
# data and helpers

WORDS = [f"w{k}" for k in range(30)] + ["é", "日本", ""]


def frame(n: int, seed: int, unseen: bool = False) -> pl.DataFrame:
    """Random columns with about 10% nulls; ``unseen`` adds values fit data lacks."""
    g = np.random.default_rng(seed)
    words = WORDS + (["new-ü", "new-2", "w999"] if unseen else [])
    p = 1.0 / np.arange(1, len(words) + 1)
    ints = np.array([-(2**63), 2**63 - 1, -7, 0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 10**12]
                    + ([777, -778] if unseen else []), dtype=np.int64)
    pi = 1.0 / np.arange(1, len(ints) + 1)

    def nulls(s: pl.Series) -> pl.Series:
        return s.scatter(np.nonzero(g.random(n) < 0.1)[0], None) if n else s

    return pl.DataFrame({
        "rid": np.arange(n, dtype=np.int64),
        "s": nulls(pl.Series(g.choice(words, n, p=p / p.sum()), dtype=pl.String)),
        "i": nulls(pl.Series(g.choice(ints, n, p=pi / pi.sum()), dtype=pl.Int64)),
        "i32": nulls(pl.Series(g.integers(-20, 20, n), dtype=pl.Int32)),
        "b": nulls(pl.Series(g.random(n) < 0.3, dtype=pl.Boolean)),
        "x": nulls(pl.Series(g.normal(3.0, 10.0, n))),
        "xi": nulls(pl.Series(g.integers(0, 1000, n), dtype=pl.Int64)),
        "y": pl.Series(g.integers(0, 2, n).astype(np.float64)),
        "y2": nulls(pl.Series(g.normal(size=n))),
    })


TRAIN = frame(3000, 1)
OTHER = frame(800, 2, unseen=True)
EMPTY = TRAIN.clear()


def run_both(lf: pl.LazyFrame, eng: ladle.Engine) -> pl.DataFrame:
    """lf on ladle (no fallback, no warning) and on Polars: the same bits."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = lf.collect(engine=eng)
    want = lf.collect()
    assert_frame_equal(got, want, check_exact=True)
    return got


def fit_both(make: Callable[[], Any], data: pl.DataFrame, eng: ladle.Engine) -> Workflow:
    """The graph fitted on ladle and on Polars: the same statistics (floats to
    1e-9: sums are added in other orders). Returns the ladle-fitted workflow."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wl = Workflow(make()).fit(data, engine=eng)
    wp = Workflow(make()).fit(data)
    sl, sp = wl.statistics(), wp.statistics()
    assert sl.keys() == sp.keys()
    for k in sl:
        assert sl[k].keys() == sp[k].keys()
        for name in sl[k]:
            assert_frame_equal(sl[k][name], sp[k][name], rel_tol=1e-9, abs_tol=1e-12)
    return wl


def transform_all(wf: Workflow, data: pl.DataFrame, eng: ladle.Engine, training: bool = False) -> pl.DataFrame:
    return run_both(wf.transform(data, training=training, engine=eng), eng)


def expect(got: pl.DataFrame, cols: dict[str, list[Any]]) -> None:
    """got equals the reference columns (cast to got's types; floats to 1e-9)."""
    want = pl.DataFrame({k: pl.Series(k, v, dtype=got.schema[k], strict=False) for k, v in cols.items()})
    assert got.columns == want.columns
    assert_frame_equal(got, want, rel_tol=1e-9, abs_tol=1e-9)


def vals(df: pl.DataFrame, c: str) -> list[Any]:
    return df[c].to_list()


def nn(xs: list[Any]) -> list[Any]:
    return [v for v in xs if v is not None]


# ---------------------------------------------------------------------------
# Categorify


def ref_categorify(fit: list[Any], data: list[Any], thr: int = 0, max_size: int | None = None,
                   nb: int | None = None, start: int = 0, seed: int = 0) -> tuple[list[int | None], int]:
    cnt = Counter(nn(fit))
    order = sorted(cnt, key=lambda v: (-cnt[v], v))
    vocab = [v for v in order if cnt[v] >= thr]
    if max_size is not None:
        vocab = vocab[:max_size]
    b = nb or 1
    index = {v: start + 1 + b + r for r, v in enumerate(vocab)}

    def enc(v: Any) -> int:
        if v is None:
            return start
        if v in index:
            return index[v]
        return start + 1 + (ref_bucket(v, seed, nb) if nb else 0)

    return [enc(v) for v in data], start + 1 + b + len(vocab)


@pytest.mark.parametrize("params", [
    {},
    {"freq_threshold": 40},
    {"max_size": 7, "start_index": 2},
    {"freq_threshold": 25, "num_buckets": 6, "hash_seed": 11},
    {"max_size": 5, "num_buckets": 3, "dtype": pl.Int32},
])
def test_categorify(params: dict[str, Any], eng: ladle.Engine) -> None:
    cols = ["s", "i", "i32", "b"]
    wf = fit_both(lambda: cols >> Categorify(**params), TRAIN, eng)
    sizes = get_embedding_sizes(wf)
    for data in (TRAIN, OTHER, EMPTY):
        got = transform_all(wf, data, eng)
        assert got.dtypes == [params.get("dtype", pl.Int64)] * 4
        ref: dict[str, list[Any]] = {}
        for c in cols:
            ref[c], card = ref_categorify(vals(TRAIN, c), vals(data, c), params.get("freq_threshold", 0),
                                          params.get("max_size"), params.get("num_buckets"),
                                          params.get("start_index", 0), params.get("hash_seed", 0))
            assert sizes[c][0] == card
            assert max(ref[c], default=0) < card
        expect(got, ref)
    if "num_buckets" not in params:
        # every unseen value shares the one OOV index; the null index is start_index
        got = transform_all(wf, OTHER, eng)
        s0 = params.get("start_index", 0)
        unseen = ~OTHER["s"].is_in(TRAIN["s"].drop_nulls().implode()) & OTHER["s"].is_not_null()
        assert unseen.sum() > 0 and (got["s"].filter(unseen) == s0 + 1).all()
        assert (got["s"].filter(OTHER["s"].is_null()) == s0).all()


def test_categorify_dict_params_and_int_coercion(eng: ladle.Engine) -> None:
    op = lambda: ["s", "i32"] >> Categorify(freq_threshold={"s": 50}, max_size={"i32": 4})  # noqa: E731
    wf = fit_both(op, TRAIN, eng)
    # the data's i32 arrives as Int64: the fitted Int32 vocabulary is cast to it
    data = OTHER.with_columns(pl.col("i32").cast(pl.Int64))
    got = transform_all(wf, data, eng)
    expect(got, {"s": ref_categorify(vals(TRAIN, "s"), vals(data, "s"), thr=50)[0],
                 "i32": ref_categorify(vals(TRAIN, "i32"), vals(data, "i32"), max_size=4)[0]})


def test_categorify_multi_hot_lists(eng: ladle.Engine) -> None:
    """List columns are multi-hot: each element is encoded (a null element to the
    null index), an empty list stays empty, a null list null. Fit and transform
    run on ladle (explode, a join, implode) and equal both the reference and
    Polars, with and without hashed buckets, strings unseen at fit included."""
    g = np.random.default_rng(5)
    words = ["a", "b", "c", "d", "e"]

    def lists(n: int, extra: list[str]) -> pl.DataFrame:
        def one(pool: list[Any]) -> list[Any] | None:
            if g.random() < 0.1:
                return None
            return [pool[k] for k in g.integers(0, len(pool), g.integers(0, 4))]

        return pl.DataFrame({"L": [one(words + extra + [None]) for _ in range(n)],
                             "Li": [one([1, 2, 3, 4, None] + ([99] if extra else [])) for _ in range(n)]},
                            schema={"L": pl.List(pl.String), "Li": pl.List(pl.Int64)})

    fit, data = lists(300, []), lists(100, ["zz"])
    assert any(xs == [] for xs in vals(data, "L")) and any(xs is None for xs in vals(data, "L"))
    for nb in (None, 4):
        for start in (0, 1):
            wf = Workflow(["L", "Li"] >> Categorify(num_buckets=nb, freq_threshold=2, start_index=start))
            wf.fit(fit, engine=eng)
            on_ladle = transform_all(wf, data, eng)
            on_polars = wf.transform(data).collect()
            assert on_ladle.equals(on_polars)
            for c in ("L", "Li"):
                flat_fit = [v for xs in vals(fit, c) if xs is not None for v in xs]
                want = []
                for xs in vals(data, c):
                    want.append(None if xs is None else
                                ref_categorify(flat_fit, xs, thr=2, nb=nb, start=start)[0])
                assert on_ladle[c].to_list() == want
            # the same vocabulary fitted on Polars
            wp = Workflow(["L", "Li"] >> Categorify(num_buckets=nb, freq_threshold=2, start_index=start)).fit(fit)
            assert wp.transform(data).collect().equals(on_ladle)
    # an empty input and one of only empty and null lists
    wf = Workflow(["L"] >> Categorify()).fit(fit, engine=eng)
    odd = pl.DataFrame({"L": [[], None, []]}, schema={"L": pl.List(pl.String)})
    for d in (odd, odd.clear()):
        assert transform_all(wf, d, eng).equals(wf.transform(d).collect())
        assert transform_all(wf, d, eng)["L"].to_list() == [[], None, []][: d.height]


# ---------------------------------------------------------------------------
# HashBucket (hypothesis: any strings and integers, the same bucket on both engines)


def test_hash_bucket(eng: ladle.Engine) -> None:
    op = lambda: (["s", "i", "i32", "b"] >> HashBucket({"s": 10, "i": 7, "i32": 3, "b": 2}, seed=4))  # noqa: E731
    wf = Workflow(op())
    assert wf.fitted  # stateless
    for data in (TRAIN, OTHER, EMPTY):
        got = transform_all(wf, data, eng)
        expect(got, {c: [None if v is None else ref_bucket(v, 4, n) for v in vals(data, c)]
                     for c, n in (("s", 10), ("i", 7), ("i32", 3), ("b", 2))})
    assert get_embedding_sizes(wf)["s"] == (10, embedding_dim(10))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(strs=st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=30),
       ints=st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), min_size=30, max_size=30),
       seed=st.integers(0, 2**31), n=st.integers(1, 50))
def test_hash_bucket_property(strs: list[str | None], ints: list[int | None], seed: int, n: int,
                              eng: ladle.Engine) -> None:
    df = pl.DataFrame({"s": pl.Series(strs + [None] * (30 - len(strs)), dtype=pl.String),
                       "i": pl.Series(ints, dtype=pl.Int64)})
    wf = Workflow(["s", "i"] >> HashBucket(n, seed=seed))
    got = transform_all(wf, df, eng)
    expect(got, {c: [None if v is None else ref_bucket(v, seed, n) for v in vals(df, c)] for c in ("s", "i")})
    # Categorify's hashed out-of-vocabulary values: the same buckets, past null and vocabulary
    fit = df.head(10)
    wc = fit_both(lambda: ["s", "i"] >> Categorify(num_buckets=n, hash_seed=seed, freq_threshold=2), fit, eng)
    got = transform_all(wc, df, eng)
    expect(got, {c: ref_categorify(vals(fit, c), vals(df, c), thr=2, nb=n, seed=seed)[0] for c in ("s", "i")})


# ---------------------------------------------------------------------------
# continuous operators


def test_normalize_and_minmax(eng: ladle.Engine) -> None:
    wf = fit_both(lambda: (["x", "xi", "i32"] >> Normalize())
                  + (["x", "xi"] >> NormalizeMinMax(out_dtype=pl.Float32) >> Rename(postfix="_mm")), TRAIN, eng)
    for data in (TRAIN, OTHER, EMPTY):
        got = transform_all(wf, data, eng)
        ref: dict[str, list[Any]] = {}
        for c in ("x", "xi", "i32"):
            a = np.array(nn(vals(TRAIN, c)), dtype=np.float64)
            m, s = a.mean(), a.std(ddof=1)
            ref[c] = [None if v is None else (v - m) / s for v in vals(data, c)]
        for c in ("x", "xi"):
            a = np.array(nn(vals(TRAIN, c)), dtype=np.float64)
            ref[c + "_mm"] = [None if v is None else np.float32((v - a.min()) / (a.max() - a.min()))
                              for v in vals(data, c)]
        expect(got, ref)
        assert got.schema["x_mm"] == pl.Float32


def test_normalize_degenerate_statistics(eng: ladle.Engine) -> None:
    """No values: mean 0, std 1; one value or all equal: std 0 divides by 1."""
    df = pl.DataFrame({"a": [None, None], "c": [5.0, 5.0], "one": [None, 2.0]}, schema={
        "a": pl.Float64, "c": pl.Float64, "one": pl.Float64})
    wf = fit_both(lambda: ["a", "c", "one"] >> Normalize(), df, eng)
    data = pl.DataFrame({"a": [1.0, None], "c": [5.0, 7.0], "one": [3.0, None]})
    expect(transform_all(wf, data, eng), {"a": [1.0, None], "c": [0.0, 2.0], "one": [1.0, None]})
    wf = fit_both(lambda: ["a", "c"] >> NormalizeMinMax(), df, eng)
    expect(transform_all(wf, data.select("a", "c"), eng), {"a": [1.0, None], "c": [0.0, 2.0]})


def test_fill_clip_log_bucketize(eng: ladle.Engine) -> None:
    bounds = [-10.0, 0.0, 2.5, 20.0]
    wf = fit_both(lambda: (["x", "xi"] >> FillMedian(add_binary_cols=True))
                  + (["y2", "i32"] >> FillMissing(-1, add_binary_cols=True) >> Rename(postfix="_f"))
                  + (["s"] >> FillMissing("?") >> Rename(postfix="_f"))
                  + (["x", "i32"] >> Clip(-5, 8) >> Rename(postfix="_c"))
                  + (["xi"] >> LogOp() >> Rename(postfix="_log"))
                  + (["x", "xi"] >> Bucketize({"x": bounds, "xi": [100, 500]}) >> Rename(postfix="_b")), TRAIN, eng)
    for data in (TRAIN, OTHER, EMPTY):
        got = transform_all(wf, data, eng)
        ref: dict[str, list[Any]] = {}
        for c in ("x", "xi"):
            med = float(np.median(np.array(nn(vals(TRAIN, c)), dtype=np.float64)))
            ref[c] = [med if v is None else float(v) for v in vals(data, c)]
            ref[c + "_filled"] = [v is None for v in vals(data, c)]
        for c in ("y2", "i32"):
            ref[c + "_f"] = [-1 if v is None else v for v in vals(data, c)]
            ref[c + "_filled_f"] = [v is None for v in vals(data, c)]
        ref["s_f"] = ["?" if v is None else v for v in vals(data, "s")]
        for c in ("x", "i32"):
            ref[c + "_c"] = [None if v is None else min(max(v, -5), 8) for v in vals(data, c)]
        ref["xi_log"] = [None if v is None else math.log1p(v) for v in vals(data, "xi")]
        for c, b in (("x", bounds), ("xi", [100, 500])):
            ref[c + "_b"] = [None if v is None else int(np.searchsorted(b, v, side="right")) for v in vals(data, c)]
        expect(got, ref)
        assert got.schema["xi"] == pl.Float64 and got.schema["x_filled"] == pl.Boolean


# ---------------------------------------------------------------------------
# TargetEncoding


def ref_te(fit: pl.DataFrame, data: pl.DataFrame, keys: list[str], target: str, p: float, kfold: int,
           seed: int, training: bool) -> list[float]:
    fk = list(zip(*[vals(fit, k) for k in keys]))
    fy = vals(fit, target)
    known = [y for y in fy if y is not None]
    prior = float(np.mean(known)) if known else 0.0
    tot: dict[Any, list[float]] = defaultdict(lambda: [0.0, 0.0])
    per: dict[Any, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r, (k, y) in enumerate(zip(fk, fy)):
        if y is not None:
            f = ref_mix(r, seed) % kfold
            tot[k][0] += y
            tot[k][1] += 1
            per[(k, f)][0] += y
            per[(k, f)][1] += 1
    out = []
    for r, k in enumerate(zip(*[vals(data, c) for c in keys])):
        s, c = tot[k] if k in tot else (0.0, 0.0)
        if training and kfold > 1:
            fs, fc = per.get((k, ref_mix(r, seed) % kfold), (0.0, 0.0))
            s, c = s - fs, c - fc
        if p > 0:
            out.append((s + p * prior) / (c + p))
        else:
            out.append(s / c if c > 0 else prior)
    return out


@pytest.mark.parametrize("kfold,p,seed", [(3, 20.0, 42), (5, 0.0, 7), (1, 5.0, 0)])
def test_target_encoding(kfold: int, p: float, seed: int, eng: ladle.Engine) -> None:
    make = lambda: ["s", ["s", "b"], "i"] >> TargetEncoding(["y", "y2"], kfold=kfold, fold_seed=seed, p=p)  # noqa: E731
    wf = fit_both(make, TRAIN, eng)
    assert wf.output_columns == [f"TE_{k}_{t}" for k in ("s", "s_b", "i") for t in ("y", "y2")]
    for data, training in ((TRAIN, True), (TRAIN, False), (OTHER, False), (EMPTY, False), (EMPTY, True)):
        got = transform_all(wf, data, eng, training=training)
        ref = {}
        for keys in (["s"], ["s", "b"], ["i"]):
            for t in ("y", "y2"):
                ref[f"TE_{'_'.join(keys)}_{t}"] = ref_te(TRAIN, data, keys, t, p, kfold, seed, training)
        expect(got, ref)
    if kfold > 1:  # out of fold really differs from the full statistics
        a = transform_all(wf, TRAIN, eng, training=True)
        b = transform_all(wf, TRAIN, eng, training=False)
        assert not a.equals(b)
        # fit_transform is the training pass
        assert_frame_equal(run_both(Workflow(make()).fit_transform(TRAIN, engine=eng), eng), a, rel_tol=1e-9)


def test_target_encoding_without_target_at_transform(eng: ladle.Engine) -> None:
    wf = fit_both(lambda: ["s"] >> TargetEncoding("y", out_dtype=pl.Float32), TRAIN, eng)
    got = transform_all(wf, OTHER.drop("y", "y2"), eng)
    assert got.schema["TE_s_y"] == pl.Float32
    expect(got, {"TE_s_y": [np.float32(v) for v in ref_te(TRAIN, OTHER, ["s"], "y", 20.0, 3, 42, False)]})


# ---------------------------------------------------------------------------
# JoinGroupby, JoinExternal, LambdaOp


def ref_groupby(fit: pl.DataFrame, data: pl.DataFrame, keys: list[str], col: str) -> dict[str, list[Any]]:
    groups: dict[Any, list[Any]] = defaultdict(list)
    for k, v in zip(zip(*[vals(fit, c) for c in keys]), vals(fit, col)):
        groups[k].append(v)
    name = "_".join(keys)
    out: dict[str, list[Any]] = {f"{name}_count": []}
    out.update({f"{name}_{col}_{s}": [] for s in ("sum", "mean", "std", "min", "max")})
    for k in zip(*[vals(data, c) for c in keys]):
        g = groups.get(k)
        xs = np.array(nn(g or []), dtype=np.float64)
        out[f"{name}_count"].append(len(g) if g else 0)
        out[f"{name}_{col}_sum"].append(float(xs.sum()) if g else None)
        out[f"{name}_{col}_mean"].append(float(xs.mean()) if len(xs) else None)
        out[f"{name}_{col}_std"].append(float(xs.std(ddof=1)) if len(xs) > 1 else None)
        out[f"{name}_{col}_min"].append(float(xs.min()) if len(xs) else None)
        out[f"{name}_{col}_max"].append(float(xs.max()) if len(xs) else None)
    return out


def test_join_groupby(eng: ladle.Engine) -> None:
    stats = ["count", "sum", "mean", "std", "min", "max"]
    wf = fit_both(lambda: ["s", ["i32", "b"]] >> JoinGroupby(["x"], stats), TRAIN, eng)
    for data in (TRAIN, OTHER, EMPTY):
        got = transform_all(wf, data, eng)
        ref = {**ref_groupby(TRAIN, data, ["s"], "x"), **ref_groupby(TRAIN, data, ["i32", "b"], "x")}
        expect(got, {c: ref[c] for c in got.columns})


def test_join_external_and_lambda(eng: ladle.Engine, tmp_path: Path) -> None:
    ext = pl.DataFrame({"key": WORDS[:20] + ["new-ü"], "w": np.arange(21.0), "tag": [f"t{k}" for k in range(21)]})
    ext.write_parquet(tmp_path / "ext.parquet")
    for src in (ext, ext.lazy(), tmp_path / "ext.parquet"):
        wf = Workflow((["s", "x"] >> JoinExternal(src, on="s", on_ext="key"))
                      + (["xi"] >> LambdaOp(pl.element().clip(0, 500) * 2 + 1) >> Rename(postfix="_l"))
                      + (ColumnSelector(["i32"]) >> (lambda c: c.abs() * 3) >> Rename(postfix="_f")))
        got = transform_all(wf, OTHER, eng)
        lookup = {k: (w, t) for k, w, t in ext.iter_rows()}
        expect(got, {"s": vals(OTHER, "s"), "x": vals(OTHER, "x"),
                     "w": [lookup[v][0] if v in lookup else None for v in vals(OTHER, "s")],
                     "tag": [lookup[v][1] if v in lookup else None for v in vals(OTHER, "s")],
                     "xi_l": [None if v is None else min(max(v, 0), 500) * 2 + 1 for v in vals(OTHER, "xi")],
                     "i32_f": [None if v is None else abs(v) * 3 for v in vals(OTHER, "i32")]})
    inner = Workflow(["s", "rid"] >> JoinExternal(ext, on="s", on_ext="key", how="inner", columns_ext=["w"]))
    got = transform_all(inner, OTHER, eng)
    keep = [v in set(ext["key"]) for v in vals(OTHER, "s")]
    assert vals(got, "rid") == [r for r, k in zip(vals(OTHER, "rid"), keep) if k]


# ---------------------------------------------------------------------------
# composition, chains, save/load


def full_graph() -> Any:
    ext = pl.DataFrame({"s": WORDS[:10], "w": np.arange(10.0)})
    cats = ["s", "i"] >> Categorify(freq_threshold=20, num_buckets=5)
    te = (["s"] >> Categorify(max_size=8) >> TargetEncoding("y", kfold=4) >> Normalize()
          >> Rename(name="te_norm"))
    conts = (ColumnSelector(["x", "xi"]) >> FillMedian() >> Clip(min_value=0) >> LogOp()
             >> Normalize(out_dtype=pl.Float32))
    return (cats + te + conts
            + (["b", "s"] >> HashBucket(13) >> Rename(postfix="_h"))
            + (["i32"] >> JoinGroupby(["x"], ["count", "mean"]))
            + (["s"] >> JoinExternal(ext, on="s") >> Rename(prefix="e_"))
            + (["y2"] >> LambdaOp(pl.element().fill_null(0.0) ** 2) >> Clip(max_value=4.0))
            + (["x"] >> Bucketize([0.0, 5.0]) >> Rename(postfix="_b"))
            + ["y", "rid"])


def spmd_frame(n: int, seed: int) -> pl.DataFrame:
    """frame() with a multi-hot List[String] column "L" (each string's characters)."""
    return frame(n, seed).with_columns(pl.col("s").str.split("").alias("L"))


def spmd_graph() -> Any:
    return full_graph() + (["L"] >> Categorify(num_buckets=3, freq_threshold=2))


def test_chained_ops_fit_on_transformed_output(eng: ladle.Engine) -> None:
    wf = fit_both(full_graph, TRAIN, eng)
    # FillMedian >> Clip >> LogOp >> Normalize: Normalize's statistics are those of
    # log1p of the median-filled column clipped at 0
    st = {k: v for k, v in wf.statistics().items()}
    norm = [v["stats"] for k, v in st.items() if k.endswith(":Normalize") and v["stats"]["column"][0] == "x"][0]
    for c in ("x", "xi"):
        a = np.array(nn(vals(TRAIN, c)), dtype=np.float64)
        filled = np.where(TRAIN[c].is_null().to_numpy(), np.median(a), TRAIN[c].fill_null(0).to_numpy())
        logged = np.log1p(np.maximum(filled, 0))
        row = norm.filter(pl.col("column") == c).row(0, named=True)
        assert row["mean"] == pytest.approx(logged.mean(), rel=1e-12)
        assert row["std"] == pytest.approx(logged.std(ddof=1), rel=1e-12)
    # Categorify >> TargetEncoding >> Normalize: the TE keys are the vocabulary
    # indices, and Normalize fits on the out-of-fold encodings (the training pass)
    idx, _ = ref_categorify(vals(TRAIN, "s"), vals(TRAIN, "s"), max_size=8)
    keyed = TRAIN.with_columns(pl.Series("s", idx))
    oof = np.array(ref_te(keyed, keyed, ["s"], "y", 20.0, 4, 42, True))
    te_norm = [v["stats"] for k, v in st.items() if k.endswith(":Normalize")
               and v["stats"]["column"][0] == "TE_s_y"][0].row(0, named=True)
    assert te_norm["mean"] == pytest.approx(oof.mean(), rel=1e-9)
    assert te_norm["std"] == pytest.approx(oof.std(ddof=1), rel=1e-9)
    got = transform_all(wf, TRAIN, eng, training=True)
    assert got["te_norm"].to_numpy() == pytest.approx((oof - oof.mean()) / oof.std(ddof=1), rel=1e-9, abs=1e-12)
    assert got.columns == wf.output_columns
    transform_all(wf, OTHER, eng)


def test_save_load_roundtrip(eng: ladle.Engine, tmp_path: Path) -> None:
    wf = fit_both(full_graph, TRAIN, eng)
    wf.save(tmp_path / "wf")
    files = sorted(p.relative_to(tmp_path / "wf").as_posix() for p in (tmp_path / "wf").rglob("*") if p.is_file())
    assert "workflow.json" in files and all(f == "workflow.json" or f.endswith(".parquet") for f in files)
    doc = json.loads((tmp_path / "wf" / "workflow.json").read_text())
    assert doc["format_version"] == 1
    lam = [n for n in doc["nodes"] if n.get("op") == "LambdaOp"][0]
    assert "Element" in lam["params"]["expr_json"]  # Polars' JSON serialisation
    back = Workflow.load(tmp_path / "wf")
    assert back.output_columns == wf.output_columns
    for k, v in wf.statistics().items():
        for name, f in v.items():
            assert_frame_equal(back.statistics()[k][name], f, check_exact=True)
    for data, training in ((TRAIN, True), (OTHER, False), (EMPTY, False)):
        assert_frame_equal(transform_all(back, data, eng, training), transform_all(wf, data, eng, training),
                           check_exact=True)
    assert get_embedding_sizes(back) == get_embedding_sizes(wf)
    # an unfitted workflow saves and loads unfitted
    Workflow(full_graph()).save(tmp_path / "raw")
    with pytest.raises(NotFittedError):
        Workflow.load(tmp_path / "raw").transform(TRAIN)


def test_embedding_sizes_rule(eng: ladle.Engine) -> None:
    for n in (1, 2, 7, 100, 4096, 10**6, 10**9, 10**12):
        d = embedding_dim(n)
        assert d % 8 == 0 and 8 <= d <= 512
        assert d == min(512, max(8, 8 * math.ceil(6 * n ** 0.25 / 8)))
    assert [embedding_dim(n) for n in (2, 100, 10**4, 10**6, 10**9)] == [8, 24, 64, 192, 512]
    wf = fit_both(full_graph, TRAIN, eng)
    sizes = get_embedding_sizes(wf)
    _, card_s = ref_categorify(vals(TRAIN, "s"), [], thr=20, nb=5)
    _, card_i = ref_categorify(vals(TRAIN, "i"), [], thr=20, nb=5)
    assert sizes == {"s": (card_s, embedding_dim(card_s)), "i": (card_i, embedding_dim(card_i)),
                     "b_h": (13, 16), "s_h": (13, 16)}


# ---------------------------------------------------------------------------
# Parquet input, shuffled output, ranks


def test_fit_from_parquet_paths_and_write_shuffled(eng: ladle.Engine, tmp_path: Path) -> None:
    d = tmp_path / "in"
    d.mkdir()
    for k in range(3):
        TRAIN.slice(k * 1000, 1000).write_parquet(d / f"p{k}.parquet", row_group_size=300)
    a = fit_both(full_graph, TRAIN, eng)
    b = Workflow(full_graph()).fit(d, engine=eng)
    c = Workflow(full_graph()).fit(sorted(d.glob("*.parquet")), engine=eng)
    for w in (b, c):
        for k, v in a.statistics().items():
            for name, f in v.items():
                assert_frame_equal(w.statistics()[k][name], f, rel_tol=1e-9)
    lf = b.transform(str(d / "*.parquet"), training=True, engine=eng)
    whole = run_both(lf, eng)
    pl_files = write_shuffled(lf, tmp_path / "pl", 4, seed=9)
    la_files = write_shuffled(lf, tmp_path / "la", 4, engine=eng, seed=9)
    parts = [pl.read_parquet(f) for f in la_files]
    for f, g in zip(pl_files, parts):
        assert_frame_equal(g, pl.read_parquet(f), check_exact=True)
    together = pl.concat(parts)
    assert sorted(p.name for p in la_files) == [f"part-{j:05d}.parquet" for j in range(4)]
    assert_frame_equal(together.sort("rid"), whole.sort("rid"), check_exact=True)
    # the order is the documented permutation: file key mod 4, by key within a file
    keys = {r: ref_mix(r, 9) for r in range(whole.height)}  # rid is the row number here
    for j, part in enumerate(parts):
        ks = [keys[r] for r in part["rid"]]
        assert all(k % 4 == j for k in ks) and ks == sorted(ks)
    other = write_shuffled(lf, tmp_path / "la2", 4, engine=eng, seed=10, rank=3)
    assert other[0].name == "part-r0003-00000.parquet"
    assert not pl.read_parquet(other[0]).equals(parts[0])


@pytest.mark.parametrize("rows", [0, 5, 1000])
def test_write_shuffled_files_as_slices(eng: ladle.Engine, rows: int, tmp_path: Path) -> None:
    """One process sorts by (file, key, row) and cuts each file as a slice: with more
    files than rows (empty files), no rows, and a list column, ladle's files equal
    Polars' and each file holds exactly the rows whose key is its number, by key."""
    df = pl.DataFrame({"rid": pl.Series(range(rows), dtype=pl.Int64),
                       "tags": [[i % 3, i % 5] for i in range(rows)]},
                      schema={"rid": pl.Int64, "tags": pl.List(pl.Int64)})
    pl_files = write_shuffled(df, tmp_path / "pl", 8, seed=3)
    la_files = write_shuffled(df, tmp_path / "la", 8, engine=eng, seed=3)
    got = [pl.read_parquet(f) for f in la_files]
    for g, f in zip(got, pl_files):
        assert_frame_equal(g, pl.read_parquet(f), check_exact=True)
    assert sum(g.height for g in got) == rows
    for j, g in enumerate(got):
        ks = [ref_mix(r, 3) for r in g["rid"]]
        assert all(k % 8 == j for k in ks) and ks == sorted(ks)


SPMD_WORKER = r'''
import json, sys, traceback
import numpy as np, polars as pl, ladle
from polars.testing import assert_frame_equal
sys.path.insert(0, sys.argv[2])
from test_workflow import spmd_frame as frame, spmd_graph as full_graph
from ladle.workflow import Workflow, write_shuffled

out = sys.argv[1]
with ladle.SPMDEngine(threads=1) as eng:
    r, n = eng.rank, eng.nranks
    parts = [frame(400 + 150 * q, 10 + q).with_columns(pl.col("rid") + 10000 * q) for q in range(n)]
    found = {"rank": r, "nranks": n}
    try:
        wf = Workflow(full_graph()).fit(parts[r].lazy(), engine=eng)
        ref = Workflow(full_graph()).fit(pl.concat(parts).lazy())
        for k, v in ref.statistics().items():
            for name, f in v.items():
                assert_frame_equal(wf.statistics()[k][name], f, rel_tol=1e-9, abs_tol=1e-12)
        for tr in (False, True):
            lf = wf.transform(parts[r].lazy(), training=tr, engine=eng)
            got = eng.allgather(eng.execute(lf)).to_polars().sort("rid")
            want = ref.transform(pl.concat(parts).lazy(), training=tr).collect().sort("rid")
            assert_frame_equal(got, want, rel_tol=1e-9, abs_tol=1e-12)
        files = write_shuffled(wf.transform(parts[r].lazy(), engine=eng), out, 2, engine=eng, seed=1)
        found["files"] = [str(f) for f in files]
        found["ok"] = True
    except Exception:
        found["ok"] = False
        found["why"] = traceback.format_exc()[-3000:]
    open(f"{out}/rank{r}.json", "w").write(json.dumps(found))
'''


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is missing (make deps installs openmpi-bin)")
def test_spmd_two_ranks(tmp_path: Path) -> None:
    """fit on 2 MPI ranks (each its own rows; a multi-hot list column among them)
    gives the statistics of the whole data;
    each rank's transform, gathered, is the whole data's transform; write_shuffled
    writes each rank's files, together every row once."""
    import os

    (tmp_path / "worker.py").write_text(SPMD_WORKER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    p = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
                        sys.executable, str(tmp_path / "worker.py"), str(tmp_path), str(HERE)],
                       capture_output=True, text=True, timeout=300, env=env)
    found = []
    for r in range(2):
        f = tmp_path / f"rank{r}.json"
        assert f.exists(), f"rank {r} wrote nothing\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
        found.append(json.loads(f.read_text()))
    assert all(x["ok"] for x in found), [x.get("why") for x in found]
    assert [x["nranks"] for x in found] == [2, 2]
    names = sorted(Path(f).name for x in found for f in x["files"])
    assert names == ["part-r0000-00000.parquet", "part-r0000-00001.parquet",
                     "part-r0001-00000.parquet", "part-r0001-00001.parquet"]
    parts = [spmd_frame(400 + 150 * q, 10 + q).with_columns(pl.col("rid") + 10000 * q) for q in range(2)]
    whole = pl.concat(parts)
    written = pl.concat([pl.read_parquet(tmp_path / nm) for nm in names])
    want = Workflow(spmd_graph()).fit(whole).transform(whole).collect()
    assert_frame_equal(written.sort("rid"), want.sort("rid"), rel_tol=1e-9, abs_tol=1e-12)


# ---------------------------------------------------------------------------
# errors


def test_errors(tmp_path: Path, eng: ladle.Engine) -> None:
    with pytest.raises(ValueError, match="'nope'"):
        Workflow(["s", "nope"] >> Categorify()).fit(TRAIN)
    with pytest.raises(ValueError, match="'nope'"):
        Workflow(["nope"] >> Clip(0, 1)).transform(TRAIN)
    with pytest.raises(NotFittedError, match="fit"):
        Workflow(["x"] >> Normalize()).transform(TRAIN)
    with pytest.raises(TypeError, match="Normalize: column 's' is String"):
        Workflow(["s"] >> Normalize()).fit(TRAIN, engine=eng)
    with pytest.raises(TypeError, match="Categorify: column 'x' is Float64"):
        Workflow(["x"] >> Categorify()).fit(TRAIN)
    with pytest.raises(TypeError, match="HashBucket: column 'x' is Float64"):
        Workflow(["x"] >> HashBucket(3)).transform(TRAIN)
    with pytest.raises(TypeError, match="target column 's' is String"):
        Workflow(["i"] >> TargetEncoding("s")).fit(TRAIN)
    with pytest.raises(ValueError, match="target column 'nope'"):
        Workflow(["i"] >> TargetEncoding("nope")).fit(TRAIN)
    with pytest.raises(TypeError, match="FillMissing: column 's' is String"):
        Workflow(["s"] >> FillMissing(0)).transform(TRAIN)
    with pytest.raises(ValueError, match="column 'x' comes out of two branches"):
        Workflow((["x"] >> LogOp()) + (["x"] >> Clip(0, 1))).transform(TRAIN)
    with pytest.raises(ValueError, match="two columns named 'x'"):
        Workflow(["x", "x"] >> LogOp()).transform(TRAIN)
    wf = Workflow(["s"] >> Categorify()).fit(TRAIN)
    with pytest.raises(TypeError, match="Categorify: column 's' is Int64 in this data but was String"):
        wf.transform(TRAIN.with_columns(pl.col("i").alias("s")))
    with pytest.raises(ValueError, match="strictly ascending"):
        Bucketize([1, 1])
    with pytest.raises(ValueError, match="kfold"):
        TargetEncoding("y", kfold=0)
    with pytest.raises(ValueError, match="column groups"):
        Workflow([["s", "i"]] >> Categorify()).fit(TRAIN)
    with pytest.raises(ValueError, match="cannot be saved"):
        Workflow(["x"] >> LambdaOp(lambda c: c * 2)).save(tmp_path / "f")
    with pytest.raises(ValueError, match="pl.element"):
        LambdaOp(pl.col("x") * 2)
    with pytest.raises(TypeError, match="LazyFrame"):
        Workflow(["x"] >> LogOp()).transform(42)  # type: ignore[arg-type]
    # a different format version: both versions named
    Workflow(["x"] >> Normalize()).fit(TRAIN).save(tmp_path / "v")
    doc = json.loads((tmp_path / "v" / "workflow.json").read_text())
    doc["format_version"] = 99
    (tmp_path / "v" / "workflow.json").write_text(json.dumps(doc))
    with pytest.raises(FormatVersionError, match="format version 99.*format version 1"):
        Workflow.load(tmp_path / "v")
