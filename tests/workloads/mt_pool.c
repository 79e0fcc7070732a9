/*
 * mt_pool: an example of a program's own allocator reported through
 * memtrace.h: a pool that carves blocks (16-byte size classes up to 256
 * bytes) out of one malloc'd arena, by bumping a pointer and through a
 * free list per class.  It prints what it did, in by_allocator's terms,
 * so a test can compare the trace's figures with the program's own.
 *
 *   mt_pool          the pool at work, some blocks left live at exit
 *   mt_pool fork     the same, and a forked child that uses the pool too
 *
 * Built with -I include alone: it links nothing of memtrace's, and runs
 * the same with or without the preload.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memtrace.h>

#define ARENA_BYTES (1u << 20)
#define CLASS_BYTES 16
#define CLASSES 16 /* up to 256 bytes */

typedef struct free_block {
	struct free_block *next;
} free_block_t;

typedef struct {
	unsigned char *arena, *bump, *end;
	free_block_t *free_list[CLASSES];
	memtrace_allocator_t mt;
	/* What by_allocator counts: alloc, free, resize and remap calls,
	 * and the bytes the program asked for. */
	unsigned long allocations, frees, resizes, remaps;
	unsigned long long live_bytes, peak_live_bytes;
} pool_t;

static int class_of(size_t size)
{
	return size ? (int)((size - 1) / CLASS_BYTES) : 0;
}

static void pool_init(pool_t *p, const char *name)
{
	memset(p, 0, sizeof(*p));
	p->arena = malloc(ARENA_BYTES);
	if (!p->arena) {
		perror("mt_pool: malloc");
		exit(1);
	}
	p->bump = p->arena;
	p->end = p->arena + ARENA_BYTES;
	p->mt = memtrace_allocator(name);
}

static void count_live(pool_t *p, long long delta)
{
	p->live_bytes += (unsigned long long)delta;
	if (p->live_bytes > p->peak_live_bytes)
		p->peak_live_bytes = p->live_bytes;
}

/* A block of its class, from the free list or the bump pointer; the
 * block's size is only the caller's to know, as with free(). */
static void *pool_take(pool_t *p, size_t size)
{
	int c = class_of(size);
	size_t bytes = (size_t)(c + 1) * CLASS_BYTES;
	void *b;

	if (size > CLASSES * CLASS_BYTES)
		return NULL;
	if (p->free_list[c]) {
		b = p->free_list[c];
		p->free_list[c] = p->free_list[c]->next;
	} else if ((size_t)(p->end - p->bump) >= bytes) {
		b = p->bump;
		p->bump += bytes;
	} else {
		return NULL;
	}
	return b;
}

static void *pool_alloc(pool_t *p, size_t size)
{
	void *b = pool_take(p, size);

	if (!b)
		return NULL;
	memtrace_alloc(p->mt, b, size); /* handed out: now it is live */
	p->allocations++;
	count_live(p, (long long)size);
	return b;
}

static void pool_free(pool_t *p, void *b, size_t size)
{
	free_block_t *f = b;
	int c = class_of(size);

	if (!b)
		return;
	memtrace_free(p->mt, b); /* before the block can be handed out again */
	p->frees++;
	count_live(p, -(long long)size);
	f->next = p->free_list[c];
	p->free_list[c] = f;
}

/* Grow or shrink within the class in place, else move to a new block. */
static void *pool_realloc(pool_t *p, void *b, size_t old_size, size_t size)
{
	void *q;

	if (class_of(old_size) == class_of(size)) {
		memtrace_realloc(p->mt, b, b, size);
		p->resizes++;
		count_live(p, (long long)size - (long long)old_size);
		return b;
	}
	q = pool_take(p, size);
	if (!q)
		return NULL;
	memcpy(q, b, old_size < size ? old_size : size);
	memtrace_realloc(p->mt, b, q, size);
	p->remaps++;
	count_live(p, (long long)size - (long long)old_size);
	/* The old block goes back without an event: the remap freed it. */
	((free_block_t *)b)->next = p->free_list[class_of(old_size)];
	p->free_list[class_of(old_size)] = b;
	return q;
}

/* Two sites of the pool's, one of libc's, for `report --allocator`. */
static __attribute__((noinline)) void *make_node(pool_t *p, size_t size)
{
	return pool_alloc(p, size);
}

static __attribute__((noinline)) void *make_buffer(pool_t *p, size_t size)
{
	return pool_alloc(p, size);
}

static __attribute__((noinline)) void *libc_site(size_t size)
{
	return malloc(size);
}

#define NODES 400

static void work(pool_t *p, void **keep)
{
	void *nodes[NODES];
	size_t sizes[NODES];
	void *buf;
	size_t buf_size = 24;

	for (int i = 0; i < NODES; i++) {
		sizes[i] = 8 + (size_t)(i % 13) * 8;
		nodes[i] = make_node(p, sizes[i]);
	}
	/* A buffer that grows: resizes within its class, remaps across. */
	buf = make_buffer(p, buf_size);
	for (size_t s = 28; s <= 200; s += 12) {
		buf = pool_realloc(p, buf, buf_size, s);
		buf_size = s;
	}
	for (int i = 0; i < NODES; i += 2)
		pool_free(p, nodes[i], sizes[i]);
	/* Reuse of freed addresses. */
	for (int i = 0; i < NODES; i += 4) {
		nodes[i] = make_node(p, sizes[i]);
		pool_free(p, nodes[i], sizes[i]);
	}
	pool_free(p, buf, buf_size);
	/* Every odd node is still live at exit. */
	*keep = libc_site(100);
}

static void print_counts(const char *who, const pool_t *p)
{
	printf("%s: allocations %lu frees %lu resizes %lu remaps %lu "
	       "live_bytes %llu peak_live_bytes %llu\n",
	       who, p->allocations, p->frees, p->resizes, p->remaps,
	       p->live_bytes, p->peak_live_bytes);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	pool_t pool;
	void *keep;

	pool_init(&pool, "pool");
	/* A name is one allocator, however often it is asked for. */
	if (memtrace_allocator("pool").id != pool.mt.id) {
		fprintf(stderr, "mt_pool: one name gave two allocators\n");
		return 1;
	}
	work(&pool, &keep);
	if (argc > 1 && !strcmp(argv[1], "fork")) {
		pid_t pid = fork();
		int status;

		if (pid < 0) {
			perror("mt_pool: fork");
			return 1;
		}
		if (pid == 0) {
			/* The child's own counts: a pool of its own figures,
			 * the same allocator. */
			pool_t child = pool;

			child.allocations = child.frees = 0;
			child.resizes = child.remaps = 0;
			child.live_bytes = child.peak_live_bytes = 0;
			void *b = make_node(&child, 40);

			pool_free(&child, make_node(&child, 24), 24);
			print_counts("child", &child);
			(void)b;
			exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "mt_pool: the child failed\n");
			return 1;
		}
	}
	print_counts("pool", &pool);
	free(keep);
	return 0;
}
