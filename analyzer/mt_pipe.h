/*
 * mt_pipe: hands batches from one thread (the producer) to a second
 * thread it starts (the consumer), in order, through a ring of slots.
 *
 * The pass uses it to apply block events on a second core while the first
 * reads and parses the next ones (mt_analysis.c).  The pipe knows nothing
 * of events: a slot is slot_size bytes the producer fills and the consumer
 * reads; consume(ctx, slot) is called once per published slot, in the
 * order they were published, on the consumer thread.
 *
 * Invariants:
 *  - Everything the producer wrote before mt_pipe_publish() is visible to
 *    consume(); everything consume() wrote is visible to the producer once
 *    mt_pipe_drain() returns.  Between a publish and the drain that follows
 *    it, the producer must not touch what consume() touches.
 *  - The consumer thread is started by the first mt_pipe_publish(); when
 *    it cannot be started, that publish and every later one call consume()
 *    on the producer's thread, so the results are the same either way.
 *  - nslots is a power of two (asserted).
 *  - A waiting side spins a few microseconds, then sleeps on a futex: it
 *    never burns a core for longer than that.
 *  - Never allocates but in mt_pipe_init() (mt_mem), never fails after it.
 */
#ifndef MT_PIPE_H
#define MT_PIPE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

typedef void mt_pipe_consume_t(void *ctx, void *slot);
/* Work either side may do while it waits for the other (mt_pipe_set_idle):
 * it must be safe from both threads at once, and short. */
typedef void mt_pipe_idle_t(void *ctx);

typedef struct {
	/* Each counter on a line of its own: each side writes one and reads
	 * the other on every batch. */
	_Alignas(64) atomic_uint produced; /* slots published */
	atomic_int producer_waits;
	_Alignas(64) atomic_uint consumed; /* slots consume() has finished */
	atomic_int consumer_waits;
	_Alignas(64) atomic_int closing;
	unsigned char *slots;
	size_t slot_size;
	unsigned nslots;
	unsigned next; /* the producer's count of slots handed out */
	mt_pipe_consume_t *consume;
	void *ctx;
	mt_pipe_idle_t *idle; /* or NULL */
	pthread_t thread;
	int started; /* 1: the thread runs; -1: it could not start */
} mt_pipe_t;

/* nslots slots of slot_size bytes.  MT_OK or MT_ENOMEM. */
int mt_pipe_init(mt_pipe_t *p, size_t slot_size, unsigned nslots,
		 mt_pipe_consume_t *consume, void *ctx);

/* While waiting, either thread calls idle(ctx) now and then. */
void mt_pipe_set_idle(mt_pipe_t *p, mt_pipe_idle_t *idle);

/* The slot to fill next; waits until the consumer is done with it. */
void *mt_pipe_slot(mt_pipe_t *p);

/* Hand the slot mt_pipe_slot() gave to the consumer. */
void mt_pipe_publish(mt_pipe_t *p);

/* Wait until every published slot has been consumed. */
void mt_pipe_drain(mt_pipe_t *p);

/* Drain, stop the thread and free the slots.  Safe after a failed init. */
void mt_pipe_release(mt_pipe_t *p);

/* How many CPUs this process may run on (sched_getaffinity), at least 1. */
int mt_pipe_cpus(void);

#endif
