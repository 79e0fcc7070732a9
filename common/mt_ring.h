/*
 * mt_ring: the shared memory between a traced program and its collector
 * (docs/preload.md, "The write path").  Only its layout lives here, which
 * both sides include: the program's side (preload/mt_record.c) appends
 * records, the collector (collector/mt_collect.c) drains them.  It must
 * never hold code that either side alone needs.
 *
 * The ring is a memfd: a header of MT_RING_HDR_SIZE bytes, then nslots
 * slots of 64 bytes (a power of two).  A writer reserves n consecutive
 * slots with one atomic add on head (slots count up forever; slot k lives
 * at k & (nslots - 1)); the order of reservations is the order of the
 * trace.  It may fill them once the collector's tail is past k + n -
 * nslots, and publishes them by storing the first slot's header word last,
 * with release order.  Each slot begins with a header word, zero while
 * unpublished: the collector, having read a record, zeroes the header
 * words of its slots before it moves tail past them.
 *
 * Every slot's first word is a header (a record's first, or MT_REC_CONT
 * for the slots a long record continues in), so when the program is gone
 * the collector can step over a record that a killed thread left half
 * written one slot at a time: a zero word or a continuation where a record
 * should begin is no record.
 */
#ifndef MT_RING_H
#define MT_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define MT_RING_MAGIC 0x676e6972746d0001ull /* "mtring", version 1 */
#define MT_RING_SLOT 64
#define MT_RING_PAYLOAD (MT_RING_SLOT - 8) /* bytes after a slot's header */
#define MT_RING_HDR_SIZE 8192
/* 16 MiB of slots: 262144 events, some tens of milliseconds of the
 * busiest program's, while the collector sleeps at most a millisecond. */
#define MT_RING_DEFAULT_SLOTS (1u << 18)
#define MT_RING_MIN_SLOTS 64
#define MT_RING_MAX_SLOTS (1u << 24)
/* The longest record: a frame's line with its symbol and module. */
#define MT_RING_MAX_RECORD_SLOTS 255
#define MT_RING_TEXT_MAX (MT_RING_MAX_RECORD_SLOTS * MT_RING_PAYLOAD)

/* Record types: the low byte of a header word. */
enum {
	MT_REC_BLOCK = 1, /* an alloc, free, resize, remap or alloc.fail */
	MT_REC_TEXT,      /* a whole line but its seq: "{"v":1,"seq":0,..." */
	MT_REC_STOP,      /* trace.stop; the collector finishes the trace */
	MT_REC_UNSTOP,    /* the exec of the last STOP failed: take it back */
	MT_REC_CONT,      /* a slot a longer record continues in */
};

/* trace.stop's reasons, in a STOP record's arg byte. */
enum { MT_STOP_EXIT, MT_STOP_EXEC, MT_STOP_SIGNAL, MT_STOP_API };

/*
 * A header word: type (8 bits), slots of the record (8), two argument
 * bytes (a block's kind and fn, a stop's reason), and 32 bits of value (a
 * block's tid, a text's length).  Never zero once published.
 */
#define MT_RING_WORD(type, n, a, b, v)                                         \
	((uint64_t)(type) | (uint64_t)(n) << 8 | (uint64_t)(a) << 16 |           \
	 (uint64_t)(b) << 24 | (uint64_t)(v) << 32)
#define MT_RING_TYPE(w) ((unsigned)((w) & 0xff))
#define MT_RING_NSLOTS(w) ((unsigned)((w) >> 8 & 0xff))
#define MT_RING_ARG_A(w) ((unsigned)((w) >> 16 & 0xff))
#define MT_RING_ARG_B(w) ((unsigned)((w) >> 24 & 0xff))
#define MT_RING_VALUE(w) ((uint32_t)((w) >> 32))

typedef struct {
	_Atomic uint64_t word;
	unsigned char payload[MT_RING_PAYLOAD];
} mt_ring_slot_t;

/* A block event: the header's arguments are its mt_kind_t and mt_fn_t,
 * its value the thread id.  The event's allocator is libc's (0) unless
 * fn is MT_FN_API, a program's own allocator (memtrace.h): its events
 * never carry an alignment, so the word shares align's place. */
typedef struct {
	_Atomic uint64_t word;
	uint64_t t;       /* CLOCK_MONOTONIC, ns */
	uint64_t ptr;
	uint64_t new_ptr; /* remap */
	uint64_t size;
	union {
		uint64_t align;        /* fn other than api; 0: none */
		uint64_t allocator_id; /* fn api: from 1 */
	};
	uint64_t stack;   /* 0: none */
	uint64_t fail_at; /* 0: none */
} mt_ring_block_t;

/* trace.stop: the header's first argument is the reason. */
typedef struct {
	_Atomic uint64_t word;
	uint64_t t;
	uint64_t dropped;
} mt_ring_stop_t;

_Static_assert(sizeof(mt_ring_slot_t) == MT_RING_SLOT, "a slot is 64 bytes");
_Static_assert(sizeof(mt_ring_block_t) == MT_RING_SLOT, "a block is a slot");

/* linux/futex.h's FUTEX_OWNER_DIED and FUTEX_WAITERS, in the drainer
 * word. */
#define MT_RING_DRAINER_DIED 0x40000000u
#define MT_RING_DRAINER_WAITERS 0x80000000u

/* The collector's states (mt_ring_hdr_t.state). */
enum {
	MT_RING_STARTING = 0, /* not yet told whether the trace opened */
	MT_RING_WRITING,      /* the trace is open; path names it */
	MT_RING_FAILED,       /* it could not open it: open_error, path */
	MT_RING_DONE,         /* the trace is finished and closed */
};

typedef struct {
	uint64_t magic;
	uint64_t nslots;
	uint64_t t0;  /* CLOCK_MONOTONIC at trace.start: t is since then */
	/* Writers' reservations, a line of its own: the one written by
	 * every event. */
	_Alignas(64) _Atomic uint64_t head;
	/* The collector's position: the first slot it has not read. */
	_Alignas(64) _Atomic uint64_t tail;
	/* Bumped with every move of tail while writers wait for room
	 * (waiters > 0): their futex word. */
	_Atomic uint32_t tail_moves;
	_Atomic uint32_t waiters;
	/* The collector sleeps on doorbell (sleeping 1) when the ring is
	 * empty; a writer that finds the ring full rings it. */
	_Atomic uint32_t doorbell;
	_Atomic uint32_t sleeping;
	_Alignas(64) _Atomic uint32_t state; /* futex word: MT_RING_* */
	_Atomic int32_t open_error;          /* errno, with FAILED */
	/* Slots read up to the end of the last STOP or UNSTOP handled, once
	 * its line is in the file: an exec waits for it. */
	_Atomic uint64_t acked;
	_Atomic uint32_t acks;  /* futex word: bumped with acked */
	_Atomic int32_t collector_pid;
	/*
	 * Whether the ring's drainer lives, with no system call: whoever
	 * drains a ring owns this word through its robust futex list
	 * (set_robust_list), holding its thread id (gettid, in its own pid
	 * namespace).  When that thread ends, however it ends (SIGKILL
	 * included), the kernel sets MT_RING_DRAINER_DIED in the word and
	 * wakes waiters on it; a zombie nobody reaps has ended too.  Zero
	 * until the drainer has taken it.  A process that drains several
	 * rings puts each ring's word in its list; the list's entry for
	 * this ring is drainer_link, the drainer's own (collector/mt_drainer.h).
	 */
	uint64_t drainer_link;
	_Atomic uint32_t drainer;
	/* Events lost on the program's side (a stack that did not fit in
	 * memory), for trace.stop. */
	_Atomic uint64_t dropped;
	/* The collector's account, written before it says DONE: its CPU
	 * time (user + system), lines written, bytes in the file, and the
	 * zstd workers it started. */
	uint64_t collector_cpu_ns, collector_lines, collector_bytes;
	uint32_t collector_workers;
	/* Under memtrace record the program does not wait for the trace's
	 * end (its collector holds the ring and drains it after the program
	 * is gone): set before its stop, it says the collector prints its
	 * message itself.  said: whoever prints the message takes it first
	 * (atomic exchange to 1), so it is printed once. */
	_Atomic uint32_t detached;
	_Atomic uint32_t said;
	/* What the collector has to say (it cannot write the trace), for
	 * the program to print: the collector holds none of the program's
	 * descriptors, stderr included.  Set before state turns DONE. */
	char message[512];
	/* Last: only a name too long for the rest of the first page
	 * reaches the header's second (MT_RING_HDR_HOT). */
	char path[4096]; /* the trace's name, once WRITING or FAILED */
} mt_ring_hdr_t;

_Static_assert(sizeof(mt_ring_hdr_t) <= MT_RING_HDR_SIZE, "the header fits");

/* The header's first page: every field but a long path's tail.  Only it
 * is made resident when the ring is mapped; a short process's trace
 * never touches the second, and each page of a memfd costs its
 * allocation, zeroing and freeing (some 6 us on the bench machine). */
#define MT_RING_HDR_HOT 4096
_Static_assert(__builtin_offsetof(mt_ring_hdr_t, path) + 1024 <= MT_RING_HDR_HOT,
	       "a name of 1 KiB stays in the header's first page");

#endif
