/*
 * mt_clock: the preload's clock (mt_clock.h says how and why).  It must
 * never execute RDTSC, itself or through the vDSO, in a thread that
 * forbids it; never wait for another thread (an anchoring interrupted by
 * a signal, or left half done by a fork, only delays the next one); and
 * never let t go back in a thread.
 */
#include "mt_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>

#include "mt_layout.h"
#include "mt_nofd.h"
#include "mt_prefault.h"
#include "mt_real.h"

#if defined(__x86_64__)
/* Whether the calling thread may execute RDTSC: 0 not known (not asked
 * yet, or asked before its last prctl(PR_SET_TSC)), 1 yes, -1 no. */
static __thread __attribute__((tls_model("initial-exec"))) int thread_tsc;

/*
 * A thread inherits its creator's setting, so while no thread of the
 * process has changed its own (every prctl(PR_SET_TSC) through libc is
 * seen), every thread has the answer the first thread got, and a new
 * thread takes it without asking: a program that has locked its system
 * calls down, prctl refused and fatal, may start threads.
 */
static _Atomic int process_tsc; /* the first answer, 1 or -1; 0: none yet */
static _Atomic int tsc_changed;

int mt_clock_thread_tsc_ok(void)
{
	if (__builtin_expect(!thread_tsc, 0)) {
		int how = 0, known = atomic_load(&process_tsc);
		long rc;

		if (known && !atomic_load(&tsc_changed)) {
			thread_tsc = known;
		} else {
			rc = mt_real_syscall6(SYS_prctl, PR_GET_TSC, (long)&how, 0, 0, 0, 0);
			thread_tsc = rc == 0 && how == PR_TSC_ENABLE ? 1 : -1;
			if (!known && !atomic_load(&tsc_changed))
				atomic_store(&process_tsc, thread_tsc);
		}
	}
	return thread_tsc > 0;
}

void mt_clock_thread_tsc_changed(void)
{
	atomic_store(&tsc_changed, 1);
	thread_tsc = 0;
}
#else
int mt_clock_thread_tsc_ok(void)
{
	return 0;
}

void mt_clock_thread_tsc_changed(void)
{
}
#endif

int mt_clock_thread_forbids_tsc(void)
{
#if defined(__x86_64__)
	return !mt_clock_thread_tsc_ok();
#else
	return 0;
#endif
}

/* The last t this thread was given: the next is never smaller. */
static __thread __attribute__((tls_model("initial-exec"))) uint64_t thread_last;

/* Never below this (the TSC's last t, once the process stopped using it). */
static _Atomic uint64_t floor_ns;

/* Set by mt_clock_program_locks_down(): a seccomp filter may be coming,
 * and a vDSO reading makes no system call it could refuse. */
static _Atomic int locked_down;

/*
 * A process's first readings go to the kernel, not the vDSO: a short one
 * (a shell's child between fork and exec, /bin/true) reads the clock a
 * handful of times, and its first reading through the vDSO faults in the
 * vDSO's data pages and code and libc's clock_gettime (five faults a
 * child and its /bin/true here, some 8 us each), where a system call
 * costs 1.  A process that reads on pays SYSCALL_READINGS system calls
 * once.  A forked child counts again (mt_clock_fork_child).
 */
#define SYSCALL_READINGS 16u
static _Atomic uint32_t syscall_readings;

/* Whether the process is still in its first readings, which go to the
 * kernel. */
static int early_in_kernel(void)
{
	return atomic_load_explicit(&syscall_readings, memory_order_relaxed) < SYSCALL_READINGS &&
	       !atomic_load_explicit(&locked_down, memory_order_relaxed);
}

/* Whether this reading goes to the kernel, counted. */
static int by_syscall(void)
{
	if (__builtin_expect(!early_in_kernel(), 1))
		return 0;
	/* Threads reading at once may pass the bound by a few. */
	atomic_fetch_add_explicit(&syscall_readings, 1, memory_order_relaxed);
	return 1;
}

void mt_clock_fork_child(void)
{
	if (atomic_load_explicit(&syscall_readings, memory_order_relaxed))
		atomic_store_explicit(&syscall_readings, 0, memory_order_relaxed);
}

static uint64_t read_clock(clockid_t id)
{
	struct timespec ts = { 0, 0 };
	int kernel = by_syscall();

#if defined(__x86_64__)
	/* The vDSO may execute RDTSC. */
	kernel = kernel || __builtin_expect(!mt_clock_thread_tsc_ok(), 0);
#endif
	if (kernel) {
		mt_real_syscall6(SYS_clock_gettime, id, (long)&ts, 0, 0, 0, 0);
	} else {
		int saved = errno;

		clock_gettime(id, &ts);
		errno = saved;
	}
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t monotonic(void)
{
	uint64_t t = read_clock(CLOCK_MONOTONIC), f = atomic_load_explicit(&floor_ns, memory_order_relaxed);

	return t > f ? t : f;
}

uint64_t mt_clock_realtime(void)
{
	return read_clock(CLOCK_REALTIME);
}

uint64_t mt_clock_monotonic(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

/* ---- whether the TSC may stand for CLOCK_MONOTONIC ---- */

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Whether the line at line (up to its '\n' or NUL) has the word w among
 * the words after its ':'. */
static int line_has_word(const char *line, const char *w)
{
	const char *p = line;
	size_t n = 0;

	while (w[n])
		n++;
	while (*p && *p != '\n' && *p != ':')
		p++;
	if (*p != ':')
		return 0;
	for (p++; *p && *p != '\n';) {
		const char *s;
		size_t i = 0;

		while (is_space(*p))
			p++;
		s = p;
		while (*p && *p != '\n' && !is_space(*p))
			p++;
		if ((size_t)(p - s) != n)
			continue;
		while (i < n && s[i] == w[i])
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

/* The first line of text that is "flags", spaces, ':'; NULL if none. */
static const char *flags_line(const char *text)
{
	for (const char *p = text; p && *p;) {
		const char *q = p;

		if (q[0] == 'f' && q[1] == 'l' && q[2] == 'a' && q[3] == 'g' && q[4] == 's') {
			q += 5;
			while (is_space(*q))
				q++;
			if (*q == ':')
				return p;
		}
		while (*p && *p != '\n')
			p++;
		if (*p)
			p++;
	}
	return NULL;
}

/* why = a, then b's first n bytes, then c: no printf in a hook. */
static void say_why(char *why, size_t cap, const char *a, const char *b, size_t n,
		    const char *c)
{
	size_t at = 0;

	for (; *a && at + 1 < cap; a++)
		why[at++] = *a;
	for (size_t i = 0; i < n && b[i] && at + 1 < cap; i++)
		why[at++] = b[i];
	for (; *c && at + 1 < cap; c++)
		why[at++] = *c;
	if (cap)
		why[at] = 0;
}

/* Which clock the clocksource's name (up to its '\n' or NUL) is: 1 the
 * TSC itself; 2 a hypervisor's clock that the kernel scales from the TSC
 * with a page the hypervisor keeps (kvm-clock's pvclock, Hyper-V's TSC
 * page); 0 another. */
static int clocksource_kind(const char *name)
{
	static const char *const scaled[] = { "kvm-clock", "hyperv_clocksource_tsc_page" };
	size_t n = 0;

	while (name[n] && name[n] != '\n')
		n++;
	if (n == 3 && !memcmp(name, "tsc", 3))
		return 1;
	for (size_t i = 0; i < sizeof(scaled) / sizeof(scaled[0]); i++)
		if (n == strlen(scaled[i]) && !memcmp(name, scaled[i], n))
			return 2;
	return 0;
}

int mt_clock_tsc_usable(const char *cpuinfo, const char *clocksource, int vdso_in_user,
			char *why, size_t cap)
{
	static const char *const need[] = { "constant_tsc", "nonstop_tsc" };
	const char *flags;
	size_t n = 0;
	int kind;

	if (!clocksource) {
		say_why(why, cap, "the kernel's clocksource not readable", "", 0, "");
		return 0;
	}
	while (clocksource[n] && clocksource[n] != '\n')
		n++;
	kind = clocksource_kind(clocksource);
	if (!kind) {
		say_why(why, cap, "the kernel's clocksource is ", clocksource, n < 40 ? n : 40,
			", not the TSC's");
		return 0;
	}
	if (kind == 2 && !vdso_in_user) {
		say_why(why, cap, "the kernel's clocksource is ", clocksource, n < 40 ? n : 40,
			", which the vDSO reads by a system call");
		return 0;
	}
	flags = cpuinfo ? flags_line(cpuinfo) : NULL;
	if (!flags) {
		say_why(why, cap, cpuinfo ? "no flags line in /proc/cpuinfo" :
			"/proc/cpuinfo not readable", "", 0, "");
		return 0;
	}
	for (int i = 0; i < 2; i++)
		if (!line_has_word(flags, need[i])) {
			say_why(why, cap, "/proc/cpuinfo's flags lack ", need[i], 20, "");
			return 0;
		}
	return 1;
}

#if defined(__x86_64__)

/* ---- the conversion ---- */

#define INTERVAL_NS 1000000u /* an anchor a millisecond of events */
#define LIMIT_INTERVALS 4    /* past that, clock_gettime() */
/* Readings before the first calibration: judging the machine (mostly
 * /proc/cpuinfo) costs some 70 us, what the TSC saves on this many
 * readings, so a short process never judges it. */
#define EARLY_READINGS 4096u
#define MAX_AHEAD_NS 20000u  /* a calibration this far ahead is wrong */
#define MAX_BRACKET_NS 300u  /* a measurement no looser */
#define FIRST_BRACKET 2048u  /* counts, before the rate is known */
#define SLOTS 16u

/*
 * One anchor: t = ns + ((tsc' - tsc) * mult + frac) >> 32 for tsc' up
 * to next counts past tsc.  Written only while not published (gen 0
 * during the writing); readers check gen after reading (a seqlock per
 * slot, never waited on: a reader that finds it changed reads the clock).
 */
typedef struct {
	_Atomic uint64_t gen;   /* the generation held; 0 while written */
	_Atomic uint64_t tsc;   /* the counter at the anchor */
	_Atomic uint64_t ns;    /* t there, whole nanoseconds */
	_Atomic uint64_t frac;  /* and its fraction, in 2^-32 ns */
	_Atomic uint64_t mult;  /* ns per count, times 2^32; 0: a measurement only */
	_Atomic uint64_t next;  /* counts past tsc when to anchor again */
	_Atomic uint64_t limit; /* counts past tsc beyond which t is the clock's */
	_Atomic uint64_t m_tsc; /* the measurement it came from: the counter */
	_Atomic uint64_t m_ns;  /* and CLOCK_MONOTONIC */
} __attribute__((aligned(64))) anchor_t;

typedef struct {
	uint64_t tsc, ns, frac, mult, next, limit, m_tsc, m_ns;
} view_t;

/* Slot 0 stays empty: generation 0 means none published.  Cold: written
 * at the first calibration, which a short process never reaches. */
static anchor_t anchors[SLOTS] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(anchors);
static _Atomic uint64_t published; /* the generation in use; 0: none */
static _Atomic uint64_t tickets;   /* generations handed out */
static _Atomic uint64_t claim_until; /* no other anchoring before this count */
static _Atomic uint64_t first_mult;  /* the first calibration's rate */
static _Atomic uint64_t early_readings; /* up to EARLY_READINGS */

/* 0 not asked, 2 being asked, 1 the TSC may be used, -1 it may not. */
static _Atomic int verdict;
static const char *_Atomic why_not = "the TSC is not calibrated yet";
static char verdict_why[160];

#define LD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define ST(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

/* For the calibration: LFENCE first, so the counter is read after every
 * instruction before it (clock_gettime() is bracketed tightly). */
static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return (uint64_t)hi << 32 | lo;
}

/* For an event: no fence, so the counter may be read while the
 * instructions before it (the program's malloc, a lock it took) are still
 * under way, up to a memory access early; mt_clock.h says why that is
 * enough. */
static inline uint64_t rdtsc_unfenced(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t convert(const view_t *v, uint64_t d, uint64_t *frac)
{
	unsigned __int128 s = (unsigned __int128)d * v->mult + v->frac;

	if (frac)
		*frac = (uint32_t)s;
	return v->ns + (uint64_t)(s >> 32);
}

/* A consistent copy of generation g's anchor: 1, or 0 (none, or rewritten). */
static int read_anchor(uint64_t g, view_t *v)
{
	const anchor_t *a = &anchors[g % SLOTS];

	v->tsc = LD(a->tsc);
	v->ns = LD(a->ns);
	v->frac = LD(a->frac);
	v->mult = LD(a->mult);
	v->next = LD(a->next);
	v->limit = LD(a->limit);
	v->m_tsc = LD(a->m_tsc);
	v->m_ns = LD(a->m_ns);
	atomic_thread_fence(memory_order_acquire);
	return g && LD(a->gen) == g;
}

/* Write v in a slot of its own and make it the anchor in use, if the one
 * in use is still g (another anchoring may have come first). */
static void publish(uint64_t g, const view_t *v)
{
	uint64_t ticket;
	anchor_t *a;

	do
		ticket = atomic_fetch_add(&tickets, 1) + 1;
	while (ticket % SLOTS == 0 || ticket % SLOTS == g % SLOTS);
	a = &anchors[ticket % SLOTS];
	ST(a->gen, 0);
	atomic_thread_fence(memory_order_release);
	ST(a->tsc, v->tsc);
	ST(a->ns, v->ns);
	ST(a->frac, v->frac);
	ST(a->mult, v->mult);
	ST(a->next, v->next);
	ST(a->limit, v->limit);
	ST(a->m_tsc, v->m_tsc);
	ST(a->m_ns, v->m_ns);
	atomic_store_explicit(&a->gen, ticket, memory_order_release);
	if (atomic_load(&verdict) >= 0)
		atomic_compare_exchange_strong(&published, &g, ticket);
}

/* The process stops using the TSC: t is the clock's, never below floor. */
static void stop(const char *why, uint64_t floor)
{
	uint64_t f = atomic_load(&floor_ns);

	atomic_store(&why_not, why);
	while (f < floor && !atomic_compare_exchange_weak(&floor_ns, &f, floor))
		;
	atomic_store(&verdict, -1);
	atomic_store(&published, 0);
}

/* In mt_nofd's child: the start of /proc/cpuinfo and the clocksource. */
static char cpuinfo_buf[4096] MT_LAYOUT_COLD, clocksource_buf[64];
MT_PREFAULT_COLD(cpuinfo_buf);

static long read_into(const char *path, char *buf, size_t cap)
{
	size_t have = 0;
	long fd, n;

	do
		fd = mt_real_syscall6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	while (fd == -EINTR);
	if (fd < 0)
		return fd;
	while (have < cap - 1) {
		n = mt_real_syscall6(SYS_read, fd, (long)(buf + have), (long)(cap - 1 - have), 0, 0, 0);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	buf[have] = 0;
	mt_real_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	return (long)have;
}

/*
 * Whether clock_gettime(CLOCK_MONOTONIC) returns without entering the
 * kernel (mt_clock.h): the best of eight calls through the vDSO takes
 * under half the best of eight getpid system calls, the cheapest there
 * is and one no seccomp filter refuses.  The vDSO reads kvm-clock or
 * Hyper-V's TSC page itself only while the hypervisor says every CPU's
 * counter is in step under one scale (kvm-clock's PVCLOCK_TSC_STABLE_BIT,
 * a valid TSC page); otherwise it makes the clock_gettime system call,
 * which costs at least what getpid does.  A machine whose system calls
 * cost less than twice the vDSO's reading is judged to enter the kernel:
 * the error, if any, is the safe one.  Only in a thread that may execute
 * RDTSC (the timing's, and the vDSO's own).  Timed once a process (a
 * forked child keeps the answer): near the bound two timings could
 * disagree, and the process's verdict and what its callers ask must not.
 * read_machine calls it in mt_nofd's child too, whose rules it keeps:
 * clock_gettime() of CLOCK_MONOTONIC cannot fail, so sets no errno, and
 * takes no lock.
 */
static _Atomic int vdso_timed; /* 0 not yet; 1 in user space, -1 not */

int mt_clock_vdso_in_user(void)
{
	uint64_t best[2] = { UINT64_MAX, UINT64_MAX };
	int how = 0, saved = errno, timed = atomic_load(&vdso_timed);

	if (timed)
		return timed > 0;
	if (mt_real_syscall6(SYS_prctl, PR_GET_TSC, (long)&how, 0, 0, 0, 0) != 0 ||
	    how != PR_TSC_ENABLE)
		return 0;
	for (int i = 0; i < 16; i++) {
		struct timespec ts;
		uint64_t a = rdtsc(), b;

		if (i % 2)
			mt_real_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
		else
			clock_gettime(CLOCK_MONOTONIC, &ts);
		b = rdtsc();
		if (b - a < best[i % 2])
			best[i % 2] = b - a;
	}
	errno = saved;
	atomic_store(&vdso_timed, best[0] < best[1] / 2 ? 1 : -1);
	return best[0] < best[1] / 2;
}

/* In mt_nofd's child, or in place: rc[1] the clocksource's length; where
 * it is the TSC's, rc[0] /proc/cpuinfo's; where it is a hypervisor's,
 * rc[2] whether the vDSO reads it in user space. */
static long read_machine(void *arg)
{
	long *rc = arg;
	int kind;

	/* The clocksource first: /proc/cpuinfo can take milliseconds (the
	 * kernel asks each CPU its frequency), and is read only where the
	 * kernel keeps time by the TSC. */
	rc[1] = read_into("/sys/devices/system/clocksource/clocksource0/current_clocksource",
			  clocksource_buf, sizeof(clocksource_buf));
	if (rc[1] <= 0)
		return 0;
	kind = clocksource_kind(clocksource_buf);
	if (kind == 2)
		rc[2] = mt_clock_vdso_in_user();
	if (kind == 1 || rc[2] > 0)
		rc[0] = read_into("/proc/cpuinfo", cpuinfo_buf, sizeof(cpuinfo_buf));
	return 0;
}

/* Ask the machine once: when the calibration is due, or before the
 * program installs a seccomp filter (the child's clone could be refused,
 * or fatal, after it), or at the start of a process that starts under
 * one.  A process that has never had a thread asks in place, every
 * signal blocked (mt_nofd_set_alone), as its start would. */
static void decide(void)
{
	long rc[3] = { -1, -1, 0 };
	int expected = 0, in_place = 0;

	if (!atomic_compare_exchange_strong(&verdict, &expected, 2))
		return;
	if (atomic_load(&locked_down)) {
		stop("the program installed a seccomp filter before the TSC was judged", 0);
		return;
	}
	if (__libc_single_threaded && !mt_nofd_alone()) {
		mt_nofd_set_alone(1);
		in_place = 1;
	}
	if (mt_nofd_run(read_machine, rc) < 0)
		rc[0] = rc[1] = rc[2] = -1;
	if (in_place)
		mt_nofd_set_alone(0);
	if (mt_clock_tsc_usable(rc[0] > 0 ? cpuinfo_buf : NULL,
				rc[1] > 0 ? clocksource_buf : NULL, rc[2] > 0, verdict_why,
				sizeof(verdict_why))) {
		atomic_store(&verdict, 1);
	} else {
		stop(verdict_why, 0);
	}
}

void mt_clock_program_locks_down(void)
{
	if (atomic_load(&verdict) == 0)
		decide();
	atomic_store(&locked_down, 1);
}

/* CLOCK_MONOTONIC and the counter at the same moment, the tightest of
 * four tries: 1, or 0 when none was within max counts. */
static int measure(uint64_t max, uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	int saved = errno;

	for (int i = 0; i < 4; i++) {
		struct timespec ts = { 0, 0 };
		uint64_t a = rdtsc(), b;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		b = rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		}
	}
	errno = saved;
	return best <= max;
}

static uint64_t counts(uint64_t ns, uint64_t mult)
{
	return (uint64_t)(((unsigned __int128)ns << 32) / mult);
}

/*
 * Anchor anew, by the one thread that claimed it: the first measurement;
 * the first rate, a millisecond later; then the kernel clock's rate over
 * the last interval, from the point the line in use had reached (or the
 * measured time, when that is later).
 */
static void anchor(void)
{
	uint64_t g = atomic_load_explicit(&published, memory_order_acquire);
	uint64_t fm = atomic_load(&first_mult), tsc = 0, ns = 0, dt, dn, mult, d, cur, frac;
	view_t p, v = { 0 };
	int have = read_anchor(g, &p);

	if (!measure(fm ? counts(MAX_BRACKET_NS, fm) : FIRST_BRACKET, &tsc, &ns))
		return;
	v.tsc = v.m_tsc = tsc;
	v.ns = v.m_ns = ns;
	if (!have) {
		publish(g, &v); /* a measurement: the rate comes from the next */
		return;
	}
	dt = tsc - p.m_tsc;
	dn = ns - p.m_ns;
	if ((int64_t)dt <= 0 || (int64_t)dn < 0) {
		stop("the TSC went back", 0);
		return;
	}
	if (dn < INTERVAL_NS && !p.mult)
		return;
	if (!p.mult) {
		decide();
		if (atomic_load(&verdict) != 1)
			return;
	}
	mult = (uint64_t)(((unsigned __int128)dn << 32) / dt);
	if (!p.mult) {
		/* 10 MHz to 100 GHz: anything else is no counter of time. */
		if (mult < (1ull << 32) / 100 || mult > (100ull << 32)) {
			stop("the TSC's rate is implausible", 0);
			return;
		}
		atomic_store(&first_mult, mult);
		fm = mult;
	} else if (mult > fm + fm / 100 || mult < fm - fm / 100) {
		stop("the TSC's rate moved over 1 %", 0);
		return;
	} else {
		d = tsc - p.tsc;
		cur = convert(&p, d < p.limit ? d : p.limit, &frac);
		if (cur > ns) {
			/* Ahead: slow down, never back, to meet the clock
			 * an interval on. */
			if (cur - ns > MAX_AHEAD_NS) {
				stop("the TSC's calibration was over 20 us ahead", cur + 1);
				return;
			}
			v.ns = cur;
			v.frac = frac;
			mult -= (uint64_t)((unsigned __int128)mult * (cur - ns) / INTERVAL_NS);
		}
	}
	v.mult = mult;
	v.next = counts(INTERVAL_NS, mult);
	v.limit = LIMIT_INTERVALS * v.next;
	publish(g, &v);
}

/* Whether this thread anchors now: the first to ask once the last claim
 * has expired. */
static void try_anchor(uint64_t now)
{
	uint64_t until = atomic_load(&claim_until), fm = atomic_load(&first_mult);
	uint64_t lease = fm ? counts(INTERVAL_NS / 4, fm) : 1u << 20;

	if ((int64_t)(now - until) < 0 ||
	    !atomic_compare_exchange_strong(&claim_until, &until, now + lease))
		return;
	anchor();
}

/* Past the anchor's interval, before any, or with a torn one; now is
 * the counter when have_now (read here only when the TSC is in use). */
static __attribute__((noinline)) uint64_t slow_now(uint64_t now, int have_now)
{
	uint64_t g = atomic_load_explicit(&published, memory_order_acquire), d;
	int v_ok, verdict_now = atomic_load_explicit(&verdict, memory_order_relaxed);
	view_t v;

	/* A forked child keeps its parent's calibration, whose anchor is
	 * mostly too old to convert from: its first readings are the
	 * kernel's too, rather than an anchoring's, which reads the clock
	 * through the vDSO. */
	if (verdict_now < 0 || early_in_kernel())
		return monotonic();
	if (!g) {
		uint64_t r = LD(early_readings);

		/* Too few readings yet for the calibration to pay: no
		 * counter read either. */
		if (r < EARLY_READINGS) {
			ST(early_readings, r + 1); /* a count lost to a race is no matter */
			return monotonic();
		}
	}
	if (!have_now)
		now = rdtsc();
	v_ok = read_anchor(g, &v);
	if (v_ok && v.mult) {
		d = now - v.tsc;
		if ((int64_t)d < 0) /* read before the anchor's own measurement */
			return v.ns;
		if (d > v.next)
			try_anchor(now);
		if (d <= v.limit)
			return convert(&v, d, NULL);
	} else if (!v_ok && g) {
		return monotonic(); /* rewritten under us: the next is whole */
	} else {
		/* None yet, or calibrating: the clock's, and the next
		 * measurement once an interval has passed. */
		uint64_t t = monotonic();

		if (!v_ok || t - v.m_ns >= INTERVAL_NS)
			try_anchor(now);
		return t;
	}
	return monotonic();
}

uint64_t mt_clock_now(void)
{
	uint64_t t, g;

	if (atomic_load_explicit(&verdict, memory_order_relaxed) < 0) {
		t = monotonic(); /* the machine's or the calibration's no */
	} else if (__builtin_expect(mt_clock_thread_tsc_ok(), 1)) {
		g = atomic_load_explicit(&published, memory_order_acquire);
		if (__builtin_expect(g != 0, 1)) {
			const anchor_t *a = &anchors[g % SLOTS];
			uint64_t tsc = LD(a->tsc), ns = LD(a->ns), frac = LD(a->frac);
			uint64_t mult = LD(a->mult), next = LD(a->next), now = rdtsc_unfenced(), d = now - tsc;

			atomic_thread_fence(memory_order_acquire);
			if (__builtin_expect(d <= next && LD(a->gen) == g, 1))
				t = ns + (uint64_t)(((unsigned __int128)d * mult + frac) >> 32);
			else
				t = slow_now(now, 1);
		} else {
			t = slow_now(0, 0);
		}
	} else {
		t = monotonic();
	}
	if (__builtin_expect(t < thread_last, 0))
		t = thread_last;
	thread_last = t;
	return t;
}

int mt_clock_tsc_in_use(const char **why)
{
	uint64_t g = atomic_load(&published);
	view_t v;

	if (atomic_load(&verdict) == 1 && read_anchor(g, &v) && v.mult &&
	    mt_clock_thread_tsc_ok())
		return 1;
	if (!mt_clock_thread_tsc_ok())
		*why = "this thread may not execute RDTSC";
	else if (atomic_load(&verdict) == 0)
		*why = "the machine is not judged yet";
	else
		*why = atomic_load(&why_not);
	return 0;
}

#else

void mt_clock_program_locks_down(void)
{
	atomic_store(&locked_down, 1);
}

int mt_clock_vdso_in_user(void)
{
	return 0;
}

uint64_t mt_clock_now(void)
{
	uint64_t t = monotonic();

	if (t < thread_last)
		t = thread_last;
	thread_last = t;
	return t;
}

int mt_clock_tsc_in_use(const char **why)
{
	*why = "RDTSC is x86-64's (not this machine)";
	return 0;
}

#endif
