# mt_python: the preload benchmark's real-program workload, the python3
# run of docs/performance.md's table: build, dump, parse and sort a 120k-entry dict.
#
#   PYTHONMALLOC=malloc /usr/bin/python3 bench/mt_python.py [ENTRIES]
#
# Pure Python and the json module's C code: with PYTHONMALLOC=malloc every
# object, key string, dict table and the growing JSON text goes through
# malloc, realloc and free -- 13.5 M events at the default, a heap that
# peaks near 140 MB (the sort's key tuples beside two copies of the dict).
# It prints a checksum that depends on no address, hash or time, so a
# traced run's output can be compared with a bare one's.
import json
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 120000

table = {"key%06d" % i: {"id": i, "name": "n%06d" % ((i * 7919) % n),
                         "tags": [i % 7, i % 11], "score": (i * 37) % 1000 / 10.0}
         for i in range(n)}
text = json.dumps(table)
back = json.loads(text)
order = sorted(back.items(), key=lambda kv: (kv[1]["score"], kv[1]["name"]))
check = len(text) + order[0][1]["id"] + order[-1][1]["id"] + len(order)
print("python: %d entries, check %d" % (n, check))
