/*
 * mt_collect: the collector's drain (mt_collect.h).  It must never write
 * a record that was not published whole, never write a line out of the
 * ring's order, and never keep the program waiting once it cannot write.
 */
#include "mt_collect.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/mt_event.h"
#include "../common/mt_fmt.h"
#include "../common/mt_jsonl.h"
#include "mt_batch.h"
#include "mt_lines.h"

/* Lines are written straight into mt_out's buffer, a window of this
 * many bytes asked for at a time. */
#define WINDOW (64u << 10)
#define FLUSH_NS 1000000000ull
/* How long an idle drain sleeps, and how often an exec's outcome is
 * looked for. */
#define IDLE_MS 1
#define EXEC_POLL_MS 10
/* The prefix every text record begins with, its seq to be replaced. */
#define TEXT_PREFIX "{\"v\":1,\"seq\":0,"
/* Slots read between two moves of the tail the writers see. */
#define PUBLISH_EVERY 1024

typedef struct mt_collect_drain {
	mt_collect_t *c;
	uint64_t mask, tail, published, publish_every, seq, last_t;
	/* The window in mt_out's buffer: lines from base to at are written,
	 * not yet handed over; room up to end. */
	char *base, *at, *end;
	int dirty, error;
	int open; /* mt_collect_open went through */
	/* mt_out takes entries (mt_batch.h), made into lines by its zstd
	 * workers, not lines. */
	int entries;
	/* The program waited, and workers_for is to be asked (1), or was
	 * (-1). */
	int want_workers;
	uint64_t last_flush;
	/* An exec's stop is written and waits for the outcome. */
	int exec_pending;
	uint64_t exec_seq, exec_last_t;
	char text[MT_RING_TEXT_MAX + 64];
	mt_lines_t lines;
	/* The program has ended: one more drain, then the end. */
	int gone;
	uint64_t last_exec_look;
	/* The program's start time in its /proc/PID/stat (program_gone). */
	uint64_t start_time;
	/* CPU time spent on this ring (a shared collector's). */
	uint64_t cpu_ns;
} drain_t;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

/* The collector's one message, which the program prints (mt_ring.h). */
static void say_error(drain_t *d, int err)
{
	if (d->error)
		return;
	d->error = err;
	snprintf(d->c->hdr->message, sizeof(d->c->hdr->message),
		 "cannot write the trace: %s; it keeps what was written, "
		 "tracing stops, the program runs on",
		 strerror(err));
}

/* Hand the window's lines to mt_out, and let go of the window (before
 * any other call of mt_out). */
static int put_batch(drain_t *d)
{
	if (d->base) {
		mt_out_put(d->c->out, (size_t)(d->at - d->base));
		d->base = d->at = d->end = NULL;
	}
	return d->error ? -d->error : 0;
}

static int flush(drain_t *d)
{
	int rc = put_batch(d);

	if (!rc && d->dirty) {
		rc = mt_out_flush(d->c->out);
		if (rc < 0)
			say_error(d, -rc);
	}
	d->dirty = 0;
	d->last_flush = now_ns();
	return rc;
}

/* Room for one line of at most len bytes (at most WINDOW), or NULL
 * once the trace cannot be written. */
static char *room(drain_t *d, size_t len)
{
	if (__builtin_expect((size_t)(d->end - d->at) < len, 0)) {
		char *p;
		int rc;

		put_batch(d);
		if (d->error)
			return NULL;
		rc = mt_out_room(d->c->out, WINDOW, &p);
		if (rc < 0) {
			say_error(d, -rc);
			return NULL;
		}
		d->base = d->at = p;
		d->end = p + WINDOW;
	}
	d->dirty = 1;
	return d->at;
}

/* t of a line: since t0, rounded down to a microsecond (format.md 2.1),
 * never before the line before. */
static uint64_t line_t(drain_t *d, uint64_t t)
{
	uint64_t t0 = d->c->hdr->t0;

	t = t > t0 ? (t - t0) / 1000 * 1000 : 0;
	if (t < d->last_t)
		t = d->last_t;
	d->last_t = t;
	return t;
}

/* Room for a line of len bytes: in the window, or (entries) in a text
 * entry's; line_put(d, len) then takes the line written there. */
static char *line_room(drain_t *d, size_t len)
{
	char *p;

	if (!d->entries)
		return room(d, len);
	p = room(d, mt_batch_text_size(len));
	return p ? p + MT_BATCH_HEAD : NULL;
}

static void line_put(drain_t *d, size_t len)
{
	d->at += d->entries ? mt_batch_text(d->at, len) : len;
}

static void write_block(drain_t *d, const mt_ring_block_t *b, uint64_t w)
{
	char *dst;
	size_t n;

	if (d->entries) {
		uint64_t t = line_t(d, b->t);

		/* A kind without a line was never published by the preload:
		 * no seq taken. */
		if (!mt_lines_has_line(w) || !(dst = room(d, MT_BATCH_BLOCK)))
			return;
		mt_batch_block(dst, ++d->seq, b, w, t);
		d->at += MT_BATCH_BLOCK;
		return;
	}
	dst = room(d, MT_LINES_MAX);
	if (!dst)
		return;
	/* The lines ahead are new cache lines: ask for them now, not at
	 * their first store. */
	__builtin_prefetch(dst + 512, 1);
	/* 0: not a block, never published by the preload: no seq taken. */
	n = mt_lines_block(&d->lines, dst, d->seq + 1, b, w, line_t(d, b->t));
	d->seq += n != 0;
	d->at += n;
}

/* A text record's line, its seq put in. */
static void write_text(drain_t *d, uint64_t pos, uint64_t w)
{
	unsigned n = MT_RING_NSLOTS(w);
	size_t len = MT_RING_VALUE(w), pre = sizeof(TEXT_PREFIX) - 1, k;
	char num[MT_FMT_U64_MAX], *dst;

	if (len > MT_RING_TEXT_MAX || len < pre)
		return;
	for (unsigned i = 0; i < n; i++) {
		const mt_ring_slot_t *s = &d->c->slots[(pos + i) & d->mask];
		size_t off = (size_t)i * MT_RING_PAYLOAD;
		size_t part = len - off < MT_RING_PAYLOAD ? len - off : MT_RING_PAYLOAD;

		memcpy(d->text + off, s->payload, part);
	}
	if (memcmp(d->text, TEXT_PREFIX, pre))
		return;
	k = mt_fmt_u64(num, d->seq + 1);
	dst = line_room(d, len + k);
	if (!dst)
		return;
	d->seq++;
	memcpy(dst, "{\"v\":1,\"seq\":", 13);
	memcpy(dst + 13, num, k);
	memcpy(dst + 13 + k, d->text + pre - 1, len - pre + 1);
	line_put(d, 13 + k + len - pre + 1);
}

static const char *const reasons[] = { "exit", "exec", "signal", "api" };

static void write_stop(drain_t *d, const mt_ring_stop_t *s, uint64_t w)
{
	unsigned r = MT_RING_ARG_A(w);
	char line[256], *dst;
	mt_jsonl_t l;
	size_t len;

	mt_jsonl_begin(&l, line, sizeof(line), ++d->seq, "trace.stop");
	if (r < sizeof(reasons) / sizeof(reasons[0]))
		mt_jsonl_str(&l, "reason", reasons[r], strlen(reasons[r]), 0);
	mt_jsonl_u64(&l, "dropped", s->dropped);
	mt_jsonl_u64(&l, "t", line_t(d, s->t));
	len = mt_jsonl_end(&l);
	dst = line_room(d, len);
	if (!dst)
		return;
	memcpy(dst, line, len);
	line_put(d, len);
}

/* Tell the writers how far the collector has read, and wake those
 * waiting for room. */
static void publish_tail(drain_t *d)
{
	mt_ring_hdr_t *h = d->c->hdr;

	if (d->published == d->tail)
		return;
	d->published = d->tail;
	atomic_store_explicit(&h->tail, d->tail, memory_order_release);
	if (atomic_load(&h->waiters)) {
		atomic_fetch_add(&h->tail_moves, 1);
		wake(&h->tail_moves);
		/* The program outruns the drain: the zstd workers take the
		 * CPU time it leaves as it waits (mt_out.h; once). */
		mt_out_start_workers(d->c->out);
		if (d->c->workers_for && !d->want_workers)
			d->want_workers = 1; /* between two drains: step() */
	}
}

/* Let go of slots [tail, tail + n): zero their words, move tail.  The
 * writers see it in steps of PUBLISH_EVERY slots (or when the drain
 * pauses): a store to the line they read, and a wake-up when they wait,
 * per record would cost more than the record. */
static void consume(drain_t *d, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		atomic_store_explicit(&d->c->slots[(d->tail + i) & d->mask].word, 0,
				      memory_order_relaxed);
	d->tail += n;
	if (d->tail - d->published >= d->publish_every)
		publish_tail(d);
}

static void ack(drain_t *d)
{
	mt_ring_hdr_t *h = d->c->hdr;

	publish_tail(d);
	atomic_store(&h->acked, d->tail);
	atomic_fetch_add(&h->acks, 1);
	wake(&h->acks);
}

enum { GOT_NONE, GOT_SOME, GOT_END };

/* An exec's stop is written: when an UNSTOP is published among the
 * records after it (other threads' may come first), the exec failed:
 * cut the stop off and go on.  Returns 1 then. */
static int unstop_ahead(drain_t *d)
{
	uint64_t head = atomic_load(&d->c->hdr->head);
	int rc;

	for (uint64_t p = d->tail; p < head;) {
		uint64_t w = atomic_load_explicit(&d->c->slots[p & d->mask].word,
						  memory_order_acquire);

		if (!w || MT_RING_TYPE(w) == MT_REC_CONT || !MT_RING_NSLOTS(w))
			return 0;
		if (MT_RING_TYPE(w) == MT_REC_UNSTOP)
			break;
		p += MT_RING_NSLOTS(w);
		if (p >= head)
			return 0;
	}
	if (d->tail >= head)
		return 0;
	put_batch(d);
	rc = mt_out_rewind(d->c->out);
	if (rc < 0)
		say_error(d, -rc);
	d->seq = d->exec_seq;
	d->last_t = d->exec_last_t;
	d->exec_pending = 0;
	return 1;
}

/*
 * Read the records published at tail, up to max of them.  gone: the
 * program has ended, so what is not published now never will be, and a
 * slot that begins no published record is stepped over.
 */
static int drain_some(drain_t *d, int max, int gone)
{
	mt_ring_hdr_t *h = d->c->hdr;
	int got = GOT_NONE;

	while (max-- > 0) {
		uint64_t w = atomic_load_explicit(&d->c->slots[d->tail & d->mask].word,
						  memory_order_acquire);
		unsigned type = MT_RING_TYPE(w), n = MT_RING_NSLOTS(w);

		if (gone && d->tail >= atomic_load(&h->head))
			return got;
		if (!w || type == MT_REC_CONT || !n) {
			if (!gone)
				return got;
			consume(d, 1);
			continue;
		}
		if (d->exec_pending && !unstop_ahead(d)) {
			/* Events after an exec's stop wait for its outcome:
			 * dropped when it succeeds, written after the stop
			 * is taken back when it fails. */
			return got;
		}
		got = GOT_SOME;
		switch (type) {
		case MT_REC_BLOCK:
			write_block(d, (const mt_ring_block_t *)&d->c->slots[d->tail & d->mask], w);
			break;
		case MT_REC_TEXT:
			write_text(d, d->tail, w);
			break;
		case MT_REC_STOP:
			if (MT_RING_ARG_A(w) == MT_STOP_EXEC) {
				put_batch(d);
				if (!d->error && mt_out_mark(d->c->out) < 0)
					say_error(d, EIO);
				d->exec_seq = d->seq;
				d->exec_last_t = d->last_t;
				write_stop(d, (const mt_ring_stop_t *)&d->c->slots[d->tail & d->mask], w);
				d->dirty = 1;
				flush(d);
				d->exec_pending = 1;
				/* The first look at the program's maps waits a
				 * poll: a traced image registers well within it
				 * (c->replaced), and reading the maps of a
				 * program that has not yet made its exec costs
				 * more CPU than the trace it ends. */
				d->last_exec_look = now_ns();
				consume(d, n);
				ack(d);
				return d->error ? GOT_END : got;
			}
			write_stop(d, (const mt_ring_stop_t *)&d->c->slots[d->tail & d->mask], w);
			consume(d, n);
			return GOT_END;
		case MT_REC_UNSTOP:
			consume(d, n);
			ack(d);
			continue;
		default:
			break;
		}
		consume(d, n);
		if (d->error)
			return GOT_END;
	}
	return got;
}

static int drain(drain_t *d, int max, int gone)
{
	int got = drain_some(d, max, gone);

	publish_tail(d);
	return got;
}

/*
 * Whether the process of /proc/PID/stat (held open) has ended: its reads
 * fail once it is reaped; before that it is a zombie whose thread count is
 * down to the leader's (a leader that left by pthread_exit is a zombie too,
 * its other threads running on).  start, the start time first read, tells
 * a pid taken again should the file not hold on to its process.
 */
static int stat_gone(int fd, uint64_t *start)
{
	char buf[1024], *p, state;
	unsigned long long threads, started;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return n < 0 && errno == ESRCH;
	buf[n] = '\0';
	/* The name may hold anything: the fields begin after its last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			 "%*s %*s %*s %*s %*s %llu %*s %llu", &state, &threads,
			 &started) != 3)
		return 0;
	if (!*start)
		*start = started;
	if (started != *start)
		return 1;
	return (state == 'Z' || state == 'X') && threads <= 1;
}

/* Whether the program has ended: its pidfd is readable, or (without
 * one) its /proc entry says so, or (without /proc) it is no more. */
static int program_gone(mt_collect_t *c, uint64_t *start)
{
	if (c->watched)
		return c->ended;
	if (c->pidfd >= 0) {
		struct pollfd p = { .fd = c->pidfd, .events = POLLIN };

		return poll(&p, 1, 0) > 0;
	}
	if (c->statfd >= 0)
		return stat_gone(c->statfd, start);
	return kill(c->program, 0) < 0 && errno == ESRCH;
}

/* Sleep up to IDLE_MS, or until a writer finds the ring full and rings
 * the doorbell; not at all when a record was published meanwhile (the
 * writer may have seen sleeping 0) or writers wait for room. */
static void nap(drain_t *d)
{
	mt_ring_hdr_t *h = d->c->hdr;
	uint32_t bell = atomic_load(&h->doorbell);
	struct timespec ts = { 0, IDLE_MS * 1000000L };

	atomic_store(&h->sleeping, 1);
	if (!atomic_load_explicit(&d->c->slots[d->tail & d->mask].word,
				  memory_order_acquire) &&
	    !atomic_load(&h->waiters))
		syscall(SYS_futex, &h->doorbell, FUTEX_WAIT, bell, &ts, NULL, 0);
	atomic_store(&h->sleeping, 0);
}

/* Whether the program still maps the ring: once an exec has replaced
 * its image, it does not.  1 when it cannot be told (no /proc): the
 * collector then waits for the process's end. */
static int ring_still_mapped(mt_collect_t *c)
{
	char path[64], line[512];
	struct stat st;
	FILE *f;
	int found = 0;

	if (fstat(c->ring_fd, &st) < 0)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)c->program);
	f = fopen(path, "re");
	if (!f)
		return 1;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long ino;
		char *memfd = strstr(line, "/memfd:memtrace-ring");

		if (memfd && sscanf(line, "%*s %*s %*s %*s %llu", &ino) == 1 &&
		    ino == (unsigned long long)st.st_ino)
			found = 1;
	}
	fclose(f);
	return found;
}

int mt_collect_open(mt_collect_t *c)
{
	mt_ring_hdr_t *h = c->hdr;
	drain_t *d = calloc(1, sizeof(*d));

	c->drain = d;
	if (!d) {
		snprintf(h->message, sizeof(h->message), "cannot write the trace: %s",
			 strerror(ENOMEM));
		return -ENOMEM;
	}
	d->c = c;
	d->open = 1;
	/* With zstd workers, they make the block lines (mt_batch.h); where
	 * the expander cannot be set, the drain makes them itself. */
	d->entries = mt_out_set_expander(c->out, &mt_batch_expander) == 0;
	mt_lines_init(&d->lines);
	d->mask = h->nslots - 1;
	d->publish_every = h->nslots / 4 < PUBLISH_EVERY ? h->nslots / 4 : PUBLISH_EVERY;
	d->tail = d->published = atomic_load(&h->tail);
	d->last_flush = now_ns();
	return 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The program waits for room in a trace that has no zstd workers: give
 * it those the caller allows (mt_collect_t's workers_for), after a flush,
 * so that the lines before are a frame of the drain's and the workers
 * make every frame after.  Asked once; nothing changes when it allows
 * none or the pool cannot be made. */
static void add_workers(drain_t *d)
{
	mt_out_t *out = d->c->out;
	int n;

	d->want_workers = -1;
	if (!mt_out_compressed(out))
		return;
	n = d->c->workers_for();
	if (n <= 0 || flush(d) < 0 || mt_out_set_zstd(out, MT_OUT_LEVEL, n) < 0)
		return;
	d->entries = mt_out_set_expander(out, &mt_batch_expander) == 0;
	mt_out_start_workers(out);
}

static int step(drain_t *d)
{
	mt_collect_t *c = d->c;
	int got;

	if (__builtin_expect(d->want_workers > 0, 0))
		add_workers(d);
	got = drain(d, 4096, d->gone);

	if (got == GOT_END || d->error)
		return MT_COLLECT_DONE;
	if (d->dirty && now_ns() - d->last_flush >= FLUSH_NS)
		flush(d);
	if (got == GOT_SOME)
		return MT_COLLECT_BUSY;
	if (d->gone)
		return MT_COLLECT_DONE; /* everything published is written */
	if (program_gone(c, &d->start_time)) {
		d->gone = 1; /* one more drain, stepping over what is half made */
		return MT_COLLECT_BUSY;
	}
	if (d->exec_pending && c->replaced)
		return MT_COLLECT_DONE; /* the exec succeeded: its image registered */
	if (d->exec_pending && now_ns() - d->last_exec_look > EXEC_POLL_MS * 1000000ull) {
		d->last_exec_look = now_ns();
		if (!ring_still_mapped(c))
			return MT_COLLECT_DONE; /* the exec succeeded: the trace ends with its stop */
	}
	return MT_COLLECT_IDLE;
}

int mt_collect_step(mt_collect_t *c)
{
	drain_t *d = c->drain;
	uint64_t cpu;
	int rc;

	if (!d || !d->open)
		return MT_COLLECT_DONE;
	/* Only a shared collector's ring whose program prints the account
	 * is timed, and one with nothing to read costs no system call: a
	 * shared collector looks at every ring it serves each time it
	 * wakes. */
	if (!c->shared || !c->timed ||
	    (!atomic_load_explicit(&c->slots[d->tail & d->mask].word, memory_order_acquire) &&
	     !d->gone && !d->exec_pending && !d->dirty && !program_gone(c, &d->start_time)))
		return step(d);
	cpu = thread_cpu_ns();
	rc = step(d);
	d->cpu_ns += thread_cpu_ns() - cpu;
	return rc;
}

int mt_collect_wait_ms(mt_collect_t *c)
{
	drain_t *d = c->drain;
	uint64_t now, ms = FLUSH_NS / 1000000;

	if (!d || !d->open || d->gone || c->ended)
		return 0;
	if (!c->watched)
		return IDLE_MS; /* its end is known only by looking */
	now = now_ns();
	if (d->dirty) {
		uint64_t due = d->last_flush + FLUSH_NS;

		ms = due > now ? (due - now) / 1000000 + 1 : 0;
	}
	if (d->exec_pending) {
		uint64_t due = d->last_exec_look + EXEC_POLL_MS * 1000000ull, e;

		e = due > now ? (due - now) / 1000000 + 1 : 0;
		if (e < ms)
			ms = e;
	}
	return (int)ms;
}

void mt_collect_nap(mt_collect_t *c)
{
	if (c->drain && c->drain->open)
		nap(c->drain);
}

int mt_collect_close(mt_collect_t *c)
{
	mt_ring_hdr_t *h = c->hdr;
	drain_t *d = c->drain;
	uint64_t out_length, cpu = c->shared && c->timed ? thread_cpu_ns() : 0;
	int rc = -ENOMEM;

	if (d && d->open) {
		if (!d->error)
			flush(d);
		rc = d->error ? -d->error : 0;
	}
	out_length = mt_out_length(c->out);
	h->collector_workers = mt_out_workers_started(c->out);
	{
		int crc = mt_out_close(c->out);

		if (crc < 0 && !rc && d) {
			say_error(d, -crc);
			rc = crc;
		}
	}
	/* A program killed before its first record was in the ring (while
	 * its collector started) recorded nothing: an empty file would be
	 * an invalid trace of a process that finished nothing, so the file
	 * this collector made goes. */
	if (!rc && d && !d->seq && !out_length && c->made && c->path)
		unlink(c->path);
	if (c->shared) {
		/* One process serves many rings: each is charged the time
		 * spent on it, when its program will print it. */
		h->collector_cpu_ns = c->timed ? (d ? d->cpu_ns : 0) + thread_cpu_ns() - cpu : 0;
	} else {
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru) == 0)
			h->collector_cpu_ns =
				((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
					1000000000ull +
				((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000;
	}
	h->collector_lines = d ? d->seq : 0;
	h->collector_bytes = out_length;
	atomic_store(&h->state, MT_RING_DONE);
	wake(&h->state);
	/* Nothing more will be read: no exec may wait for it. */
	atomic_store(&h->acked, UINT64_MAX);
	atomic_fetch_add(&h->acks, 1);
	wake(&h->acks);
	free(d);
	c->drain = NULL;
	return rc;
}

int mt_collect_run(mt_collect_t *c)
{
	int st;

	if (mt_collect_open(c) == 0)
		while ((st = mt_collect_step(c)) != MT_COLLECT_DONE)
			if (st == MT_COLLECT_IDLE)
				mt_collect_nap(c);
	return mt_collect_close(c);
}
