/*
 * mt_server: the collector of `memtrace record` (docs/record.md): one
 * process, the command's parent, that serves the ring of every traced
 * process of the command's tree.
 *
 * It listens on an abstract UNIX socket (common/mt_register.h), starts
 * the command with the preload, the trace pattern and the socket's name
 * in its environment, and then, in one thread, takes each ring a traced
 * process registers and drains them all in steps (mt_collect), napping
 * only when none has work.  The first time a program waits for room in
 * its ring, this process leaves the command's session where it may, and
 * gives that trace, and each later one whose program waits, zstd workers
 * of its own (mt_server.c, workers_for()).  It ends once its command has
 * ended and every ring it serves is finished, with the command's exit
 * status (128 + N for a death by signal N).
 *
 * It must never wait for, signal or reap any process but its command
 * (signals it is sent are forwarded to it), serve a process of another
 * user (root's excepted), or leave a descriptor of its own in the command.
 */
#ifndef MT_SERVER_H
#define MT_SERVER_H

/* Run cmd (argv, NULL-terminated; found on PATH when it has no slash)
 * with preload (an absolute path) first in LD_PRELOAD and pattern (an
 * absolute MEMTRACE_OUTPUT) and serve its tree.  Returns the exit status:
 * the command's, 126 or 127 when it could not be run, 70 when the server
 * could not start (said on stderr). */
int mt_server_run(const char *preload, const char *pattern, char *const cmd[]);

#endif
