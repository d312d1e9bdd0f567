#!/usr/bin/env python3
"""Reference MariaDB load for comparison with annbench: the train vectors of an HDF5 dataset
loaded the way ann-benchmarks' MariaDB module loads them, through mariadb-connector-python.

That module creates `(id INT PRIMARY KEY, v VECTOR(d) NOT NULL) ENGINE=InnoDB`, then calls
`cursor.executemany("INSERT ... VALUES (%s, %s)", batch)` for batches of 1,000 rows
(id, float32 bytes) in one transaction (the connector's default autocommit=False), then
COMMIT. Connector/C sends each executemany as one COM_STMT_BULK_EXECUTE (MariaDB's bulk
binary protocol: a prepared INSERT with an array of parameter rows). Its own figure stops
before COMMIT; this script prints both (`insert_seconds`, and `seconds` with the COMMIT,
comparable to annbench's load time, which ends when the rows are committed). It does not set
the server's global max_allowed_packet (ann-benchmarks does): a 1,000-row batch of 784-d or
1536-d vectors (3-6 MB) fits the default 16 MiB.

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install mariadb numpy h5py   # needs libmariadb-dev
    /tmp/ref/bin/python scripts/bench_load_reference.py DATASET.hdf5 [--rounds 3] [--batch 1000]

Prints one JSON object per round. The server: ANNBENCH_MARIADB_URL, else the servers.env that
scripts/databases.sh writes. `examples/bench_mariadb_load.rs` runs it interleaved with
annbench's load methods (docs/bench-backends.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.parse

import h5py
import mariadb
import numpy as np

TABLE = "bench_load_reference"


def server_url() -> urllib.parse.ParseResult:
    text = os.environ.get("ANNBENCH_MARIADB_URL", "")
    if not text:
        cache = os.environ.get("ANNBENCH_CACHE_DIR", os.path.expanduser("~/.cache/annbench"))
        path = os.path.join(cache, "servers.env")
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("ANNBENCH_MARIADB_URL="):
                        text = line.split("=", 1)[1].strip()
        except OSError as e:
            sys.exit(f"no ANNBENCH_MARIADB_URL and cannot read {path} ({e}): run scripts/databases.sh up")
    if not text:
        sys.exit("ANNBENCH_MARIADB_URL is not set: run scripts/databases.sh up")
    return urllib.parse.urlparse(text)


def connect(u: urllib.parse.ParseResult) -> mariadb.Connection:
    args = dict(
        user=urllib.parse.unquote(u.username or ""),
        password=urllib.parse.unquote(u.password or ""),
        database=u.path.lstrip("/"),
    )
    socket = urllib.parse.parse_qs(u.query).get("socket")
    if socket:
        return mariadb.connect(unix_socket=socket[0], **args)
    return mariadb.connect(host=u.hostname or "127.0.0.1", port=u.port or 3306, **args)


def load_once(conn: mariadb.Connection, train: np.ndarray, batch_size: int) -> dict[str, float]:
    cur = conn.cursor()
    cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
    cur.execute(
        f"CREATE TABLE {TABLE} (id INT PRIMARY KEY, v VECTOR({train.shape[1]}) NOT NULL) ENGINE=InnoDB"
    )
    sql = f"INSERT INTO {TABLE} (id, v) VALUES (%s, %s)"
    cpu = time.process_time()
    start = time.perf_counter()
    batch: list[tuple[int, bytes]] = []
    for i, row in enumerate(train):
        batch.append((i, row.astype(np.float32).tobytes()))
        if len(batch) >= batch_size:
            cur.executemany(sql, batch)
            batch.clear()
    if batch:
        cur.executemany(sql, batch)
    inserted = time.perf_counter() - start
    conn.commit()
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    cur.execute(f"SELECT COUNT(*) FROM {TABLE}")
    (rows,) = cur.fetchone()
    if rows != len(train):
        sys.exit(f"{TABLE} holds {rows} rows after the load; expected {len(train)}")
    cur.execute(f"DROP TABLE {TABLE}")
    return {"insert_seconds": inserted, "seconds": seconds, "client_cpu_seconds": cpu, "rows": rows}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset", help="HDF5 file in the ann-benchmarks layout (its 'train' matrix is loaded)")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--batch", type=int, default=1000, help="rows per executemany (ann-benchmarks: 1000)")
    a = p.parse_args()
    with h5py.File(a.dataset, "r") as f:
        train = np.asarray(f["train"], dtype=np.float32)
    conn = connect(server_url())
    for _ in range(a.rounds):
        r = load_once(conn, train, a.batch)
        r.update(
            method="mariadb-connector-python executemany (COM_STMT_BULK_EXECUTE)",
            connector=mariadb.__version__,
            connector_c=".".join(map(str, mariadb.client_version_info)),
            batch=a.batch,
            dimension=int(train.shape[1]),
        )
        print(json.dumps(r), flush=True)
    conn.close()


if __name__ == "__main__":
    main()
