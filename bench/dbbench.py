"""The db-benchmark (h2oai, now DuckDB Labs) questions on data of its published
shapes, from our own generator that follows the published column definitions:

group-by table G1_<N>_1e2_0_0: id1, id2 (strings "id001".."id100"), id3 (string,
N/100 levels "id0000000001"...), id4, id5 (int 1..100), id6 (int 1..N/100), v1
(int 1..5), v2 (int 1..15), v3 (float 0..100, 6 decimals).

join tables J1_<N>_NA_0_0: x (N rows: id1..id3 int keys, id4..id6 their strings,
v1 float), small (N/1e6 rows: id1, id4, v2), medium (N/1e3: id1, id2, id4, id5,
v2), big (N: id1..id6, v2); keys drawn so that about 90% of x's rows match.

Questions q1-q10 (group-by) and q1-q5 (join) as Polars LazyFrames and as SQL.
q8 (largest two v3 per id6) uses rank() over a window and q9 (r^2 of v1, v2)
the sums formula, in every engine, because ladle has neither top_k nor corr.
"""

from __future__ import annotations

import numpy as np
import polars as pl


def _ids(prefix_width: int, values: np.ndarray) -> pl.Series:
    return pl.select(pl.concat_str(pl.lit("id"), pl.lit(pl.Series(values)).cast(pl.String).str.zfill(prefix_width))).to_series()


def groupby_data(n: int, k: int = 100, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    nk = max(n // k, 1)
    return pl.DataFrame({
        "id1": _ids(3, rng.integers(1, k + 1, n)), "id2": _ids(3, rng.integers(1, k + 1, n)),
        "id3": _ids(10, rng.integers(1, nk + 1, n)), "id4": rng.integers(1, k + 1, n).astype(np.int32),
        "id5": rng.integers(1, k + 1, n).astype(np.int32), "id6": rng.integers(1, nk + 1, n).astype(np.int32),
        "v1": rng.integers(1, 6, n).astype(np.int32), "v2": rng.integers(1, 16, n).astype(np.int32),
        "v3": np.round(rng.uniform(0, 100, n), 6)})


def join_data(n: int, seed: int = 2) -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(seed)

    def keys(size: int, universe: int) -> np.ndarray:
        return rng.permutation(universe)[:size] + 1

    def frame(n_rows: int, ncols: int, universe: int, match: float) -> dict[str, np.ndarray]:
        out = {}
        for c, u in zip(("id1", "id2", "id3")[:ncols], (max(universe // 1_000_000, 1), max(universe // 1000, 1), universe)):
            hit = rng.random(n_rows) < match
            out[c] = np.where(hit, rng.integers(1, u + 1, n_rows), u + rng.integers(1, u + 1, n_rows)).astype(np.int64)
        return out

    x = frame(n, 3, n, 0.9)
    big = {"id1": np.zeros(0), "id2": np.zeros(0), "id3": keys(n, int(n * 1.1)).astype(np.int64)}
    big["id1"] = (big["id3"] % max(n // 1_000_000, 1)) + 1
    big["id2"] = (big["id3"] % max(n // 1000, 1)) + 1
    med_n, small_n = max(n // 1000, 1), max(n // 1_000_000, 1)
    medium = {"id1": (np.arange(med_n) % small_n + 1).astype(np.int64), "id2": np.arange(1, med_n + 1, dtype=np.int64)}
    small = {"id1": np.arange(1, small_n + 1, dtype=np.int64)}

    def with_strings(d: dict[str, np.ndarray], cols: list[str]) -> dict[str, object]:
        out: dict[str, object] = dict(d)
        for c in cols:
            src = {"id4": "id1", "id5": "id2", "id6": "id3"}[c]
            out[c] = _ids(0, d[src])
        return out

    return {
        "x": pl.DataFrame({**with_strings(x, ["id4", "id5", "id6"]), "v1": np.round(rng.uniform(0, 100, n), 6)}),
        "small": pl.DataFrame({**with_strings(small, ["id4"]), "v2": np.round(rng.uniform(0, 100, small_n), 6)}),
        "medium": pl.DataFrame({**with_strings(medium, ["id4", "id5"]), "v2": np.round(rng.uniform(0, 100, med_n), 6)}),
        "big": pl.DataFrame({**with_strings(big, ["id4", "id5", "id6"]), "v2": np.round(rng.uniform(0, 100, n), 6)}),
    }


def groupby_queries(x: pl.LazyFrame) -> dict[str, tuple[pl.LazyFrame, str]]:
    c = pl.col
    v = lambda name: c(name).cast(pl.Float64)  # noqa: E731  (sums of squares overflow int32)
    r2_num = (pl.len().cast(pl.Float64) * (v("v1") * v("v2")).sum() - v("v1").sum() * v("v2").sum()) ** 2
    r2_den = ((pl.len().cast(pl.Float64) * (v("v1") * v("v1")).sum() - v("v1").sum() ** 2)
              * (pl.len().cast(pl.Float64) * (v("v2") * v("v2")).sum() - v("v2").sum() ** 2))
    r2_sql = ("power(count(*)::double * sum(v1::double * v2) - sum(v1::double) * sum(v2::double), 2) / "
              "((count(*)::double * sum(v1::double * v1) - power(sum(v1::double), 2)) * "
              "(count(*)::double * sum(v2::double * v2) - power(sum(v2::double), 2)))")
    return {
        "q1 sum v1 by id1": (x.group_by("id1").agg(c("v1").sum()), "select id1, sum(v1) as v1 from x group by id1"),
        "q2 sum v1 by id1:id2": (x.group_by("id1", "id2").agg(c("v1").sum()),
                                 "select id1, id2, sum(v1) as v1 from x group by id1, id2"),
        "q3 sum v1 mean v3 by id3": (x.group_by("id3").agg(c("v1").sum(), c("v3").mean()),
                                     "select id3, sum(v1) as v1, avg(v3) as v3 from x group by id3"),
        "q4 mean v1:v3 by id4": (x.group_by("id4").agg(c("v1").mean(), c("v2").mean(), c("v3").mean()),
                                 "select id4, avg(v1) as v1, avg(v2) as v2, avg(v3) as v3 from x group by id4"),
        "q5 sum v1:v3 by id6": (x.group_by("id6").agg(c("v1").sum(), c("v2").sum(), c("v3").sum()),
                                "select id6, sum(v1) as v1, sum(v2) as v2, sum(v3) as v3 from x group by id6"),
        "q6 median sd v3 by id4 id5": (x.group_by("id4", "id5").agg(c("v3").median().alias("median_v3"), c("v3").std().alias("sd_v3")),
                                       "select id4, id5, median(v3) as median_v3, stddev_samp(v3) as sd_v3 from x group by id4, id5"),
        "q7 max v1 - min v2 by id3": (x.group_by("id3").agg((c("v1").max() - c("v2").min()).alias("range_v1_v2")),
                                      "select id3, max(v1) - min(v2) as range_v1_v2 from x group by id3"),
        "q8 largest two v3 by id6": (x.filter(c("v3").rank("ordinal", descending=True).over("id6") <= 2).select("id6", c("v3").alias("largest2_v3")),
                                     "select id6, v3 as largest2_v3 from x qualify row_number() over (partition by id6 order by v3 desc) <= 2"),
        "q9 regression v1 v2 by id2 id4": (x.group_by("id2", "id4").agg((r2_num / r2_den).alias("r2")),
                                           f"select id2, id4, {r2_sql} as r2 from x group by id2, id4"),
        "q10 sum v3 count by id1:id6": (x.group_by("id1", "id2", "id3", "id4", "id5", "id6").agg(c("v3").sum(), pl.len().alias("count")),
                                        "select id1, id2, id3, id4, id5, id6, sum(v3) as v3, count(*) as count from x group by id1, id2, id3, id4, id5, id6"),
    }


def join_queries(t: dict[str, pl.LazyFrame]) -> dict[str, tuple[pl.LazyFrame, str]]:
    x = t["x"]
    return {
        "q1 small inner on int": (x.join(t["small"], on="id1"),
                                  "select x.*, small.id4 as id4_right, small.v2 from x join small using (id1)"),
        "q2 medium inner on int": (x.join(t["medium"], on="id2"),
                                   "select x.*, medium.id1 as id1_right, medium.id4 as id4_right, medium.id5 as id5_right, medium.v2 "
                                   "from x join medium using (id2)"),
        "q3 medium outer on int": (x.join(t["medium"], on="id2", how="left"),
                                   "select x.*, medium.id1 as id1_right, medium.id4 as id4_right, medium.id5 as id5_right, medium.v2 "
                                   "from x left join medium using (id2)"),
        "q4 medium inner on factor": (x.join(t["medium"], on="id5"),
                                      "select x.*, medium.id1 as id1_right, medium.id2 as id2_right, medium.id4 as id4_right, medium.v2 "
                                      "from x join medium using (id5)"),
        "q5 big inner on int": (x.join(t["big"], on="id3"),
                                "select x.*, big.id1 as id1_right, big.id2 as id2_right, big.id4 as id4_right, big.id5 as id5_right, "
                                "big.id6 as id6_right, big.v2 from x join big using (id3)"),
    }
