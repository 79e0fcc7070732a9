/*
 * mt_stack: unwinding and frame/stack interning.  It must never call the
 * loader with the table lock held, and never allocate with malloc.
 */
#include "mt_stack.h"

#include "mt_clock.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "../common/mt_fmt.h"
#include "mt_layout.h"
#include "mt_prefault.h"
#include "mt_say.h"
#include "mt_spares.h"
#include "mt_table.h"
#include "mt_unwind_cache.h"

typedef struct {
	uint64_t id;
	uint32_t n;
	uint64_t ips[];
} stack_rec_t;

static mt_table_t frames; /* ip -> frame id */
static mt_table_t stacks; /* hash -> stack_rec_t * */
static mt_arena_t arena;
static uint64_t next_frame = 1, next_stack = 1;
static uint64_t self_lo, self_hi;
/* Starts at 1, so a thread's empty cache entries (generation 0) never
 * match.  Bumped when the tables are emptied: at a new trace and at an
 * unload (mt_stack_forget). */
static _Atomic uint64_t generation = 1;
/* Bumped only at a new trace. */
static _Atomic uint64_t trace_generation = 1;

#define TLS __thread __attribute__((tls_model("initial-exec")))

void mt_stack_init(uint64_t self_start, uint64_t self_end)
{
	self_lo = self_start;
	self_hi = self_end;
}

/*
 * No unwind may be under way when the process forks: libunwind keeps a
 * global lock of its own, and a child that inherits it held (a thread
 * was unwinding at the fork) deadlocks on its first allocation.  So each
 * unwind through libunwind counts itself in unwinding, unless a fork is
 * pending, and the fork's prepare handler waits for the count to drain
 * (the thread that forks may be unwinding itself, from a signal handler:
 * it does not wait for itself).  Sequentially consistent on both sides,
 * like Dekker's.  The fast walker takes no lock but the loader's, when
 * it reads a rule from .eh_frame the first time: only that read is
 * counted (mt_unwind_cache_init's enter and leave), not its walks: two
 * atomic operations a stack were a sixth of the churn's user time.
 *
 * The count is split into SHARDS counters, a cache line each, a thread
 * counting in its own (given round robin at its first unwind): every
 * event unwinds, and one shared counter moved its line between the cores
 * twice an event when two threads allocate at once.  The fork sums them.
 * Two threads that share a shard (past SHARDS threads) still count right,
 * only not apart.
 */
#define SHARDS 64

typedef struct {
	atomic_int n;
	/* Stacks the fast walker gave, and those it left to libunwind. */
	_Atomic uint64_t fast, slow;
} __attribute__((aligned(64))) shard_t;

/* Cold: a process's start records no event, and the first event's
 * fault here is one in the process's life. */
static shard_t unwinding[SHARDS] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(unwinding);
/* What makes new unwinds wait: a fork pending, or a thread unwinding
 * alone (below).  Written rarely: a line of its own, which every core
 * keeps. */
static struct {
	atomic_int forking;
	atomic_int alone;
} __attribute__((aligned(64))) gate;
static atomic_uint next_shard;
static TLS int self_unwinding;
static TLS int self_alone; /* this thread holds gate.alone */
static TLS unsigned self_shard; /* 1 + its index; 0: none yet */

static shard_t *own_shard(void)
{
	if (!self_shard)
		self_shard = 1 + atomic_fetch_add_explicit(&next_shard, 1,
							   memory_order_relaxed) %
					 SHARDS;
	return &unwinding[self_shard - 1];
}

static int unwinds_under_way(void)
{
	int sum = 0;

	for (int i = 0; i < SHARDS; i++)
		sum += atomic_load(&unwinding[i].n);
	return sum;
}

/* Whether a new unwind must wait: a fork pending, or another thread
 * unwinding alone.  Never one nested in an unwind this thread has under
 * way (from a signal handler, or the fast walker's rule read inside
 * libunwind's turn): that one is counted already, and the fork or the
 * thread alone waits for it, so it would wait for itself. */
static int gate_closed(void)
{
	return !self_unwinding &&
	       (atomic_load(&gate.forking) || (!self_alone && atomic_load(&gate.alone)));
}

/*
 * A thread that forbids RDTSC unwinds alone.  libunwind takes an adaptive
 * mutex of glibc's, whose back-off on contention reads RDTSC for its
 * jitter: two threads unwinding at once would kill such a thread.  So it
 * closes the gate (one such thread at a time), waits for the unwinds
 * under way to end, and unwinds with no other thread inside libunwind:
 * the mutex is never contended, and no spin runs.  Sequentially
 * consistent, like the fork's side: either it sees another thread's
 * count, or that thread sees the gate closed.  The waits yield the CPU
 * (a system call), never spin on the counter.
 */
static void take_alone(void)
{
	int open_ = 0;

	if (self_alone++)
		return;
	while (!atomic_compare_exchange_weak(&gate.alone, &open_, 1)) {
		open_ = 0;
		sched_yield();
	}
}

void mt_stack_unwind_enter(void)
{
	atomic_int *count = &own_shard()->n;
	int alone = mt_clock_thread_forbids_tsc();

	if (__builtin_expect(alone, 0))
		take_alone();
	for (;;) {
		while (gate_closed())
			sched_yield();
		atomic_fetch_add(count, 1);
		if (!gate_closed())
			break;
		atomic_fetch_sub(count, 1);
	}
	self_unwinding++;
	if (__builtin_expect(alone, 0))
		while (unwinds_under_way() > self_unwinding)
			sched_yield();
}

void mt_stack_unwind_leave(void)
{
	self_unwinding--;
	atomic_fetch_sub(&unwinding[self_shard - 1].n, 1);
	if (__builtin_expect(self_alone, 0) && !--self_alone)
		atomic_store(&gate.alone, 0);
}

void mt_stack_fork_prepare(void)
{
	atomic_store(&gate.forking, 1);
	while (unwinds_under_way() > self_unwinding)
		sched_yield();
}

void mt_stack_fork_parent(void)
{
	atomic_store(&gate.forking, 0);
}

static void cache_fork_child(void);

void mt_stack_fork_child(void)
{
	/* The other threads, and their unwinds, are gone.  Only a count
	 * that is not 0 is written: the shards' page is copied on the
	 * child's first write to it. */
	for (int i = 0; i < SHARDS; i++)
		if (atomic_load(&unwinding[i].n))
			atomic_store(&unwinding[i].n, 0);
	if (self_unwinding)
		atomic_store(&own_shard()->n, self_unwinding);
	/* Only this thread is left: the gate is its to hold or nobody's. */
	atomic_store(&gate.alone, self_alone ? 1 : 0);
	atomic_store(&gate.forking, 0);
	cache_fork_child();
	/* The tables came empty (mt_table.c): their mappings serve the
	 * child's own, which maps none anew. */
	mt_table_forked(&frames);
	mt_table_forked(&stacks);
	mt_arena_forked(&arena);
}

void mt_stack_as_unwind(void (*fn)(void *), void *arg)
{
	mt_stack_unwind_enter();
	fn(arg);
	mt_stack_unwind_leave();
}

_Atomic int mt_stack_unwinder = MT_UNWIND_LIBUNWIND;
static void (*unwind_stop)(void);
static atomic_int differed;

void mt_stack_set_unwinder(int unwinder, void (*on_stop)(void))
{
	unwind_stop = on_stop;
	mt_unwind_lib_init(mt_stack_unwind_enter, mt_stack_unwind_leave, on_stop);
	if (unwinder != MT_UNWIND_LIBUNWIND)
		mt_unwind_cache_init(mt_stack_unwind_enter, mt_stack_unwind_leave);
	atomic_store(&mt_stack_unwinder, unwinder);
}

/* Not inlined: the hooks' path keeps only the call. */
__attribute__((noinline)) mt_unwind_lib_backtrace_fn mt_stack_libunwind_open(void)
{
	if (mt_unwind_lib_open() < 0)
		return NULL;
	return atomic_load_explicit(&mt_unwind_lib_backtrace, memory_order_acquire);
}

/* One frame of a stack for the line: its address, or "none" past its
 * end. */
static size_t put_frame(char *dst, const uint64_t *ips, int n, int at)
{
	if (at >= n) {
		memcpy(dst, "none", 4);
		return 4;
	}
	return mt_fmt_hex(dst, ips[at]);
}

static void say_difference(const uint64_t *fast, int nf, const uint64_t *lib, int nl)
{
	char msg[160];
	size_t len;
	int at = 0;

	while (at < nf && at < nl && fast[at] == lib[at])
		at++;
	len = mt_fmt_u64(msg, (uint64_t)at);
	memcpy(msg + len, ": fast ", 7);
	len += 7;
	len += put_frame(msg + len, fast, nf, at);
	memcpy(msg + len, ", libunwind ", 12);
	len += 12;
	len += put_frame(msg + len, lib, nl, at);
	memcpy(msg + len, "; tracing stops", 16);
	mt_say_line("MEMTRACE_UNWIND=verify: the unwinders' stacks differ at frame ", msg,
		    NULL);
}

/*
 * The stacks each walker gave are counted in the thread's own variables
 * and added to its shard every FLUSH_EVERY, and when the thread ends: a
 * shard's page written on every stack was the page a shell copied first
 * after each child it forked.  The addition is a load and a store, no
 * locked instruction; two threads that share a shard may lose a count.
 */
#define FLUSH_EVERY 4096
static TLS uint32_t own_fast, own_slow;

static void flush_count(_Atomic uint64_t *c, uint32_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static void flush_counts(void)
{
	shard_t *sh;

	if (!own_fast && !own_slow)
		return;
	sh = own_shard();
	flush_count(&sh->fast, own_fast);
	flush_count(&sh->slow, own_slow);
	own_fast = own_slow = 0;
}

static inline void count(uint32_t *own)
{
	if (__builtin_expect(++*own == FLUSH_EVERY, 0))
		flush_counts();
}

int mt_stack_verify(const uint64_t *fast, int nf, const uint64_t *lib, int nl)
{
	if (nf == nl && !memcmp(fast, lib, (size_t)nf * sizeof(uint64_t)))
		return 0;
	if (!atomic_exchange(&differed, 1)) {
		atomic_store(&mt_stack_unwinder, MT_UNWIND_LIBUNWIND);
		say_difference(fast, nf, lib, nl);
		if (unwind_stop)
			unwind_stop();
	}
	return 1;
}

/* Both unwinders, compared; libunwind's stack is the one given.  Apart
 * from mt_stack_walk(): only verify pays for the second buffer. */
static __attribute__((noinline)) int verify_walk(mt_stack_buf_t *st, int want, int depth,
						 uint64_t ra, uint64_t sp, uint64_t bp)
{
	mt_stack_buf_t lib;
	int n, nl;

	n = mt_unwind_cache_from(st->p, want, ra, sp, bp);
	count(n < 0 ? &own_slow : &own_fast);
	nl = mt_stack_keep(&lib, mt_stack_libunwind(lib.p, want), depth);
	if (n >= 0) {
		n = mt_stack_keep(st, n, depth);
		mt_stack_verify(mt_stack_ips(st), n, mt_stack_ips(&lib), nl);
	}
	memcpy(st->ip, mt_stack_ips(&lib), (size_t)nl * sizeof(uint64_t));
	st->first = 0;
	return nl;
}

/* The fast walker from the frame mt_stack_capture() gives, libunwind
 * where it cannot walk.  Not inlined: libunwind's first frame is this
 * one's, the tracer's, dropped after it.  Only what goes through
 * libunwind is counted as an unwind (above). */
__attribute__((noinline)) int mt_stack_walk(mt_stack_buf_t *st, int want, int depth,
					    uint64_t ra, uint64_t sp, uint64_t bp)
{
	int n;

	if (atomic_load_explicit(&mt_stack_unwinder, memory_order_relaxed) == MT_UNWIND_VERIFY)
		return verify_walk(st, want, depth, ra, sp, bp);
	n = mt_unwind_cache_from(st->p, want, ra, sp, bp);
	if (__builtin_expect(n < 0, 0)) {
		count(&own_slow);
		n = mt_stack_libunwind(st->p, want);
	} else {
		count(&own_fast);
	}
	return mt_stack_keep(st, n, depth);
}

void mt_stack_unwind_counts(uint64_t *fast, uint64_t *libunwind)
{
	flush_counts();
	*fast = *libunwind = 0;
	for (int i = 0; i < SHARDS; i++) {
		*fast += atomic_load_explicit(&unwinding[i].fast, memory_order_relaxed);
		*libunwind += atomic_load_explicit(&unwinding[i].slow, memory_order_relaxed);
	}
}

int mt_stack_keep(mt_stack_buf_t *st, int n, int depth)
{
	int skip = 0;

	while (skip < n && st->ip[skip] >= self_lo && st->ip[skip] < self_hi)
		skip++;
	n -= skip;
	if (n > depth)
		n = depth;
	st->first = skip;
	return n > 0 ? n : 0;
}

uint64_t mt_stack_frame_find(uint64_t ip)
{
	size_t pos = 0;
	uint64_t id;

	/* ip is never 0, so it is a valid key as is. */
	if (mt_table_next(&frames, ip, &pos, &id))
		return id;
	return 0;
}

uint64_t mt_stack_frame_add(uint64_t ip)
{
	if (mt_table_add(&frames, ip, next_frame))
		return 0;
	return next_frame++;
}

/*
 * A stack's hash, on every event (the thread's cache is looked up by it):
 * four lanes, so that the multiplies of a 32-frame stack overlap instead
 * of making one chain of 32 (each lane's chain is 8 long), then mixed.
 */
static uint64_t hash_ips(const uint64_t *ips, int n)
{
	const uint64_t p = 0x9e3779b97f4a7c15ull;
	uint64_t a = 0xcbf29ce484222325ull ^ (uint64_t)n, b = 0x84222325cbf29ce4ull;
	uint64_t c = 0x100000001b3ull, d = 0xff51afd7ed558ccdull, h;
	int i = 0;

	for (; i + 4 <= n; i += 4) {
		a = (a ^ ips[i]) * p;
		b = (b ^ ips[i + 1]) * p;
		c = (c ^ ips[i + 2]) * p;
		d = (d ^ ips[i + 3]) * p;
	}
	for (; i < n; i++)
		a = (a ^ ips[i]) * p;
	h = a ^ (b << 17 | b >> 47) ^ (c << 31 | c >> 33) ^ (d << 47 | d >> 17);
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h ? h : 1;
}

uint64_t mt_stack_find(const uint64_t *ips, int n)
{
	uint64_t h = hash_ips(ips, n), v;
	size_t pos = 0;

	while (mt_table_next(&stacks, h, &pos, &v)) {
		const stack_rec_t *r = (const stack_rec_t *)v;

		if (r->n == (uint32_t)n &&
		    !memcmp(r->ips, ips, (size_t)n * sizeof(uint64_t)))
			return r->id;
	}
	return 0;
}

uint64_t mt_stack_add(const uint64_t *ips, int n)
{
	stack_rec_t *r = mt_arena_alloc(&arena, sizeof(*r) +
						(size_t)n * sizeof(uint64_t));

	if (!r)
		return 0;
	r->id = next_stack;
	r->n = (uint32_t)n;
	memcpy(r->ips, ips, (size_t)n * sizeof(uint64_t));
	if (mt_table_add(&stacks, hash_ips(ips, n), (uint64_t)r))
		return 0;
	return next_stack++;
}

/*
 * The per-thread stack cache: CACHE_SLOTS entries holding the ips
 * themselves (never a pointer into the tables, which a reset unmaps), for
 * stacks up to CACHE_DEPTH frames, in sets of two: a stack's hash picks a
 * set, and a stack new to the cache takes the set's first entry, the one
 * there moving to the second.  A real program's threads cycle through
 * some hundreds of allocation sites: with 8 entries the python3 bench
 * missed often enough that the table lock's lookups cost a third of its
 * overhead (950 ms against 620 with 64 entries and up).  With one entry
 * a set, two hot stacks whose hashes pick the same entry put each other
 * out at every turn, and which stacks meet moves with where ASLR puts the
 * libraries: python3's 6.9 M stacks went to the tables 40 k to 280 k
 * times a run; with two entries a set, 37 k to 40 k (13.6 k of them new).
 *
 * 72 KiB a thread is too much for initial-exec TLS (glibc carves static
 * TLS out of every thread's stack, and refuses a small stack that cannot
 * hold it), so the cache is mapped on a thread's first lookup and unmapped
 * by a thread-specific key's destructor when the thread ends; a thread
 * whose cache is gone (or could not be mapped) looks up in the tables.
 */
#define CACHE_SLOTS 256
#define CACHE_WAYS 2
#define CACHE_DEPTH 32
/* A thread looks up in the first CACHE_SMALL_SLOTS entries (4.5 KiB) until
 * it has remembered CACHE_GROW_AFTER stacks, then in all of them: most
 * threads of a program with many meet a few stacks. */
#define CACHE_SMALL_SLOTS 16
#define CACHE_GROW_AFTER 64

typedef struct {
	uint64_t gen, id, hash;
	uint32_t n;
	uint64_t ips[CACHE_DEPTH];
} cache_entry_t;

#define CACHE_BYTES (CACHE_SLOTS * sizeof(cache_entry_t))
/* The cache of a thread whose cache is gone for good. */
#define CACHE_NONE ((cache_entry_t *)1)

static TLS cache_entry_t *cache;
/* The sets in use, less one. */
static TLS unsigned cache_mask;
/* Stacks remembered, up to CACHE_GROW_AFTER: a thread that keeps finding
 * new stacks fills every page of its cache, so at the PREFAULT_FILLS-th
 * the slots in use are made resident in one call (mt_prefault.h) rather
 * than a fault a page, and all of them when they are all in use; a
 * thread with a few stacks touches a few pages. */
#define PREFAULT_FILLS 8
static TLS unsigned cache_fills;
/* 1 while the thread's cache is known to hold nothing but zeros (newly
 * mapped, or wiped at a fork): a lookup then reads nothing, since a read
 * of a page not yet written maps a page of zeros that the first entry's
 * write faults on again. */
static TLS int cache_blank;
/* Whether MADV_WIPEONFORK took: a forked child's caches are then blank. */
static atomic_int caches_wiped;
static pthread_key_t cache_key;
static int cache_key_ok;

/* The caches of threads that ended, for the threads that start next:
 * their entries name stacks of the process, whichever thread met them,
 * and each entry's generation still says whether it holds. */
static mt_spares_t spare_caches = MT_SPARES_INIT;

static void cache_drop(void *p)
{
	flush_counts();
	cache = CACHE_NONE;
	if (p)
		mt_spares_give(&spare_caches, p, CACHE_BYTES);
}

static void cache_key_make(void)
{
	cache_key_ok = pthread_key_create(&cache_key, cache_drop) == 0;
}

void mt_stack_cache_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, cache_key_make);
}

/* The calling thread's cache, mapped on first use; NULL when it has
 * none. */
static cache_entry_t *thread_cache(void)
{
	void *p;

	if (__builtin_expect(cache != NULL, 1))
		return cache == CACHE_NONE ? NULL : cache;
	cache = CACHE_NONE;
	if (!cache_key_ok)
		return NULL;
	/* A cache taken over starts small as a new one: the entries past
	 * its first slots are looked at again once it grows, each still
	 * judged by its generation and hash. */
	cache_mask = CACHE_SMALL_SLOTS / CACHE_WAYS - 1;
	p = mt_spares_take(&spare_caches);
	if (!p) {
		p = mmap(NULL, CACHE_BYTES, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		/* A forked child finds the cache empty, as its new trace's
		 * tables would leave it (every entry of an older
		 * generation): not copied at the fork (mt_table.c says
		 * why). */
		if (madvise(p, CACHE_BYTES, MADV_WIPEONFORK) == 0)
			atomic_store_explicit(&caches_wiped, 1, memory_order_relaxed);
		cache_blank = 1;
	}
	if (pthread_setspecific(cache_key, p) != 0) {
		mt_spares_give(&spare_caches, p, CACHE_BYTES);
		return NULL;
	}
	cache = p;
	return cache;
}

/* The forking thread's cache came wiped, like every other. */
static void cache_fork_child(void)
{
	if (cache && cache != CACHE_NONE &&
	    atomic_load_explicit(&caches_wiped, memory_order_relaxed))
		cache_blank = 1;
}

/* The first entry of the set the hash h picks. */
static inline cache_entry_t *cache_set(cache_entry_t *c, uint64_t h)
{
	return &c[((h ^ h >> 17) & cache_mask) * CACHE_WAYS];
}

/* Whether e holds the stack ips[0..n) of hash h, of any generation. */
static inline int cache_holds(const cache_entry_t *e, uint64_t h, const uint64_t *ips, int n)
{
	return e->gen && e->hash == h && e->n == (uint32_t)n &&
	       !memcmp(e->ips, ips, (size_t)n * sizeof(uint64_t));
}

uint64_t mt_stack_cached(const uint64_t *ips, int n, uint64_t *gen)
{
	cache_entry_t *c = thread_cache();
	const cache_entry_t *e;
	uint64_t h;

	if (!c || n <= 0 || n > CACHE_DEPTH || cache_blank)
		return 0;
	h = hash_ips(ips, n);
	e = cache_set(c, h);
	if (!cache_holds(e, h, ips, n) && !cache_holds(++e, h, ips, n))
		return 0;
	*gen = e->gen;
	return e->id;
}

void mt_stack_remember(const uint64_t *ips, int n, uint64_t id)
{
	cache_entry_t *c = thread_cache(), *e;
	uint64_t h;

	if (!c || n <= 0 || n > CACHE_DEPTH || !id)
		return;
	if (__builtin_expect(cache_fills < CACHE_GROW_AFTER, 0)) {
		if (++cache_fills == PREFAULT_FILLS)
			mt_prefault_range(c, CACHE_SMALL_SLOTS * sizeof(cache_entry_t));
		if (cache_fills == CACHE_GROW_AFTER) {
			cache_mask = CACHE_SLOTS / CACHE_WAYS - 1;
			mt_prefault_range(c, CACHE_BYTES);
		}
	}
	h = hash_ips(ips, n);
	e = cache_set(c, h);
	/* The first entry goes to the second, unless it holds this stack
	 * (of an older generation): then it is written over. */
	if (e->gen && !cache_holds(e, h, ips, n))
		memcpy(e + 1, e, offsetof(cache_entry_t, ips) + e->n * sizeof(uint64_t));
	e->gen = generation;
	e->id = id;
	e->hash = h;
	e->n = (uint32_t)n;
	memcpy(e->ips, ips, (size_t)n * sizeof(uint64_t));
	cache_blank = 0;
}

uint64_t mt_stack_generation(void)
{
	return generation;
}

uint64_t mt_stack_trace_generation(void)
{
	return trace_generation;
}

void mt_stack_frame_ids(const uint64_t *ips, int n, uint64_t *ids)
{
	for (int i = 0; i < n; i++)
		ids[i] = mt_stack_frame_find(ips[i]);
}

/* The records in the tables are gone (the thread caches hold copies of
 * the ips, never a pointer into them), and every cached id is of the
 * generation before. */
static void empty_tables(void)
{
	mt_table_empty(&frames);
	mt_table_empty(&stacks);
	mt_arena_empty(&arena);
	generation++;
}

void mt_stack_forget(void)
{
	empty_tables();
}

void mt_stack_reset(void)
{
	empty_tables();
	next_frame = 1;
	next_stack = 1;
	trace_generation++;
}
