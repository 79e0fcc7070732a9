/*
 * mt_clock: CLOCK_MONOTONIC for the hot path, from the TSC when the
 * kernel keeps time with it (mt_clock.h says how and how exactly).  It
 * must never allocate, lock or block: a reader that meets an anchor being
 * written reads clock_gettime() instead of waiting for it.
 */
#include "mt_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#define MT_CLOCK_HAS_TSC 1
#else
#define MT_CLOCK_HAS_TSC 0
#endif

/* What a reading uses; the zero state, before mt_clock_init(), is
 * clock_gettime() alone. */
enum { MODE_GETTIME, MODE_CALIBRATING, MODE_TSC };

/* An anchor is clock_gettime() exact; the rate is worth a millisecond of
 * extrapolation at most. */
#define ANCHOR_NS 1000000u

/* Read on every event, written once a millisecond: a cache line of its
 * own, so that no other module's stores take it from the readers. */
static struct {
	atomic_int mode;
	/* The seqlock over the anchor: odd while one is being written. */
	atomic_uint gen;
	_Atomic uint64_t anchor_tsc, anchor_ns;
	_Atomic uint64_t mult;  /* ns per cycle, 32.32 fixed point */
	_Atomic uint64_t reach; /* cycles an anchor is good for */
	/* The first reading: the rate is taken over the time since it.
	 * Written by mt_clock_init() only, read by anchor writers. */
	uint64_t base_tsc, base_ns;
} __attribute__((aligned(64))) clk;

static int vdso_ok(void);

/*
 * clock_gettime() through the vDSO, but where the calling thread forbids
 * RDTSC: the vDSO reads the counter itself when the kernel keeps time
 * with it, and would kill such a thread.  The system call reads the same
 * clock in the kernel, where the counter is always readable.
 */
static uint64_t read_clock(clockid_t id)
{
	struct timespec ts;

	if (__builtin_expect(vdso_ok(), 1)) {
		clock_gettime(id, &ts);
	} else {
		int saved = errno;

		syscall(SYS_clock_gettime, id, &ts);
		errno = saved;
	}
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t gettime_ns(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

uint64_t mt_clock_realtime(void)
{
	return read_clock(CLOCK_REALTIME);
}

#if MT_CLOCK_HAS_TSC
/* Whether the calling thread may execute RDTSC: 0 not known (not asked
 * yet, or asked before its last prctl(PR_SET_TSC)), 1 yes, -1 no (it
 * asked for SIGSEGV on RDTSC, and RDTSC would kill it). */
static __thread __attribute__((tls_model("initial-exec"))) int thread_tsc;

int mt_clock_thread_tsc_ok(void)
{
	if (__builtin_expect(!thread_tsc, 0)) {
		int saved = errno, how = 0;

		thread_tsc = prctl(PR_GET_TSC, &how) == 0 && how == PR_TSC_ENABLE ? 1 : -1;
		errno = saved;
	}
	return thread_tsc > 0;
}

void mt_clock_thread_tsc_changed(void)
{
	thread_tsc = 0;
}

int mt_clock_thread_forbids_tsc(void)
{
	return !mt_clock_thread_tsc_ok();
}

static int vdso_ok(void)
{
	return mt_clock_thread_tsc_ok();
}

/* mt_clock_test_skew(): what the calling thread's counter is off by. */
static __thread __attribute__((tls_model("initial-exec"))) uint64_t skew;

static inline uint64_t read_tsc(void)
{
	return __rdtsc() + skew;
}
#else
int mt_clock_thread_tsc_ok(void)
{
	return 0;
}

void mt_clock_thread_tsc_changed(void)
{
}

int mt_clock_thread_forbids_tsc(void)
{
	return 0;
}

static int vdso_ok(void)
{
	return 1; /* no TSC to forbid */
}

static uint64_t skew;

static inline uint64_t read_tsc(void)
{
	return 0;
}
#endif

void mt_clock_test_skew(int64_t cycles)
{
	skew = (uint64_t)cycles;
}

int mt_clock_tsc_usable(void)
{
#if MT_CLOCK_HAS_TSC
	unsigned a, b, c, d;
	char src[16];
	ssize_t n;
	int fd;

	/* CPUID 0x80000007, EDX bit 8: the TSC runs at one rate in every
	 * power state, on every core. */
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
		return 0;
	/* And the kernel keeps time with it: "tsc", which it would not have
	 * chosen for a counter that drifts between CPUs or stops, or
	 * "kvm-clock", which is the TSC scaled by figures the hypervisor
	 * gives (its vDSO reads the counter itself only where the hypervisor
	 * says the counter is one on every vCPU, which is not asked here).
	 * Either way the check at every anchor (strays()) is the safeguard:
	 * it drops a counter that does not follow the clock, whose readings
	 * are wrong for the millisecond before it at most; counters of two
	 * CPUs apart by less than it allows go unseen. */
	fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, src, sizeof(src));
	close(fd);
	return (n == 4 && !memcmp(src, "tsc\n", 4)) ||
	       (n == 10 && !memcmp(src, "kvm-clock\n", 10));
#else
	return 0;
#endif
}

/*
 * A clock_gettime() reading and the TSC at the same moment: the counter
 * read on both sides, its midpoint taken, and the pair refused when the
 * two are far apart (a thread preempted in between would make an anchor,
 * or the rate, wrong by the time it was away).  A clock_gettime() costs
 * some 100 cycles; PAIR_CYCLES is a microsecond or so.  Returns 0 or -1.
 */
#define PAIR_CYCLES 4096u
#define PAIR_TRIES 4

static int read_pair(uint64_t *ns, uint64_t *tsc)
{
	if (!mt_clock_thread_tsc_ok())
		return -1;
	for (int i = 0; i < PAIR_TRIES; i++) {
		uint64_t before = read_tsc(), n = gettime_ns(), after = read_tsc();

		if (after >= before && after - before <= PAIR_CYCLES) {
			*ns = n;
			*tsc = before + (after - before) / 2;
			return 0;
		}
	}
	return -1;
}

/* clock_gettime() alone, through a calibration from now. */
static void calibrate(void)
{
	atomic_store(&clk.mode, MODE_GETTIME);
	atomic_store(&clk.gen, 0);
	atomic_store(&clk.reach, 0);
	if (read_pair(&clk.base_ns, &clk.base_tsc) < 0)
		return; /* never a quiet moment: clock_gettime() it is */
	atomic_store(&clk.mode, MODE_CALIBRATING);
}

void mt_clock_init(int allow_tsc)
{
	atomic_store(&clk.mode, MODE_GETTIME);
	if (allow_tsc && mt_clock_tsc_usable())
		calibrate();
}

void mt_clock_fork_child(void)
{
	if (atomic_load(&clk.mode) != MODE_GETTIME)
		calibrate();
}

/* ns = anchor + cycles * rate, for cycles within an anchor's reach. */
static inline uint64_t scale(uint64_t cycles, uint64_t m)
{
	return (uint64_t)(((unsigned __int128)cycles * m) >> 32);
}

/*
 * Whether the pair (ns, tsc) is further from what the anchor in place
 * makes of tsc than a counter that follows the clock can be (no anchor
 * yet: nothing to hold it to).  That is STRAY_NS, and a part in
 * STRAY_SHIFT's power of two of the time since the anchor: the rate taken
 * over a process's first millisecond is good to some parts in 10^5
 * (8e-5 seen here), and an NTP daemon may slew CLOCK_MONOTONIC by up to
 * 500 parts in 10^6, so after a long idle spell (a second: tens of
 * microseconds) the prediction strays by more than STRAY_NS alone.  A
 * counter that does not follow the clock (another CPU's counter set
 * apart, a guest moved to a host whose counter runs at another rate) is
 * never trusted again by this process: every later reading is
 * clock_gettime()'s.  Called by the anchor's writer, with the seqlock
 * taken.
 */
#define STRAY_NS 20000u
#define STRAY_SHIFT 10 /* about 1,000 parts in 10^6 */

static int strays(uint64_t ns, uint64_t tsc)
{
	uint64_t at = atomic_load_explicit(&clk.anchor_tsc, memory_order_relaxed);
	uint64_t an = atomic_load_explicit(&clk.anchor_ns, memory_order_relaxed);
	uint64_t m = atomic_load_explicit(&clk.mult, memory_order_relaxed);
	uint64_t want, allow;

	if (!atomic_load_explicit(&clk.reach, memory_order_relaxed))
		return 0;
	want = tsc >= at ? an + scale(tsc - at, m) : an - scale(at - tsc, m);
	allow = STRAY_NS + (ns > an ? (ns - an) >> STRAY_SHIFT : 0);
	return want > ns ? want - ns > allow : ns - want > allow;
}

/*
 * Read clock_gettime(), and make it the anchor when no other thread is
 * writing one (seqlock generation g, even, is still current): the rate
 * over the time since the first reading, and how many cycles make
 * ANCHOR_NS at that rate.  Returns the reading.
 */
static uint64_t reanchor(unsigned g)
{
	uint64_t ns, tsc, m, r;

	if (read_pair(&ns, &tsc) < 0)
		return gettime_ns(); /* the next reading tries again */
	if (tsc <= clk.base_tsc || ns <= clk.base_ns) {
		/* A counter behind the first reading is not the one whose
		 * rate was taken. */
		atomic_store(&clk.mode, MODE_GETTIME);
		return ns;
	}
	if (!atomic_compare_exchange_strong_explicit(&clk.gen, &g, g + 1,
						     memory_order_acquire,
						     memory_order_relaxed))
		return ns;
	atomic_thread_fence(memory_order_release);
	if (strays(ns, tsc)) {
		atomic_store(&clk.mode, MODE_GETTIME);
		atomic_store_explicit(&clk.gen, g + 2, memory_order_release);
		return ns;
	}
	m = (uint64_t)(((unsigned __int128)(ns - clk.base_ns) << 32) /
		       (tsc - clk.base_tsc));
	r = m ? (uint64_t)(((unsigned __int128)ANCHOR_NS << 32) / m) : 0;
	atomic_store_explicit(&clk.anchor_tsc, tsc, memory_order_relaxed);
	atomic_store_explicit(&clk.anchor_ns, ns, memory_order_relaxed);
	atomic_store_explicit(&clk.mult, m, memory_order_relaxed);
	atomic_store_explicit(&clk.reach, r, memory_order_relaxed);
	atomic_store_explicit(&clk.gen, g + 2, memory_order_release);
	return ns;
}

static uint64_t calibrating_now(void)
{
	unsigned g = atomic_load_explicit(&clk.gen, memory_order_acquire);
	uint64_t ns = gettime_ns();

	/* A millisecond since the first reading makes a rate good to some
	 * parts in 10^5, and every anchor after it refines it. */
	if (ns - clk.base_ns < ANCHOR_NS || (g & 1))
		return ns;
	ns = reanchor(g);
	if (atomic_load_explicit(&clk.reach, memory_order_relaxed)) {
		int cal = MODE_CALIBRATING;

		atomic_compare_exchange_strong(&clk.mode, &cal, MODE_TSC);
	}
	return ns;
}

uint64_t mt_clock_now(void)
{
	unsigned g, g2;
	uint64_t at, an, m, r, tsc, d;
	int md = atomic_load_explicit(&clk.mode, memory_order_acquire);

	if (__builtin_expect(md != MODE_TSC, 0))
		return md == MODE_CALIBRATING ? calibrating_now() : gettime_ns();
	if (__builtin_expect(!mt_clock_thread_tsc_ok(), 0))
		return gettime_ns();
	g = atomic_load_explicit(&clk.gen, memory_order_acquire);
	at = atomic_load_explicit(&clk.anchor_tsc, memory_order_relaxed);
	an = atomic_load_explicit(&clk.anchor_ns, memory_order_relaxed);
	m = atomic_load_explicit(&clk.mult, memory_order_relaxed);
	r = atomic_load_explicit(&clk.reach, memory_order_relaxed);
	tsc = read_tsc();
	atomic_thread_fence(memory_order_acquire);
	g2 = atomic_load_explicit(&clk.gen, memory_order_relaxed);
	if (__builtin_expect((g & 1) || g != g2, 0))
		return gettime_ns(); /* an anchor is being written */
	d = tsc - at;
	if (__builtin_expect(d > r, 0)) {
		/* Another CPU's counter a hair behind the one that took the
		 * anchor (the kernel keeps them within a few cycles) reads
		 * as the anchor, rather than every such CPU taking an anchor
		 * in turn; one far behind or past the reach anchors anew. */
		if (at - tsc <= r >> 10)
			return an;
		return reanchor(g);
	}
	return an + scale(d, m);
}

int mt_clock_uses_tsc(void)
{
	return atomic_load(&clk.mode) == MODE_TSC;
}
