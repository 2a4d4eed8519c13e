"""The feature-engineering ETL the first `make demo` ran (examples/demo.py now runs the
per-user features, a per-movie target encoding, both joined back with the movie
genres, a hash-seeded global shuffle, normalization with global mean/std and a
clip, and the handoff of the normalized columns to torch tensors.

Each step is a Polars LazyFrame (run on Polars and on ladle) and DuckDB SQL over
tables `ratings`, `movies` (and `shuffled`, the shuffle's output, for the last
two steps, so that every engine normalizes the same rows)."""

from __future__ import annotations

import polars as pl

PRIOR, WEIGHT, SEED = 3.5, 20.0, 1


def _users(r: pl.LazyFrame) -> pl.LazyFrame:
    return r.group_by("userId").agg(
        pl.col("rating").sum().alias("user_rating_sum"), pl.len().alias("user_n"),
        pl.col("rating").max().alias("user_rating_max"))


def _movie_te(r: pl.LazyFrame) -> pl.LazyFrame:
    return (r.group_by("movieId").agg(pl.col("rating").sum().alias("s"), pl.len().alias("n"))
            .select("movieId", ((pl.col("s") + PRIOR * WEIGHT) / (pl.col("n") + WEIGHT)).alias("movie_te")))


def _features(r: pl.LazyFrame, m: pl.LazyFrame) -> pl.LazyFrame:
    return (
        r.join(_movie_te(r), on="movieId", how="left")
        .join(_users(r), on="userId", how="left")
        .join(m, on="movieId", how="left")
        .with_columns(
            pl.col("genres").str.contains("Comedy", literal=True).cast(pl.Float32).alias("is_comedy"),
            (pl.col("user_rating_sum") / pl.col("user_n")).alias("user_mean"),
        )
        .drop("genres")  # the raw string is no training feature; 25M copies of it cost gigabytes
    )


def _normalized(s: pl.LazyFrame) -> pl.LazyFrame:
    z = lambda c: ((pl.col(c) - pl.col(c).mean()) / pl.col(c).std()).clip(-5.0, 5.0)  # noqa: E731
    return s.select(
        z("rating").cast(pl.Float32).alias("rating_z"), z("movie_te").cast(pl.Float32).alias("movie_te_z"),
        z("user_mean").cast(pl.Float32).alias("user_mean_z"), z("timestamp").cast(pl.Float32).alias("time_z"),
        pl.col("is_comedy"), (pl.col("rating") >= 4.0).cast(pl.Float32).alias("label"))


_FEATURES_SQL = f"""
with te as (select movieId, (sum(rating) + {PRIOR * WEIGHT}) / (count(*) + {WEIGHT}) as movie_te
            from ratings group by movieId),
     u as (select userId, sum(rating) as user_rating_sum, count(*) as user_n, max(rating) as user_rating_max
           from ratings group by userId)
select r.userId, r.movieId, r.rating, r.timestamp, te.movie_te, u.user_rating_sum, u.user_n, u.user_rating_max,
       cast(contains(m.genres, 'Comedy') as float) as is_comedy, u.user_rating_sum / u.user_n as user_mean
from ratings r left join te on r.movieId = te.movieId left join u on r.userId = u.userId
     left join movies m on r.movieId = m.movieId"""

_Z = "cast(least(greatest(({c} - m_{c}) / s_{c}, -5.0), 5.0) as float) as {a}"
_NORMALIZED_SQL = (
    "with st as (select " + ", ".join(f"avg({c}) as m_{c}, stddev_samp({c}) as s_{c}"
                                    for c in ("rating", "movie_te", "user_mean", "timestamp"))
    + " from shuffled) select "
    + ", ".join(_Z.format(c=c, a=a) for c, a in (("rating", "rating_z"), ("movie_te", "movie_te_z"),
                                                  ("user_mean", "user_mean_z"), ("timestamp", "time_z")))
    + ", is_comedy, cast(rating >= 4.0 as float) as label from shuffled, st")


def steps(r: pl.LazyFrame, m: pl.LazyFrame, shuffled: pl.LazyFrame) -> dict[str, tuple[pl.LazyFrame, str, bool]]:
    """name -> (LazyFrame, SQL, whether the row order is part of the answer)."""
    return {
        "per-user features": (_users(r), "select userId, sum(rating) as user_rating_sum, count(*) as user_n, "
                              "max(rating) as user_rating_max from ratings group by userId", False),
        "per-movie target encoding": (_movie_te(r), f"select movieId, (sum(rating) + {PRIOR * WEIGHT}) / (count(*) + {WEIGHT}) "
                                      "as movie_te from ratings group by movieId", False),
        "features joined back": (_features(r, m), _FEATURES_SQL, False),
        # hash functions differ between engines: the shuffle is checked by content
        "hash-seeded shuffle": (_features(r, m).sort(pl.col("userId").hash(seed=SEED), "userId", "movieId", "timestamp"),
                                f"select * from ({_FEATURES_SQL}) order by hash(userId + {SEED}), userId, movieId, timestamp",
                                False),
        "normalize (global mean/std, clip)": (_normalized(shuffled), _NORMALIZED_SQL, True),
    }


def normalized(shuffled: pl.LazyFrame) -> pl.LazyFrame:
    return _normalized(shuffled)


NORMALIZED_SQL = _NORMALIZED_SQL
