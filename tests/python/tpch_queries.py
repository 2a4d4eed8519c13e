"""TPC-H (PDS-H) queries 1-22 as Polars LazyFrames, written from the TPC-H
specification, and a loader for the dbgen `.tbl.zst` files in ../shared."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl

COLUMNS = {
    "region": ["r_regionkey", "r_name", "r_comment"],
    "nation": ["n_nationkey", "n_name", "n_regionkey", "n_comment"],
    "part": ["p_partkey", "p_name", "p_mfgr", "p_brand", "p_type", "p_size", "p_container",
             "p_retailprice", "p_comment"],
    "supplier": ["s_suppkey", "s_name", "s_address", "s_nationkey", "s_phone", "s_acctbal",
                 "s_comment"],
    "partsupp": ["ps_partkey", "ps_suppkey", "ps_availqty", "ps_supplycost", "ps_comment"],
    "customer": ["c_custkey", "c_name", "c_address", "c_nationkey", "c_phone", "c_acctbal",
                 "c_mktsegment", "c_comment"],
    "orders": ["o_orderkey", "o_custkey", "o_orderstatus", "o_totalprice", "o_orderdate",
               "o_orderpriority", "o_clerk", "o_shippriority", "o_comment"],
    "lineitem": ["l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity",
                 "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus",
                 "l_shipdate", "l_commitdate", "l_receiptdate", "l_shipinstruct", "l_shipmode",
                 "l_comment"],
}
DATE_COLUMNS = {"o_orderdate", "l_shipdate", "l_commitdate", "l_receiptdate"}
FLOAT_COLUMNS = {"p_retailprice", "s_acctbal", "ps_supplycost", "c_acctbal", "o_totalprice",
                 "l_quantity", "l_extendedprice", "l_discount", "l_tax"}

DATA_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tpch"


def load_table(name: str, sf: str = "sf0.1", data_dir: Path = DATA_DIR) -> pl.DataFrame:
    cols = COLUMNS[name]
    df = pl.read_csv(
        data_dir / sf / f"{name}.tbl.zst",
        separator="|",
        has_header=False,
        new_columns=cols + ["_trailing"],
        infer_schema_length=0,  # everything as strings, typed below
    ).drop("_trailing")
    casts = []
    for c in cols:
        if c in DATE_COLUMNS:
            casts.append(pl.col(c).str.to_date("%Y-%m-%d"))
        elif c in FLOAT_COLUMNS:
            casts.append(pl.col(c).cast(pl.Float64))
        elif c.endswith("key") or c in ("p_size", "ps_availqty", "o_shippriority", "l_linenumber"):
            casts.append(pl.col(c).cast(pl.Int64))
    return df.with_columns(casts)


def load_all(sf: str = "sf0.1", data_dir: Path = DATA_DIR) -> dict[str, pl.DataFrame]:
    return {name: load_table(name, sf, data_dir) for name in COLUMNS}


def _rev() -> pl.Expr:
    return pl.col("l_extendedprice") * (1 - pl.col("l_discount"))


def q1(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    return (
        t["lineitem"].filter(pl.col("l_shipdate") <= date(1998, 9, 2))
        .group_by("l_returnflag", "l_linestatus")
        .agg(
            pl.col("l_quantity").sum().alias("sum_qty"),
            pl.col("l_extendedprice").sum().alias("sum_base_price"),
            _rev().sum().alias("sum_disc_price"),
            (_rev() * (1 + pl.col("l_tax"))).sum().alias("sum_charge"),
            pl.col("l_quantity").mean().alias("avg_qty"),
            pl.col("l_extendedprice").mean().alias("avg_price"),
            pl.col("l_discount").mean().alias("avg_disc"),
            pl.len().alias("count_order"),
        )
        .sort("l_returnflag", "l_linestatus")
    )


def q2(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    europe = (
        t["region"].filter(pl.col("r_name") == "EUROPE")
        .join(t["nation"], left_on="r_regionkey", right_on="n_regionkey")
        .join(t["supplier"], left_on="n_nationkey", right_on="s_nationkey")
        .join(t["partsupp"], left_on="s_suppkey", right_on="ps_suppkey")
    )
    brass = (
        t["part"].filter((pl.col("p_size") == 15) & pl.col("p_type").str.ends_with("BRASS"))
        .join(europe, left_on="p_partkey", right_on="ps_partkey")
    )
    cheapest = brass.group_by("p_partkey").agg(pl.col("ps_supplycost").min().alias("min_cost"))
    return (
        brass.join(cheapest, on="p_partkey")
        .filter(pl.col("ps_supplycost") == pl.col("min_cost"))
        .select("s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone",
                "s_comment")
        .sort(["s_acctbal", "n_name", "s_name", "p_partkey"], descending=[True, False, False, False])
        .head(100)
    )


def q3(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    d = date(1995, 3, 15)
    return (
        t["customer"].filter(pl.col("c_mktsegment") == "BUILDING")
        .join(t["orders"].filter(pl.col("o_orderdate") < d), left_on="c_custkey", right_on="o_custkey")
        .join(t["lineitem"].filter(pl.col("l_shipdate") > d), left_on="o_orderkey", right_on="l_orderkey")
        .group_by("o_orderkey", "o_orderdate", "o_shippriority")
        .agg(_rev().sum().alias("revenue"))
        .select(pl.col("o_orderkey").alias("l_orderkey"), "revenue", "o_orderdate", "o_shippriority")
        .sort(["revenue", "o_orderdate"], descending=[True, False])
        .head(10)
    )


def q4(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    late = t["lineitem"].filter(pl.col("l_commitdate") < pl.col("l_receiptdate"))
    return (
        t["orders"].filter(pl.col("o_orderdate").is_between(date(1993, 7, 1), date(1993, 10, 1), closed="left"))
        .join(late, left_on="o_orderkey", right_on="l_orderkey", how="semi")
        .group_by("o_orderpriority")
        .agg(pl.len().alias("order_count"))
        .sort("o_orderpriority")
    )


def q5(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    return (
        t["region"].filter(pl.col("r_name") == "ASIA")
        .join(t["nation"], left_on="r_regionkey", right_on="n_regionkey")
        .join(t["customer"], left_on="n_nationkey", right_on="c_nationkey")
        .join(t["orders"], left_on="c_custkey", right_on="o_custkey")
        .join(t["lineitem"], left_on="o_orderkey", right_on="l_orderkey")
        .join(t["supplier"], left_on=["l_suppkey", "n_nationkey"], right_on=["s_suppkey", "s_nationkey"])
        .filter(pl.col("o_orderdate").is_between(date(1994, 1, 1), date(1995, 1, 1), closed="left"))
        .group_by("n_name")
        .agg(_rev().sum().alias("revenue"))
        .sort("revenue", descending=True)
    )


def q6(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    return (
        t["lineitem"].filter(
            pl.col("l_shipdate").is_between(date(1994, 1, 1), date(1995, 1, 1), closed="left")
            & pl.col("l_discount").is_between(0.05, 0.07)
            & (pl.col("l_quantity") < 24)
        )
        .select((pl.col("l_extendedprice") * pl.col("l_discount")).sum().alias("revenue"))
    )


def q7(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    n = t["nation"].filter(pl.col("n_name").is_in(["FRANCE", "GERMANY"]))
    supp = t["supplier"].join(n, left_on="s_nationkey", right_on="n_nationkey").select(
        "s_suppkey", pl.col("n_name").alias("supp_nation"))
    cust = t["customer"].join(n, left_on="c_nationkey", right_on="n_nationkey").select(
        "c_custkey", pl.col("n_name").alias("cust_nation"))
    return (
        t["lineitem"].filter(pl.col("l_shipdate").is_between(date(1995, 1, 1), date(1996, 12, 31)))
        .join(supp, left_on="l_suppkey", right_on="s_suppkey")
        .join(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
        .join(cust, left_on="o_custkey", right_on="c_custkey")
        .filter(pl.col("supp_nation") != pl.col("cust_nation"))
        .with_columns(pl.col("l_shipdate").dt.year().alias("l_year"), _rev().alias("volume"))
        .group_by("supp_nation", "cust_nation", "l_year")
        .agg(pl.col("volume").sum().alias("revenue"))
        .sort("supp_nation", "cust_nation", "l_year")
    )


def q8(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    n1 = t["nation"].select(pl.col("n_nationkey").alias("n1_key"), pl.col("n_regionkey").alias("n1_region"))
    n2 = t["nation"].select(pl.col("n_nationkey").alias("n2_key"), pl.col("n_name").alias("nation"))
    america = t["region"].filter(pl.col("r_name") == "AMERICA")
    return (
        t["part"].filter(pl.col("p_type") == "ECONOMY ANODIZED STEEL")
        .join(t["lineitem"], left_on="p_partkey", right_on="l_partkey")
        .join(t["supplier"], left_on="l_suppkey", right_on="s_suppkey")
        .join(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
        .join(t["customer"], left_on="o_custkey", right_on="c_custkey")
        .join(n1, left_on="c_nationkey", right_on="n1_key")
        .join(america, left_on="n1_region", right_on="r_regionkey")
        .join(n2, left_on="s_nationkey", right_on="n2_key")
        .filter(pl.col("o_orderdate").is_between(date(1995, 1, 1), date(1996, 12, 31)))
        .with_columns(pl.col("o_orderdate").dt.year().alias("o_year"), _rev().alias("volume"))
        .group_by("o_year")
        .agg(
            (pl.when(pl.col("nation") == "BRAZIL").then(pl.col("volume")).otherwise(0.0).sum()
             / pl.col("volume").sum()).alias("mkt_share")
        )
        .sort("o_year")
    )


def q9(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    return (
        t["part"].filter(pl.col("p_name").str.contains("green", literal=True))
        .join(t["partsupp"], left_on="p_partkey", right_on="ps_partkey")
        .join(t["supplier"], left_on="ps_suppkey", right_on="s_suppkey")
        .join(t["lineitem"], left_on=["p_partkey", "ps_suppkey"], right_on=["l_partkey", "l_suppkey"])
        .join(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
        .join(t["nation"], left_on="s_nationkey", right_on="n_nationkey")
        .select(
            pl.col("n_name").alias("nation"),
            pl.col("o_orderdate").dt.year().alias("o_year"),
            (_rev() - pl.col("ps_supplycost") * pl.col("l_quantity")).alias("amount"),
        )
        .group_by("nation", "o_year")
        .agg(pl.col("amount").sum().alias("sum_profit"))
        .sort(["nation", "o_year"], descending=[False, True])
    )


def q10(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    return (
        t["customer"]
        .join(t["orders"].filter(pl.col("o_orderdate").is_between(date(1993, 10, 1), date(1994, 1, 1), closed="left")),
              left_on="c_custkey", right_on="o_custkey")
        .join(t["lineitem"].filter(pl.col("l_returnflag") == "R"), left_on="o_orderkey", right_on="l_orderkey")
        .join(t["nation"], left_on="c_nationkey", right_on="n_nationkey")
        .group_by("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")
        .agg(_rev().sum().alias("revenue"))
        .select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")
        .sort(["revenue", "c_custkey"], descending=[True, False])
        .head(20)
    )


def q11(t: dict[str, pl.LazyFrame], fraction: float = 0.001) -> pl.LazyFrame:
    german = (
        t["partsupp"]
        .join(t["supplier"], left_on="ps_suppkey", right_on="s_suppkey")
        .join(t["nation"].filter(pl.col("n_name") == "GERMANY"), left_on="s_nationkey", right_on="n_nationkey")
        .with_columns((pl.col("ps_supplycost") * pl.col("ps_availqty")).alias("value"))
    )
    total = german.select((pl.col("value").sum() * fraction).alias("threshold"))
    return (
        german.group_by("ps_partkey").agg(pl.col("value").sum())
        .join(total, how="cross")
        .filter(pl.col("value") > pl.col("threshold"))
        .select("ps_partkey", "value")
        .sort(["value", "ps_partkey"], descending=[True, False])
    )


def q12(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    high = pl.col("o_orderpriority").is_in(["1-URGENT", "2-HIGH"])
    return (
        t["orders"]
        .join(t["lineitem"], left_on="o_orderkey", right_on="l_orderkey")
        .filter(
            pl.col("l_shipmode").is_in(["MAIL", "SHIP"])
            & (pl.col("l_commitdate") < pl.col("l_receiptdate"))
            & (pl.col("l_shipdate") < pl.col("l_commitdate"))
            & pl.col("l_receiptdate").is_between(date(1994, 1, 1), date(1995, 1, 1), closed="left")
        )
        .group_by("l_shipmode")
        .agg(
            pl.when(high).then(1).otherwise(0).sum().alias("high_line_count"),
            pl.when(high).then(0).otherwise(1).sum().alias("low_line_count"),
        )
        .sort("l_shipmode")
    )


def q13(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    orders = t["orders"].filter(~pl.col("o_comment").str.contains("special.*requests"))
    return (
        t["customer"].join(orders, left_on="c_custkey", right_on="o_custkey", how="left")
        .group_by("c_custkey")
        .agg(pl.col("o_orderkey").count().alias("c_count"))
        .group_by("c_count")
        .agg(pl.len().alias("custdist"))
        .sort(["custdist", "c_count"], descending=[True, True])
    )


def q14(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    return (
        t["lineitem"].filter(pl.col("l_shipdate").is_between(date(1995, 9, 1), date(1995, 10, 1), closed="left"))
        .join(t["part"], left_on="l_partkey", right_on="p_partkey")
        .select(
            (100.0 * pl.when(pl.col("p_type").str.starts_with("PROMO")).then(_rev()).otherwise(0.0).sum()
             / _rev().sum()).alias("promo_revenue")
        )
    )


def q15(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    revenue = (
        t["lineitem"].filter(pl.col("l_shipdate").is_between(date(1996, 1, 1), date(1996, 4, 1), closed="left"))
        .group_by("l_suppkey")
        .agg(_rev().sum().alias("total_revenue"))
    )
    return (
        t["supplier"].join(revenue, left_on="s_suppkey", right_on="l_suppkey")
        .filter(pl.col("total_revenue") == pl.col("total_revenue").max())
        .select("s_suppkey", "s_name", "s_address", "s_phone", "total_revenue")
        .sort("s_suppkey")
    )


def q16(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    complainers = t["supplier"].filter(pl.col("s_comment").str.contains("Customer.*Complaints"))
    return (
        t["partsupp"]
        .join(t["part"], left_on="ps_partkey", right_on="p_partkey")
        .filter(
            (pl.col("p_brand") != "Brand#45")
            & ~pl.col("p_type").str.starts_with("MEDIUM POLISHED")
            & pl.col("p_size").is_in([49, 14, 23, 45, 19, 3, 36, 9])
        )
        .join(complainers, left_on="ps_suppkey", right_on="s_suppkey", how="anti")
        .group_by("p_brand", "p_type", "p_size")
        .agg(pl.col("ps_suppkey").n_unique().alias("supplier_cnt"))
        .sort(["supplier_cnt", "p_brand", "p_type", "p_size"], descending=[True, False, False, False])
    )


def q17(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    parts = t["part"].filter((pl.col("p_brand") == "Brand#23") & (pl.col("p_container") == "MED BOX"))
    lines = t["lineitem"].join(parts, left_on="l_partkey", right_on="p_partkey")
    avg = lines.group_by("l_partkey").agg((0.2 * pl.col("l_quantity").mean()).alias("avg_qty"))
    return (
        lines.join(avg, on="l_partkey")
        .filter(pl.col("l_quantity") < pl.col("avg_qty"))
        .select((pl.col("l_extendedprice").sum() / 7.0).alias("avg_yearly"))
    )


def q18(t: dict[str, pl.LazyFrame], threshold: float = 300) -> pl.LazyFrame:
    big = (
        t["lineitem"].group_by("l_orderkey")
        .agg(pl.col("l_quantity").sum().alias("sum_qty"))
        .filter(pl.col("sum_qty") > threshold)
    )
    return (
        t["orders"].join(big, left_on="o_orderkey", right_on="l_orderkey", how="semi")
        .join(t["customer"], left_on="o_custkey", right_on="c_custkey")
        .join(t["lineitem"], left_on="o_orderkey", right_on="l_orderkey")
        .group_by("c_name", "o_custkey", "o_orderkey", "o_orderdate", "o_totalprice")
        .agg(pl.col("l_quantity").sum().alias("col6"))
        .select("c_name", pl.col("o_custkey").alias("c_custkey"), "o_orderkey", "o_orderdate",
                "o_totalprice", "col6")
        .sort(["o_totalprice", "o_orderdate", "o_orderkey"], descending=[True, False, False])
        .head(100)
    )


def q19(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    def branch(brand: str, containers: list[str], qlo: int, size_hi: int) -> pl.Expr:
        return (
            (pl.col("p_brand") == brand)
            & pl.col("p_container").is_in(containers)
            & pl.col("l_quantity").is_between(qlo, qlo + 10)
            & pl.col("p_size").is_between(1, size_hi)
        )

    return (
        t["lineitem"]
        .filter(pl.col("l_shipmode").is_in(["AIR", "AIR REG"]) & (pl.col("l_shipinstruct") == "DELIVER IN PERSON"))
        .join(t["part"], left_on="l_partkey", right_on="p_partkey")
        .filter(
            branch("Brand#12", ["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 1, 5)
            | branch("Brand#23", ["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10, 10)
            | branch("Brand#34", ["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 20, 15)
        )
        .select(_rev().sum().alias("revenue"))
    )


def q20(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    forest = t["part"].filter(pl.col("p_name").str.starts_with("forest"))
    shipped = (
        t["lineitem"].filter(pl.col("l_shipdate").is_between(date(1994, 1, 1), date(1995, 1, 1), closed="left"))
        .group_by("l_partkey", "l_suppkey")
        .agg((0.5 * pl.col("l_quantity").sum()).alias("half_qty"))
    )
    keep = (
        t["partsupp"].join(forest, left_on="ps_partkey", right_on="p_partkey", how="semi")
        .join(shipped, left_on=["ps_partkey", "ps_suppkey"], right_on=["l_partkey", "l_suppkey"])
        .filter(pl.col("ps_availqty") > pl.col("half_qty"))
        .select("ps_suppkey")
    )
    return (
        t["supplier"].join(t["nation"].filter(pl.col("n_name") == "CANADA"), left_on="s_nationkey", right_on="n_nationkey")
        .join(keep, left_on="s_suppkey", right_on="ps_suppkey", how="semi")
        .select("s_name", "s_address")
        .sort("s_name")
    )


def q21(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    li = t["lineitem"]
    multi = li.group_by("l_orderkey").agg(pl.col("l_suppkey").n_unique().alias("n_supp")).filter(pl.col("n_supp") > 1)
    late = li.filter(pl.col("l_receiptdate") > pl.col("l_commitdate"))
    one_late = late.group_by("l_orderkey").agg(pl.col("l_suppkey").n_unique().alias("n_late")).filter(pl.col("n_late") == 1)
    return (
        late.join(t["orders"].filter(pl.col("o_orderstatus") == "F"), left_on="l_orderkey", right_on="o_orderkey")
        .join(t["supplier"], left_on="l_suppkey", right_on="s_suppkey")
        .join(t["nation"].filter(pl.col("n_name") == "SAUDI ARABIA"), left_on="s_nationkey", right_on="n_nationkey")
        .join(multi, on="l_orderkey", how="semi")
        .join(one_late, on="l_orderkey", how="semi")
        .group_by("s_name")
        .agg(pl.len().alias("numwait"))
        .sort(["numwait", "s_name"], descending=[True, False])
        .head(100)
    )


def q22(t: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
    codes = ["13", "31", "23", "29", "30", "18", "17"]
    cust = t["customer"].with_columns(pl.col("c_phone").str.slice(0, 2).alias("cntrycode")).filter(
        pl.col("cntrycode").is_in(codes))
    avg = cust.filter(pl.col("c_acctbal") > 0.0).select(pl.col("c_acctbal").mean().alias("avg_bal"))
    return (
        cust.join(avg, how="cross")
        .filter(pl.col("c_acctbal") > pl.col("avg_bal"))
        .join(t["orders"], left_on="c_custkey", right_on="o_custkey", how="anti")
        .group_by("cntrycode")
        .agg(pl.len().alias("numcust"), pl.col("c_acctbal").sum().alias("totacctbal"))
        .sort("cntrycode")
    )


QUERIES = {i: globals()[f"q{i}"] for i in range(1, 23)}
