"""Int128 and UInt128: carried through ladle unchanged, cast, computed on where
Polars' optimized plan reaches them (the supertype of UInt64 and signed
integers), refused with a message naming the type elsewhere."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from conftest import assert_same

import ladle

I128_MAX = 2**127 - 1
I128_MIN = -(2**127)


def frame() -> pl.LazyFrame:
    return pl.LazyFrame(
        {
            "a": pl.Series([2**100, -5, None, I128_MIN, I128_MAX, 7, 0, -(2**64), 3, None], dtype=pl.Int128),
            "b": pl.Series([3, -1, 2, -1, 1, 0, -7, 2**63, None, 4], dtype=pl.Int128),
            "u": pl.Series([2**128 - 1, 0, None, 5, 2**100, 1, 2, 3, 4, 5], dtype=pl.UInt128),
            "i": list(range(10)),
        }
    )


def wide() -> pl.LazyFrame:
    """UInt64 beside signed integers: Polars casts both to Int128."""
    return pl.LazyFrame(
        {
            "k": pl.Series([2**64 - 1, 2**63, 2**63 - 1, 0, None, 12, 5, 1], dtype=pl.UInt64),
            "h": pl.Series([3, -2, 0, -1, 1, None, 2, -(2**31)], dtype=pl.Int32),
            "g": pl.Series([-(2**63), 2**63 - 1, -1, 0, None, 12, -5, 1], dtype=pl.Int64),
        }
    )


@pytest.fixture(params=["default", "small"])
def eng(request: pytest.FixtureRequest, engine: ladle.Engine, small_engine: ladle.Engine) -> ladle.Engine:
    return engine if request.param == "default" else small_engine


def test_int128_round_trip(eng: ladle.Engine) -> None:
    lf = frame()
    assert_same(lf, eng)
    assert_same(lf.select("a"), eng)
    assert_same(lf.filter(pl.col("i") % 3 != 1), eng)
    assert_same(lf.slice(2, 5), eng)
    assert_same(lf.sort("i", descending=True), eng)
    assert_same(lf.select(pl.col("a").is_null(), pl.col("u").is_not_null()), eng)
    assert_same(lf.head(0), eng)
    assert_same(pl.concat([lf, lf]), eng)


def test_int128_casts_out(eng: ladle.Engine) -> None:
    lf = frame()
    c = pl.col("a")
    assert_same(
        lf.select(
            c.cast(pl.Int64, strict=False).alias("i64"),
            c.cast(pl.UInt8, strict=False).alias("u8"),
            c.cast(pl.UInt8, wrap_numerical=True).alias("u8w"),
            c.cast(pl.Int32, wrap_numerical=True).alias("i32w"),
            c.cast(pl.Float64).alias("f64"),
            c.cast(pl.Float32).alias("f32"),
            c.cast(pl.String).alias("s"),
            c.cast(pl.Boolean).alias("b"),
            c.cast(pl.UInt128, strict=False).alias("u128"),
            c.cast(pl.UInt128, wrap_numerical=True).alias("u128w"),
            pl.col("u").cast(pl.Int128, strict=False).alias("i128"),
            pl.col("u").cast(pl.Int128, wrap_numerical=True).alias("i128w"),
            pl.col("u").cast(pl.Float64).alias("uf"),
            pl.col("u").cast(pl.String).alias("us"),
            pl.col("u").cast(pl.UInt64, strict=False).alias("uu64"),
        ),
        eng,
    )
    # rounding to f32 and f64 (ties and values past 2^53)
    odd = pl.LazyFrame({"a": pl.Series([16777217 * 2**80 + 1, 2**53 + 1, -(2**64) - 3, 3 * 2**100 - 1], dtype=pl.Int128)})
    assert_same(odd.select(pl.col("a").cast(pl.Float32).alias("f"), pl.col("a").cast(pl.Float64).alias("d")), eng)


def test_int128_casts_in(eng: ladle.Engine) -> None:
    lf = pl.LazyFrame(
        {
            "i": pl.Series([-1, 5, None, -(2**63), 2**63 - 1], dtype=pl.Int64),
            "u": pl.Series([2**64 - 1, 0, None, 7, 8], dtype=pl.UInt64),
            "b": [True, False, None, True, False],
            "f": [1.5, -2.7, 1e40, float("nan"), 1.7e38],
            "g": pl.Series([float("inf"), -0.0, None, -1e39, 3.9], dtype=pl.Float32),
            "s": ["-0", "007", "+4", " 3", "-170141183460469231731687303715884105728"],
            "t": ["340282366920938463463374607431768211455", "170141183460469231731687303715884105728", "1e3", "", None],
        }
    )
    exprs = []
    for to in (pl.Int128, pl.UInt128):
        n = str(to)
        exprs += [
            pl.col("i").cast(to, strict=False).alias(f"i{n}"),
            pl.col("i").cast(to, wrap_numerical=True).alias(f"iw{n}"),
            pl.col("u").cast(to).alias(f"u{n}"),
            pl.col("b").cast(to).alias(f"b{n}"),
            pl.col("f").cast(to, strict=False).alias(f"f{n}"),
            pl.col("f").cast(to, wrap_numerical=True).alias(f"fw{n}"),
            pl.col("g").cast(to, strict=False).alias(f"g{n}"),
            pl.col("g").cast(to, wrap_numerical=True).alias(f"gw{n}"),
            pl.col("s").cast(to, strict=False).alias(f"s{n}"),
            pl.col("t").cast(to, strict=False).alias(f"t{n}"),
        ]
    assert_same(lf.select(exprs), eng)
    assert_same(lf.select(pl.col("i").cast(pl.Int128), pl.col("u").cast(pl.Int128)), eng)


def test_int128_strict_cast_fails(engine: ladle.Engine) -> None:
    """Polars raises InvalidOperationError; ladle's error is one too, naming the value."""
    for lf in (
        frame().select(pl.col("a").cast(pl.Int64)),
        pl.LazyFrame({"i": [-1]}).select(pl.col("i").cast(pl.UInt128)),
        pl.LazyFrame({"s": ["1", "x1"]}).select(pl.col("s").cast(pl.Int128)),
        pl.LazyFrame({"f": [1.0, float("nan")]}).select(pl.col("f").cast(pl.Int128)),
    ):
        with pytest.raises(pl.exceptions.InvalidOperationError):
            lf.collect(engine="in-memory")
        with pytest.raises(ladle.LadleComputeError, match="i128|u128"):
            lf.collect(engine=engine)


def test_int128_arithmetic(eng: ladle.Engine) -> None:
    lf = frame()
    a, b = pl.col("a"), pl.col("b")
    assert_same(
        lf.select(
            (a + b).alias("add"),
            (a - b).alias("sub"),
            (a * b).alias("mul"),
            (a / b).alias("div"),
            (a // b).alias("fdiv"),
            (a % b).alias("mod"),
            (a + 1).alias("lit"),
            (a * 2**70).alias("big"),
            (a - pl.col("i")).alias("mixed"),
            (pl.lit(-(2**100), dtype=pl.Int128) // b).alias("litl"),
        ),
        eng,
    )


def test_int128_comparisons(eng: ladle.Engine) -> None:
    lf = frame()
    a, b = pl.col("a"), pl.col("b")
    assert_same(
        lf.select(
            (a == b).alias("eq"),
            (a != b).alias("ne"),
            (a < b).alias("lt"),
            (a <= b).alias("le"),
            (a > b).alias("gt"),
            (a >= b).alias("ge"),
            a.eq_missing(b).alias("eqm"),
            a.ne_missing(b).alias("nem"),
            (a > 2**64).alias("lit"),
            (a == pl.col("i")).alias("mixed"),
        ),
        eng,
    )
    assert_same(lf.filter(a > b), eng)
    assert_same(lf.filter(a >= -5, pl.col("i") < 8), eng)


def test_uint64_with_signed(eng: ladle.Engine) -> None:
    """Polars' supertype of UInt64 and a signed integer is Int128."""
    lf = wide()
    k, h, g = pl.col("k"), pl.col("h"), pl.col("g")
    assert_same(
        lf.select(
            (k / h).alias("div"),
            (k - g).alias("sub"),
            (k + g).alias("add"),
            (k * h).alias("mul"),
            (k // h).alias("fdiv"),
            (k % g).alias("mod"),
            (k > g).alias("gt"),
            (k == g).alias("eq"),
            (g <= k).alias("le"),
        ),
        eng,
    )
    assert_same(lf.filter(k > g), eng)
    assert_same(lf.head(0).select((k - g).alias("sub"), (k / h).alias("div")), eng)


@pytest.mark.parametrize(
    "query",
    [
        lambda lf: lf.sort("a"),
        lambda lf: lf.group_by("a").agg(pl.len()),
        lambda lf: lf.select(pl.col("a").mean()),
        lambda lf: lf.select(pl.col("u").sum()),
        lambda lf: lf.select(pl.col("a").sum().over("i")),
        lambda lf: lf.select(pl.col("a").abs()),
        lambda lf: lf.select(pl.col("a").is_in([1, 2])),
        lambda lf: lf.select(pl.col("u") + pl.col("u")),
        lambda lf: lf.select(pl.col("a").n_unique()),
        lambda lf: lf.join(lf, on="a"),
        lambda lf: lf.unique("a"),
    ],
)
def test_int128_unsupported_falls_back(engine: ladle.Engine, query) -> None:  # type: ignore[no-untyped-def]
    lf = frame()
    query(lf).collect(engine="in-memory")  # Polars runs it
    with pytest.raises(ladle.UnsupportedError, match="i128|u128"):
        query(lf).collect(engine=engine)
    # the default engine falls back and gives Polars' answer
    fb = ladle.Engine(threads=2)
    with pytest.warns(ladle.FallbackWarning):
        got = query(lf).collect(engine=fb)
    assert_frame_equal(got, query(lf).collect(engine="in-memory"), check_row_order=False)


def test_int128_when_and_fill_null(eng: ladle.Engine) -> None:
    lf = wide()
    k, h, g = pl.col("k"), pl.col("h"), pl.col("g")
    assert_same(
        lf.select(
            pl.when(h > 0).then(k).otherwise(g).alias("w"),
            pl.when(h > 0).then(k).when(h < -5).then(g).otherwise(None).alias("w2"),
            pl.when(h.is_null()).then(k - g).otherwise(0).alias("w3"),
            k.fill_null(g).alias("f"),
            (k - g).fill_null(-1).alias("f2"),
        ),
        eng,
    )
    t = frame()
    assert_same(
        t.select(
            pl.when(pl.col("i") > 4).then(pl.col("u")).otherwise(None).alias("u"),
            pl.col("u").fill_null(pl.col("u")).alias("uf"),
            pl.col("a").fill_null(pl.col("b")).alias("af"),
            pl.col("a").fill_null(2**100).alias("al"),
        ),
        eng,
    )


def test_int128_payload(eng: ladle.Engine) -> None:
    lf = frame()
    other = pl.LazyFrame({"i": [1, 3, 5, 7, 11], "x": pl.Series([1, -(2**90), None, 2**126, 0], dtype=pl.Int128)})
    assert_same(lf.join(other, on="i", how="left").sort("i"), eng)
    assert_same(lf.join(other, on="i"), eng, ordered=False)
    assert_same(lf.sort("i", descending=True).select("a", "u"), eng)
    assert_same(lf.group_by(pl.col("i") % 3).agg(pl.col("a").first(), pl.col("u").last(), pl.col("a").count().alias("n"), pl.col("a").null_count().alias("z")), eng, ordered=False)
    assert_same(lf.select(pl.col("a").first(), pl.col("u").last()), eng)
    assert_same(lf.with_columns(d=pl.col("a") - pl.col("b")).filter(pl.col("d") > 0), eng)


def test_int128_sum_min_max(eng: ladle.Engine) -> None:
    lf = frame().with_columns(g=pl.col("i") % 3)
    a = pl.col("a")
    aggs = [a.sum().alias("s"), a.min().alias("mn"), a.max().alias("mx"), (a - pl.col("b")).sum().alias("d")]
    assert_same(lf.group_by("g").agg(aggs), eng, ordered=False)
    assert_same(lf.select(aggs), eng)
    assert_same(lf.head(0).select(aggs), eng)
    assert_same(lf.filter(a.is_null()).select(aggs), eng)
    w = wide()
    assert_same(w.select((pl.col("k") - pl.col("g")).sum().alias("s"), (pl.col("k") * pl.col("h")).max().alias("m")), eng)


def test_int128_random_many_rows(eng: ladle.Engine) -> None:
    import random

    rng = random.Random(128)
    n = 3000
    edge = [I128_MAX, I128_MIN, 0, -1, 1, 2**64, -(2**63)]

    def val() -> int | None:
        r = rng.random()
        if r < 0.1:
            return None
        if r < 0.3:
            return rng.choice(edge)
        return rng.randint(-(2**rng.randint(1, 126)), 2**rng.randint(1, 126))

    lf = pl.LazyFrame(
        {
            "a": pl.Series([val() for _ in range(n)], dtype=pl.Int128),
            "b": pl.Series([val() for _ in range(n)], dtype=pl.Int128),
            "g": [rng.randint(0, 20) for _ in range(n)],
        }
    )
    a, b = pl.col("a"), pl.col("b")
    assert_same(
        lf.select((a + b).alias("p"), (a * b).alias("m"), (a // b).alias("q"), (a % b).alias("r"), (a / b).alias("d"), (a < b).alias("lt"), a.cast(pl.Float32).alias("f")),
        eng,
    )
    assert_same(lf.group_by("g").agg(a.sum(), b.min(), (a - b).max().alias("x")), eng, ordered=False)
    assert_same(lf.select(a.sum(), b.min(), b.max().alias("bx")), eng)
