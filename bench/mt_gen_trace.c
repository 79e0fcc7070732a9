/*
 * mt-gen-trace: writes a synthetic memtrace JSONL trace (format.md section 2)
 * shaped like the preload's output, for the analyzer benchmark.
 *
 *   mt-gen-trace [-n EVENTS] [-l LIVE] [-t THREADS] [-s SEED]
 *                [-f FRAMES] [-k STACKS] [-u] [-g] [-o FILE]
 *
 * EVENTS counts every line, trace.start and trace.stop included, so the
 * summary's "events" is EVENTS.  The trace is trace.start, allocator 0,
 * FRAMES frame events, STACKS stack events, then a mix of alloc, free,
 * resize, remap and alloc.fail with tid and t, and trace.stop.  At most
 * LIVE blocks are live at once; seq is contiguous.  The same options give
 * the same bytes: all randomness comes from one seeded generator.
 *
 * It must stay fast (a 10-million-event trace in a few seconds), so it
 * formats into one large buffer with mt_fmt and writes it with write(2).
 * Its memory is proportional to LIVE, FRAMES and STACKS, never to EVENTS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/mt_fmt.h"

#define OUT_CAP (1u << 20)
#define LINE_MAX_BYTES 1024 /* longest line written, with room to spare */

/* ---- output ---- */

static char out_buf[OUT_CAP];
static size_t out_len;
static int out_fd = 1;

static void flush_out(void)
{
	size_t done = 0;

	while (done < out_len) {
		ssize_t n = write(out_fd, out_buf + done, out_len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("mt-gen-trace: write");
			exit(1);
		}
		done += (size_t)n;
	}
	out_len = 0;
}

/* Every line starts here: room for one whole line is guaranteed. */
static char *line_begin(void)
{
	if (OUT_CAP - out_len < LINE_MAX_BYTES)
		flush_out();
	return out_buf + out_len;
}

static void line_end(char *p)
{
	*p++ = '\n';
	out_len = (size_t)(p - out_buf);
}

static char *put(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* The literal's length is known at compile time: a plain memcpy. */
#define PUT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

static char *put_u64(char *p, uint64_t v)
{
	return p + mt_fmt_u64(p, v);
}

static char *put_hex_str(char *p, uint64_t v)
{
	*p++ = '"';
	p += mt_fmt_hex(p, v);
	*p++ = '"';
	return p;
}

/* {"v":1,"seq":N,"kind":"KIND" */
static char *head(char *p, uint64_t seq, const char *kind)
{
	p = PUT(p, "{\"v\":1,\"seq\":");
	p = put_u64(p, seq);
	p = PUT(p, ",\"kind\":\"");
	p = put(p, kind);
	*p++ = '"';
	return p;
}

/* ---- randomness: splitmix64, deterministic and fast ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the bias of a 64-bit modulo is negligible). */
static uint64_t below(uint64_t n)
{
	return rnd() % n;
}

/* ---- the simulated heap ---- */

typedef struct {
	uint64_t ptr;
	uint64_t size;
} block_t;

typedef struct {
	block_t *live;      /* live blocks, roughly oldest first */
	size_t nlive, max_live;
	uint64_t *spare;    /* freed addresses, reused first like a tcache */
	size_t nspare;
	uint64_t next_addr; /* the arena's bump pointer */
} heap_t;

static uint64_t block_size(void)
{
	uint64_t r = below(1000);

	/* Most allocations are small, some medium, a few large. */
	if (r < 700)
		return 8 + 8 * below(16);
	if (r < 950)
		return 136 + below(3960);
	if (r < 998)
		return 4096 + below(60 * 1024);
	return 65536 + below(4u << 20);
}

static uint64_t new_address(heap_t *h, uint64_t size)
{
	if (h->nspare && below(4) != 0) {
		size_t i = h->nspare - 1 - (size_t)below(h->nspare < 8 ? h->nspare : 8);
		uint64_t a = h->spare[i];

		h->spare[i] = h->spare[--h->nspare];
		return a;
	}
	{
		uint64_t a = h->next_addr;

		h->next_addr += ((size + 15) & ~(uint64_t)15) + 16;
		return a;
	}
}

/*
 * The live block a free or a realloc takes.  Most blocks die young and a few
 * live long: a quarter of the frees take the newest block (the temporaries
 * heaptrack counts), the others a block whose age, counted in live blocks
 * back from the newest, is about log-uniform: 1 to 2 as likely as 1000 to
 * 2000.  The live array keeps allocation order only roughly (a removal
 * moves the last block into the hole), which is close enough here.  With
 * uniform set every live block is as likely: the worst case for the
 * analyzer's caches.
 */
static size_t pick_victim(const heap_t *h, int uniform)
{
	uint64_t bits, age;

	if (uniform)
		return (size_t)below(h->nlive);
	if (below(4) == 0)
		return h->nlive - 1;
	bits = below((uint64_t)(64 - __builtin_clzll(h->nlive)) + 1);
	age = bits ? rnd() >> (64 - bits) : 0;
	if (age >= h->nlive)
		age = below(h->nlive);
	return h->nlive - 1 - (size_t)age;
}

static void release_address(heap_t *h, uint64_t a)
{
	/* Addresses beyond the spare list's room are simply never reused. */
	if (h->nspare < h->max_live)
		h->spare[h->nspare++] = a;
}

/* ---- the trace ---- */

typedef struct {
	uint64_t events, max_live, threads, seed, frames, stacks;
	int uniform;
	int fill; /* allocate until LIVE blocks are live, then mix */
	const char *output;
} opts_t;

static const char *const modules[] = {
	"/usr/bin/app",
	"/usr/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.32",
	"/usr/lib/x86_64-linux-gnu/libz.so.1.3",
	"/usr/lib/app/plugins/libparser.so",
};
#define NMODULES (sizeof(modules) / sizeof(modules[0]))

static const char *const words[] = {
	"parse", "config", "buffer", "alloc", "node", "tree", "insert",
	"string", "append", "vector", "grow", "hash", "table", "resize",
	"read", "line", "token", "json", "object", "list", "push", "map",
	"entry", "cache", "load", "file", "path", "make", "copy", "init",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

static void write_frame(uint64_t seq, uint64_t id)
{
	char *p = line_begin();
	uint64_t m = below(NMODULES);
	uint64_t base = 0x55d0c1a00000ull + (m << 28);
	uint64_t moff = 0x1000 + below(0x400000);

	p = head(p, seq, "frame");
	p = PUT(p, ",\"frame_id\":");
	p = put_u64(p, id);
	p = PUT(p, ",\"ip\":");
	p = put_hex_str(p, base + moff);
	p = PUT(p, ",\"symbol\":\"");
	p = put(p, words[below(NWORDS)]);
	*p++ = '_';
	p = put(p, words[below(NWORDS)]);
	*p++ = '_';
	p = put_u64(p, id);
	p = PUT(p, "\",\"offset\":");
	p = put_hex_str(p, below(0x400));
	p = PUT(p, ",\"module\":\"");
	p = put(p, modules[m]);
	p = PUT(p, "\",\"module_offset\":");
	p = put_hex_str(p, moff);
	*p++ = '}';
	line_end(p);
}

static void write_stack(uint64_t seq, uint64_t id, uint64_t nframes)
{
	char *p = line_begin();
	uint64_t depth = 3 + below(14);

	p = head(p, seq, "stack");
	p = PUT(p, ",\"stack_id\":");
	p = put_u64(p, id);
	p = PUT(p, ",\"frames\":[");
	for (uint64_t i = 0; i < depth; i++) {
		if (i)
			*p++ = ',';
		p = put_u64(p, 1 + below(nframes));
	}
	p = PUT(p, "]}");
	line_end(p);
}

/* Hot sites are common: the product of two uniforms skews toward 1. */
static uint64_t pick_stack(uint64_t nstacks)
{
	return 1 + below(nstacks) * below(nstacks) / nstacks;
}

typedef struct {
	uint64_t tid, t;
} when_t;

static char *tail(char *p, uint64_t stack, const when_t *c)
{
	if (stack) {
		p = PUT(p, ",\"stack\":");
		p = put_u64(p, stack);
	}
	p = PUT(p, ",\"tid\":");
	p = put_u64(p, c->tid);
	p = PUT(p, ",\"t\":");
	p = put_u64(p, c->t);
	*p++ = '}';
	return p;
}

static void write_alloc(uint64_t seq, const block_t *b, uint64_t stack,
			const when_t *c)
{
	static const char *const fns[] = { "malloc", "calloc", "realloc",
					   "posix_memalign", "aligned_alloc" };
	uint64_t r = below(100);
	int fn = r < 80 ? 0 : r < 92 ? 1 : r < 97 ? 2 : r < 99 ? 3 : 4;
	char *p = line_begin();

	p = head(p, seq, "alloc");
	p = PUT(p, ",\"allocator_id\":0,\"ptr\":");
	p = put_hex_str(p, b->ptr);
	p = PUT(p, ",\"size\":");
	p = put_u64(p, b->size);
	p = PUT(p, ",\"fn\":\"");
	p = put(p, fns[fn]);
	*p++ = '"';
	if (fn >= 3)
		p = PUT(p, ",\"align\":64");
	line_end(tail(p, stack, c));
}

static void write_free(uint64_t seq, uint64_t ptr, const when_t *c)
{
	char *p = line_begin();

	p = head(p, seq, "free");
	p = PUT(p, ",\"allocator_id\":0,\"ptr\":");
	p = put_hex_str(p, ptr);
	p = PUT(p, ",\"fn\":\"free\"");
	line_end(tail(p, 0, c));
}

static void write_resize(uint64_t seq, uint64_t old_ptr, const block_t *b,
			 uint64_t stack, const when_t *c)
{
	char *p = line_begin();
	int moved = old_ptr != b->ptr;

	p = head(p, seq, moved ? "remap" : "resize");
	p = PUT(p, ",\"allocator_id\":0,\"ptr\":");
	p = put_hex_str(p, old_ptr);
	if (moved) {
		p = PUT(p, ",\"new_ptr\":");
		p = put_hex_str(p, b->ptr);
	}
	p = PUT(p, ",\"size\":");
	p = put_u64(p, b->size);
	p = PUT(p, ",\"fn\":\"realloc\"");
	line_end(tail(p, stack, c));
}

static void write_fail(uint64_t seq, uint64_t size, uint64_t stack,
		       const when_t *c)
{
	char *p = line_begin();

	p = head(p, seq, "alloc.fail");
	p = PUT(p, ",\"allocator_id\":0,\"size\":");
	p = put_u64(p, size);
	p = PUT(p, ",\"fn\":\"malloc\"");
	line_end(tail(p, stack, c));
}

static void generate(const opts_t *o)
{
	heap_t h = { 0 };
	when_t c = { 0, 0 };
	uint64_t seq = 0, nframes = o->frames, nstacks = o->stacks;
	uint64_t base_tid = 4242, thread = 0, heap_events;
	char *p;

	/* Small traces keep room for heap events: the tables shrink. */
	if (o->events < 3) {
		fprintf(stderr, "mt-gen-trace: -n must be at least 3\n");
		exit(64);
	}
	if (nframes > (o->events - 3) / 4)
		nframes = (o->events - 3) / 4;
	if (nstacks > (o->events - 3) / 4)
		nstacks = (o->events - 3) / 4;
	if (!nframes || !nstacks)
		nframes = nstacks = 0;
	heap_events = o->events - 3 - nframes - nstacks;

	h.max_live = o->max_live;
	h.live = malloc((o->max_live ? o->max_live : 1) * sizeof(block_t));
	h.spare = malloc((o->max_live ? o->max_live : 1) * sizeof(uint64_t));
	if (!h.live || !h.spare) {
		fprintf(stderr, "mt-gen-trace: out of memory\n");
		exit(4);
	}
	h.next_addr = 0x7f3a5c001230ull & ~(uint64_t)15;

	p = line_begin();
	p = head(p, ++seq, "trace.start");
	p = PUT(p, ",\"pid\":4242,\"ppid\":4200,\"exe\":\"/usr/bin/app\","
		   "\"argv\":[\"app\",\"--bench\"],\"time_ns\":1764685200000000000,"
		   "\"tool_version\":\"0.1.0\",\"stack_depth\":32}");
	line_end(p);
	p = line_begin();
	p = head(p, ++seq, "allocator");
	p = PUT(p, ",\"allocator_id\":0,\"name\":\"libc\"}");
	line_end(p);
	for (uint64_t i = 1; i <= nframes; i++)
		write_frame(++seq, i);
	for (uint64_t i = 1; i <= nstacks; i++)
		write_stack(++seq, i, nframes);

	for (uint64_t e = 0; e < heap_events; e++) {
		uint64_t r = below(1000);
		uint64_t stack = nstacks ? pick_stack(nstacks) : 0;

		/* A thread runs for a while before another one does. */
		if (o->threads > 1 && below(16) == 0)
			thread = below(o->threads);
		c.tid = base_tid + thread;
		c.t += 40 + below(400);

		/* alloc 48%, free 42%, resize 4%, remap 5%, alloc.fail 1%:
		 * the live set grows to its bound and stays there. */
		if (r < 10) {
			write_fail(++seq, 1ull << 40, stack, &c);
		} else if ((r < 490 && h.nlive < h.max_live) || !h.nlive ||
			   (o->fill && h.nlive < h.max_live)) {
			block_t *b = &h.live[h.nlive++];

			b->size = block_size();
			b->ptr = new_address(&h, b->size);
			write_alloc(++seq, b, stack, &c);
		} else if (r < 910) {
			size_t i = pick_victim(&h, o->uniform);
			uint64_t ptr = h.live[i].ptr;

			h.live[i] = h.live[--h.nlive];
			release_address(&h, ptr);
			write_free(++seq, ptr, &c);
		} else {
			size_t i = pick_victim(&h, o->uniform);
			block_t *b = &h.live[i];
			uint64_t old = b->ptr;
			uint64_t size = block_size();

			if (r < 950 && size <= b->size) {
				b->size = size; /* shrinks in place */
			} else {
				b->size = size;
				b->ptr = new_address(&h, size);
				release_address(&h, old);
			}
			write_resize(++seq, old, b, stack, &c);
		}
	}

	p = line_begin();
	p = head(p, ++seq, "trace.stop");
	p = PUT(p, ",\"reason\":\"exit\",\"dropped\":0,\"t\":");
	p = put_u64(p, c.t + 1000);
	*p++ = '}';
	line_end(p);
	flush_out();
	free(h.live);
	free(h.spare);
}

static int parse_opt(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	/* 10M, 100k: the sizes benchmarks talk in. */
	if (*end == 'k' || *end == 'K') {
		v *= 1000;
		end++;
	} else if (*end == 'M') {
		v *= 1000000;
		end++;
	}
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static void usage(void)
{
	fputs("usage: mt-gen-trace [-n EVENTS] [-l LIVE] [-t THREADS] [-s SEED]\n"
	      "                    [-f FRAMES] [-k STACKS] [-u] [-g] [-o FILE]\n"
	      "\n"
	      "  -n EVENTS   lines in the trace, start and stop included (default 10M)\n"
	      "  -l LIVE     most blocks live at once (default 100k)\n"
	      "  -t THREADS  distinct tids (default 8)\n"
	      "  -s SEED     seed of the generator (default 1)\n"
	      "  -f FRAMES   frame events (default 4000)\n"
	      "  -k STACKS   stack events (default 3000)\n"
	      "  -u          frees and reallocs take any live block alike, not\n"
	      "              mostly young ones: the analyzer's worst case\n"
	      "  -g          every block event allocates until LIVE blocks are\n"
	      "              live: a live set at its bound from the start\n"
	      "  -o FILE     write to FILE instead of stdout\n",
	      stderr);
	exit(64);
}

int main(int argc, char **argv)
{
	opts_t o = { 10000000, 100000, 8, 1, 4000, 3000, 0, 0, NULL };
	int c;

	while ((c = getopt(argc, argv, "n:l:t:s:f:k:ugo:h")) != -1) {
		uint64_t *dst = NULL;

		switch (c) {
		case 'n': dst = &o.events; break;
		case 'l': dst = &o.max_live; break;
		case 't': dst = &o.threads; break;
		case 's': dst = &o.seed; break;
		case 'f': dst = &o.frames; break;
		case 'k': dst = &o.stacks; break;
		case 'u': o.uniform = 1; break;
		case 'g': o.fill = 1; break;
		case 'o': o.output = optarg; break;
		default: usage();
		}
		if (dst && parse_opt(optarg, dst))
			usage();
	}
	if (optind != argc || !o.max_live || !o.threads)
		usage();
	rng_state = o.seed;
	if (o.output) {
		out_fd = open(o.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			      0644);
		if (out_fd < 0) {
			fprintf(stderr, "mt-gen-trace: %s: %s\n", o.output,
				strerror(errno));
			return 1;
		}
	}
	generate(&o);
	if (o.output && close(out_fd)) {
		fprintf(stderr, "mt-gen-trace: %s: %s\n", o.output,
			strerror(errno));
		return 1;
	}
	return 0;
}
