/*
 * mt_cpu: what a spinning wait does between two looks (the preload's
 * table lock and the ring's waiters).  Header only; it must never block or make a system call.
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

#endif
