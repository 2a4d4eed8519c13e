"""The random query tester's own parts: determinism, the comparison rules, the order
analysis and the shrinker (tests/python/qfuzz)."""

from __future__ import annotations

import polars as pl

import ladle

from qfuzz.case import FULL, NONE, PREFIX, Case, Column, Op, Query, Table, analyze
from qfuzz.compare import compare
from qfuzz.gen import generate
from qfuzz.harness import request
from qfuzz.shrink import shrink


def test_generation_is_deterministic() -> None:
    for i in range(20):
        a, b = generate(5, i), generate(5, i)
        assert a.setup_code() == b.setup_code()
        assert (a.threads, a.morsel_rows) == (b.threads, b.morsel_rows)
    assert generate(5, 0).setup_code() != generate(6, 0).setup_code()


def test_generated_cases_are_determined() -> None:
    for i in range(40):
        req = request(generate(7, i))
        assert req["det"], req["why"]


def cmp(a: pl.DataFrame, b: pl.DataFrame, order: str = FULL, **kw: object) -> str | None:
    d = compare(a, b, order=order, prefix=kw.get("prefix", []), taint=kw.get("taint", set()),  # type: ignore[arg-type]
                fstr=kw.get("fstr", set()), scale=1000.0, rows=10)  # type: ignore[arg-type]
    return None if d is None else d.kind


def test_compare_values() -> None:
    nan = float("nan")
    a = pl.DataFrame({"x": [nan, -0.0, None, 1.0], "s": ["a", None, "", "é"]})
    assert cmp(a, pl.DataFrame({"x": [nan, 0.0, None, 1.0], "s": ["a", None, "", "é"]})) is None
    assert cmp(a, pl.DataFrame({"x": [nan, 0.0, 2.0, 1.0], "s": ["a", None, "", "é"]})) == "values"
    assert cmp(a, a.with_columns(pl.col("x").cast(pl.Float32))) == "dtypes"
    assert cmp(a, a.rename({"s": "t"})) == "columns"
    assert cmp(a, a.head(3)) == "height"
    # a float sum's last bits may differ; only in the columns that carry one
    b = pl.DataFrame({"x": [nan, 0.0, None, 1.0 + 1e-15], "s": ["a", None, "", "é"]})
    assert cmp(a, b) == "values"
    assert cmp(a, b, taint={"x"}) is None
    # float -> String casts compare as the floats they read back as
    c, d = pl.DataFrame({"s": ["1e20", "0.5"]}), pl.DataFrame({"s": ["100000000000000000000.0", "0.5"]})
    assert cmp(c, d) == "values" and cmp(c, d, fstr={"s"}) is None
    # ... but only very large and very small numbers print differently on purpose
    assert cmp(pl.DataFrame({"s": ["-100.0"]}), pl.DataFrame({"s": ["-1e+02"]}), fstr={"s"}) == "values"


def test_compare_order() -> None:
    a = pl.DataFrame({"k": [1, 1, 2], "v": [1, 2, 3]})
    b = pl.DataFrame({"k": [1, 1, 2], "v": [2, 1, 3]})
    c = pl.DataFrame({"k": [2, 1, 1], "v": [3, 1, 2]})
    assert cmp(a, b, FULL) == "order"
    assert cmp(a, b, PREFIX, prefix=["k"]) is None
    assert cmp(a, c, PREFIX, prefix=["k"]) == "order"
    assert cmp(a, c, NONE) is None


def test_order_analysis() -> None:
    t = Table("t0", [Column("k", pl.Int64(), [1, 2, 1]), Column("v", pl.Int64(), [3, 4, 5])])
    ns = Case([t], Query("t0")).namespace()

    def state(*ops: Op) -> tuple[str, list[str], bool]:
        st = analyze(Query("t0", list(ops)), ns)
        return st.order, st.prefix, st.det

    sort_k = Op("sort", ".sort(['k'])", info={"by": ["k"], "maintain_order": False})
    sort_all = Op("sort", ".sort(['k', 'v'])", info={"by": ["k", "v"], "maintain_order": False})
    head = Op("slice", ".head(2)", info={"tag": "head"})
    gb = Op("group_by", ".group_by(['k']).agg(pl.len())", info={"keys": ["k"], "maintain_order": False})
    gb_mo = Op("group_by", ".group_by(['k'], maintain_order=True).agg(pl.len())", info={"keys": ["k"], "maintain_order": True})
    assert state() == (FULL, [], True)
    assert state(sort_k) == (PREFIX, ["k"], True)
    assert state(sort_k, head)[2] is False  # ties: which rows a head keeps is open
    assert state(sort_all, head) == (FULL, [], True)
    assert state(gb)[0] == NONE and state(gb_mo)[0] == FULL
    assert state(gb, head)[2] is False


def test_shrinker_keeps_the_failure() -> None:
    t = Table("t0", [Column("a", pl.Int64(), list(range(20))), Column("b", pl.String(), [str(i) for i in range(20)])])
    q = Query("t0", [Op("filter", ".filter(pl.col('a') > 3)"), Op("select", ".select(pl.col('a'))")])
    case = Case([t], q, threads=2, morsel_rows=7)

    def run(req: dict[str, object]) -> dict[str, object]:
        # a stand-in for the worker: "fails" while the table holds 17 and the query filters
        code = str(req["code"])
        failing = "17" in code and ".filter(" in code
        return {"outcome": "mismatch", "diff": {"kind": "values"}} if failing else {"outcome": "equal"}

    small, res, _, runs = shrink(case, run({"code": case.setup_code()}), run)  # type: ignore[arg-type]
    assert res["outcome"] == "mismatch" and runs > 0
    assert small.tables[0].height == 1 and len(small.tables[0].columns) == 1
    assert [op.kind for op in small.query.ops] == ["filter"]
    assert (small.threads, small.morsel_rows) == (1, None)


def test_an_item_polars_gives_an_impossible_height_is_recognised() -> None:
    # qfuzz 4403:37410: selected alone (as Polars' optimizer leaves it under a cross join
    # that only counts rows), a literal's window compared with a literal gives Polars 2 rows
    # of 3; ladle gives 3. A correct item is not flagged.
    from qfuzz.worker import _probe_height_wrong

    t0 = pl.DataFrame({"k": [2, None, None], "k2": [0, -1, 0]}, schema={"k": pl.Int32, "k2": pl.Date}).lazy()
    x2 = (pl.lit(float("inf")) > pl.lit(0, dtype=pl.UInt32).over("k2", "k")).alias("x2")
    eng = ladle.Engine(raise_on_fail=True)
    assert t0.select(x2).collect().height == 2  # Polars' own answer, the case's premise
    assert _probe_height_wrong([t0], [[t0.select(x2)]], eng)
    assert not _probe_height_wrong([t0], [[t0.select(pl.col("k")), t0.select(pl.col("k").sum())]], eng)


def test_ladle_with_the_in_memory_engine_s_temporal_overflow_rule_gives_its_answer() -> None:
    # the tester's oracle for qfuzz 4402:178409: a Datetime mean out of i64's range is null
    # in Polars' in-memory engine (and in some plans of its default one), saturated in the
    # default engine's other plans, which ladle follows
    from ladle import translate

    lf = pl.LazyFrame({"g": [1, 1], "f": [2**63 - 1] * 2})
    q = lf.group_by("g").agg(pl.col("f").cast(pl.Datetime("ns")).mean().fill_null(pl.lit(0).cast(pl.Datetime("ns"))))
    eng = ladle.Engine(raise_on_fail=True)
    assert q.collect(engine=eng)["f"].dt.year()[0] == 2262
    translate.TEMPORAL_OVERFLOW_AS_NULL = True
    try:
        got = q.collect(engine=eng)
    finally:
        translate.TEMPORAL_OVERFLOW_AS_NULL = False
    assert got.equals(q.collect(engine="in-memory"))
    assert got["f"].dt.year()[0] == 1970


def test_a_float32_sum_feeding_a_float64_column_compares_at_float32_precision() -> None:
    # qfuzz 4402:134669: int_sum * (f32_sum - max) is Float64, its error that of a Float32 sum
    a = pl.DataFrame({"x": [4431960953.0]})
    b = pl.DataFrame({"x": [4431962297.0]})
    kw = {"order": FULL, "prefix": [], "taint": {"x"}, "fstr": set(), "scale": 1.0, "rows": 2}
    assert compare(a, b, **kw) is not None  # type: ignore[arg-type]
    assert compare(a, b, f32=True, **kw) is None  # type: ignore[arg-type]
    assert compare(a, pl.DataFrame({"x": [4431960953.0 * (1 + 1e-4)]}), f32=True, **kw) is not None  # type: ignore[arg-type]


def test_a_temporal_mean_compares_its_ticks_with_the_summation_bound() -> None:
    # qfuzz 4404:175054: the mean of Datetime("ns") ticks near 1.7e18 is a float sum, off
    # by a few hundred ns between orders; a millisecond is not
    exp = pl.DataFrame({"x": [555769118833333248]}).with_columns(pl.col("x").cast(pl.Datetime("ns")))
    near = pl.DataFrame({"x": [555769118833333504]}).with_columns(pl.col("x").cast(pl.Datetime("ns")))
    far = pl.DataFrame({"x": [555769118834333504]}).with_columns(pl.col("x").cast(pl.Datetime("ns")))
    kw = {"order": FULL, "prefix": [], "fstr": set(), "scale": 0.0, "rows": 9, "tscale": 1.67e18}
    assert compare(exp, near, taint={"x"}, **kw) is None  # type: ignore[arg-type]
    assert compare(exp, near, taint=set(), **kw) is not None  # type: ignore[arg-type]
    assert compare(exp, far, taint={"x"}, **kw) is not None  # type: ignore[arg-type]


def test_a_std_over_an_integer_literal_past_2_53_compares_at_its_rounding() -> None:
    # qfuzz 1797000003:24218: (u32 - -2**63).std() of two rows: the values round on
    # their way to Float64 (ulp 2048), and Polars' engines give 1837416133.7 and
    # 1837416857.8, ladle 1837416495.7, the exact value 1837417076.98
    from qfuzz.compare import literal_scale

    code = "agg((pl.col('b') - -9223372036854775808).std(ddof=1).alias('x1'))"
    ls = literal_scale(code)
    assert literal_scale("pl.col('b') * 9007199254740992") == 0.0  # 2**53: exact
    assert literal_scale("pl.col('x12345678901234567')") == 0.0  # a name, not a literal
    exp = pl.DataFrame({"x1": [1837416133.698779]})
    kw = {"order": FULL, "prefix": [], "taint": {"x1"}, "fstr": set(), "rows": 2}
    for got in (1837416495.7376294, 1837416857.776123, 1837417076.98):
        assert compare(exp, pl.DataFrame({"x1": [got]}), scale=4e9, **kw) is not None  # type: ignore[arg-type]
        assert compare(exp, pl.DataFrame({"x1": [got]}), scale=max(4e9, ls), **kw) is None  # type: ignore[arg-type]
    # a real error at that magnitude still shows
    assert compare(exp, pl.DataFrame({"x1": [1837416133.698779 * 1.001]}), scale=ls, **kw) is not None  # type: ignore[arg-type]


def test_the_generator_keeps_off_a_shape_that_hangs_polars_typing() -> None:
    # qfuzz 1796525323:2136 hung in the generator: Polars 2.1.0's collect_schema never
    # returns on this shape, so typed() must refuse it without asking Polars
    import random

    from qfuzz.case import E
    from qfuzz.exprs import ExprGen

    lf = pl.LazyFrame({"x4": [1.0, 2.0]})
    g = ExprGen(random.Random(0), lf, {"pl": pl}, order_ok=True, taint=set())
    hang = E("{0}.any()", [E("({0} / {1}).is_in([1.0])", [E("pl.lit(None)", []), E("pl.col('x4')", [])])])
    assert "pl.lit(None) / pl.col('x4')" in hang.code()
    asked: list[object] = []

    class Recorder:
        def select(self, *a: object) -> None:
            asked.append(a)
            raise RuntimeError("asked Polars")

    real, g.lf = g.lf, Recorder()  # type: ignore[assignment]
    assert g.typed(hang) is None
    assert asked == [], "the generator asked Polars to type a shape that hangs it"
    g.lf = real
    fine = E("({0} * {1}).is_in([1.0]).any()", [E("pl.lit(None)", []), E("pl.col('x4')", [])])
    typed = g.typed(fine)
    assert typed is not None and typed.dtype == pl.Boolean


def test_a_worker_that_dies_generating_a_case_is_a_generator_error() -> None:
    from qfuzz.cli import generator_death
    from qfuzz.harness import BAD

    for outcome in ("crash", "timeout"):
        res = generator_death({"outcome": outcome, "phase": "generate", "signal": "SIGABRT"})
        assert res["outcome"] == "generator_error" and res["outcome"] not in BAD
        assert res["crash_outcome"] == outcome
        # once an engine ran, a death is a failure as before
        res = generator_death({"outcome": outcome, "phase": "ladle", "signal": "SIGSEGV"})
        assert res["outcome"] == outcome and res["outcome"] in BAD
