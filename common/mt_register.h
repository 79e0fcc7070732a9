/*
 * mt_register: the message a traced process sends `memtrace record`'s
 * collector to have its ring drained (docs/record.md).  Only the layout
 * lives here, which both sides include: the preload (preload/mt_spawn.c)
 * sends it, the collector in record mode (collector/mt_server.c) takes
 * it.  It must never hold code.
 *
 * The preload connects to the abstract UNIX socket named by
 * MEMTRACE_RECORD (SOCK_SEQPACKET, the name without its leading NUL),
 * sends one mt_register_msg_t, as long as its name, with the ring's
 * memfd and, when it has one, a pidfd of the program (SCM_RIGHTS, in
 * that order).  A collector whose socket's name ends in
 * MT_REGISTER_PEER_PIDFD takes a pidfd of the sender from the
 * connection itself (SO_PEERPIDFD, made when the sender connected and
 * valid however soon it ends): a sender that is the program sends none
 * then (peer_pidfd).  With a pidfd either way, and the collector's pid
 * in its pid namespace, it reads no answer (nowait): the collector
 * knows the program by the pidfd however soon it ends, the memfd in
 * flight keeps the ring, and the collector sets the ring's state
 * (WRITING or FAILED, common/mt_ring.h) when it takes it, saying on its
 * own stderr why it does not serve the program (another user) or cannot
 * open its trace.  Without one it reads one byte of answer:
 * MT_REGISTER_TAKEN once the collector has set the ring's state,
 * MT_REGISTER_REFUSED when it will not serve the sender; any other end
 * (no byte) is a collector that is gone.
 */
#ifndef MT_REGISTER_H
#define MT_REGISTER_H

#include <stdint.h>

#define MT_REGISTER_ENV "MEMTRACE_RECORD"
#define MT_REGISTER_MAGIC 0x676572746d000005ull /* "mtreg", version 5 */
/* The socket's name, its leading NUL not counted. */
#define MT_REGISTER_SOCKET_MAX 100
/* How the name of a collector's socket ends when the collector takes the
 * sender's pidfd from the connection (its kernel gives SO_PEERPIDFD). */
#define MT_REGISTER_PEER_PIDFD "-peerpidfd"

enum { MT_REGISTER_TAKEN = 'y', MT_REGISTER_REFUSED = 'n' };

typedef struct {
	uint64_t magic;
	int32_t pid;        /* the program's, in its own pid namespace */
	uint32_t root;      /* name is the user's own (mt_out_open) */
	uint32_t has_pidfd; /* a pidfd of the program follows the memfd */
	uint32_t via_child; /* the sender is a child of the program's (the
			     * go-between), not the program itself */
	uint32_t nowait;    /* the sender reads no answer (it sent a pidfd
			     * or asked for peer_pidfd, and sees the
			     * collector's pid) */
	uint32_t peer_pidfd; /* no pidfd follows: the sender is the program,
			      * and the collector takes its pidfd from the
			      * connection (MT_REGISTER_PEER_PIDFD) */
	uint32_t stats;     /* the program prints the collector's account
			     * (MEMTRACE_STATS): time the CPU spent on it */
} mt_register_head_t;

/* The longest trace name, its NUL counted. */
#define MT_REGISTER_NAME_MAX 4096

/* What is sent: the head, then the trace's name (%p expanded) and its
 * NUL, no further: a message of the name's own length. */
typedef struct {
	mt_register_head_t head;
	char name[MT_REGISTER_NAME_MAX];
} mt_register_msg_t;

#endif
