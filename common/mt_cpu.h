/*
 * mt_cpu: what a spinning wait does between two looks, for both halves
 * (the preload's trace lock, the analyzer's pipe and read-ahead), and a
 * prefetch for writing.  Header only; it must never block or make a
 * system call.
 */
#ifndef MT_CPU_H
#define MT_CPU_H

/* Tell the core this is a spin: it yields its pipeline to the other
 * hardware thread and does not speculate a pile of loads that a write
 * from another core then cancels. */
static inline void mt_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* Ask for the cache line at p in the state a store needs (exclusive),
 * ahead of the store.  GCC lowers __builtin_prefetch(p, 1) to a plain
 * prefetcht0 unless built for a CPU with PREFETCHW: the line then comes
 * shared, and the store still waits for the other core to give it up (a
 * round trip between the cores: 400 to 480 ns on the guests of
 * docs/performance.md, "The machine").  PREFETCHW sits in the hint
 * space that x86 CPUs without it execute as a no-op. */
static inline void mt_cpu_prefetch_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

#endif
