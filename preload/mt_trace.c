/*
 * mt_trace: the preload core: its state, start and stop, events and the
 * ring's records, fork, exec, the untraced tree and fatal signals (the
 * settings, the trace names and the frame and stack declarations are
 * modules of their own).  It must never call malloc itself while
 * recording, never call into the loader with the table lock held, never
 * kill or stop the program: on an error it warns once and stops tracing.
 */
#include "mt_trace.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/mt_fmt.h"
#include "../common/mt_jsonl.h"
#include "../common/mt_register.h"
#include "../common/mt_ring.h"
#include "mt_clock.h"
#include "mt_declare.h"
#include "mt_exe.h"
#include "mt_layout.h"
#include "mt_lock.h"
#include "mt_name.h"
#include "mt_namecache.h"
#include "mt_output.h"
#include "mt_prefault.h"
#include "mt_real.h"
#include "mt_record.h"
#include "mt_say.h"
#include "mt_settings.h"
#include "mt_signal.h"
#include "mt_spawn.h"
#include "mt_stack.h"
#include "mt_unwind_cache.h"
#include "mt_symbol.h"
#include "mt_nofd.h"
#include "mt_unwind_lib.h"
#include "mt_unwind_share.h"

#ifndef MT_VERSION
#define MT_VERSION "0.1.0"
#endif

#define TLS __thread __attribute__((tls_model("initial-exec")))
#define PATH_CAP 4096

/* 0: not yet, 1: starting, 2: done (tracing or not). */
static atomic_int init_state;
/* Tracing: OFF, ON, or HELD (an exec is under way: new events wait for
 * its outcome, as they would if it had not been tried). */
enum { OFF, ON, HELD };
static atomic_int active;
/* libstdc++'s __gnu_cxx::__freeres(), when the program has it: looked
 * up by mt_trace_init() so that the exit calls no dlsym. */
static _Atomic(void (*)(void)) cxx_freeres;

static int stack_depth = MT_TRACE_DEFAULT_DEPTH;
/* The ring's size in slots (MEMTRACE_RING_SLOTS, for tests). */
static uint64_t ring_slots = MT_RING_DEFAULT_SLOTS;
/* The output pattern of descendants (forked children, and every process
 * started below this one): %p is their pid. */
static char child_pattern[PATH_CAP] MT_LAYOUT_APART;
/* "MEMTRACE_OUTPUT=" and child_pattern, for the environment of a root
 * whose pattern names no pid (mt_trace_publish_env); empty otherwise. */
static char env_entry[PATH_CAP + 16] MT_LAYOUT_APART;
/* The collector binary (mt_spawn_find), found once: a forked child
 * starts its own from the same.  Cold: under memtrace record no process
 * looks for one. */
static char collector[PATH_CAP] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(collector);
/* 1: found; 0: not looked for; -errno: not found. */
static int collector_found;

static int find_collector(void)
{
	int rc = mt_spawn_find(collector, sizeof(collector));

	if (rc == -ENAMETOOLONG)
		collector[0] = '\0';
	return rc == 0 ? 1 : rc;
}
static atomic_int warned;
/* MEMTRACE_RECORD: the socket of memtrace record's collector, which
 * serves this process's ring; empty: each process starts its own. */
static char record_sock[MT_REGISTER_SOCKET_MAX + 1];
/* The process cannot be traced invisibly without memtrace record (it is
 * pid 1, or a child subreaper): neither it nor its tree is traced, and
 * libmtpreload.so leaves LD_PRELOAD (mt_trace_publish_env). */
static int unpreload;
/* MEMTRACE_STATS=1: once the trace is finished, lines on stderr with
 * what the collector did and what this process's start took (make bench
 * and bench/compare-starts -s read them). */
static int stats;
/* MEMTRACE_STATS' start line: when this process's setup began (the
 * preload's constructor, or the fork: start_forked; 0: not marked), how
 * long it took until tracing was on (start_measured: it was, and is not
 * said yet; a coarse clock may give 0), and the registration's part of
 * it (the ring made and handed to the collector). */
static uint64_t start_at, start_took, register_took;
static int start_forked, start_measured;
static char **main_envp;
/* The process the trace is this image's: a vfork child shares our
 * memory, and must never end or write the trace (mt_trace_owned). */
static pid_t owner;

static TLS int guard;
static TLS pid_t tid_cache;

extern const char __ehdr_start[] __attribute__((visibility("hidden")));

/* ---- small helpers ---- */

static pid_t current_tid(void)
{
	if (!tid_cache)
		tid_cache = (pid_t)mt_real_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	return tid_cache;
}

/* main()'s argv while mt_trace_init() runs from the constructor (its
 * strings are /proc/self/cmdline's bytes until the program changes
 * them), else none. */
static int init_argc;
static char **init_argv;

/*
 * The arguments' area as the kernel laid it out at the exec, [args_lo,
 * args_hi): main()'s strings one after the other, NULs included.  While
 * its last byte is a NUL and no PR_SET_MM has moved it, the kernel's
 * /proc/self/cmdline is exactly these bytes of our own memory, as they
 * are now (fs/proc/base.c, get_mm_cmdline); once the program has written
 * over that NUL (setproctitle), the kernel reads on into the environment
 * by rules of its own, and only /proc gives them.  A forked child reads
 * the area in place: its first look at /proc/self costs it the kernel's
 * making the process's /proc entries and their taking down at its exit
 * (mt_exe.h).
 * NULL when unknown (no constructor argv, or strings not laid out so).
 */
static const char *args_lo, *args_hi;
/* A PR_SET_MM has been made (mt_trace_mm_changed): exe and the area may
 * have moved, so both are asked of /proc from then on. */
static int mm_changed;
/* The exe's path as this process image's first trace.start read it (0:
 * not kept), for the traces of its forked children: fork keeps the exe,
 * and reading /proc/self/exe is a child's first look at /proc/self (see
 * args_lo).  A path this long or longer is read each time. */
#define EXE_KEPT 256
static char exe_kept[EXE_KEPT];
static size_t exe_kept_len;

void mt_trace_set_argv(int argc, char **argv)
{
	const char *at;

	init_argc = argv ? argc : 0;
	init_argv = argv;
	args_lo = args_hi = NULL;
	if (init_argc <= 0 || !argv[0])
		return;
	at = argv[0];
	for (int i = 0; i < init_argc; i++) {
		if (argv[i] != at)
			return;
		at += strlen(at) + 1;
	}
	args_lo = argv[0];
	args_hi = at;
}

void mt_trace_mm_changed(void)
{
	mm_changed = 1;
	exe_kept_len = 0;
}

/* /proc/self/cmdline as argv strings, in a caller's buffer: its bytes
 * copied from main()'s argv during the constructor's start, else from
 * the arguments' area while it holds them (args_lo), else read with no
 * descriptor in the program's table.  *full is set when the bytes filled
 * the buffer (there may have been more). */
static size_t read_argv(char *buf, size_t cap, const char **argv, size_t max, int *full)
{
	size_t have = 0, n = 0;

	if (init_argc > 0) {
		for (int i = 0; i < init_argc && init_argv[i] && have < cap - 1; i++) {
			size_t k = strlen(init_argv[i]) + 1;

			if (k > cap - 1 - have)
				k = cap - 1 - have;
			memcpy(buf + have, init_argv[i], k);
			have += k;
		}
	} else if (args_lo && !mm_changed && args_hi[-1] == '\0') {
		have = (size_t)(args_hi - args_lo);
		if (have > cap - 1)
			have = cap - 1;
		memcpy(buf, args_lo, have);
	} else {
		long got = mt_nofd_read("/proc/self/cmdline", buf, cap - 1);

		have = got > 0 ? (size_t)got : 0;
	}
	buf[have] = '\0';
	*full = have == cap - 1;
	for (size_t i = 0; i < have && n < max; i += strlen(buf + i) + 1)
		argv[n++] = buf + i;
	return n;
}

/* libunwind is opened at the start only when it will be needed from the
 * first event (MEMTRACE_UNWIND=libunwind or verify), or may not be
 * openable later (a process under a seccomp filter); otherwise at its
 * first need (mt_unwind_lib.h).  -1 (said) when it cannot be: the
 * program then runs untraced. */
static int open_unwinder_at_start(int filtered)
{
	if (atomic_load(&mt_stack_unwinder) == MT_UNWIND_FAST && !filtered)
		return 0;
	return mt_unwind_lib_open();
}

static void self_range(void)
{
	const char *base = __ehdr_start;
	const uint64_t lo = (uint64_t)base;
	uint64_t hi = lo;
	/* Our own ELF header and program headers, mapped at our base. */
	const unsigned char *eh = (const unsigned char *)base;
	uint64_t phoff;
	uint16_t phnum, phentsize;

	memcpy(&phoff, eh + 32, sizeof(phoff));
	memcpy(&phentsize, eh + 54, sizeof(phentsize));
	memcpy(&phnum, eh + 56, sizeof(phnum));
	for (uint16_t i = 0; i < phnum; i++) {
		const unsigned char *ph = eh + phoff + (uint64_t)i * phentsize;
		uint32_t type;
		uint64_t vaddr, memsz;

		memcpy(&type, ph, sizeof(type));
		memcpy(&vaddr, ph + 16, sizeof(vaddr));
		memcpy(&memsz, ph + 40, sizeof(memsz));
		if (type == 1 /* PT_LOAD */ && lo + vaddr + memsz > hi)
			hi = lo + vaddr + memsz;
	}
	mt_stack_init(lo, hi);
}

/* ---- MEMTRACE_FAIL_AT ---- */

_Atomic uint64_t mt_trace_fail_at;
static _Atomic uint64_t fail_calls;

/* Read MEMTRACE_FAIL_AT once (empty is unset), and take it out of the
 * environment, so the programs this one execs do not fail at their own
 * Nth call too. */
static void arm_fail_at(void)
{
	const char *s = getenv("MEMTRACE_FAIL_AT");
	uint64_t n;

	if (!s)
		return;
	n = mt_settings_fail_at(s);
	if (n)
		atomic_store(&mt_trace_fail_at, n);
	unsetenv("MEMTRACE_FAIL_AT");
}

/* MEMTRACE_SAMPLE=B: record allocations by sampling, mean one per B
 * bytes (mt_sample.h); empty or unset is every allocation. */
static void arm_sampling(void)
{
	mt_sample_init(mt_settings_sample_bytes(getenv("MEMTRACE_SAMPLE")),
		       mt_clock_now() ^ (uint64_t)getpid() << 32);
}

/* Replace the MEMTRACE_OUTPUT entry of env in place with env_entry.
 * Returns 1 when env had one, else 0. */
static int publish_in(char **env)
{
	int found = 0;

	for (; env && *env; env++)
		if (!strncmp(*env, "MEMTRACE_OUTPUT=", 16)) {
			*env = env_entry;
			found = 1;
		}
	return found;
}

/*
 * An environment without MEMTRACE_OUTPUT gets env_entry added: environ
 * becomes a copy of it with the entry at its end, in memory of its own
 * (never malloc's, never given back).  glibc calls main() with environ as
 * it is after the constructors, so the program and a shell's copy of its
 * envp have it.  The old array stays valid for whoever still holds it.
 */
static void publish_added(void)
{
	size_t n = 0, len;
	char **env;

	while (environ && environ[n])
		n++;
	len = (n + 2) * sizeof(*env);
	env = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (env == MAP_FAILED) {
		mt_say_line("cannot hand the trace pattern to the processes below this one; "
			    "they write their traces where they start", NULL, NULL);
		return;
	}
	if (n)
		memcpy(env, environ, n * sizeof(*env));
	env[n] = env_entry;
	env[n + 1] = NULL;
	environ = env;
}

/* Take libmtpreload.so out of the LD_PRELOAD entry of env, in place:
 * the list only shrinks. */
static void unpreload_in(char **env)
{
	static const char self[] = "libmtpreload.so";

	for (; env && *env; env++) {
		char *start = *env + 11, *v = start, *w = start;

		if (strncmp(*env, "LD_PRELOAD=", 11))
			continue;
		while (*v) {
			char *elem, *base;
			size_t n;

			while (*v == ':' || *v == ' ')
				v++;
			elem = v;
			while (*v && *v != ':' && *v != ' ')
				v++;
			n = (size_t)(v - elem);
			if (!n)
				break;
			base = memrchr(elem, '/', n);
			base = base ? base + 1 : elem;
			if ((size_t)(elem + n - base) == sizeof(self) - 1 &&
			    !memcmp(base, self, sizeof(self) - 1))
				continue;
			if (w != start)
				*w++ = ':';
			memmove(w, elem, n);
			w += n;
		}
		*w = '\0';
	}
}

static void unpreload_env(void)
{
	unpreload_in(main_envp);
	if (environ != main_envp)
		unpreload_in(environ);
}

/*
 * A tree whose first traced process could not start its trace (its
 * output refused, no collector, no room for a ring) runs untraced whole:
 * its descendants would fail the same way, each with its own line, or
 * worse succeed where the first was refused (a refused /dev/null became
 * /dev/null.PID files for the children).  So the refused process takes
 * this library out of the LD_PRELOAD its descendants inherit, the
 * program's other preloads kept in order: now when the constructor has
 * run, else when it does (mt_trace_publish_env).
 */
static void untrace_tree(void)
{
	unpreload = 1;
	if (main_envp)
		unpreload_env();
}

/* Whether a collector this process starts would be its own child, to be
 * reaped by it: pid 1 of its namespace adopts every orphan in it, and a
 * child subreaper its descendants' (PR_SET_CHILD_SUBREAPER survives
 * exec).  Says so, once, and returns 1. */
static int collectors_would_be_children(void)
{
	static atomic_int said;
	int sub = 0;
	const char *what = NULL;

	if (record_sock[0])
		return 0;
	if (mt_real_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0) == 1)
		what = "pid 1 of its namespace";
	else if (mt_real_syscall6(SYS_prctl, PR_GET_CHILD_SUBREAPER, (long)&sub, 0, 0, 0, 0) == 0 &&
		 sub)
		what = "a child subreaper";
	if (!what)
		return 0;
	if (!atomic_exchange(&said, 1))
		mt_say_line("this process is ", what,
			    ": its collectors would be its children; trace it with memtrace record");
	return 1;
}

void mt_trace_publish_env(char **envp)
{
	int found;

	main_envp = envp;
	if (unpreload)
		unpreload_env();
	if (!env_entry[0])
		return;
	found = publish_in(envp);
	if (environ != envp)
		found = publish_in(environ);
	if (!found)
		publish_added();
}

/* ---- records ---- */

void mt_trace_mark_start(void)
{
	if (mt_settings_stats(getenv("MEMTRACE_STATS")))
		start_at = mt_clock_monotonic();
}

/* MEMTRACE_STATS: what this process's start took, once tracing is on;
 * said once, at its exit or its exec. */
static void say_start(void)
{
	char msg[2 * MT_FMT_U64_MAX + 48];
	size_t n;

	if (!stats || !start_measured)
		return;
	n = (size_t)(stpcpy(msg, start_forked ? "start: fork ns " : "start: image ns ") - msg);
	n += mt_fmt_u64(msg + n, start_took);
	n += (size_t)(stpcpy(msg + n, " register_ns ") - (msg + n));
	msg[n + mt_fmt_u64(msg + n, register_took)] = '\0';
	mt_say_line(msg, NULL, NULL);
	start_measured = 0; /* an exec that fails goes on to say no more */
}

/* Print the collector's message, once (a collector of its own has no
 * stderr; record's prints it for a program that left, and whoever prints
 * it first takes it). */
static void say_collector_message(void)
{
	mt_ring_hdr_t *h = mt_record_ring.hdr;

	if (h && atomic_load(&h->state) == MT_RING_DONE && h->message[0] &&
	    !atomic_exchange(&h->said, 1) && !atomic_exchange(&warned, 1))
		mt_say_line(h->message, NULL, NULL);
}

/* Tracing stops for good: the collector is gone, or finished because it
 * could not write (its message says why). */
void mt_trace_collector_lost(void)
{
	int expected = ON;

	if (!atomic_compare_exchange_strong(&active, &expected, OFF))
		return;
	/* Registered without waiting: record's collector has said why it
	 * could not open the trace, or serve this process. */
	if (mt_record_ring.nowait && atomic_load(&mt_record_ring.hdr->state) == MT_RING_FAILED)
		return;
	say_collector_message();
	if (!atomic_exchange(&warned, 1))
		mt_say_line("the collector has stopped; tracing stops, the program runs on",
			    NULL, NULL);
}

/* MEMTRACE_UNWIND=verify found the unwinders disagree (said): the trace
 * ends there, whole, and the program runs on. */
static void unwind_differed(void)
{
	mt_trace_stop("exit");
}

void mt_trace_set_unwinder(int unwinder)
{
	mt_stack_set_unwinder(unwinder, unwind_differed);
}

/* A system call the tracer cannot do without was refused (a seccomp
 * filter of the program's: EPERM or ENOSYS): tracing stops, with one
 * line, and the program runs on as it would bare. */
void mt_trace_clone_refused(int err)
{
	int expected = ON;

	if (!atomic_compare_exchange_strong(&active, &expected, OFF))
		return;
	if (!atomic_exchange(&warned, 1))
		mt_say_line("a system call the tracer needs was refused (clone: ",
			    err == EPERM ? "Operation not permitted" : "Function not implemented",
			    "); tracing stops, the program runs on");
}

/* The exe's path read (none kept), into l.  In a frame of its own: a
 * forked child has the path kept, and its start then reaches no deeper
 * than write_header()'s frame. */
static __attribute__((noinline)) void put_exe_read(mt_jsonl_t *l)
{
	char buf[PATH_CAP];
	/* A file is read only in place: a child to read it in would cost
	 * more than /proc/self/exe does.  Under a seccomp filter (prefault
	 * off) the calls are the ones the tracer always made: a filter was
	 * written for those. */
	ssize_t n = mt_exe_path(buf, sizeof(buf),
				mt_nofd_alone() && !mm_changed && mt_prefault_on());

	if (n > 0)
		mt_jsonl_str(l, "exe", buf, (size_t)n, 0);
	if (n > 0 && (size_t)n < sizeof(exe_kept) && !mm_changed) {
		memcpy(exe_kept, buf, (size_t)n);
		exe_kept_len = (size_t)n;
	}
}

/* Arguments longer than write_header()'s own room, into l (read again,
 * into a frame of their own). */
static __attribute__((noinline)) void put_argv_long(mt_jsonl_t *l)
{
	char buf[PATH_CAP];
	const char *argv[64];
	int full;
	size_t n = read_argv(buf, sizeof(buf), argv, sizeof(argv) / sizeof(argv[0]), &full);

	mt_jsonl_str_array(l, "argv", argv, n, 256);
}

static void write_header(pid_t ppid)
{
	/* Room for most processes' arguments: each page of stack a
	 * process's start reaches down to is a fault, a forked child's a
	 * copy of its parent's page. */
	char args[512];
	const char *argv[64];
	size_t nargs;
	mt_jsonl_t l;
	int full;

	mt_jsonl_begin(&l, mt_declare_line, sizeof(mt_declare_line), 0, "trace.start");
	mt_jsonl_u64(&l, "pid", (uint64_t)getpid());
	mt_jsonl_u64(&l, "ppid", (uint64_t)ppid);
	if (exe_kept_len)
		mt_jsonl_str(&l, "exe", exe_kept, exe_kept_len, 0);
	else
		put_exe_read(&l);
	nargs = read_argv(args, sizeof(args), argv, sizeof(argv) / sizeof(argv[0]), &full);
	if (full)
		put_argv_long(&l);
	else
		mt_jsonl_str_array(&l, "argv", argv, nargs, 256);
	mt_jsonl_u64(&l, "time_ns", mt_clock_realtime());
	mt_jsonl_str(&l, "tool_version", MT_VERSION, strlen(MT_VERSION), 0);
	mt_jsonl_u64(&l, "stack_depth", (uint64_t)stack_depth);
	if (mt_sample_bytes)
		mt_jsonl_u64(&l, "sample_bytes", mt_sample_bytes);
	mt_declare_record_line(mt_jsonl_end(&l));

	mt_jsonl_begin(&l, mt_declare_line, sizeof(mt_declare_line), 0, "allocator");
	mt_jsonl_u64(&l, "allocator_id", 0);
	mt_jsonl_str(&l, "name", "libc", 4, 0);
	mt_declare_record_line(mt_jsonl_end(&l));
}

/*
 * The ring's slots: want, or fewer when the hard RLIMIT_FSIZE is below
 * its size (the ring is a memfd, and a memfd's size is bounded by the
 * limit; the spawn raises only the soft one, as far as the hard).  0,
 * after saying why, when not even the smallest ring fits.
 */
static uint64_t fit_ring(uint64_t want)
{
	const uint64_t least = MT_RING_HDR_SIZE + MT_RING_MIN_SLOTS * MT_RING_SLOT;
	char rest[2 * MT_FMT_U64_MAX + 128];
	struct rlimit rl;
	size_t n;

	/* Not getrlimit(): a forked child of bash runs none of libc's code
	 * near it or readlink() (a fault maps 64 KiB of code), and would
	 * fault it in for these alone. */
	if (mt_real_syscall6(SYS_prlimit64, 0, RLIMIT_FSIZE, 0, (long)&rl, 0, 0) < 0 ||
	    rl.rlim_max == RLIM_INFINITY)
		return want;
	while (want > MT_RING_MIN_SLOTS && MT_RING_HDR_SIZE + want * MT_RING_SLOT > rl.rlim_max)
		want >>= 1;
	if (MT_RING_HDR_SIZE + want * MT_RING_SLOT <= rl.rlim_max)
		return want;
	n = mt_fmt_u64(rest, rl.rlim_max);
	n += (size_t)(stpcpy(rest + n, " bytes, below the ") - (rest + n));
	n += mt_fmt_u64(rest + n, least);
	strcpy(rest + n, " bytes the smallest ring needs; the program runs untraced");
	mt_say_line("cannot make the ring: the file size limit (ulimit -f) is ", rest, NULL);
	return 0;
}

/*
 * Wait for the collector to say whether it opened the trace named name,
 * then trace.  Under record without an answer (nowait) there is nothing
 * to wait for: record's collector says itself when it cannot open it.
 * Returns 0, or -errno after saying why on stderr (the ring unmapped).
 */
static int open_wait(const char *name)
{
	mt_ring_hdr_t *h = mt_record_ring.hdr;
	int rc;

	if (!mt_record_ring.nowait) {
		rc = mt_record_wait_open();
		if (rc != MT_RING_WRITING) {
			int err = rc == MT_RING_FAILED ? atomic_load(&h->open_error) : ECHILD;

			if (err == ENAMETOOLONG)
				mt_say_line("the trace name is too long; the program runs untraced",
					    NULL, NULL);
			else
				mt_say_line("cannot open trace '", h->path[0] ? h->path : name,
					    "'; the program runs untraced");
			mt_spawn_unmap(&mt_record_ring);
			return -(err ? err : EIO);
		}
	}
	atomic_store(&warned, 0);
	atomic_store(&active, ON);
	return 0;
}

/*
 * Start tracing into name (%p expanded; root: the user's own name, which
 * the collector may reuse): start a collector on a new ring, write the
 * header, and, when wait, wait for it to open the trace (open_wait).
 * Table lock held.  Returns 0; 1 when the caller is to call open_wait
 * (not wait, and a collector to wait for); or -errno after saying why on
 * stderr.
 */
static int begin_trace_locked(const char *name, int root, int depth, pid_t ppid, int wait)
{
	uint64_t slots, at = stats ? mt_clock_monotonic() : 0;
	int rc;

	stack_depth = depth < 0 ? 0 : depth > MT_STACK_MAX_DEPTH ? MT_STACK_MAX_DEPTH : depth;
	mt_stack_reset();
	owner = getpid();
	slots = fit_ring(ring_slots);
	if (!slots)
		return -EFBIG;
	if (record_sock[0]) {
		/* A process with one thread registers from its own table
		 * (mt_nofd_set_alone says why that is invisible). */
		rc = mt_spawn_register(record_sock, name, root, slots, mt_clock_now(),
				       mt_nofd_alone(), stats, &mt_record_ring);
		if (rc == -EPERM)
			mt_say_line("memtrace record's collector does not serve this process "
				    "(another user's); the program runs untraced", NULL, NULL);
		else if (rc == -ECONNREFUSED)
			mt_say_line("cannot reach memtrace record's collector '", record_sock,
				    "'; the program runs untraced");
		else if (rc < 0)
			mt_say_line("cannot hand the ring to memtrace record's collector '", record_sock,
				    "'; the program runs untraced");
		if (rc < 0)
			return rc;
		goto started;
	}
	if (collector_found <= 0) {
		mt_say_line("cannot start the collector '", collector,
			    collector_found == -ENAMETOOLONG ?
			    "': File name too long; the program runs untraced" :
			    "': No such file or directory; the program runs untraced");
		return -ENOENT;
	}
	rc = mt_spawn_collector(collector, name, root, slots, mt_clock_now(),
				&mt_record_ring);
	if (rc < 0) {
		const char *desc = strerrordesc_np(-rc);
		char why[160] = "': ";

		strncat(why, desc ? desc : "unknown error", 100);
		strcat(why, "; the program runs untraced");
		mt_say_line("cannot start the collector '", collector, why);
		return rc;
	}
started:
	if (at)
		register_took = mt_clock_monotonic() - at;
	mt_record_prefault_start();
	mt_record_seen_tail = 0;
	/* The header goes into the ring before the wait: a process killed
	 * while its collector opens the trace still gets a trace.start. */
	write_header(ppid);
	if (!wait && !mt_record_ring.nowait)
		return 1;
	return open_wait(name);
}

int mt_trace_start(const char *path, int depth)
{
	int rc;

	if (collector_found <= 0)
		collector_found = find_collector();
	if (open_unwinder_at_start(0) < 0)
		return -ENOTSUP;
	mt_stack_cache_init();
	mt_lock_take();
	if (atomic_load(&active) != OFF) {
		mt_lock_give();
		return -EBUSY;
	}
	/* The old ring's collector is done: nothing writes to it now. */
	if (mt_record_ring.hdr)
		mt_spawn_unmap(&mt_record_ring);
	rc = begin_trace_locked(path, 1, depth, getppid(), 1);
	mt_lock_give();
	return rc;
}

/*
 * Whether the program may leave its trace to the collector without
 * waiting for it: under memtrace record the collector holds the ring (its
 * own mapping of the memfd) and drains it after the program has ended,
 * and record itself ends only once every trace is finished; its message,
 * if any, it prints itself.  A collector of the program's own must have
 * finished the file when the program ends: whoever ran the program reads
 * it next.  MEMTRACE_STATS waits for the collector's account.
 */
static int leave_to_collector(void)
{
	if (!record_sock[0] || stats)
		return 0;
	atomic_store(&mt_record_ring.hdr->detached, 1);
	return 1;
}

/* Write trace.stop with reason and wait until the collector has closed
 * the trace (up to timeout_ms; 0: as long as it lives), unless it is
 * left to the collector. */
static void stop_and_wait(unsigned reason, unsigned timeout_ms)
{
	int leave = leave_to_collector();
	uint64_t end;

	if (mt_record_stop(reason, mt_clock_now(),
			   atomic_load(&mt_record_ring.hdr->dropped), &end) == 0 && !leave)
		mt_record_wait_collector(end, 0, timeout_ms);
}

static void say_stats(void)
{
	mt_ring_hdr_t *h = mt_record_ring.hdr;
	char cpu[MT_FMT_U64_MAX + 1], lines[MT_FMT_U64_MAX + 1], bytes[MT_FMT_U64_MAX + 1];
	char workers[MT_FMT_U64_MAX + 1], msg[5 * MT_FMT_U64_MAX + 64];
	const char *why;
	size_t n = 0;

	if (!stats || atomic_load(&h->state) != MT_RING_DONE)
		return;
	cpu[mt_fmt_u64(cpu, h->collector_cpu_ns)] = '\0';
	lines[mt_fmt_u64(lines, h->collector_lines)] = '\0';
	bytes[mt_fmt_u64(bytes, h->collector_bytes)] = '\0';
	workers[mt_fmt_u64(workers, h->collector_workers)] = '\0';
	n += (size_t)(stpcpy(msg + n, "collector: cpu_ns ") - (msg + n));
	n += (size_t)(stpcpy(msg + n, cpu) - (msg + n));
	n += (size_t)(stpcpy(msg + n, " lines ") - (msg + n));
	n += (size_t)(stpcpy(msg + n, lines) - (msg + n));
	n += (size_t)(stpcpy(msg + n, " bytes ") - (msg + n));
	n += (size_t)(stpcpy(msg + n, bytes) - (msg + n));
	n += (size_t)(stpcpy(msg + n, " workers ") - (msg + n));
	stpcpy(msg + n, workers);
	mt_say_line(msg, NULL, NULL);
	if (mt_clock_tsc_in_use(&why))
		mt_say_line("clock: the TSC", NULL, NULL);
	else
		mt_say_line("clock: clock_gettime(), as ", why, NULL);
	if (atomic_load(&mt_stack_unwinder) != MT_UNWIND_LIBUNWIND) {
		uint64_t fast, slow, shared, kept;

		mt_stack_unwind_counts(&fast, &slow);
		n = (size_t)(stpcpy(msg, "unwind: fast ") - msg);
		n += mt_fmt_u64(msg + n, fast);
		n += (size_t)(stpcpy(msg + n, " libunwind ") - (msg + n));
		n += mt_fmt_u64(msg + n, slow);
		n += (size_t)(stpcpy(msg + n, " rules ") - (msg + n));
		n += mt_fmt_u64(msg + n, mt_unwind_cache_rules_read());
		mt_unwind_share_counts(&shared, &kept);
		n += (size_t)(stpcpy(msg + n, " shared ") - (msg + n));
		n += mt_fmt_u64(msg + n, shared);
		n += (size_t)(stpcpy(msg + n, " kept ") - (msg + n));
		msg[n + mt_fmt_u64(msg + n, kept)] = '\0';
		mt_say_line(msg, NULL, NULL);
	}
	{
		uint64_t shared, kept;

		mt_namecache_counts(&shared, &kept);
		n = (size_t)(stpcpy(msg, "names: shared ") - msg);
		n += mt_fmt_u64(msg + n, shared);
		n += (size_t)(stpcpy(msg + n, " kept ") - (msg + n));
		msg[n + mt_fmt_u64(msg + n, kept)] = '\0';
		mt_say_line(msg, NULL, NULL);
	}
	say_start();
}

static unsigned reason_code(const char *reason)
{
	if (!strcmp(reason, "exec"))
		return MT_STOP_EXEC;
	if (!strcmp(reason, "signal"))
		return MT_STOP_SIGNAL;
	if (!strcmp(reason, "api"))
		return MT_STOP_API;
	return MT_STOP_EXIT;
}

/* ---- fork ---- */

/* The process became a child subreaper after it started: its children's
 * collectors would be its own orphans, so its children run untraced, and
 * so does what they exec. */
static int fork_untraced;

static void atfork_prepare(void)
{
	guard++;
	fork_untraced = collectors_would_be_children();
	if (fork_untraced)
		unpreload_env();
	else if (atomic_load(&active) != OFF) {
		mt_namecache_fork_prepare();
		mt_unwind_cache_fork_prepare();
	}
	mt_stack_fork_prepare();
	mt_symbol_fork_prepare();
	mt_lock_take();
}

static void atfork_parent(void)
{
	mt_lock_give();
	mt_symbol_fork_parent();
	mt_stack_fork_parent();
	guard--;
}

static void atfork_child(void)
{
	char name[PATH_CAP];
	pid_t ppid = getppid();

	start_at = stats ? mt_clock_monotonic() : 0;
	start_took = register_took = 0;
	start_measured = 0;
	start_forked = 1;
	mt_lock_reset();
	atomic_store(&mt_trace_fail_at, 0); /* only the process it was set for */
	mt_symbol_fork_child();
	mt_namecache_fork_child();
	mt_unwind_cache_fork_child();
	mt_clock_fork_child();
	mt_stack_fork_child();
	tid_cache = 0;
	if (atomic_load(&active) != OFF) {
		/* The parent's ring is the parent's: let go of it without
		 * writing a record, and start a collector of our own. */
		atomic_store(&active, OFF);
		mt_spawn_unmap(&mt_record_ring);
		if (fork_untraced || collectors_would_be_children()) {
			unpreload_env();
		} else if (mt_name_expand(child_pattern, getpid(), name, sizeof(name)) < 0) {
			mt_say_line("the trace name is too long; the child runs untraced", NULL, NULL);
		} else {
			/* One thread: the registration and the files its
			 * header reads take no child (mt_nofd_set_alone). */
			mt_nofd_set_alone(1);
			if (begin_trace_locked(name, 0, stack_depth, ppid, 1) == 0 && start_at) {
				start_took = mt_clock_monotonic() - start_at;
				start_measured = 1;
			}
			mt_nofd_set_alone(0);
		}
	}
	guard--;
}

/* ---- signals that end the process ---- */

/* mt_signal's on_end: write trace.stop with reason "signal" and wait a
 * while for the collector to finish the trace, unless this thread is
 * inside the tracer (it may be in the middle of a record: returns 1, and
 * mt_signal holds the signal until it leaves). */
static int end_on_signal(void)
{
	int expected = ON;

	if (guard)
		return atomic_load(&active) != OFF ? 1 : 0;
	if (!mt_trace_owned())
		return 0;
	if (atomic_compare_exchange_strong(&active, &expected, OFF)) {
		stop_and_wait(MT_STOP_SIGNAL, 5000);
		say_collector_message();
	}
	return 0;
}

/* ---- start ---- */

/* dl_iterate_phdr's visit: stop (1) at a module named libstdc++.so.N. */
static int is_libstdcxx(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	(void)data;
	base = base ? base + 1 : info->dlpi_name;
	return base && !strncmp(base, "libstdc++.so", 12);
}

/* Whether libstdc++ is loaded (a C++ program, or one a C++ library was
 * linked into). */
static int has_libstdcxx(void)
{
	return dl_iterate_phdr(is_libstdcxx, NULL) == 1;
}

void mt_trace_init(void)
{
	int expected = 0;
	/* Once per process (init_state): off the stack, which a first
	 * hook may find small. */
	static char pattern[PATH_CAP] MT_LAYOUT_APART, made_dir[PATH_CAP] MT_LAYOUT_APART;
	const char *env;
	char name[PATH_CAP];
	int rc, root, filtered;

	if (!atomic_compare_exchange_strong(&init_state, &expected, 1))
		return;
	self_range();
	filtered = mt_prefault_init();
	mt_prefault_data();
	mt_stack_cache_init();
	/* No lock is held: dlsym takes the loader's.  Only where libstdc++
	 * is loaded, which has the symbol: a lookup that fails leaves its
	 * message for the program's dlerror(), and taking it back with
	 * dlerror() translates it, through gettext's lock, which a library's
	 * bindtextdomain() may hold around the malloc that started us (libgpg-
	 * error's constructor does, in ps): the lock came out broken, and the
	 * program's next textdomain() waited forever. */
	if (has_libstdcxx())
		atomic_store(&cxx_freeres, (void (*)(void))dlsym(RTLD_DEFAULT,
								 "_ZN9__gnu_cxx9__freeresEv"));
	/* A set-user-ID or otherwise secure-execution process must not
	 * let its environment choose a file to write. */
	if (getauxval(AT_SECURE))
		goto done;
	env = getenv(MT_REGISTER_ENV);
	if (mt_settings_record_socket(env, record_sock, sizeof(record_sock)) < 0)
		goto done;
	if (collectors_would_be_children()) {
		untrace_tree();
		goto done;
	}
	ring_slots = mt_settings_ring_slots(getenv("MEMTRACE_RING_SLOTS"));
	arm_sampling();
	stats = mt_settings_stats(getenv("MEMTRACE_STATS"));
	mt_trace_set_unwinder(mt_settings_unwind(getenv("MEMTRACE_UNWIND")));
	/* Under record no collector is started: none is looked for. */
	if (!record_sock[0])
		collector_found = find_collector();
	if (open_unwinder_at_start(filtered) < 0) {
		untrace_tree();
		goto done;
	}
	/* The pattern made absolute: the processes below this one start
	 * wherever it has gone since, and write beside it. */
	env = getenv("MEMTRACE_OUTPUT");
	if (mt_output_pattern(env, program_invocation_short_name, getpid(), pattern,
			      sizeof(pattern), made_dir, sizeof(made_dir)) < 0) {
		untrace_tree();
		goto done;
	}
	if (mt_name_child_pattern(pattern, child_pattern, sizeof(child_pattern)) < 0 ||
	    mt_name_expand(pattern, getpid(), name, sizeof(name)) < 0) {
		mt_say_line("MEMTRACE_OUTPUT is too long; the program runs untraced",
			    NULL, NULL);
		mt_output_unmake(made_dir);
		untrace_tree();
		goto done;
	}
	/* A pattern without %p is the user's name for the first process of
	 * the tree: the processes below it find the pattern that cannot
	 * clash with it, absolute, in their environment
	 * (mt_trace_publish_env). */
	root = !mt_name_has_pid(pattern);
	if (!env || strcmp(env, child_pattern)) {
		memcpy(env_entry, "MEMTRACE_OUTPUT=", 16);
		memcpy(env_entry + 16, child_pattern, strlen(child_pattern) + 1);
	}
	/* A start before any thread (glibc's own word: no thread was ever
	 * made) reads its files and registers in place, with no child: the
	 * clones were most of a short process's cost, each a round trip
	 * through a busy scheduler (docs/performance.md). */
	if (__libc_single_threaded)
		mt_nofd_set_alone(1);
	/* The clock judges the machine when its calibration is due, which
	 * most short processes never reach; one that starts under a filter
	 * judges it now, as it may not be able to then, and reads the
	 * clock only through the vDSO. */
	if (filtered)
		mt_clock_program_locks_down();
	mt_lock_take();
	rc = begin_trace_locked(name, root, mt_settings_depth(getenv("MEMTRACE_STACK_DEPTH")),
				getppid(), 0);
	mt_lock_give();
	/* The module table and files are read at the first frame named,
	 * or before the program installs a seccomp filter (the hooks see
	 * it): most short processes name none.  A process that starts under
	 * a filter reads them now, while the collector starts, as it may not
	 * be able to later. */
	if (rc >= 0 && stack_depth > 0 && filtered)
		mt_symbol_lock_down();
	mt_nofd_set_alone(0);
	if (rc == 1)
		rc = open_wait(name);
	if (rc < 0) {
		/* A process limit (EAGAIN) is the one refusal a descendant
		 * may not meet, and writes beside this process's place: the
		 * others would repeat, line after line. */
		if (rc != -EAGAIN) {
			env_entry[0] = '\0';
			mt_output_unmake(made_dir);
			untrace_tree();
		}
		goto done;
	}
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	mt_signal_install(end_on_signal, mt_real.sigaction);
	arm_fail_at();
	if (stats && start_at) {
		start_took = mt_clock_monotonic() - start_at;
		start_measured = 1;
	}
done:
	init_argc = 0;
	atomic_store(&init_state, 2);
}

int mt_trace_owned(void)
{
	return atomic_load(&active) != OFF &&
	       (pid_t)mt_real_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0) == owner;
}

void mt_trace_end(const char *reason)
{
	if (mt_trace_owned())
		mt_trace_stop(reason);
}

/* libunwind opened where the program could call dlopen itself: its
 * allocations are the tracer's, untraced; when it cannot be opened the
 * trace ends (mt_unwind_lib.h). */
static void open_unwinder_now(void)
{
	int saved = errno;

	if (mt_unwind_lib_is_open())
		return;
	guard++;
	mt_unwind_lib_open();
	guard--;
	errno = saved;
}

void mt_trace_dlopening(void)
{
	if (atomic_load(&active) != OFF && stack_depth > 0)
		open_unwinder_now();
}

void mt_trace_program_locks_down(void)
{
	mt_prefault_stop();
	if (atomic_load(&active) != OFF && stack_depth > 0)
		open_unwinder_now();
	mt_clock_program_locks_down();
	if (atomic_load(&active) != OFF && stack_depth > 0)
		mt_symbol_lock_down();
	mt_unwind_share_lock_down();
}

/*
 * Valgrind's --run-cxx-freeres and heaptrack's exit handler: the frees
 * are made by the exiting thread outside the guard, so they are recorded
 * like the program's own.  Once: the pointer is taken.
 */
void mt_trace_freeres(void)
{
	void (*fn)(void);

	if (!mt_trace_owned() || guard)
		return;
	fn = atomic_exchange(&cxx_freeres, NULL);
	if (fn)
		fn();
}

/*
 * An exec: new events wait (HELD) while the stop is written and the
 * collector has put it in the file; a failed exec takes it back
 * (UNSTOP) and lets them go on.  The collector holds whatever other
 * threads recorded after the stop until it knows the outcome.
 */
int mt_trace_exec_begin(void)
{
	int saved = errno, expected = ON, leave;
	uint64_t end;

	if (!mt_trace_owned() || !mt_trace_guard())
		return 0;
	if (!atomic_compare_exchange_strong(&active, &expected, HELD)) {
		mt_trace_leave();
		errno = saved;
		return 0;
	}
	/* Under record the stop need not be in the file before the exec: the
	 * collector holds the ring, reads the stop whenever it comes to it
	 * and learns the outcome as ever (an UNSTOP, or the ring no longer
	 * mapped by the program). */
	leave = leave_to_collector();
	if (mt_record_stop(MT_STOP_EXEC, mt_clock_now(),
			   atomic_load(&mt_record_ring.hdr->dropped), &end) == 0 && !leave)
		mt_record_wait_collector(end, 1, 0);
	say_collector_message();
	say_start();
	errno = saved;
	return 1;
}

void mt_trace_exec_failed(void)
{
	int saved = errno;
	uint64_t end;

	if (mt_record_unstop(&end) == 0 && mt_record_collector_alive())
		atomic_store(&active, ON);
	else
		atomic_store(&active, OFF);
	mt_trace_leave();
	errno = saved;
}

void mt_trace_stop(const char *reason)
{
	int saved = errno, expected = ON;

	if (!atomic_compare_exchange_strong(&active, &expected, OFF))
		return;
	guard++;
	stop_and_wait(reason_code(reason), 0);
	say_collector_message();
	say_stats();
	guard--;
	errno = saved;
}

void mt_trace_fork_untraced_child(void)
{
	atomic_store(&active, OFF);
}

/* ---- the guard ---- */

int mt_trace_guard(void)
{
	if (guard)
		return 0;
	guard = 1;
	return 1;
}

/* An exec is under way in another thread: wait for its outcome. */
static __attribute__((noinline)) int wait_held(void)
{
	struct timespec ts = { 0, 50000 };
	int a;

	while ((a = atomic_load(&active)) == HELD)
		mt_real_syscall6(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
	return a == ON;
}

int mt_trace_enter(void)
{
	int a;

	if (guard)
		return 0;
	guard = 1;
	if (atomic_load_explicit(&init_state, memory_order_acquire) != 2)
		mt_trace_init();
	a = atomic_load_explicit(&active, memory_order_relaxed);
	if (__builtin_expect(a != ON, 0) && (a == OFF || !wait_held())) {
		guard = 0;
		return 0;
	}
	return 1;
}

void mt_trace_leave(void)
{
	guard = 0;
	if (__builtin_expect(mt_signal_pending != 0, 0))
		mt_signal_raise_pending();
}

int mt_trace_active(void)
{
	return atomic_load(&active) != OFF;
}

/* ---- events ---- */

/* Fill the block record at pos and publish it. */
static inline void publish_block(uint64_t pos, mt_kind_t kind, mt_fn_t fn,
				 uint64_t t, uint64_t ptr, uint64_t new_ptr,
				 uint64_t size, uint64_t align, uint64_t stack,
				 uint64_t fail_at)
{
	mt_ring_block_t *b = (mt_ring_block_t *)mt_record_slot(pos);

	b->t = t;
	b->ptr = ptr;
	b->new_ptr = new_ptr;
	b->size = size;
	b->align = align;
	b->stack = stack;
	b->fail_at = fail_at;
	mt_record_publish(pos, MT_RING_WORD(MT_REC_BLOCK, 1, kind, fn,
					    (uint32_t)current_tid()));
}

/* Reserve a block's slot: 0, or -1 when the collector is gone. */
static inline int reserve_block(uint64_t *pos)
{
	if (__builtin_expect(mt_record_reserve(1, pos) < 0, 0)) {
		mt_trace_collector_lost();
		return -1;
	}
	return 0;
}

static void block_event(mt_kind_t kind, mt_fn_t fn, uint64_t ptr, uint64_t size,
			uint64_t align, uint64_t fail_at, const uint64_t *ips, int n)
{
	uint64_t stack = mt_declare_stack(ips, n), pos, t;

	if (atomic_load_explicit(&active, memory_order_relaxed) == OFF)
		return;
	t = mt_clock_now();
	if (reserve_block(&pos) == 0)
		publish_block(pos, kind, fn, t, ptr, 0, size, align, stack, fail_at);
}

void mt_trace_dlclosed(void)
{
	int saved = errno;

	if (mt_unwind_cache_forget())
		mt_declare_forget();
	errno = saved;
}

int mt_trace_stack_depth(void)
{
	return stack_depth;
}

/* The tests' way in: the capture is inlined here, as in a hook. */
void mt_trace_alloc(mt_fn_t fn, void *ptr, size_t size, size_t align)
{
	mt_trace_allocated(fn, ptr, size, align);
}

void mt_trace_alloc_fail(mt_fn_t fn, size_t size, size_t align)
{
	mt_trace_allocated(fn, NULL, size, align);
}

void mt_trace_alloc_at(mt_fn_t fn, void *ptr, size_t size, size_t align,
		       const uint64_t *ips, int n)
{
	int saved = errno;

	/* A sampled block is marked before the program has it, so its free
	 * is recorded; one that cannot be remembered is not recorded at all
	 * (its free would be unknown), and trace.stop counts it dropped. */
	if (mt_sample_bytes && mt_sample_mark(ptr) < 0) {
		if (atomic_load_explicit(&active, memory_order_relaxed) != OFF)
			atomic_fetch_add(&mt_record_ring.hdr->dropped, 1);
		return;
	}
	block_event(MT_KIND_ALLOC, fn, (uint64_t)ptr, size, align, 0, ips, n);
	errno = saved;
}

void mt_trace_alloc_fail_at(mt_fn_t fn, size_t size, size_t align,
			    const uint64_t *ips, int n)
{
	int saved = errno;

	block_event(MT_KIND_ALLOC_FAIL, fn, 0, size, align, 0, ips, n);
	errno = saved;
}

void mt_trace_free(mt_fn_t fn, void *ptr)
{
	int saved = errno;
	uint64_t pos, t;

	/* Sampling: only a sampled block's free is recorded. */
	if (mt_sample_bytes && !mt_sample_unmark(ptr))
		return;
	t = mt_clock_now();

	/* Frees carry no stack: the analyzer attributes a block to where it
	 * was allocated, and unwinding every free would double the cost.
	 * "fn":"free" on a free says nothing (format.md makes fn optional
	 * there); a free made by realloc(p, 0) keeps its fn.  Recorded
	 * before the real free: the address may be handed out again the
	 * moment it is free, and that allocation's record must come after. */
	if (reserve_block(&pos) == 0)
		publish_block(pos, MT_KIND_FREE, fn == MT_FN_FREE ? MT_FN_COUNT : fn,
			      t, (uint64_t)ptr, 0, 0, 0, 0, 0);
	errno = saved;
}

void *mt_trace_realloc(mt_fn_t fn, void *ptr, size_t size,
		       void *(*real)(void *, size_t))
{
	return mt_trace_reallocated(fn, ptr, size, real);
}

void *mt_trace_realloc_at(mt_fn_t fn, void *ptr, size_t size,
			  void *(*real)(void *, size_t), const uint64_t *ips,
			  int n)
{
	uint64_t stack, pos, t;
	mt_kind_t kind;
	int saved;
	void *q;

	if (!ptr) {
		q = real(NULL, size);
		if (q)
			mt_trace_alloc_at(fn, q, size, 0, ips, n);
		else
			mt_trace_alloc_fail_at(fn, size, 0, ips, n);
		return q;
	}
	stack = mt_declare_stack(ips, n);
	t = mt_clock_now();
	/* The slot is reserved before the real call: the old address may be
	 * handed to another thread the moment realloc frees it, and that
	 * thread's alloc must come after this event in the trace. */
	if (atomic_load_explicit(&active, memory_order_relaxed) == OFF ||
	    reserve_block(&pos) < 0)
		return real(ptr, size);
	q = real(ptr, size);
	saved = errno;
	kind = q == ptr ? MT_KIND_RESIZE :
	       q	? MT_KIND_REMAP :
	       size	? MT_KIND_ALLOC_FAIL : MT_KIND_FREE;
	/* The block a recorded realloc returns is sampled (it may not have
	 * been: mt_trace_reallocated()).  A bit that finds no memory leaves
	 * the resize or remap recorded and its free not, counted dropped. */
	if (mt_sample_bytes) {
		if (kind == MT_KIND_REMAP || kind == MT_KIND_FREE)
			mt_sample_unmark(ptr);
		if ((kind == MT_KIND_REMAP || kind == MT_KIND_RESIZE) && mt_sample_mark(q) < 0)
			atomic_fetch_add(&mt_record_ring.hdr->dropped, 1);
	}
	publish_block(pos, kind, fn, t, kind == MT_KIND_ALLOC_FAIL ? 0 : (uint64_t)ptr,
		      (uint64_t)q, kind == MT_KIND_FREE ? 0 : size, 0,
		      kind == MT_KIND_FREE ? 0 : stack, 0);
	errno = saved;
	return q;
}

/* ---- the allocators of memtrace.h (mt_api.c) ---- */

void mt_trace_lock(void)
{
	mt_lock_take();
}

void mt_trace_unlock(void)
{
	mt_lock_give();
}

void mt_trace_declare_locked(const char *text, size_t len)
{
	if (atomic_load(&active) != OFF && mt_record_text(text, len) < 0)
		mt_trace_collector_lost();
}

void mt_trace_api_event(mt_kind_t kind, uint64_t allocator_id, uint64_t ptr,
			uint64_t new_ptr, uint64_t size, const uint64_t *ips,
			int n)
{
	uint64_t stack = mt_declare_stack(ips, n), pos, t;

	if (atomic_load_explicit(&active, memory_order_relaxed) == OFF)
		return;
	t = mt_clock_now();
	/* allocator_id goes where align would (mt_ring_block_t). */
	if (reserve_block(&pos) == 0)
		publish_block(pos, kind, MT_FN_API, t, ptr, new_ptr, size,
			      allocator_id, stack, 0);
}

/* The Nth allocation call of MEMTRACE_FAIL_AT (arm_fail_at() reads it)
 * is recorded as failed, and fails. */
int mt_trace_fail_check(mt_fn_t fn, size_t size, size_t align)
{
	uint64_t at = atomic_load(&mt_trace_fail_at);
	mt_stack_buf_t st;
	int n;

	if (!at || atomic_fetch_add(&fail_calls, 1) + 1 != at)
		return 0;
	atomic_store(&mt_trace_fail_at, 0);
	n = mt_stack_capture(&st, stack_depth);
	block_event(MT_KIND_ALLOC_FAIL, fn, 0, size, align, at, mt_stack_ips(&st), n);
	errno = ENOMEM;
	return 1;
}
