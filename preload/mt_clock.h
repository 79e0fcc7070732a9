/*
 * mt_clock: CLOCK_MONOTONIC in nanoseconds for the preload's hot path,
 * and what each thread allows of the time-stamp counter.
 *
 * Every block event reads the clock once: clock_gettime() through the
 * vDSO, about 20 ns a call.  Where the kernel keeps time with the TSC the
 * vDSO executes RDTSC, which kills a thread that asked
 * prctl(PR_SET_TSC, PR_TSC_SIGSEGV): such a thread reads the clock with
 * the clock_gettime system call instead, and mt_stack keeps it from the
 * unwinder's RDTSC (glibc's adaptive mutex back-off).  The thread's answer
 * is asked once, and again after the hooks see it change.
 *
 * It must never allocate or take a lock; async-signal-safe.
 */
#ifndef MT_CLOCK_H
#define MT_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC now, in nanoseconds. */
uint64_t mt_clock_now(void);

/* CLOCK_REALTIME now, in nanoseconds since the epoch (the trace's start
 * time). */
uint64_t mt_clock_realtime(void);

/* 1 when the calling thread may execute RDTSC: on x86-64, unless it asked
 * prctl(PR_SET_TSC, PR_TSC_SIGSEGV).  The kernel is asked once, by the
 * first thread; again by each thread once any thread has changed its
 * setting (mt_clock_thread_tsc_changed()), and by that thread after each
 * change.  In a thread that
 * may not, mt_clock_now() and mt_clock_realtime() make the clock_gettime
 * system call, never the vDSO's. */
int mt_clock_thread_tsc_ok(void);

/* 1 when the calling thread asked for SIGSEGV on RDTSC (x86-64 only):
 * whatever would execute RDTSC there must not (mt_stack's unwinds). */
int mt_clock_thread_forbids_tsc(void);

/* The calling thread has just changed what it allows (prctl(PR_SET_TSC),
 * seen by the hooks): ask the kernel again at the next reading. */
void mt_clock_thread_tsc_changed(void);

#endif
