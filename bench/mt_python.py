# mt_python: the preload benchmark's real-program workload.
#
#   PYTHONMALLOC=malloc /usr/bin/python3 bench/mt_python.py [SCALE]
#
# A short, allocation-heavy pure-Python script: dicts, lists, strings and
# tuples built and dropped, so that with PYTHONMALLOC=malloc nearly every
# object goes through malloc/realloc/free.  It prints a checksum that does
# not depend on addresses, hashing or timing (no set or id() order), so a
# traced run's output can be compared with a bare one's.  Keep it well
# under a second bare: the tracers multiply its time.
import sys

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 1
check = 0

for rnd in range(6 * scale):
    # A word index: strings made, split, counted in a dict.
    words = {}
    text = " ".join("w%d_%d" % (i % 977, (i * 7) % 13) for i in range(20000))
    for w in text.split():
        words[w] = words.get(w, 0) + 1
    check += len(words) + max(words.values())

    # Records: small dicts in a list, sorted, grouped, then dropped.
    recs = [{"id": i, "name": "n%05d" % i, "tags": [i % 7, i % 11]} for i in range(12000)]
    recs.sort(key=lambda r: (r["tags"][0], -r["id"]))
    groups = {}
    for r in recs:
        groups.setdefault(r["tags"][1], []).append(r["name"])
    check += sum(len(v) for v in groups.values()) + len(recs[0]["name"])
    del recs, groups

    # Growing and shrinking lists and strings (realloc).
    acc = []
    s = ""
    for i in range(15000):
        acc.append((i, str(i)))
        if i % 3 == 0:
            s += chr(97 + i % 26)
        if len(acc) > 500:
            del acc[:250]
    check += len(acc) + len(s)

print("python: %d rounds, check %d" % (6 * scale, check))
