#!/usr/bin/python3
"""The peer of `realm-adapter-bench load`: a straightforward Python loader of the same rows.

psycopg2 with a server-side cursor (batches of 10,000 rows) into a plain SQLite table
(WAL, synchronous=NORMAL, one executemany and one commit per batch). Prints one JSON line:
{"rows": N, "seconds": S}. Needs the Debian package python3-psycopg2 (scripts/install-deps.sh).

usage: psycopg2_sqlite_loader.py HOST PORT USER DATABASE TABLE SQLITE_FILE
"""
import json
import sqlite3
import sys
import time

import psycopg2

host, port, user, dbname, table, target = sys.argv[1:7]
started = time.monotonic()
pg = psycopg2.connect(host=host, port=int(port), user=user, dbname=dbname)
cur = pg.cursor(name="peer_load")
cur.itersize = 10_000
cur.execute(f"SELECT id, n, label, price, active, created, code, note FROM {table}")

db = sqlite3.connect(target)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=NORMAL")
db.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, n INTEGER, label TEXT, price REAL, active INTEGER,"
           " created TEXT, code TEXT, note TEXT)")
rows = 0
while True:
    batch = cur.fetchmany(10_000)
    if not batch:
        break
    db.executemany("INSERT INTO item VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [(r[0], r[1], r[2], r[3], r[4], r[5].isoformat() if r[5] else None, str(r[6]) if r[6] else None, r[7])
                    for r in batch])
    db.commit()
    rows += len(batch)
db.close()
pg.close()
print(json.dumps({"rows": rows, "seconds": time.monotonic() - started}))
