/*
 * mt_record: the program's side of the ring (common/mt_ring.h): reserve
 * slots, fill them, publish them; wait for room when the collector is
 * behind; learn when the collector is gone.
 *
 * Invariants:
 * - The common path is one atomic add (the reservation) and plain stores
 *   into the slot, published with one release store: no lock, no system
 *   call.  While the process has one thread the add has no lock prefix
 *   (mt_record_take).  A thread waits (spinning, then on a futex) only
 *   while the ring is full, and never for longer than the collector
 *   lives.
 * - Reservation order is trace order: whatever must come before an event
 *   in the trace (its stack's declaration, a free before the allocation
 *   that gets its address back) is reserved before it.
 * - Every slot reserved is published, even when its writer gives up
 *   (mt_record_wait_room() failed: the ring is abandoned, nothing waits).
 * - Never allocates, never calls a hooked function; errno is kept.
 */
#ifndef MT_RECORD_H
#define MT_RECORD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/single_threaded.h>

#include "../common/mt_ring.h"
#include "mt_spawn.h"

/* The ring this process writes, or hdr NULL. */
extern mt_spawn_ring_t mt_record_ring;

/* The tail this thread last saw: while head stays within a ring's length
 * of it there is room without reading the collector's line. */
extern __thread uint64_t mt_record_seen_tail
	__attribute__((tls_model("initial-exec")));

/* Wait until slot pos + n - 1 may be written.  Returns 0, or -1 when the
 * collector is gone or finished (the caller stops tracing). */
int mt_record_wait_room(uint64_t pos, unsigned n);

/* Every 2^MT_RECORD_CHECK_SHIFT slots a writer asks whether the collector
 * still runs (a load of the ring's drainer word): a program whose ring
 * never fills would otherwise record into a ring no one reads, and never
 * say so. */
#define MT_RECORD_CHECK_SHIFT 16

/* The ring's first lap is made resident a step of 2^MT_RECORD_STEP_SHIFT
 * slots (a page) ahead of the writers (mt_prefault.h): its pages are new,
 * and each would otherwise cost the writer a fault.  A page, not more: a
 * short process's whole trace fits in its first (a /bin/true's takes 3
 * slots, a shell's forked child's some 20), and each page of a memfd
 * costs its allocation, zeroing and freeing. */
#define MT_RECORD_STEP_SHIFT 6

/* At a step's boundary: the next steps made resident in the first lap,
 * the check at its own boundaries, then the room: as
 * mt_record_wait_room(). */
int mt_record_checkpoint(uint64_t pos, unsigned n);

/* A ring just mapped (its header's first page resident): its first step
 * made resident. */
void mt_record_prefault_start(void);

/*
 * head += n, returning head before.  While glibc says the calling
 * thread is the process's only one (__libc_single_threaded is nonzero;
 * pthread_create clears it before a second thread exists), an xadd
 * without the lock prefix: nothing else writes head (the collector only
 * reads it), and one instruction leaves no gap between its read and its
 * write for a signal handler of the thread that records (a fatal
 * signal's stop).  A locked add drains the store buffer at every event,
 * the last event's slot stores with it.
 */
static inline uint64_t mt_record_take(mt_ring_hdr_t *h, uint64_t n)
{
#if defined(__x86_64__)
	if (__libc_single_threaded) {
		__asm__ volatile("xaddq %0, %1"
				 : "+r"(n), "+m"(*(uint64_t *)&h->head)
				 :
				 : "memory");
		return n;
	}
#endif
	return atomic_fetch_add_explicit(&h->head, n, memory_order_relaxed);
}

static inline mt_ring_slot_t *mt_record_slot(uint64_t pos)
{
	return &mt_record_ring.slots[pos & (mt_record_ring.hdr->nslots - 1)];
}

/*
 * Whether the CPU has PREFETCHW (CPUID 0x80000001 ECX bit 8), asked when
 * the image's first ring is mapped (mt_record_prefault_start): older
 * Intel cores have no such instruction.  Asked at the start, before the
 * program's main() could make CPUID fault (arch_prctl ARCH_SET_CPUID),
 * and kept by forked children.
 */
extern int mt_record_prefetchw;

/* Slots ahead of its reservation whose line a thread of a process with
 * several asks for, for writing, at each reservation. */
#define MT_RECORD_AHEAD 16

/* Reserve n consecutive slots; *pos receives the first.  Returns 0, or -1
 * as mt_record_wait_room(): the slots are then never to be written.
 *
 * Where threads record at once, the line of the slot MT_RECORD_AHEAD
 * ahead is asked for with PREFETCHW: their slots interleave, each a line
 * the collector last had, and a thread's next reservation (a locked add)
 * waits for its stores to those lines to be done.  Asked for ahead, the
 * line is this core's when the store comes (side by side, 12 rounds:
 * the churn 0.95 of the wall and 0.85 of the program's CPU, 8 threads
 * 0.81 and 0.71).  A process of one thread does not ask: its stores come
 * in order, which the core's own prefetcher follows (python3 with it
 * asked: 1.02 of the wall).
 */
static inline int mt_record_reserve(unsigned n, uint64_t *pos)
{
	mt_ring_hdr_t *h = mt_record_ring.hdr;
	uint64_t p = mt_record_take(h, n);

	*pos = p;
#if defined(__x86_64__)
	if (!__libc_single_threaded && mt_record_prefetchw > 0)
		__asm__ volatile("prefetchw %0" : : "m"(*(const char *)mt_record_slot(p + MT_RECORD_AHEAD)));
#endif
	if (__builtin_expect(((p + n) ^ p) >> MT_RECORD_STEP_SHIFT, 0))
		return mt_record_checkpoint(p, n);
	if (__builtin_expect(p + n - mt_record_seen_tail > h->nslots, 0))
		return mt_record_wait_room(p, n);
	return 0;
}

/* Publish a record whose first slot is at pos with header word w. */
static inline void mt_record_publish(uint64_t pos, uint64_t w)
{
	atomic_store_explicit(&mt_record_slot(pos)->word, w, memory_order_release);
}

/* A whole line but its seq (it begins {"v":1,"seq":0,): reserve, copy,
 * publish.  Returns 0, or -1 when the ring is abandoned. */
int mt_record_text(const char *line, size_t len);

/* trace.stop with reason (MT_STOP_*), t and dropped; *end receives the
 * slot after it.  Returns 0 or -1. */
int mt_record_stop(unsigned reason, uint64_t t, uint64_t dropped, uint64_t *end);
/* Take the last exec's stop back; *end as above. */
int mt_record_unstop(uint64_t *end);

/*
 * Wait until the collector has handled every record before end (acked)
 * when ack, or until it has finished the trace (MT_RING_DONE) when not.
 * Returns 0, or -1 when it died first or timeout_ms passed (0: none).
 */
int mt_record_wait_collector(uint64_t end, int ack, unsigned timeout_ms);

/* Wait for the collector to say whether it opened the trace: returns
 * MT_RING_WRITING or MT_RING_FAILED (open_error and path say why), or -1
 * when it died first. */
int mt_record_wait_open(void);

/* Whether the collector still runs (it has not finished, nor died). */
int mt_record_collector_alive(void);

#endif
