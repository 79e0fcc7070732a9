/*
 * mt_spawn: start a traced process's collector and map the ring it drains
 * (docs/preload.md, "The write path").
 *
 * The collector must be invisible to the program: not its child (wait(-1),
 * SIGCHLD handlers, shells and make see only their own children), holding
 * none of its descriptors (a pipe's reader would wait for the collector's
 * end), outside its process group and session (a terminal's ^C or a kill
 * of the group must not stop it before it has written what the program
 * recorded), and the program must hold no descriptor of it either (a
 * daemon closes every descriptor).  So the calling thread makes a child
 * that shares its memory but not its descriptor table (clone with
 * CLONE_VM|CLONE_VFORK and no exit signal): the child closes its copy of
 * the program's descriptors and raises its own RLIMIT_NOFILE, so that
 * whatever the program holds or its limit, /dev/null goes on 0 to 2, the
 * ring's memfd on 3 and a pidfd of the program on 4 (or nothing, which
 * the collector's command line says: pidfd_open may be refused); it maps
 * the ring into the shared memory and makes the collector as its own
 * vfork child, which leaves the session and execs the collector binary;
 * the first child then exits and the caller reaps it (__WALL: it sent no
 * SIGCHLD).  The collector, an
 * orphan, is adopted by init (or the nearest subreaper).
 *
 * Never calls malloc, never touches the program's descriptors, never
 * sends it a signal.  Calls no hooked function (raw system calls), so it
 * may run inside the tracer.
 */
#ifndef MT_SPAWN_H
#define MT_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#include "../common/mt_ring.h"

#define MT_SPAWN_COLLECTOR "memtrace-collector"

/* Find the collector binary beside the object that holds this code (the
 * preload, or a test binary): DIR/memtrace-collector, else
 * DIR/../libexec/memtrace/memtrace-collector.  MEMTRACE_COLLECTOR names
 * another.  Call once, outside any lock (dladdr takes the loader's). 
 * Returns 0, or -ENOENT with path holding the first place looked at. */
int mt_spawn_find(char *path, size_t cap);

typedef struct {
	mt_ring_hdr_t *hdr;
	mt_ring_slot_t *slots;
	size_t map_len;
	pid_t collector;
	/* Registered with memtrace record's collector without waiting for
	 * its answer: the ring may still be STARTING, and the collector says
	 * itself why it could not serve it. */
	int nowait;
} mt_spawn_ring_t;

/*
 * Map a ring of nslots slots (a power of two) and start the collector
 * binary on it, telling it the trace's name (already %p-expanded), whether
 * it is the user's own (root: the file is reused) and t0.  Returns 0 with
 * r filled once the collector runs, or -errno (the exec's when it could not
 * start: nothing is left behind then).  The caller then waits for
 * r->hdr->state to leave MT_RING_STARTING.
 */
int mt_spawn_collector(const char *collector, const char *name, int root,
		       uint64_t nslots, uint64_t t0, mt_spawn_ring_t *r);

/*
 * Under `memtrace record` (MEMTRACE_RECORD names its socket, sock): map a
 * ring as mt_spawn_collector does and hand it to record's collector
 * instead of starting one (common/mt_register.h), from a child that
 * shares the program's memory but not its descriptors, as above; alone:
 * the caller is the process's only thread (a forked child, before fork()
 * returns in it), and registers from its own table, every descriptor
 * closed again before it returns, so that no process more than the
 * program's own is needed (RLIMIT_NPROC).  Returns 0 with r filled
 * (r->collector: the collector's pid in the program's pid namespace, 0
 * when it is outside it), -ECONNREFUSED when no collector answered,
 * -EPERM when it refused, or another -errno.  With a pidfd of the program
 * to send (alone, to a collector whose sock ends in MT_REGISTER_PEER_PIDFD,
 * none: the collector takes it from the connection) and the collector's
 * pid known, it reads no answer (r->nowait): the caller goes on with the
 * state STARTING.  Otherwise the caller then waits for r->hdr->state to
 * leave MT_RING_STARTING.
 */
int mt_spawn_register(const char *sock, const char *name, int root,
		      uint64_t nslots, uint64_t t0, int alone, int stats, mt_spawn_ring_t *r);

/* Unmap a ring (a forked child lets go of its parent's). */
void mt_spawn_unmap(mt_spawn_ring_t *r);

#endif
