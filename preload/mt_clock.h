/*
 * mt_clock: CLOCK_MONOTONIC in nanoseconds for the preload's hot path,
 * and what each thread allows of the time-stamp counter.
 *
 * Every block event reads the clock once.  clock_gettime() through the
 * vDSO costs 21 to 30 ns a call on the project's guest; RDTSC 9 to 11.  So where the TSC keeps
 * CLOCK_MONOTONIC's pace, a thread that may execute RDTSC converts the
 * counter itself: t = ns + ((tsc - tsc0) * mult + frac) >> 32, with a
 * 128-bit product (no overflow whatever the distance from the anchor, and
 * the counter's wrap is the unsigned difference's).  The anchor (tsc0,
 * ns, frac, mult) is the process's own calibration against
 * clock_gettime(CLOCK_MONOTONIC), not the kernel's vDSO data: the vvar
 * page is no ABI (its layout changed across 5.x and 6.x, a time namespace
 * puts another page in its place, kvm-clock and Hyper-V have pages of
 * their own), and reading it right takes the vDSO's own seqlock loop and
 * ordered RDTSC, which is what its cost is.  The calibration's
 * error is bounded instead: the anchor is measured again every
 * millisecond of events (RDTSC on both sides of clock_gettime, the
 * tightest of four tries), the rate is the kernel clock's own over the
 * last interval (it follows NTP's frequency changes), and the line runs
 * on from where the last one ended: forward to the measured time when it
 * is behind, and slower by what it is ahead over the next interval when
 * it is ahead, so it never goes back.  Past four intervals with no new anchor a reading
 * is clock_gettime()'s.  So t stays within some tens of nanoseconds of
 * the kernel's clock while its rate changes slowly (NTP's 500 ppm at
 * most).  An event's RDTSC has no LFENCE before it: the fence waits for
 * the program's malloc to finish first, 10 to 16 ns an event on the
 * project's guest.  Unfenced, the counter may be read while a lock the
 * thread has just taken is still on its way from another core, hundreds
 * of nanoseconds early, so a reading ordered after another thread's may
 * come out earlier than it.  No trace shows it: the collector rounds t
 * down to a microsecond and holds it from going down along seq, and seq
 * is reserved after the reading anyway.  The calibration's measurements
 * are fenced on both sides.
 *
 * The TSC is used only on x86-64, in a thread that may execute RDTSC
 * (prctl(PR_SET_TSC) below), once the process has read the clock 4,096
 * times and then for a millisecond, and only where the kernel's clock is
 * the TSC's and /proc/cpuinfo's flags have constant_tsc and nonstop_tsc
 * (an invariant counter): the clocksource "tsc" (the kernel found the
 * counters of all CPUs in step), or kvm-clock or Hyper-V's TSC page while
 * the vDSO reads them without a system call (the hypervisor promises the
 * counters in step; mt_clock_tsc_usable).  The machine is judged once,
 * when the calibration first needs it: reading those files and timing the
 * vDSO cost some 70 us, what the TSC saves over about 4,096 readings, so
 * a short process never pays it.  A process that has never had a thread
 * reads them in place, every signal blocked; one that has, in one mt_nofd
 * child; one about to install a seccomp filter judges the machine first
 * (the clone could be refused, or fatal, after it), and one that starts
 * under a filter judges it at its start.  A forked child keeps the answer.
 * A calibration that looks wrong (a rate 1 % off the first, 20 us ahead,
 * a counter that went back) stops it for the process.  Everywhere else t
 * is clock_gettime()'s.
 *
 * t never goes back in one thread (each thread keeps its last reading);
 * nothing orders readings between threads (the unfenced read above, and
 * a few nanoseconds at an anchor's change), and the collector holds the
 * trace's t from going down along seq.  A forked child keeps the
 * calibration (the same counter on the same machine) and anchors anew as
 * it needs.
 *
 * Where the kernel keeps time with the TSC the vDSO executes RDTSC, which
 * kills a thread that asked prctl(PR_SET_TSC, PR_TSC_SIGSEGV): such a
 * thread reads the clock with the clock_gettime system call instead, and
 * mt_stack keeps it from the unwinder's RDTSC (glibc's adaptive mutex
 * back-off).  The thread's answer is asked once, and again after the
 * hooks see it change.
 *
 * It must never allocate, take a lock or wait for another thread;
 * async-signal-safe (a handler that interrupts an anchoring reads the
 * anchor before it, or the clock).
 */
#ifndef MT_CLOCK_H
#define MT_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC now, in nanoseconds. */
uint64_t mt_clock_now(void);

/* CLOCK_REALTIME now, in nanoseconds since the epoch (the trace's start
 * time). */
uint64_t mt_clock_realtime(void);

/* CLOCK_MONOTONIC now as the kernel or the vDSO reads it, in
 * nanoseconds: no calibration, no floor (MEMTRACE_STATS' timings). */
uint64_t mt_clock_monotonic(void);

/* 1 when the calling thread may execute RDTSC: on x86-64, unless it asked
 * prctl(PR_SET_TSC, PR_TSC_SIGSEGV).  The kernel is asked once, by the
 * first thread; again by each thread once any thread has changed its
 * setting (mt_clock_thread_tsc_changed()), and by that thread after each
 * change.  In a thread that may not, mt_clock_now(), mt_clock_realtime()
 * and mt_clock_monotonic() make the clock_gettime system call, never the
 * vDSO's. */
int mt_clock_thread_tsc_ok(void);

/* 1 when the calling thread asked for SIGSEGV on RDTSC (x86-64 only):
 * whatever would execute RDTSC there must not (mt_stack's unwinds). */
int mt_clock_thread_forbids_tsc(void);

/* The calling thread has just changed what it allows (prctl(PR_SET_TSC),
 * seen by the hooks): ask the kernel again at the next reading. */
void mt_clock_thread_tsc_changed(void);

/* The program is about to install a seccomp filter (prctl(PR_SET_SECCOMP)
 * or seccomp(2), seen by the hooks), or started under one: the machine is
 * judged now if it is not yet, as mt_nofd's child could be refused, or
 * fatal, once the filter is in place; a judging left to another thread
 * meanwhile ends in clock_gettime().  From then on the first readings of
 * a process go through the vDSO too, as the program's own would. */
void mt_clock_program_locks_down(void);

/* In a forked child: its first readings go to the kernel again, as a
 * new process's do (mt_clock.c says why). */
void mt_clock_fork_child(void);

/*
 * Whether the TSC may stand for CLOCK_MONOTONIC, judged from the text of
 * /sys/devices/system/clocksource/clocksource0/current_clocksource and
 * of /proc/cpuinfo: the clocksource must be computed from the TSC, and
 * cpuinfo's first "flags" line must have constant_tsc and nonstop_tsc
 * (an invariant counter).  The clocksources computed from the TSC are
 * "tsc" (the kernel found the counters of all CPUs in step) and a
 * hypervisor's scaled TSC, "kvm-clock" or "hyperv_clocksource_tsc_page",
 * when vdso_in_user (mt_clock_vdso_in_user()): the vDSO reads those
 * itself only while the hypervisor promises every CPU's counter in step
 * under one scale, and makes the system call otherwise.  1 yes; 0 no,
 * with why in why (cap bytes, "what was found").  Either text may be
 * NULL: not readable.
 */
int mt_clock_tsc_usable(const char *cpuinfo, const char *clocksource, int vdso_in_user,
			char *why, size_t cap);

/* 1 when clock_gettime(CLOCK_MONOTONIC) returns without entering the
 * kernel, timed against the getpid system call once a process, by the
 * first thread that asks and may execute RDTSC (x86-64); 0 otherwise.
 * Some twenty microseconds where a system call costs one. */
int mt_clock_vdso_in_user(void);

/* 1 when mt_clock_now() converts the TSC in a thread that may read it; 0
 * when it reads clock_gettime(), with *why (a static string) saying why:
 * not decided yet, the machine's answer, or the calibration's. */
int mt_clock_tsc_in_use(const char **why);

#endif
