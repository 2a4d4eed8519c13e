"""A TPC-H data generator in numpy, written from the TPC-H specification (v3,
clause 4.2): the eight tables at any scale factor with the specification's
cardinalities, key relationships (sparse order keys, four suppliers per part,
customers whose key is a multiple of 3 place no orders), value ranges and
formulas (retail price, extended price, order status and total price, return
flag and line status from the current date 1995-06-17), and its word lists
(colors, types, containers, segments, priorities, ship modes and instructions).

Comments are drawn from a pool of sentences of the specification's grammar
words rather than generated one by one, so the data is not byte-identical to
dbgen's; every query of the benchmark selects rows from it (the words q9, q13,
q14, q16 and q20 look for are in the pools), and all engines read the same files.

    python bench/tpch_gen.py --sf 1 --out bench/data/tpch-sf1
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

REGIONS = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
NATIONS = [("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4), ("ETHIOPIA", 0),
           ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2), ("IRAN", 4), ("IRAQ", 4), ("JAPAN", 2),
           ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0), ("MOZAMBIQUE", 0), ("PERU", 1), ("CHINA", 2),
           ("ROMANIA", 3), ("SAUDI ARABIA", 4), ("VIETNAM", 2), ("RUSSIA", 3), ("UNITED KINGDOM", 3),
           ("UNITED STATES", 1)]
COLORS = ("almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished "
          "chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick "
          "floral forest frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace "
          "lavender lawn lemon light lime linen magenta maroon medium metallic midnight mint misty moccasin "
          "navajo navy olive orange orchid pale papaya peach peru pink plum powder puff purple red rose rosy "
          "royal saddle salmon sandy seashell sienna sky slate smoke snow spring steel tan thistle tomato "
          "turquoise violet wheat white yellow").split()
TYPE1 = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"]
TYPE2 = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"]
TYPE3 = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"]
CONT1 = ["SM", "LG", "MED", "JUMBO", "WRAP"]
CONT2 = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"]
SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"]
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"]
INSTRUCTIONS = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"]
MODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
# grammar words of clause 4.2.2.10 (nouns, verbs, adjectives, adverbs, prepositions, auxiliaries)
WORDS = ("foxes ideas theodolites pinto beans instructions dependencies excuses platelets asymptotes courts "
         "dolphins multipliers sauternes warthogs frets dinos attainments somas Tiresias patterns forges braids "
         "hockey players frays warhorses dugouts notornis epitaphs pearls tithes waters orbits gifts sheaves "
         "depths sentiments decoys realms pains grouches escapades sleep wake are cajole haggle nag use boost "
         "affix detect integrate maintain nod was lose sublate solve thrash promise engage hinder print x-ray "
         "breach eat grow impress mold poach serve run dazzle snooze doze unwind kindle play hang believe doubt "
         "furious sly careful blithe quick fluffy slow quiet ruthless thin close dogged daring brave stealthy "
         "permanent enticing idle busy regular final ironic even bold silent sometimes always never furiously "
         "slyly carefully blithely quickly fluffily slowly quietly ruthlessly thinly closely doggedly daringly "
         "bravely stealthily permanently enticingly idly busily regularly finally ironically evenly boldly "
         "silently about above according to across after against along alongside of among around at atop "
         "before behind beneath beside besides between beyond by despite during except for from in place of "
         "inside instead of into near of on outside over past since through throughout to toward under until "
         "up upon without with within do may might shall will would can could should ought to must will have "
         "to shall have to could have to should have to must have to need to try to special requests packages "
         "accounts deposits requests packages").split()
START, CURRENT, END = np.datetime64("1992-01-01"), np.datetime64("1995-06-17"), np.datetime64("1998-12-31")


def _text_pool(rng: np.random.Generator, n: int, lo: int, hi: int) -> np.ndarray:
    words = np.array(WORDS)
    lens = rng.integers(lo, hi + 1, n)
    return np.array([" ".join(words[rng.integers(0, len(words), k)]) for k in lens], dtype=object)


def _text(rng: np.random.Generator, pool: np.ndarray, n: int) -> pl.Series:
    return pl.Series(pool[rng.integers(0, len(pool), n)], dtype=pl.String)


def _money(rng: np.random.Generator, lo: float, hi: float, n: int) -> np.ndarray:
    return np.round(rng.integers(int(lo * 100), int(hi * 100) + 1, n) / 100.0, 2)


def _phone(rng: np.random.Generator, nation: np.ndarray) -> pl.Series:
    n = len(nation)
    return (
        pl.DataFrame({"c": nation + 10, "a": rng.integers(100, 1000, n), "b": rng.integers(100, 1000, n),
                      "d": rng.integers(1000, 10000, n)})
        .select(pl.format("{}-{}-{}-{}", "c", "a", "b", "d"))
        .to_series()
    )


def _fmt(prefix: str, keys: np.ndarray) -> pl.Series:
    return pl.select(pl.concat_str(pl.lit(prefix), pl.lit(pl.Series(keys)).cast(pl.String).str.zfill(9))).to_series()


def generate(sf: float, seed: int = 7) -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    pool = _text_pool(rng, 20_000, 4, 12)
    S, P, C, O = max(int(10_000 * sf), 10), max(int(200_000 * sf), 40), max(int(150_000 * sf), 30), max(int(1_500_000 * sf), 300)
    out: dict[str, pl.DataFrame] = {}
    out["region"] = pl.DataFrame({"r_regionkey": np.arange(5, dtype=np.int64), "r_name": REGIONS,
                                  "r_comment": _text(rng, pool, 5)})
    out["nation"] = pl.DataFrame({"n_nationkey": np.arange(25, dtype=np.int64), "n_name": [n for n, _ in NATIONS],
                                  "n_regionkey": np.array([r for _, r in NATIONS], dtype=np.int64),
                                  "n_comment": _text(rng, pool, 25)})
    # supplier: 5 per 10,000 complain, 5 recommend (clause 4.2.3)
    s_comment = _text(rng, pool, S).to_numpy().astype(object)
    special = rng.choice(S, size=min(S, max(10, S // 1000)), replace=False)
    for k, i in enumerate(special):
        s_comment[i] = f"{s_comment[i][:10]} Customer {'Complaints' if k % 2 == 0 else 'Recommends'} {s_comment[i][10:]}"
    s_nation = rng.integers(0, 25, S)
    out["supplier"] = pl.DataFrame({
        "s_suppkey": np.arange(1, S + 1, dtype=np.int64), "s_name": _fmt("Supplier#", np.arange(1, S + 1)),
        "s_address": _text(rng, pool, S).str.slice(0, 25), "s_nationkey": s_nation.astype(np.int64),
        "s_phone": _phone(rng, s_nation), "s_acctbal": _money(rng, -999.99, 9999.99, S),
        "s_comment": pl.Series(s_comment, dtype=pl.String)})
    # part
    pk = np.arange(1, P + 1, dtype=np.int64)
    colors = np.array(COLORS)
    name_idx = np.argsort(rng.random((P, len(COLORS))), axis=1)[:, :5] if P <= 400_000 else \
        rng.integers(0, len(COLORS), (P, 5))
    p_name = pl.DataFrame({f"w{k}": colors[name_idx[:, k]] for k in range(5)}).select(
        pl.concat_str([f"w{k}" for k in range(5)], separator=" ")).to_series()
    m = rng.integers(1, 6, P)
    types = np.array([f"{a} {b} {c}" for a in TYPE1 for b in TYPE2 for c in TYPE3])
    conts = np.array([f"{a} {b}" for a in CONT1 for b in CONT2])
    retail = (90000 + ((pk // 10) % 20001) + 100 * (pk % 1000)) / 100.0
    out["part"] = pl.DataFrame({
        "p_partkey": pk, "p_name": p_name, "p_mfgr": pl.Series([f"Manufacturer#{x}" for x in range(6)])[m],
        "p_brand": pl.Series([f"Brand#{x // 10}{x % 10}" for x in range(60)])[m * 10 + rng.integers(1, 6, P)],
        "p_type": pl.Series(types[rng.integers(0, len(types), P)]), "p_size": rng.integers(1, 51, P).astype(np.int64),
        "p_container": pl.Series(conts[rng.integers(0, len(conts), P)]), "p_retailprice": retail,
        "p_comment": _text(rng, pool, P).str.slice(0, 22)})
    # partsupp: four suppliers per part (clause 4.2.3)
    ps_part = np.repeat(pk, 4)
    i = np.tile(np.arange(4), P)
    ps_supp = (ps_part + i * ((S // 4) + (ps_part - 1) // S)) % S + 1
    out["partsupp"] = pl.DataFrame({
        "ps_partkey": ps_part, "ps_suppkey": ps_supp.astype(np.int64),
        "ps_availqty": rng.integers(1, 10_000, 4 * P).astype(np.int64),
        "ps_supplycost": _money(rng, 1.0, 1000.0, 4 * P), "ps_comment": _text(rng, pool, 4 * P)})
    # customer
    c_nation = rng.integers(0, 25, C)
    out["customer"] = pl.DataFrame({
        "c_custkey": np.arange(1, C + 1, dtype=np.int64), "c_name": _fmt("Customer#", np.arange(1, C + 1)),
        "c_address": _text(rng, pool, C).str.slice(0, 25), "c_nationkey": c_nation.astype(np.int64),
        "c_phone": _phone(rng, c_nation), "c_acctbal": _money(rng, -999.99, 9999.99, C),
        "c_mktsegment": pl.Series(np.array(SEGMENTS)[rng.integers(0, 5, C)]), "c_comment": _text(rng, pool, C)})
    # orders: sparse keys (8 of every 32), customers not divisible by 3
    oi = np.arange(O, dtype=np.int64)
    okey = (oi // 8) * 32 + (oi % 8) + 1
    cust = rng.integers(1, C + 1, O)
    cust = np.where(cust % 3 == 0, np.where(cust + 1 <= C, cust + 1, cust - 1), cust)
    odate = START + rng.integers(0, int((END - START).astype(int)) - 151 + 1, O).astype("timedelta64[D]")
    # lineitem: 1..7 per order
    nl = rng.integers(1, 8, O)
    L = int(nl.sum())
    l_order = np.repeat(okey, nl)
    l_odate = np.repeat(odate, nl)
    starts = np.repeat(np.cumsum(nl) - nl, nl)
    l_line = (np.arange(L) - starts + 1).astype(np.int64)
    l_part = rng.integers(1, P + 1, L).astype(np.int64)
    j = rng.integers(0, 4, L)
    l_supp = (l_part + j * ((S // 4) + (l_part - 1) // S)) % S + 1
    qty = rng.integers(1, 51, L).astype(np.float64)
    lretail = (90000 + ((l_part // 10) % 20001) + 100 * (l_part % 1000)) / 100.0
    eprice = np.round(qty * lretail, 2)
    disc = rng.integers(0, 11, L) / 100.0
    tax = rng.integers(0, 9, L) / 100.0
    ship = l_odate + rng.integers(1, 122, L).astype("timedelta64[D]")
    commit = l_odate + rng.integers(30, 91, L).astype("timedelta64[D]")
    receipt = ship + rng.integers(1, 31, L).astype("timedelta64[D]")
    rflag = np.where(receipt <= CURRENT, np.where(rng.random(L) < 0.5, "R", "A"), "N")
    lstatus = np.where(ship > CURRENT, "O", "F")
    out["lineitem"] = pl.DataFrame({
        "l_orderkey": l_order, "l_partkey": l_part, "l_suppkey": l_supp.astype(np.int64), "l_linenumber": l_line,
        "l_quantity": qty, "l_extendedprice": eprice, "l_discount": disc, "l_tax": tax,
        "l_returnflag": pl.Series(rflag), "l_linestatus": pl.Series(lstatus),
        "l_shipdate": ship, "l_commitdate": commit, "l_receiptdate": receipt,
        "l_shipinstruct": pl.Series(np.array(INSTRUCTIONS)[rng.integers(0, 4, L)]),
        "l_shipmode": pl.Series(np.array(MODES)[rng.integers(0, 7, L)]),
        "l_comment": _text(rng, pool, L).str.slice(0, 43)})
    # order status and total price from the lines (clause 4.2.3)
    agg = (
        out["lineitem"].lazy()
        .group_by("l_orderkey")
        .agg((pl.col("l_linestatus") == "F").all().alias("all_f"), (pl.col("l_linestatus") == "O").all().alias("all_o"),
             (pl.col("l_extendedprice") * (1 + pl.col("l_tax")) * (1 - pl.col("l_discount"))).sum().round(2).alias("tp"))
        .collect()
    )
    orders = pl.DataFrame({"o_orderkey": okey, "o_custkey": cust.astype(np.int64)}).join(
        agg, left_on="o_orderkey", right_on="l_orderkey", how="left", maintain_order="left")
    out["orders"] = pl.DataFrame({
        "o_orderkey": okey, "o_custkey": cust.astype(np.int64),
        "o_orderstatus": orders.select(pl.when("all_f").then(pl.lit("F")).when("all_o").then(pl.lit("O"))
                                       .otherwise(pl.lit("P"))).to_series(),
        "o_totalprice": orders["tp"], "o_orderdate": odate,
        "o_orderpriority": pl.Series(np.array(PRIORITIES)[rng.integers(0, 5, O)]),
        "o_clerk": _fmt("Clerk#", rng.integers(1, max(int(1000 * sf), 2) + 1, O)),
        "o_shippriority": np.zeros(O, dtype=np.int64), "o_comment": _text(rng, pool, O)})
    for k in ("orders", "lineitem"):
        out[k] = out[k].with_columns(pl.col(pl.Datetime).cast(pl.Date)) if any(
            isinstance(t, pl.Datetime) for t in out[k].schema.values()) else out[k]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, df in generate(args.sf).items():
        df.write_parquet(args.out / f"{name}.parquet", row_group_size=1 << 17)
        print(name, df.shape)


if __name__ == "__main__":
    main()
