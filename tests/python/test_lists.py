"""List columns computed on ladle, differential against Polars' CPU engine:
str.split, list.len, list.slice, casts of a list's elements, fill_null /
coalesce / when over lists, explode (the plan node and the expression) and
implode (group_by's list aggregation), on random data with nulls, null
elements, empty lists and strings, and multi-byte characters."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import ladle

WORDS = ["a", "b", "", "é", "ünï", "x|y", "日本", "||", "z"]


def frame(n: int, seed: int) -> pl.DataFrame:
    g = np.random.default_rng(seed)

    def text() -> str | None:
        if g.random() < 0.1:
            return None
        return "|".join(WORDS[k] for k in g.integers(0, len(WORDS), g.integers(0, 5)))

    def lst(pool: list[Any]) -> list[Any] | None:
        if g.random() < 0.1:
            return None
        return [pool[k] for k in g.integers(0, len(pool), g.integers(0, 5))]

    ints: list[Any] = [1, 2, 3, -7, None, 2**40]
    return pl.DataFrame(
        {
            "k": g.integers(0, 12, n),
            "s": [text() for _ in range(n)],
            "li": [lst(ints) for _ in range(n)],
            "ls": [lst(WORDS + [None]) for _ in range(n)],
            "b": pl.Series([None if g.random() < 0.1 else bool(g.random() < 0.5) for _ in range(n)],
                           dtype=pl.Boolean),
            "d": pl.Series(g.integers(-1000, 30000, n), dtype=pl.Int32).cast(pl.Date),
        },
        schema_overrides={"li": pl.List(pl.Int64), "ls": pl.List(pl.String)},
    )


DATA = frame(3000, 1)
SMALL = frame(7, 2)

QUERIES: dict[str, Callable[[pl.LazyFrame], pl.LazyFrame]] = {
    "split": lambda lf: lf.select(pl.col("s").str.split("|")),
    "split_multichar": lambda lf: lf.select(pl.col("s").str.split("||")),
    "split_chars": lambda lf: lf.select(pl.col("s").str.split("")),
    "split_len": lambda lf: lf.select("k", pl.col("s").str.split("|").list.len().alias("n")),
    "len": lambda lf: lf.select(pl.col("li").list.len(), pl.col("ls").list.len()),
    "slice": lambda lf: lf.select(pl.col("li").list.slice(1, 2), pl.col("ls").list.slice(-2)),
    "slice_neg_past": lambda lf: lf.select(pl.col("ls").list.slice(-6, 3)),
    "slice_empty": lambda lf: lf.select(pl.col("li").list.slice(0, 0)),
    "cast": lambda lf: lf.select(pl.col("li").cast(pl.List(pl.Float64)), pl.col("ls").list.slice(0, 0).cast(pl.List(pl.Int32))),
    "fill_null": lambda lf: lf.select(pl.col("li").fill_null(pl.col("li").list.slice(0, 0))),
    "coalesce": lambda lf: lf.select(pl.coalesce(pl.col("ls"), pl.col("s").str.split("|"))),
    "when": lambda lf: lf.select(pl.when(pl.col("k") > 5).then(pl.col("li")).otherwise(None)),
    "explode": lambda lf: lf.explode("li"),
    "explode_two": lambda lf: lf.with_columns(pl.col("li").alias("li2")).explode("li", "li2"),
    "explode_empty_as_null": lambda lf: lf.explode("ls", empty_as_null=True),
    "explode_drop_nulls": lambda lf: lf.explode("ls", keep_nulls=False),
    "explode_flags": lambda lf: lf.explode("li", empty_as_null=True, keep_nulls=False),
    "explode_expr": lambda lf: lf.select(pl.col("ls").explode()),
    "explode_expr_alias": lambda lf: lf.select(pl.col("li").explode().alias("v")),
    "split_explode": lambda lf: lf.select("k", pl.col("s").str.split("|")).explode("s"),
    "filter_explode": lambda lf: lf.filter(pl.col("k") < 4).explode("li").filter(pl.col("li") > 0),
    "implode": lambda lf: lf.group_by("k", maintain_order=True).agg(
        pl.col("s"), pl.col("b"), pl.col("d"), pl.col("k").alias("kk")),
    "implode_sorted": lambda lf: lf.group_by("k").agg(pl.col("s")).sort("k"),
    "implode_select": lambda lf: lf.select(pl.col("d").implode()),
    "round_trip": lambda lf: lf.with_row_index("r").explode("li").group_by("r", maintain_order=True)
    .agg(pl.col("li"), pl.col("k").first()),
    "explode_agg": lambda lf: lf.explode("li").group_by("k").agg(pl.col("li").sum(), pl.len()).sort("k"),
    "explode_join": lambda lf: lf.select("k", "ls").explode("ls").join(
        pl.LazyFrame({"ls": WORDS, "w": list(range(len(WORDS)))}), on="ls", how="left", maintain_order="left"),
}


@pytest.fixture(scope="module")
def eng() -> ladle.Engine:
    return ladle.Engine(threads=2, raise_on_fail=True)


@pytest.mark.parametrize("name", sorted(QUERIES))
@pytest.mark.parametrize("data", ["random", "small", "empty"])
def test_same_as_polars(eng: ladle.Engine, name: str, data: str) -> None:
    df = {"random": DATA, "small": SMALL, "empty": DATA.clear()}[data]
    lf = QUERIES[name](df.lazy())
    want = lf.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback
        got = lf.collect(engine=eng)
    assert_frame_equal(got, want, check_exact=True)


def test_explode_of_unequal_lists_raises(eng: ladle.Engine) -> None:
    df = pl.DataFrame({"a": [[1, 2], [3]], "b": [[1], [2]], "c": [None, [1]], "d": [[], [1]]})
    for cols in (["a", "b"], ["c", "d"]):
        lf = df.lazy().explode(cols)
        with pytest.raises(pl.exceptions.ShapeError):
            lf.collect()
        with pytest.raises(ladle.LadleError, match=f"'{cols[0]}' and '{cols[1]}'.*row 0"):
            lf.collect(engine=eng)


def test_explode_plan_shows_the_node(eng: ladle.Engine) -> None:
    text = eng.explain(DATA.lazy().explode("li", keep_nulls=False))
    assert 'EXPLODE ["li"]' in text and "keep_nulls" not in text.split("EXPLODE")[1].splitlines()[0]


def test_what_ladle_does_not_run(eng: ladle.Engine) -> None:
    """Nested lists and explode beside another expression are refused with the
    reason (and run on Polars without raise_on_fail)."""
    lf = DATA.lazy()
    for q, why in ((lf.group_by("k").agg(pl.col("li")), "implode"),
                   (lf.select(pl.col("li").explode(), pl.col("k").first()), "explode")):
        with pytest.raises(ladle.UnsupportedError, match=why):
            q.collect(engine=eng)
        with pytest.warns(ladle.FallbackWarning):
            got = q.collect(engine=ladle.Engine(threads=2))
        assert_frame_equal(got, q.collect(), check_row_order=False)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_sort_of_list_columns_over_many_pieces(threads: int) -> None:
    # a frame of many chunks: a sort gathers each output partition's rows from
    # every input piece, lists (their elements: ints, strings with nulls) taken
    # piece by piece, nulls and empty lists kept
    df = pl.concat([frame(5000, 10 + i) for i in range(9)], rechunk=False)
    assert df.n_chunks() > 1
    g = np.random.default_rng(5)
    lf = df.with_columns(pl.Series("r", g.permutation(df.height))).lazy()
    eng = ladle.Engine(threads=threads, raise_on_fail=True)
    for q in (lf.sort("r"), lf.sort("k", "r", descending=[True, False]), lf.sort("r").head(777),
              lf.filter(pl.col("k") > 3).sort("r").select("ls", "li")):
        assert_frame_equal(q.collect(engine=eng), q.collect())
