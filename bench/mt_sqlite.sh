#!/bin/sh
# mt_sqlite: the preload benchmark's second real-program workload.
#
#   sh bench/mt_sqlite.sh DIR     writes DIR/mt_sqlite.sql
#   sqlite3 -batch -init DIR/mt_sqlite.sql :memory: .quit
#
# 300,000 INSERT statements in one transaction into an in-memory table,
# then an index and a query: sqlite3 parses and prepares every statement,
# so the run allocates and frees through malloc at every step, as a
# program with an embedded database does.  The last line it prints,
# "sqlite: COUNT SUM NAME", does not depend on addresses or timing, so a
# traced run's output can be compared with a bare one's.
set -eu
out=${1:?usage: mt_sqlite.sh DIR}/mt_sqlite.sql
awk 'BEGIN {
	print "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, val REAL);"
	print "BEGIN;"
	for (i = 1; i <= 300000; i++)
		printf "INSERT INTO t VALUES(%d, '\''name%06d'\'', %d, %d.5);\n", i, (i * 7919) % 300000, i % 97, i
	print "COMMIT;"
	print "CREATE INDEX t_grp ON t(grp, name);"
	print "SELECT '\''sqlite: '\'' || count(*) || '\'' '\'' || sum(val) || '\'' '\'' ||"
	print "  (SELECT name FROM t WHERE grp = 13 ORDER BY name LIMIT 1 OFFSET 100) FROM t;"
}' >"$out"
