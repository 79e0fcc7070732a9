/*
 * mt-bench-collect: the collector's drain alone, on a recorded ring.
 *
 *   mt-bench-collect [-n EVENTS] [-l LEVEL] [-w WORKERS] [-c] [-f] TRACE OUT
 *
 * TRACE is a plain JSONL trace the preload wrote (make bench records
 * python3's and sqlite3's); each line is turned back into the ring
 * record it was drained from (a block event into its slot, trace.stop
 * into its STOP, any other line into a TEXT record with "seq":0), up to
 * EVENTS lines.  The records are then replayed into mt_collect, a ring's
 * worth at a time, as a program that fills the ring while the collector
 * drains it would, and the collector writes OUT (".zst": zstd at LEVEL
 * on WORKERS compression threads (mt_zpool); another name: plain).  Only the
 * time spent in mt_collect_step and mt_collect_close counts: one line,
 *
 *   events N wall_ns N cpu_ns N bytes N
 *
 * cpu_ns is the process's CPU time over the same stretches (zstd's
 * threads included).  -c then reads OUT back (zstd -dc for ".zst") and
 * fails unless it is TRACE's first N lines, byte for byte.  -f times the
 * formatting alone: the drain's lines go to a scratch buffer, never to
 * mt_out (the link wraps mt_out_room and mt_out_put), and OUT stays
 * empty.
 *
 * Never part of make check; it must never write anywhere but OUT.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../collector/mt_collect.h"
#include "../collector/mt_out.h"
#include "../common/mt_event.h"
#include "../common/mt_ring.h"

#define RING_SLOTS (1u << 18)
/* Any t0: the drain writes t - t0, and the lines' t comes back. */
#define T0 1000000000000ull

typedef struct {
	mt_ring_slot_t *v;
	size_t n, cap;
	uint64_t lines;
} slots_t;

/* -f: the lines are written here, over and over, and dropped. */
static int discard;
static char *scratch;
static size_t scratch_len;
#define SCRATCH (1u << 20)

int __real_mt_out_room(mt_out_t *o, size_t max, char **at);
void __real_mt_out_put(mt_out_t *o, size_t len);
int __wrap_mt_out_room(mt_out_t *o, size_t max, char **at);
void __wrap_mt_out_put(mt_out_t *o, size_t len);

int __wrap_mt_out_room(mt_out_t *o, size_t max, char **at)
{
	if (!discard)
		return __real_mt_out_room(o, max, at);
	if (max > SCRATCH)
		return -EINVAL;
	if (scratch_len + max > SCRATCH)
		scratch_len = 0;
	*at = scratch + scratch_len;
	return 0;
}

void __wrap_mt_out_put(mt_out_t *o, size_t len)
{
	if (!discard)
		__real_mt_out_put(o, len);
	else
		scratch_len += len;
}

static void die(const char *what)
{
	fprintf(stderr, "mt-bench-collect: %s\n", what);
	exit(1);
}

static mt_ring_slot_t *more(slots_t *s, size_t n)
{
	if (s->n + n > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1u << 20;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			die("out of memory");
	}
	memset(&s->v[s->n], 0, n * sizeof(*s->v));
	s->n += n;
	return &s->v[s->n - n];
}

/* The value of "key": in line (a number, or a string's contents), or NULL. */
static const char *field(const char *line, const char *key, size_t *len)
{
	char pat[32];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	if (*p == '"') {
		e = strchr(++p, '"');
	} else {
		e = p + strcspn(p, ",}");
	}
	*len = (size_t)(e - p);
	return p;
}

static uint64_t num(const char *line, const char *key, int base)
{
	size_t n;
	const char *p = field(line, key, &n);

	return p ? strtoull(p, NULL, base) : 0;
}

static void add_line(slots_t *s, const char *line, size_t len)
{
	size_t n;
	const char *kind = field(line, "kind", &n);
	mt_kind_t k = kind ? mt_event_kind_parse(kind, n) : MT_KIND_UNKNOWN;

	s->lines++;
	if (mt_event_kind_moves_heap(k) || k == MT_KIND_ALLOC_FAIL) {
		mt_ring_block_t *b = (mt_ring_block_t *)more(s, 1);
		const char *fn = field(line, "fn", &n);
		mt_fn_t f = fn ? mt_event_fn_parse(fn, n) : MT_FN_COUNT;

		b->t = T0 + num(line, "t", 10);
		b->ptr = num(line, "ptr", 16);
		b->new_ptr = num(line, "new_ptr", 16);
		b->size = num(line, "size", 10);
		if (f == MT_FN_API)
			b->allocator_id = num(line, "allocator_id", 10);
		else
			b->align = num(line, "align", 10);
		b->stack = num(line, "stack", 10);
		b->fail_at = num(line, "fail_at", 10);
		b->word = MT_RING_WORD(MT_REC_BLOCK, 1, k, f, num(line, "tid", 10));
	} else if (k == MT_KIND_TRACE_STOP) {
		static const char *const reasons[] = { "exit", "exec", "signal", "api" };
		mt_ring_stop_t *st = (mt_ring_stop_t *)more(s, 1);
		const char *r = field(line, "reason", &n);
		unsigned reason = 0;

		for (unsigned i = 0; r && i < 4; i++)
			if (strlen(reasons[i]) == n && !memcmp(reasons[i], r, n))
				reason = i;
		st->t = T0 + num(line, "t", 10);
		st->dropped = num(line, "dropped", 10);
		st->word = MT_RING_WORD(MT_REC_STOP, 1, reason, 0, 0);
	} else {
		/* {"v":1,"seq":N,REST -> {"v":1,"seq":0,REST */
		char text[MT_RING_TEXT_MAX];
		const char *rest = strchr(line + 13, ',');
		size_t tl, nslots;
		mt_ring_slot_t *v;

		if (strncmp(line, "{\"v\":1,\"seq\":", 13) || !rest)
			die("a line that is no memtrace event");
		tl = 14 + (size_t)(line + len - rest);
		if (tl > MT_RING_TEXT_MAX)
			die("a line longer than a ring record");
		memcpy(text, "{\"v\":1,\"seq\":0", 14);
		memcpy(text + 14, rest, (size_t)(line + len - rest));
		nslots = (tl + MT_RING_PAYLOAD - 1) / MT_RING_PAYLOAD;
		v = more(s, nslots);
		for (size_t i = 0; i < nslots; i++) {
			size_t off = i * MT_RING_PAYLOAD;
			size_t part = tl - off < MT_RING_PAYLOAD ? tl - off : MT_RING_PAYLOAD;

			memcpy(v[i].payload, text + off, part);
			v[i].word = i ? MT_RING_WORD(MT_REC_CONT, 0, 0, 0, 0)
				      : MT_RING_WORD(MT_REC_TEXT, nslots, 0, 0, tl);
		}
	}
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t max = UINT64_MAX, wall = 0, cpu = 0, w0, c0, head = 0, bytes = 0;
	int level = MT_OUT_LEVEL, workers = 0, check = 0, opt, st;
	slots_t s = { 0 };
	char *line = NULL, path[4096];
	size_t cap = 0, pos = 0;
	ssize_t len;
	mt_collect_t c = { .pidfd = -1, .statfd = -1, .ring_fd = -1, .watched = 1 };
	mt_ring_hdr_t *h;
	FILE *f;

	while ((opt = getopt(argc, argv, "n:l:w:cf")) != -1) {
		switch (opt) {
		case 'n': max = strtoull(optarg, NULL, 10); break;
		case 'l': level = atoi(optarg); break;
		case 'w': workers = atoi(optarg); break;
		case 'c': check = 1; break;
		case 'f': discard = 1; break;
		default: die("usage: mt-bench-collect [-n EVENTS] [-l LEVEL] [-w WORKERS] [-c] [-f] TRACE OUT");
		}
	}
	if (discard && !(scratch = malloc(SCRATCH)))
		die("out of memory");
	if (argc - optind != 2)
		die("usage: mt-bench-collect [-n EVENTS] [-l LEVEL] [-w WORKERS] [-c] [-f] TRACE OUT");
	f = fopen(argv[optind], "r");
	if (!f)
		die("cannot open the trace");
	while (s.lines < max && (len = getline(&line, &cap, f)) > 0)
	{
		add_line(&s, line, (size_t)len);
		bytes += (uint64_t)len;
	}
	fclose(f);

	h = aligned_alloc(4096, MT_RING_HDR_SIZE + (size_t)RING_SLOTS * MT_RING_SLOT);
	if (!h)
		die("out of memory");
	memset(h, 0, MT_RING_HDR_SIZE + (size_t)RING_SLOTS * MT_RING_SLOT);
	h->magic = MT_RING_MAGIC;
	h->nslots = RING_SLOTS;
	h->t0 = T0;
	c.hdr = h;
	c.slots = (mt_ring_slot_t *)((char *)h + MT_RING_HDR_SIZE);
	c.program = getpid();
	/* A root name: an existing trace of ours is emptied, and anything
	 * but a regular file (/dev/null, a FIFO) is refused, never removed. */
	if (mt_out_open(&c.out, argv[optind + 1], 1, path, sizeof(path)) < 0)
		die("cannot open the output");
	if (mt_out_compressed(c.out) && mt_out_set_zstd(c.out, level, workers) < 0)
		die("zstd refuses that level or worker count");
	/* The replay outruns the drain by design: the workers from the
	 * start, as the collector has them once a program waits for room. */
	mt_out_start_workers(c.out);
	c.path = path;
	if (mt_collect_open(&c) < 0)
		die("cannot open the drain");
	for (st = MT_COLLECT_BUSY; st != MT_COLLECT_DONE;) {
		/* The program's side: whole records, as far as the ring has room. */
		while (pos < s.n) {
			unsigned n = MT_RING_NSLOTS(s.v[pos].word);

			if (head + n - atomic_load(&h->tail) > RING_SLOTS)
				break;
			for (unsigned i = n; i-- > 0;)
				memcpy(&c.slots[(head + i) & (RING_SLOTS - 1)], &s.v[pos + i],
				       MT_RING_SLOT);
			head += n;
			pos += n;
		}
		atomic_store(&h->head, head);
		if (pos == s.n)
			c.ended = 1;
		w0 = clock_ns(CLOCK_MONOTONIC);
		c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		while ((st = mt_collect_step(&c)) == MT_COLLECT_BUSY)
			;
		wall += clock_ns(CLOCK_MONOTONIC) - w0;
		cpu += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	w0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (mt_collect_close(&c) < 0)
		die(h->message);
	wall += clock_ns(CLOCK_MONOTONIC) - w0;
	cpu += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	printf("events %llu wall_ns %llu cpu_ns %llu bytes %llu\n",
	       (unsigned long long)h->collector_lines, (unsigned long long)wall,
	       (unsigned long long)cpu, (unsigned long long)h->collector_bytes);
	if (h->collector_lines != s.lines)
		die("the drain wrote another number of lines than the trace has");
	if (check && !discard) {
		char cmd[8400];

		/* The output, decoded (zstd -dcf passes a plain file through),
		 * against the trace's first lines: the same bytes, as many. */
		snprintf(cmd, sizeof(cmd),
			 "test \"$(zstd -dcf '%s' | wc -c)\" = %llu && "
			 "zstd -dcf '%s' | cmp -n %llu - '%s'",
			 path, (unsigned long long)bytes, path, (unsigned long long)bytes,
			 argv[optind]);
		if (system(cmd) != 0)
			die("the output is not the trace's lines");
	}
	free(scratch);
	free(s.v);
	free(line);
	free(h);
	return 0;
}
