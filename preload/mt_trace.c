/*
 * mt_trace: the preload core: state, events, ordered writes, fork and
 * fatal signals.  It must never call malloc itself while recording, never
 * call into the loader with the trace lock held, never kill or stop the
 * program: on an error it warns once and stops tracing.
 */
#include "mt_trace.h"

#include <errno.h>
#include <linux/futex.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "../common/mt_cpu.h"
#include "../common/mt_fmt.h"
#include "../common/mt_jsonl.h"
#include "mt_clock.h"
#include "mt_real.h"
#include "mt_signal.h"
#include "mt_stack.h"
#include "mt_symbol.h"
#include "mt_writer.h"

#ifndef MT_VERSION
#define MT_VERSION "0.1.0"
#endif

#define TLS __thread __attribute__((tls_model("initial-exec")))
#define PATH_CAP 4096
#define SYMBOL_CAP 2048
#define MODULE_CAP 1024
#define LINE_CAP (SYMBOL_CAP + MODULE_CAP + MT_JSONL_FIXED_MAX + 64)

/* 0: not yet, 1: starting, 2: done (tracing or not). */
static atomic_int init_state;
static atomic_int active;

/*
 * The trace lock: a futex word, 0 free, 1 held, 2 held with sleepers
 * (Drepper, "Futexes Are Tricky", mutex 3).  It is held only to give an
 * event its seq and copy the line, some tens of nanoseconds, so a waiter
 * first spins a little with pause and only then sleeps in the kernel; a
 * holder that is descheduled costs the waiters a spin, then a sleep, never
 * a busy wait.  Taking it is one atomic exchange when free; trylock (the
 * fatal-signal handler) is one compare-and-swap, async-signal-safe; the
 * child of a fork gets a free one (lock_reinit).
 *
 * The lock word, the event order and the writer's position share one
 * cache line of their own (hot, below): they change hands together with
 * every event, so one transfer of the line brings all three, and they
 * must not share a line with what every hook reads (active, init_state,
 * t0).
 */
static struct {
	atomic_int word;
	uint64_t seq;
	/* The t of the last block event: t is taken before the lock, so a
	 * thread that waited may hold an earlier one than the line before. */
	uint64_t last_t;
	mt_writer_t writer; /* its per-write fields first: the same line */
} __attribute__((aligned(64))) hot = { .writer = { .fd = -1 } };
_Static_assert(offsetof(__typeof__(hot), writer) + offsetof(mt_writer_t, prep) +
		       sizeof(atomic_int) <= 64,
	       "the lock, the order and the writer's per-write fields share a line");

/*
 * How a waiter waits.  While the lock is held it looks at the lock word,
 * at most `looks` times, then sleeps on the futex.  What a hand-over costs
 * decides how far apart the looks are: every look brings the lock's line
 * (and with it seq and the writer's position) to the waiter's core, and
 * the holder must fetch it back for its next store, so each look made
 * while the lock is held stretches the critical section by one transfer
 * of a cache line between the cores.  Where that is cheap (tens of
 * nanoseconds: two cores of one die), the waiter looks after every pause
 * and the two threads take turns event by event, their unwinding and
 * formatting overlapping.  Where it is costly (a virtual machine's cores,
 * for hours at a time: 190 to 215 ns one way, a round trip of 430,
 * measured on the guests of docs/performance.md), taking turns costs more
 * than it overlaps, and two threads run the churn in twice the time of
 * one; the waiter then looks only every LOCK_COSTLY_WAIT cycles of the TSC
 * (about 150 us), twice, then sleeps, so the holder's next events find
 * the line still in its own cache, and the threads take turns every
 * thousand events or so instead.  Every hand-over there costs some
 * microseconds (the lock's line, the writer's, the window's last line,
 * each a transfer), and what the two threads can overlap is less than
 * it: the longer the turns, the faster (measured: turns of 10 us take
 * 1.12 to 1.19 times as long as turns of 150 us; docs/performance.md,
 * "The trace lock").  The price is latency, chosen knowingly
 * (docs/decisions.md): a waiter that finds the lock held spins out the
 * whole wait before it looks again, even when the holder let go after one
 * event, and sleeps after its second look, so an allocation may then wait
 * some hundreds of microseconds.
 *
 * Each thread learns the cost from its own looks, timed with the TSC:
 * looks close together that find the lock held are hits in its own cache
 * (the quickest is what the timing itself costs); the look that finds the
 * word freed missed (the releasing store invalidated the copy), and so
 * does every look made far apart; what a miss takes beyond the quickest
 * hit is a transfer's (245 to 275 cycles where hand-overs are costly, on
 * the same guests).  Where the TSC may not be read (not x86, or a thread
 * that asked for SIGSEGV on RDTSC with prctl(PR_SET_TSC)) nothing is
 * timed and the waiter waits as where hand-overs are cheap.
 */
#define LOCK_LOOKS 100          /* cheap hand-overs: a pause between looks */
#define LOCK_COSTLY_WAIT 320000 /* costly: TSC cycles between looks, */
#define LOCK_COSTLY_LOOKS 2     /* and looks before sleeping */
#define LOCK_COSTLY_PAUSES 512  /* the tests' costly waits without the TSC */
#define LOCK_COSTLY_CYCLES 180  /* a transfer is costly above this (TSC cycles) */

/* The calling thread's estimate of a transfer (an average of its last
 * few, weighted 1/8 to the newest) and its quickest hit, in TSC cycles. */
static TLS uint32_t handover_cycles;
static TLS uint32_t hit_cycles = UINT32_MAX;
/* mt_trace_test_costly_handovers() */
static atomic_int costly_for_tests;

#if defined(__x86_64__)
/* Load the lock word, timing the load: fenced on both sides, so the
 * count is the load's alone (LFENCE waits for the load to complete; not
 * RDTSCP, which the oldest x86-64 CPUs lack). */
static inline int look_timed(uint64_t *cycles)
{
	uint64_t t0;
	int w;

	_mm_lfence();
	t0 = __rdtsc();
	_mm_lfence();
	w = atomic_load_explicit(&hot.word, memory_order_relaxed);
	_mm_lfence();
	*cycles = __rdtsc() - t0;
	return w;
}

static inline void costly_wait(void)
{
	uint64_t until = __rdtsc() + LOCK_COSTLY_WAIT;

	do
		mt_cpu_relax();
	while (__rdtsc() < until);
}
#else
static inline int look_timed(uint64_t *cycles)
{
	*cycles = 0;
	return atomic_load_explicit(&hot.word, memory_order_relaxed);
}

static inline void costly_wait(void)
{
}
#endif

/* A look that missed took cycles: what they exceed the quickest hit by
 * is a transfer's. */
static inline void handover_note(uint64_t cycles)
{
	if (hit_cycles == UINT32_MAX)
		return; /* no hit timed yet: nothing to take off */
	cycles = cycles > hit_cycles ? cycles - hit_cycles : 0;
	/* An interrupt between the readings is not a transfer. */
	if (cycles > 8 * LOCK_COSTLY_CYCLES)
		cycles = 8 * LOCK_COSTLY_CYCLES;
	handover_cycles = (uint32_t)((7 * (uint64_t)handover_cycles + cycles) / 8);
}

/* errno stays as it was: a wait that finds the word changed says EAGAIN. */
static void futex(atomic_int *word, int op, int val)
{
	int saved = errno;

	syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
	errno = saved;
}

static int lock_try(void)
{
	int free_ = 0;

	return atomic_compare_exchange_strong_explicit(&hot.word, &free_, 1,
						       memory_order_acquire,
						       memory_order_relaxed);
}

static __attribute__((noinline)) void lock_wait(void)
{
	int forced = atomic_load_explicit(&costly_for_tests, memory_order_relaxed);
	int timed = mt_clock_thread_tsc_ok(); /* 0 but on x86-64 */
	int costly = forced ? forced > 0 : timed && handover_cycles > LOCK_COSTLY_CYCLES;
	int looks = costly ? LOCK_COSTLY_LOOKS : LOCK_LOOKS;
	int c;

	for (int i = 0; i < looks; i++) {
		uint64_t cycles = 0;
		int w;

		if (!costly)
			mt_cpu_relax();
		else if (timed)
			costly_wait();
		else
			for (int k = 0; k < LOCK_COSTLY_PAUSES; k++)
				mt_cpu_relax();
		if (!timed) {
			w = atomic_load_explicit(&hot.word, memory_order_relaxed);
		} else {
			w = look_timed(&cycles);
			if (costly || w == 0)
				handover_note(cycles);
			else if (cycles < hit_cycles)
				hit_cycles = (uint32_t)cycles;
		}
		if (w == 0 && lock_try())
			return;
	}
	/* Mark it contended, then sleep until it is handed back free. */
	c = atomic_exchange_explicit(&hot.word, 2, memory_order_acquire);
	while (c) {
		futex(&hot.word, FUTEX_WAIT, 2);
		c = atomic_exchange_explicit(&hot.word, 2, memory_order_acquire);
	}
}

static inline void lock_take(void)
{
	if (__builtin_expect(!lock_try(), 0))
		lock_wait();
}

static inline void lock_give(void)
{
	if (__builtin_expect(atomic_exchange_explicit(&hot.word, 0,
						      memory_order_release) == 2, 0))
		futex(&hot.word, FUTEX_WAKE, 1);
}

static inline void lock_reinit(void)
{
	atomic_store(&hot.word, 0);
}

/* All below, and hot but its lock word, are guarded by the trace lock
 * once tracing runs. */
static uint64_t dropped;
static uint64_t t0;
static int stack_depth = MT_TRACE_DEFAULT_DEPTH;
static char line[LINE_CAP];
/* The output pattern of descendants (forked children, and every process
 * started below this one): %p is their pid. */
static char child_pattern[PATH_CAP];
/* "MEMTRACE_OUTPUT=" and child_pattern, for the environment of a root
 * whose pattern names no pid (mt_trace_publish_env); empty otherwise. */
static char env_entry[PATH_CAP + 16];
static int warned;
/* The process the trace is this image's: a vfork child shares our
 * memory, and must never end or write the trace (mt_trace_owned). */
static pid_t owner;
/* Where the trace stood before an exec's trace.stop (mt_trace_exec_begin),
 * to go on from when the exec fails. */
static uint64_t exec_length, exec_seq;

static TLS int guard;
static TLS pid_t tid_cache;
/* The calling thread's tail, ,"tid":N: the same on every event it
 * makes, so made once (again in a fork's child, whose tid is another). */
static TLS char tid_tail[MT_JSONL_BLOCK_TAIL_MAX];
static TLS size_t tid_tail_len;

extern const char __ehdr_start[] __attribute__((visibility("hidden")));

/* ---- small helpers ---- */

/* t: nanoseconds since t0.  A reading of another CPU a hair behind the
 * one that took t0 gives 0, never a difference wrapped past 2^63
 * (mt_clock's readings of two CPUs may disagree by that hair). */
static uint64_t since_t0(void)
{
	uint64_t now = mt_clock_now();

	return now > t0 ? now - t0 : 0;
}

static pid_t current_tid(void)
{
	if (!tid_cache)
		tid_cache = (pid_t)syscall(SYS_gettid);
	return tid_cache;
}

static void say(const char *a, const char *b, const char *c)
{
	/* stderr through write(2): stdio could allocate or lock. */
	const char *parts[] = { "memtrace: ", a, b, c, "\n" };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		const char *s = parts[i] ? parts[i] : "";
		size_t n = strlen(s);

		while (n) {
			ssize_t w = write(STDERR_FILENO, s, n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return;
			s += w;
			n -= (size_t)w;
		}
	}
}

/* Expand %p (pid) and %% in pattern into out; returns -1 when too long. */
static int expand(const char *pattern, pid_t pid, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *s = pattern; *s; s++) {
		char num[MT_FMT_U64_MAX];
		const char *add = s;
		size_t len = 1;

		if (s[0] == '%' && s[1] == 'p') {
			len = mt_fmt_u64(num, (uint64_t)pid);
			add = num;
			s++;
		} else if (s[0] == '%' && s[1] == '%') {
			s++;
		}
		if (n + len >= cap)
			return -1;
		memcpy(out + n, add, len);
		n += len;
	}
	out[n] = '\0';
	return 0;
}

/* Whether the pattern has a %p that expand() replaces ("%%p" is a
 * literal "%p"). */
static int names_pid(const char *pattern)
{
	for (const char *s = pattern; *s; s++) {
		if (s[0] != '%')
			continue;
		if (s[1] == 'p')
			return 1;
		if (s[1] == '%')
			s++;
	}
	return 0;
}

/* Copy name into out with ins put before the extension of its last
 * component (out.jsonl, ".%p" -> out.%p.jsonl; a name without one gets
 * ins at its end).  Returns -1 when it does not fit. */
static int insert_before_ext(const char *name, const char *ins, char *out,
			     size_t cap)
{
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	const char *dot = strrchr(base, '.');
	size_t n = strlen(name), k = strlen(ins), at;

	if (n + k + 1 > cap)
		return -1;
	at = dot && dot != base ? (size_t)(dot - name) : n;
	memmove(out, name, at);
	memcpy(out + at, ins, k);
	memcpy(out + at + k, name + at, n - at + 1);
	return 0;
}

/* The pattern a descendant uses: the same when it names %p, else the
 * name with ".%p" before its extension (out.jsonl -> out.%p.jsonl), so
 * a child never writes over its parent's trace.  Returns -1 when that
 * pattern does not fit: the caller must not trace then, or its children
 * would truncate its trace. */
static int derive_child_pattern(const char *pattern)
{
	if (names_pid(pattern)) {
		if (strlen(pattern) + 1 > sizeof(child_pattern))
			return -1;
		memcpy(child_pattern, pattern, strlen(pattern) + 1);
		return 0;
	}
	return insert_before_ext(pattern, ".%p", child_pattern,
				 sizeof(child_pattern));
}

/* The most names a process tries before it gives up (.1 to .999). */
#define NAME_TRIES 1000

/*
 * Open this image's trace, named by pattern.  A root (a pattern without
 * %p: the first traced process, which the user named) reuses an
 * existing file of the user's there, emptied, as any program that writes
 * a named output does.  Every other image takes the first name that no
 * file has among NAME, then NAME with .1, .2, ... before its extension:
 * its pid alone does not make its name its own, since an image that a
 * process execs keeps the pid (and finds its predecessor's trace under
 * NAME), and pids come round again.  So no process ever empties or
 * writes into a trace that is not its own.  path receives the name.
 * Returns 0 or -errno.
 */
static int open_image_trace(const char *pattern, int root, char *path,
			    size_t cap)
{
	char name[PATH_CAP];
	int rc;

	if (expand(pattern, getpid(), name, sizeof(name)) < 0)
		return -ENAMETOOLONG;
	if (root) {
		memcpy(path, name, strlen(name) + 1);
		return mt_writer_open(&hot.writer, path);
	}
	for (unsigned k = 0; k < NAME_TRIES; k++) {
		char num[MT_FMT_U64_MAX + 2] = ".";

		num[1 + mt_fmt_u64(num + 1, k)] = '\0';
		if (!k)
			memcpy(path, name, strlen(name) + 1);
		else if (insert_before_ext(name, num, path, cap) < 0)
			return -ENAMETOOLONG;
		rc = mt_writer_create(&hot.writer, path);
		if (rc != -EEXIST)
			return rc;
	}
	return -EEXIST;
}

/* ---- writing, under the trace lock ---- */

static void stop_locked(const char *reason);

/* Write one formatted line; on failure warn once and stop tracing. */
static void emit_from(const char *buf, size_t len)
{
	int rc = mt_writer_write(&hot.writer, buf, len);

	if (rc && atomic_load(&active)) {
		if (!warned) {
			warned = 1;
			say("cannot write the trace: ", strerror(-rc),
			    "; it keeps what was written, tracing stops, the program runs on");
		}
		atomic_store(&active, 0);
		/* Every whole line stays; the file ends at the last. */
		mt_writer_close(&hot.writer);
	}
}

/* Write the line formatted in the shared line buffer. */
static void emit(size_t len)
{
	emit_from(line, len);
}

static void begin(mt_jsonl_t *l, const char *kind)
{
	mt_jsonl_begin(l, line, sizeof(line), ++hot.seq, kind);
}

/* /proc/self/cmdline as argv strings, in a caller's buffer. */
static size_t read_argv(char *buf, size_t cap, const char **argv, size_t max)
{
	size_t have = 0, n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (have < cap - 1) {
		ssize_t got = read(fd, buf + have, cap - 1 - have);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += (size_t)got;
	}
	close(fd);
	buf[have] = '\0';
	for (size_t i = 0; i < have && n < max; i += strlen(buf + i) + 1)
		argv[n++] = buf + i;
	return n;
}

static void write_header_locked(pid_t ppid)
{
	char exe[PATH_CAP], args[4096];
	const char *argv[64];
	size_t nargs;
	ssize_t n;
	mt_jsonl_t l;

	begin(&l, "trace.start");
	mt_jsonl_u64(&l, "pid", (uint64_t)getpid());
	mt_jsonl_u64(&l, "ppid", (uint64_t)ppid);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0)
		mt_jsonl_str(&l, "exe", exe, (size_t)n, 0);
	nargs = read_argv(args, sizeof(args), argv, sizeof(argv) / sizeof(argv[0]));
	mt_jsonl_str_array(&l, "argv", argv, nargs, 256);
	mt_jsonl_u64(&l, "time_ns", mt_clock_realtime());
	mt_jsonl_str(&l, "tool_version", MT_VERSION, strlen(MT_VERSION), 0);
	mt_jsonl_u64(&l, "stack_depth", (uint64_t)stack_depth);
	emit(mt_jsonl_end(&l));

	begin(&l, "allocator");
	mt_jsonl_u64(&l, "allocator_id", 0);
	mt_jsonl_str(&l, "name", "libc", 4, 0);
	emit(mt_jsonl_end(&l));
}

/* Write trace.stop with reason; tracing stays on. */
static void write_stop_locked(const char *reason)
{
	mt_jsonl_t l;
	uint64_t t;

	begin(&l, "trace.stop");
	mt_jsonl_str(&l, "reason", reason, strlen(reason), 0);
	mt_jsonl_u64(&l, "dropped", dropped);
	/* Never before the last block event's (whose t was taken earlier,
	 * perhaps on a CPU whose reading ran a hair ahead). */
	t = since_t0();
	mt_jsonl_u64(&l, "t", t > hot.last_t ? t : hot.last_t);
	emit(mt_jsonl_end(&l));
}

static void stop_locked(const char *reason)
{
	int rc;

	if (!atomic_load(&active))
		return;
	write_stop_locked(reason);
	if (!atomic_load(&active))
		return; /* the stop did not fit: emit() has closed the trace */
	atomic_store(&active, 0);
	rc = mt_writer_close(&hot.writer);
	if (rc && !warned) {
		warned = 1;
		say("cannot finish the trace: ", strerror(-rc), NULL);
	}
}

/* ---- stacks ---- */

/* Declare ip as a frame: resolve it with no lock held, then write the
 * frame event unless another thread did meanwhile. */
static void declare_frame(uint64_t ip)
{
	char module[MODULE_CAP], symbol[SYMBOL_CAP];
	mt_symbol_info_t info;
	mt_jsonl_t l;
	uint64_t id;

	mt_symbol_resolve(ip, &info, module, sizeof(module), symbol,
			  sizeof(symbol));
	lock_take();
	if (atomic_load(&active) && !mt_stack_frame_find(ip)) {
		id = mt_stack_frame_add(ip);
		if (id) {
			begin(&l, "frame");
			mt_jsonl_u64(&l, "frame_id", id);
			mt_jsonl_hex(&l, "ip", ip);
			if (info.has_symbol) {
				mt_jsonl_str(&l, "symbol", symbol,
					     info.symbol_len, 0);
				mt_jsonl_hex(&l, "offset", info.offset);
			}
			if (info.has_module) {
				mt_jsonl_str(&l, "module", module,
					     info.module_len, 0);
				mt_jsonl_hex(&l, "module_offset",
					     info.module_offset);
			}
			emit(mt_jsonl_end(&l));
		}
	}
	lock_give();
}

/*
 * Take the trace lock with the stack of ips declared: on return the lock
 * is held and *stack_id is the stack's id (0 when it has none: no frames,
 * or no memory).  Frames never seen are resolved with the lock released,
 * one at a time, because symbol lookup may wait for the loader.
 */
static void lock_with_stack(const uint64_t *ips, int n, uint64_t *stack_id)
{
	for (;;) {
		int missing = -1;

		lock_take();
		*stack_id = 0;
		if (!n || !atomic_load(&active))
			return;
		*stack_id = mt_stack_find(ips, n);
		if (*stack_id)
			return;
		for (int i = 0; i < n && missing < 0; i++)
			if (!mt_stack_frame_find(ips[i]))
				missing = i;
		if (missing < 0) {
			uint64_t ids[MT_STACK_MAX_DEPTH];
			mt_jsonl_t l;

			*stack_id = mt_stack_add(ips, n);
			if (!*stack_id)
				return;
			mt_stack_frame_ids(ips, n, ids);
			begin(&l, "stack");
			mt_jsonl_u64(&l, "stack_id", *stack_id);
			mt_jsonl_u64_array(&l, "frames", ids, (size_t)n);
			emit(mt_jsonl_end(&l));
			return;
		}
		lock_give();
		declare_frame(ips[missing]);
	}
}

/* ---- fork ---- */

static void atfork_prepare(void)
{
	/* Held across fork so the child never inherits a half-written
	 * line or a lock owned by a thread that does not exist there. */
	guard++;
	mt_stack_fork_prepare();
	mt_symbol_fork_prepare();
	lock_take();
	/* No thread may be reserving or mapping the next window at the fork:
	 * the child would never see it end. */
	mt_writer_quiesce(&hot.writer);
}

static void atfork_parent(void)
{
	lock_give();
	mt_symbol_fork_parent();
	mt_stack_fork_parent();
	guard--;
}

static void atfork_child(void)
{
	char path[PATH_CAP];
	pid_t ppid = getppid();
	int rc;

	lock_reinit();
	mt_clock_fork_child();
	atomic_store(&mt_trace_fail_at, 0); /* only the process it was set for */
	mt_symbol_fork_child();
	mt_stack_fork_child();
	tid_cache = 0;
	tid_tail_len = 0;
	if (atomic_load(&active)) {
		/* The parent's mapping and file are the parent's: let go of
		 * them without writing a byte. */
		mt_writer_abandon(&hot.writer);
		atomic_store(&active, 0);
		mt_stack_reset();
		hot.seq = 0;
		dropped = 0;
		hot.last_t = 0;
		owner = getpid();
		rc = open_image_trace(child_pattern, 0, path, sizeof(path));
		if (rc == -ENAMETOOLONG) {
			say("the trace name is too long; the child runs untraced",
			    NULL, NULL);
		} else if (rc < 0) {
			say("cannot open trace '", path, "'; the child runs untraced");
		} else {
			t0 = mt_clock_now();
			atomic_store(&active, 1);
			write_header_locked(ppid);
		}
	}
	guard--;
}

/* ---- signals that end the process ---- */

/* mt_signal's on_end: write trace.stop with reason "signal" and cut the
 * file, unless this thread is inside the tracer (it may hold the lock:
 * returns 1, and mt_signal holds the signal until it leaves).  Another
 * thread's event under way ends first: the lock is tried a while. */
static int end_on_signal(void)
{
	if (guard)
		return atomic_load(&active) ? 1 : 0;
	if (!mt_trace_owned())
		return 0;
	for (int tries = 0; tries < 1000; tries++) {
		if (lock_try()) {
			stop_locked("signal");
			lock_give();
			break;
		}
		sched_yield();
	}
	return 0;
}

/* ---- start ---- */

static void self_range(void)
{
	const char *base = __ehdr_start;
	const uint64_t lo = (uint64_t)base;
	uint64_t hi = lo;
	/* Our own ELF header and program headers, mapped at our base. */
	const unsigned char *eh = (const unsigned char *)base;
	uint64_t phoff;
	uint16_t phnum, phentsize;

	memcpy(&phoff, eh + 32, sizeof(phoff));
	memcpy(&phentsize, eh + 54, sizeof(phentsize));
	memcpy(&phnum, eh + 56, sizeof(phnum));
	for (uint16_t i = 0; i < phnum; i++) {
		const unsigned char *ph = eh + phoff + (uint64_t)i * phentsize;
		uint32_t type;
		uint64_t vaddr, memsz;

		memcpy(&type, ph, sizeof(type));
		memcpy(&vaddr, ph + 16, sizeof(vaddr));
		memcpy(&memsz, ph + 40, sizeof(memsz));
		if (type == 1 /* PT_LOAD */ && lo + vaddr + memsz > hi)
			hi = lo + vaddr + memsz;
	}
	mt_stack_init(lo, hi);
}

/* Start tracing into the file hot.writer has open (lock held). */
static void begin_trace_locked(int depth)
{
	stack_depth = depth < 0 ? 0 : depth > MT_STACK_MAX_DEPTH ? MT_STACK_MAX_DEPTH : depth;
	mt_stack_reset();
	hot.seq = 0;
	dropped = 0;
	hot.last_t = 0;
	warned = 0;
	owner = getpid();
	t0 = mt_clock_now();
	atomic_store(&active, 1);
	write_header_locked(getppid());
}

int mt_trace_start(const char *path, int depth)
{
	int rc;

	lock_take();
	if (atomic_load(&active)) {
		lock_give();
		return -EBUSY;
	}
	rc = mt_writer_open(&hot.writer, path);
	if (rc == 0)
		begin_trace_locked(depth);
	lock_give();
	return rc;
}

/* ---- MEMTRACE_FAIL_AT ---- */

_Atomic uint64_t mt_trace_fail_at;
static _Atomic uint64_t fail_calls;

/* Read MEMTRACE_FAIL_AT once (empty is unset), and take it out of the
 * environment, so the programs this one execs do not fail at their own
 * Nth call too. */
static void arm_fail_at(void)
{
	const char *s = getenv("MEMTRACE_FAIL_AT");
	char *end;
	unsigned long long n;

	if (!s)
		return;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (*s && (errno || *end || *s == '-' || *s == '+'))
		say("MEMTRACE_FAIL_AT is not a number of allocations: '", s,
		    "'; no allocation is made to fail");
	else if (*s)
		atomic_store(&mt_trace_fail_at, (uint64_t)n);
	unsetenv("MEMTRACE_FAIL_AT");
}

static int parse_depth(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return MT_TRACE_DEFAULT_DEPTH;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		say("MEMTRACE_STACK_DEPTH is not a number of frames: '", s,
		    "'; using 32");
		return MT_TRACE_DEFAULT_DEPTH;
	}
	return v > MT_STACK_MAX_DEPTH ? MT_STACK_MAX_DEPTH : (int)v;
}

void mt_trace_init(void)
{
	int expected = 0;
	const char *pattern, *env;
	char path[PATH_CAP];
	int rc, root;

	if (!atomic_compare_exchange_strong(&init_state, &expected, 1))
		return;
	self_range();
	mt_clock_init(1);
	/* A set-user-ID or otherwise secure-execution process must not
	 * let its environment choose a file to write. */
	if (getauxval(AT_SECURE))
		goto done;
	env = getenv("MEMTRACE_OUTPUT");
	pattern = env && *env ? env : MT_TRACE_DEFAULT_OUTPUT;
	if (derive_child_pattern(pattern) < 0) {
		say("MEMTRACE_OUTPUT is too long; the program runs untraced",
		    NULL, NULL);
		goto done;
	}
	/* A pattern without %p is the user's name for the first process of
	 * the tree: the processes below it find the pattern that cannot
	 * clash with it in their environment (mt_trace_publish_env). */
	root = !names_pid(pattern);
	if (root && env) {
		memcpy(env_entry, "MEMTRACE_OUTPUT=", 16);
		memcpy(env_entry + 16, child_pattern, strlen(child_pattern) + 1);
	}
	lock_take();
	rc = open_image_trace(pattern, root, path, sizeof(path));
	if (rc == 0)
		begin_trace_locked(parse_depth(getenv("MEMTRACE_STACK_DEPTH")));
	lock_give();
	if (rc == -ENAMETOOLONG) {
		say("MEMTRACE_OUTPUT is too long; the program runs untraced",
		    NULL, NULL);
		goto done;
	}
	if (rc < 0) {
		say("cannot open trace '", path, "'; the program runs untraced");
		goto done;
	}
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	mt_signal_install(end_on_signal, mt_real.sigaction);
	arm_fail_at();
done:
	atomic_store(&init_state, 2);
}

/* Replace the MEMTRACE_OUTPUT entry of env in place with env_entry. */
static void publish_in(char **env)
{
	for (; env && *env; env++)
		if (!strncmp(*env, "MEMTRACE_OUTPUT=", 16))
			*env = env_entry;
}

void mt_trace_publish_env(char **envp)
{
	if (!env_entry[0])
		return;
	publish_in(envp);
	if (environ != envp)
		publish_in(environ);
}

int mt_trace_owned(void)
{
	return atomic_load(&active) && (pid_t)syscall(SYS_getpid) == owner;
}

void mt_trace_end(const char *reason)
{
	if (mt_trace_owned())
		mt_trace_stop(reason);
}

int mt_trace_exec_begin(void)
{
	int saved = errno;

	if (!mt_trace_owned() || !mt_trace_guard())
		return 0;
	lock_take();
	if (!atomic_load(&active)) {
		lock_give();
		mt_trace_leave();
		errno = saved;
		return 0;
	}
	exec_length = hot.writer.length;
	exec_seq = hot.seq;
	write_stop_locked("exec");
	if (atomic_load(&active) && mt_writer_seal(&hot.writer) < 0) {
		/* Cannot cut it and keep it open: close it for good. */
		atomic_store(&active, 0);
		mt_writer_close(&hot.writer);
	}
	errno = saved;
	return 1;
}

void mt_trace_exec_failed(void)
{
	int saved = errno;

	if (atomic_load(&active)) {
		if (mt_writer_unseal(&hot.writer, exec_length) == 0) {
			hot.seq = exec_seq;
		} else {
			/* The stop stays, true but for its reason. */
			atomic_store(&active, 0);
			mt_writer_close(&hot.writer);
		}
	}
	lock_give();
	mt_trace_leave();
	errno = saved;
}

void mt_trace_stop(const char *reason)
{
	int saved = errno;

	/* Not tracing: not even the lock, which a child of _Fork may have
	 * inherited held by a thread it does not have. */
	if (!atomic_load(&active))
		return;
	guard++;
	lock_take();
	stop_locked(reason);
	lock_give();
	guard--;
	errno = saved;
}

void mt_trace_fork_untraced_child(void)
{
	atomic_store(&active, 0);
}

/* ---- the guard ---- */

int mt_trace_guard(void)
{
	if (guard)
		return 0;
	guard = 1;
	return 1;
}

int mt_trace_enter(void)
{
	if (guard)
		return 0;
	guard = 1;
	if (atomic_load_explicit(&init_state, memory_order_acquire) != 2)
		mt_trace_init();
	if (!atomic_load_explicit(&active, memory_order_relaxed)) {
		guard = 0;
		return 0;
	}
	return 1;
}

void mt_trace_leave(void)
{
	guard = 0;
	if (__builtin_expect(mt_signal_pending != 0, 0))
		mt_signal_raise_pending();
}

void mt_trace_test_costly_handovers(int on)
{
	atomic_store(&costly_for_tests, on);
}

int mt_trace_active(void)
{
	return atomic_load(&active);
}

/* ---- events ---- */

/*
 * A block event is made so that the trace lock is held only to order it:
 * everything but its seq (mt_jsonl.h's REST: head, stack, tail and end,
 * in one buffer) is made before the lock is taken; under it the event
 * gets its seq and its t (never earlier than the line before), the
 * writer's position moves past it, and it is copied into the window.  The
 * body needs the stack's id, which the thread's cache knows before the
 * lock nearly always; when the id under the lock is another (a new
 * stack), or a realloc's outcome changes its head, the rest is made again
 * from there.
 */
typedef struct {
	char rest[MT_JSONL_BLOCK_REST_MAX];
	char fail_tail[MT_JSONL_BLOCK_TAIL_MAX]; /* with fail_at only */
	const char *tail;
	size_t head_len, tail_len, body_len, rest_len;
	uint64_t body_stack; /* the stack id in the body */
	int has_body;
	uint64_t t;
} pending_t;

static const char *thread_tail(size_t *len)
{
	if (__builtin_expect(!tid_tail_len, 0)) {
		mt_jsonl_block_t ev = { .tid = (uint64_t)current_tid() };

		tid_tail_len = mt_jsonl_block_tail(tid_tail, &ev);
	}
	*len = tid_tail_len;
	return tid_tail;
}

static void pending_make(pending_t *p, const mt_jsonl_block_t *ev)
{
	p->head_len = mt_jsonl_block_head(p->rest, ev);
	if (__builtin_expect(ev->fail_at != 0, 0)) {
		p->tail_len = mt_jsonl_block_tail(p->fail_tail, ev);
		p->tail = p->fail_tail;
	} else {
		p->tail = thread_tail(&p->tail_len);
	}
	p->has_body = 0;
	p->t = since_t0();
}

static void pending_body(pending_t *p, uint64_t stack_id)
{
	p->body_len = mt_jsonl_block_body(p->rest, p->head_len, stack_id, p->tail,
					  p->tail_len);
	p->rest_len = p->body_len + mt_jsonl_block_end(p->rest + p->body_len, p->t);
	p->body_stack = stack_id;
	p->has_body = 1;
}

/* Under the trace lock, tracing on: write the event, in place in the
 * writer's window when it has room. */
static void pending_emit(pending_t *p, uint64_t stack_id)
{
	char buf[MT_JSONL_BLOCK_MAX], *dst;
	size_t len;

	if (__builtin_expect(!p->has_body || p->body_stack != stack_id, 0))
		pending_body(p, stack_id);
	if (__builtin_expect(p->t < hot.last_t, 0))
		p->rest_len = p->body_len +
			      mt_jsonl_block_end(p->rest + p->body_len, hot.last_t);
	else
		hot.last_t = p->t;
	dst = mt_writer_space(&hot.writer, MT_JSONL_BLOCK_MAX);
	len = mt_jsonl_block_join(dst ? dst : buf, ++hot.seq, p->rest, p->rest_len);
	if (dst) {
		mt_writer_commit(&hot.writer, len);
		return;
	}
	emit_from(buf, len);
}

/*
 * Take the trace lock for an event with the stack ips[0..n): on return
 * the lock is held and *stack_id is the stack's id (0: none).  The
 * thread's stack cache usually knows the id, and the lock is then held
 * only for the write (p's body is made with that id first); otherwise
 * lock_with_stack() looks it up, declaring what is new.
 */
static void lock_for_event(pending_t *p, const uint64_t *ips, int n,
			   uint64_t *stack_id)
{
	uint64_t gen = 0, id = n ? mt_stack_cached(ips, n, &gen) : 0;

	if (id) {
		pending_body(p, id);
		lock_take();
		/* An id of an earlier trace (a reset came meanwhile) is not
		 * this trace's: look it up again. */
		if (gen == mt_stack_generation()) {
			*stack_id = id;
			return;
		}
		lock_give();
	}
	lock_with_stack(ips, n, stack_id);
	if (*stack_id)
		mt_stack_remember(ips, n, *stack_id);
}

/* Release the lock after an event; then, lock-free, unmap the window a
 * switch left and make the writer's next window ready if it asked (the
 * system calls that unmap, reserve and fault in a window are the slowest
 * part of writing, and must not stall the threads waiting for the lock). */
static void unlock_event(void)
{
	char *retired = mt_writer_take_retired(&hot.writer);

	lock_give();
	if (__builtin_expect(retired != NULL, 0))
		mt_writer_release(retired);
	if (__builtin_expect(mt_writer_wanted(&hot.writer), 0))
		mt_writer_prepare(&hot.writer);
}

static void block_init(mt_jsonl_block_t *ev, mt_kind_t kind, mt_fn_t fn)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->fn = fn;
	ev->tid = (uint64_t)current_tid();
}

/* An alloc or alloc.fail with the caller's stack. */
static void block_event(const mt_jsonl_block_t *ev, const uint64_t *ips, int n)
{
	uint64_t stack_id;
	pending_t p;

	pending_make(&p, ev);
	lock_for_event(&p, ips, n, &stack_id);
	if (atomic_load_explicit(&active, memory_order_relaxed)) {
		if (n && !stack_id)
			dropped++; /* the stack could not be stored: count the loss */
		pending_emit(&p, stack_id);
	}
	unlock_event();
}

int mt_trace_stack_depth(void)
{
	return stack_depth;
}

/* The tests' way in: the capture is inlined here, as in a hook. */
void mt_trace_alloc(mt_fn_t fn, void *ptr, size_t size, size_t align)
{
	mt_trace_allocated(fn, ptr, size, align);
}

void mt_trace_alloc_fail(mt_fn_t fn, size_t size, size_t align)
{
	mt_trace_allocated(fn, NULL, size, align);
}

void mt_trace_alloc_at(mt_fn_t fn, void *ptr, size_t size, size_t align,
		       const uint64_t *ips, int n)
{
	int saved = errno;
	mt_jsonl_block_t ev;

	block_init(&ev, MT_KIND_ALLOC, fn);
	ev.has_ptr = 1;
	ev.ptr = (uint64_t)ptr;
	ev.has_size = 1;
	ev.size = size;
	ev.align = align;
	block_event(&ev, ips, n);
	errno = saved;
}

void mt_trace_alloc_fail_at(mt_fn_t fn, size_t size, size_t align,
			    const uint64_t *ips, int n)
{
	int saved = errno;
	mt_jsonl_block_t ev;

	block_init(&ev, MT_KIND_ALLOC_FAIL, fn);
	ev.has_size = 1;
	ev.size = size;
	ev.align = align;
	block_event(&ev, ips, n);
	errno = saved;
}

void mt_trace_free(mt_fn_t fn, void *ptr)
{
	int saved = errno;
	mt_jsonl_block_t ev;
	pending_t p;

	/* Frees carry no stack: the analyzer attributes a block to where it
	 * was allocated, and unwinding every free would double the cost. */
	block_init(&ev, MT_KIND_FREE, fn);
	/* "fn":"free" on a free says nothing (format.md makes fn optional
	 * there) and costs 12 bytes on a good third of the events; a free
	 * made by realloc(p, 0) keeps its fn. */
	if (fn == MT_FN_FREE)
		ev.fn = MT_FN_COUNT;
	ev.has_ptr = 1;
	ev.ptr = (uint64_t)ptr;
	pending_make(&p, &ev);
	pending_body(&p, 0);
	lock_take();
	if (atomic_load_explicit(&active, memory_order_relaxed))
		pending_emit(&p, 0);
	unlock_event();
	errno = saved;
}

void *mt_trace_realloc(mt_fn_t fn, void *ptr, size_t size,
		       void *(*real)(void *, size_t))
{
	return mt_trace_reallocated(fn, ptr, size, real);
}

void *mt_trace_realloc_at(mt_fn_t fn, void *ptr, size_t size,
			  void *(*real)(void *, size_t), const uint64_t *ips,
			  int n)
{
	uint64_t stack_id;
	int saved;
	void *q;
	mt_jsonl_block_t ev;
	pending_t p;

	if (!ptr) {
		q = real(NULL, size);
		if (q)
			mt_trace_alloc_at(fn, q, size, 0, ips, n);
		else
			mt_trace_alloc_fail_at(fn, size, 0, ips, n);
		return q;
	}
	/* The tail and the time do not depend on the outcome, and the head
	 * is usually a resize's: made now, with no lock held. */
	block_init(&ev, MT_KIND_RESIZE, fn);
	ev.has_ptr = 1;
	ev.ptr = (uint64_t)ptr;
	ev.has_size = 1;
	ev.size = size;
	pending_make(&p, &ev);
	/* The real call happens under the lock: the old address may be
	 * handed to another thread the moment realloc frees it, and that
	 * thread's alloc must come after this event in the trace. */
	lock_for_event(&p, ips, n, &stack_id);
	q = real(ptr, size);
	saved = errno;
	if (atomic_load_explicit(&active, memory_order_relaxed)) {
		if (!q || q != ptr) {
			ev.kind = !q && size ? MT_KIND_ALLOC_FAIL :
				  !q	     ? MT_KIND_FREE : MT_KIND_REMAP;
			ev.has_ptr = q || !size;
			ev.has_new_ptr = q != NULL;
			ev.new_ptr = (uint64_t)q;
			ev.has_size = q || size;
			p.head_len = mt_jsonl_block_head(p.rest, &ev);
			p.has_body = 0;
		}
		pending_emit(&p, (q || size) ? stack_id : 0);
	}
	unlock_event();
	errno = saved;
	return q;
}

/* The Nth allocation call of MEMTRACE_FAIL_AT (arm_fail_at() reads it)
 * is recorded as failed, and fails. */
int mt_trace_fail_check(mt_fn_t fn, size_t size, size_t align)
{
	uint64_t at = atomic_load(&mt_trace_fail_at);
	mt_stack_buf_t st;
	mt_jsonl_block_t ev;
	int n;

	if (!at || atomic_fetch_add(&fail_calls, 1) + 1 != at)
		return 0;
	atomic_store(&mt_trace_fail_at, 0);
	n = mt_stack_capture(&st, stack_depth);
	block_init(&ev, MT_KIND_ALLOC_FAIL, fn);
	ev.has_size = 1;
	ev.size = size;
	ev.align = align;
	ev.fail_at = at;
	block_event(&ev, st.ip, n);
	errno = ENOMEM;
	return 1;
}
