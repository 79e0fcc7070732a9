/*
 * mt_clock: CLOCK_MONOTONIC in nanoseconds for the preload's hot path.
 *
 * Every block event reads the clock once, and clock_gettime() cost about
 * 24 ns a call here where reading the time-stamp counter costs 10: the
 * vDSO orders its read (rdtscp or lfence) and retries a seqlock on each
 * call.  When the kernel itself keeps time with the TSC (its clocksource
 * is "tsc", or "kvm-clock": the TSC scaled by the hypervisor's figures)
 * and the CPU says the counter is invariant, mt_clock reads the TSC and
 * converts it with a rate it measures against clock_gettime():
 *
 *  - the first millisecond after mt_clock_init() is read with
 *    clock_gettime() alone; the first call after it takes the rate, the
 *    cycles between then and the first reading over the nanoseconds
 *    between them;
 *  - a reading extrapolates from an anchor, a (TSC, clock_gettime) pair,
 *    and the first call more than a millisecond of cycles after the anchor
 *    (or more than a microsecond before it: another CPU's counter; less
 *    reads as the anchor) reads clock_gettime() instead and makes that
 *    reading the anchor, with the rate over the whole time since the
 *    first reading, so the rate gets finer as the run goes on;
 *  - where an anchor's clock_gettime() is more than 20 us (and a
 *    thousandth of the time since) from what the anchor before it makes
 *    of the counter (a CPU whose counter is set apart from the others',
 *    a guest moved to a host whose counter runs at another rate), or the
 *    counter reads behind the first reading, the counter is never read
 *    again: every later reading is clock_gettime()'s.
 *
 * So a reading is clock_gettime()'s exactly at each anchor and strays from
 * it between anchors by what the rate's error makes of at most a
 * millisecond: tens of nanoseconds (tests/check_clock.c holds it within a
 * few microseconds of clock_gettime() read on either side).  Readings of
 * one thread may step back by as much at an anchor; the trace's t never
 * does (mt_trace.c clamps it under the trace lock).  Anywhere else (another
 * clocksource, no invariant TSC, not x86-64) every reading is
 * clock_gettime(CLOCK_MONOTONIC).
 *
 * It must never allocate, take a lock, or make a system call but
 * clock_gettime() (a vDSO call, or the system call itself in a thread
 * that forbids RDTSC) on the hot path; mt_clock_init() reads one
 * sysfs file.  Readers on any thread, one writer of an anchor at a time
 * (a seqlock whose writer is whoever wins a compare-and-swap; the others
 * read clock_gettime() meanwhile), async-signal-safe.
 */
#ifndef MT_CLOCK_H
#define MT_CLOCK_H

#include <stdint.h>

/* Choose the source and take the first reading.  allow_tsc 0 forces
 * clock_gettime() (the tests use both).  Call once, before the first
 * mt_clock_now(), with no other thread reading the clock. */
void mt_clock_init(int allow_tsc);

/* CLOCK_MONOTONIC now, in nanoseconds. */
uint64_t mt_clock_now(void);

/* CLOCK_REALTIME now, in nanoseconds since the epoch, from
 * clock_gettime() itself (the trace's start time). */
uint64_t mt_clock_realtime(void);

/* In the child of a fork: calibrate afresh when the TSC was in use (an
 * anchor another thread was writing at the fork is never finished here),
 * without asking the machine again what it allows. */
void mt_clock_fork_child(void);

/* 1 when readings come from the TSC (once the rate is taken), 0 when from
 * clock_gettime() alone; for tests and the trace's header. */
int mt_clock_uses_tsc(void);

/* 1 when this machine allows the TSC source (invariant TSC, clocksource
 * "tsc"), whatever mt_clock_init() was told. */
int mt_clock_tsc_usable(void);

/* 1 when the calling thread may execute RDTSC: on x86-64, unless it asked
 * prctl(PR_SET_TSC, PR_TSC_SIGSEGV).  The kernel is asked once per thread
 * and again after each mt_clock_thread_tsc_changed().  In a thread that
 * may not, mt_clock_now() and mt_clock_realtime() read the clock with the
 * clock_gettime system call, never the vDSO (which executes RDTSC where
 * the clocksource is the TSC), and the trace lock times nothing. */
int mt_clock_thread_tsc_ok(void);

/* 1 when the calling thread asked for SIGSEGV on RDTSC (x86-64 only):
 * whatever would execute RDTSC there must not (mt_stack's unwinds). */
int mt_clock_thread_forbids_tsc(void);

/* The calling thread has just changed what it allows (prctl(PR_SET_TSC),
 * seen by the hooks): ask the kernel again at the next reading. */
void mt_clock_thread_tsc_changed(void);

/* For the tests: the calling thread's counter reads cycles off from now
 * on (a CPU whose counter is set apart); 0 puts it right. */
void mt_clock_test_skew(int64_t cycles);

#endif
