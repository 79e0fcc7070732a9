/*
 * mt_unwind_sys: libunwind's system calls, routed to the tracer's own
 * (mt_unwind_sys.h says why).  The functions libunwind now calls must
 * never be cancellation points, never touch a descriptor of the program,
 * never allocate and never call a hooked function; installing must never
 * leave a page of libunwind's writable that was not.
 */
#include "mt_unwind_sys.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "mt_nofd.h"
#include "mt_real.h"

/* Two descriptor numbers no descriptor can have (they are negative and
 * not -1, which libunwind takes for "none"): the ends of libunwind's
 * pipe. */
#define FAKE_READ (-0x6d7400)
#define FAKE_WRITE (-0x6d7401)
#define PAGE 4096ul

static long sys(long n, long a, long b, long c, long d, long e, long f)
{
	return mt_real_syscall6(n, a, b, c, d, e, f);
}

/* A raw system call's answer as libc gives it: -1 and errno. */
static long libc_answer(long rc)
{
	if (rc < 0 && rc > -4096) {
		errno = (int)-rc;
		return -1;
	}
	return rc;
}

static int fake(long fd)
{
	return fd == FAKE_READ || fd == FAKE_WRITE;
}

/* rt_sigprocmask with a how the kernel does not know: it copies the new
 * set from addr first (EFAULT when it cannot), then refuses the how
 * (EINVAL), so nothing changes and no descriptor is needed.  Eight bytes
 * at an 8-aligned address never cross a page. */
static int readable_word(uintptr_t addr)
{
	/* A null set is no set to the kernel: the first word of page 0,
	 * never mapped (mmap_min_addr), is unreadable. */
	if (!(addr & ~(uintptr_t)7))
		return 0;
	return sys(SYS_rt_sigprocmask, 3 /* not a how */, (long)(addr & ~(uintptr_t)7), 0,
		   8, 0, 0) != -EFAULT;
}

int mt_unwind_sys_readable(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, last = len ? a + len - 1 : a;

	if (last < a)
		return 0;
	if (!readable_word(a))
		return 0;
	for (uintptr_t p = (a & ~(PAGE - 1)) + PAGE; p && p <= last; p += PAGE)
		if (!readable_word(p))
			return 0;
	return 1;
}

/*
 * The files libunwind opens itself, to name a frame of a module the
 * tracer cannot read (mt_symbol's fallback): /proc/PID/maps, then the
 * module's file, which it maps.  Each is read whole in mt_nofd's child
 * (a regular file mapped, anything else read into an anonymous buffer) and
 * handed to libunwind as a descriptor number no descriptor can have;
 * read, fstat, mmap and close know it.  A file's mapping passes to
 * libunwind when it maps the file whole, and it unmaps it itself.
 */
#define FILES 8
/* libunwind takes a negative number for a failed open: these are above
 * the largest descriptor the kernel can give (fs.nr_open is at most
 * 2^31 - 64). */
#define FAKE_FILE0 INT_MAX
#define READ_MAX (16u << 20)

typedef struct {
	atomic_int used;
	unsigned char *data;
	size_t size, pos, map_len;
	int is_file; /* data maps the file itself */
	int owned;   /* data is ours to unmap (not given to libunwind) */
} file_t;

static file_t files[FILES];

static file_t *fake_file(long fd)
{
	long i = FAKE_FILE0 - fd;

	if (i < 0 || i >= FILES || !atomic_load(&files[i].used))
		return NULL;
	return &files[i];
}

typedef struct {
	const char *path;
	file_t *f;
} open_t;

/* In mt_nofd's child: map the regular file, or read the rest. */
static long open_child(void *arg)
{
	open_t *o = arg;
	file_t *f = o->f;
	long fd, rc, n;

	rc = mt_nofd_map_here(o->path, (const void **)&f->data, &f->size);
	if (rc == 0) {
		f->map_len = f->size;
		f->is_file = 1;
		f->owned = 1;
		return 0;
	}
	if (rc != -EINVAL)
		return rc;
	do
		fd = sys(SYS_openat, AT_FDCWD, (long)o->path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	while (fd == -EINTR);
	if (fd < 0)
		return fd;
	f->map_len = 64u << 10;
	rc = sys(SYS_mmap, 0, (long)f->map_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rc < 0 && rc > -4096)
		goto out;
	f->data = (unsigned char *)rc;
	f->owned = 1;
	f->size = 0;
	for (;;) {
		if (f->size == f->map_len) {
			if (f->map_len >= READ_MAX)
				break;
			rc = sys(SYS_mremap, (long)f->data, (long)f->map_len,
				 (long)(2 * f->map_len), MREMAP_MAYMOVE, 0, 0);
			if (rc < 0 && rc > -4096)
				break;
			f->data = (unsigned char *)rc;
			f->map_len *= 2;
		}
		n = sys(SYS_read, fd, (long)(f->data + f->size), (long)(f->map_len - f->size),
			0, 0, 0);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		f->size += (size_t)n;
	}
	rc = 0;
out:
	sys(SYS_close, fd, 0, 0, 0, 0, 0);
	return rc;
}

static int u_open(const char *path, int flags, ...)
{
	open_t o = { path, NULL };
	long rc;
	int i;

	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT)) {
		errno = EACCES; /* libunwind only reads */
		return -1;
	}
	for (i = 0; i < FILES; i++) {
		int free_ = 0;

		if (atomic_compare_exchange_strong(&files[i].used, &free_, 1))
			break;
	}
	if (i == FILES) {
		errno = EMFILE;
		return -1;
	}
	o.f = &files[i];
	o.f->data = NULL;
	o.f->size = o.f->pos = o.f->map_len = 0;
	o.f->is_file = o.f->owned = 0;
	rc = mt_nofd_run(open_child, &o);
	if (rc < 0) {
		if (o.f->owned)
			sys(SYS_munmap, (long)o.f->data, (long)o.f->map_len, 0, 0, 0, 0);
		atomic_store(&files[i].used, 0);
		errno = (int)-rc;
		return -1;
	}
	return FAKE_FILE0 - i;
}

static int u_fstat(int fd, struct stat *st)
{
	file_t *f = fake_file(fd);

	if (!f)
		return (int)libc_answer(sys(SYS_fstat, fd, (long)st, 0, 0, 0, 0));
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFREG | 0444;
	st->st_size = (off_t)f->size;
	return 0;
}

static void *u_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	file_t *f = fd > FAKE_FILE0 - FILES ? fake_file(fd) : NULL;

	if (f) {
		/* The file mapped whole, read-only: the mapping is the
		 * caller's now. */
		if (!f->is_file || !f->owned || off || len != f->size ||
		    (prot & PROT_WRITE)) {
			errno = ENODEV;
			return MAP_FAILED;
		}
		f->owned = 0;
		return f->data;
	}
	return (void *)libc_answer(sys(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off));
}

static int u_pipe2(int fds[2], int flags)
{
	(void)flags;
	fds[0] = FAKE_READ;
	fds[1] = FAKE_WRITE;
	return 0;
}

static int u_pipe(int fds[2])
{
	return u_pipe2(fds, 0);
}

/* The pipe is always empty: libunwind drains it before each write. */
static ssize_t u_read(int fd, void *buf, size_t n)
{
	file_t *f;

	if (fake(fd)) {
		errno = EAGAIN;
		return -1;
	}
	if ((f = fake_file(fd)) != NULL) {
		size_t k = f->size - f->pos < n ? f->size - f->pos : n;

		memcpy(buf, f->data + f->pos, k);
		f->pos += k;
		return (ssize_t)k;
	}
	return libc_answer(sys(SYS_read, fd, (long)buf, (long)n, 0, 0, 0));
}

/* A write to the pipe: the bytes are readable, or EFAULT. */
static ssize_t validate(const void *buf, size_t n)
{
	if (!mt_unwind_sys_readable(buf, n ? n : 1)) {
		errno = EFAULT;
		return -1;
	}
	return (ssize_t)n;
}

static ssize_t u_write(int fd, const void *buf, size_t n)
{
	if (fake(fd))
		return validate(buf, n);
	return libc_answer(sys(SYS_write, fd, (long)buf, (long)n, 0, 0, 0));
}

static int u_close(int fd)
{
	file_t *f;

	if (fake(fd))
		return 0;
	if ((f = fake_file(fd)) != NULL) {
		if (f->owned)
			sys(SYS_munmap, (long)f->data, (long)f->map_len, 0, 0, 0, 0);
		atomic_store(&f->used, 0);
		return 0;
	}
	return (int)libc_answer(sys(SYS_close, fd, 0, 0, 0, 0, 0));
}

/* libunwind 1.6 writes with syscall(SYS_write, ...).  Called through a
 * variadic prototype: on x86-64 the integer arguments are in the same
 * registers either way, but an int argument (a descriptor) leaves the
 * upper half of its register undefined, so it is compared as an int. */
static long u_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	if (n == SYS_write && fake((int)a))
		return validate((const void *)b, (size_t)c);
	if (n == SYS_read && fake((int)a))
		return u_read((int)a, (void *)b, (size_t)c);
	if (n == SYS_close && fake((int)a))
		return 0;
	return libc_answer(sys(n, a, b, c, d, e, f));
}

/* Mapped and readable is what libunwind asks of both: ENOMEM otherwise,
 * as for an address that is not mapped. */
static int u_mincore(void *addr, size_t len, unsigned char *vec)
{
	size_t pages = (len + PAGE - 1) / PAGE;

	for (size_t i = 0; i < pages; i++) {
		if (!readable_word((uintptr_t)addr + i * PAGE)) {
			errno = ENOMEM;
			return -1;
		}
		vec[i] = 1;
	}
	return 0;
}

static int u_msync(void *addr, size_t len, int flags)
{
	(void)flags;
	if (!mt_unwind_sys_readable(addr, len ? len : 1)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static const struct {
	const char *name;
	void *fn;
} routes[] = {
	{ "pipe2", (void *)u_pipe2 },	  { "pipe", (void *)u_pipe },
	{ "read", (void *)u_read },	  { "write", (void *)u_write },
	{ "close", (void *)u_close },	  { "syscall", (void *)u_syscall },
	{ "mincore", (void *)u_mincore }, { "msync", (void *)u_msync },
	{ "open", (void *)u_open },	  { "fstat", (void *)u_fstat },
	{ "mmap", (void *)u_mmap },
};

static int state; /* 0: not tried; 1: routed; -1: failed */
static int routed, objects;

static uintptr_t dyn_ptr(uintptr_t v, uintptr_t base)
{
	/* glibc relocates the dynamic section's addresses in place; another
	 * loader may leave them relative to the base. */
	return v < base ? v + base : v;
}

/* Point one GOT slot at fn, making its page writable for the store only
 * when RELRO made it read-only. */
static int set_slot(uintptr_t slot, void *fn, uintptr_t relro_lo, uintptr_t relro_hi)
{
	uintptr_t page = slot & ~(PAGE - 1);
	int ro = slot >= relro_lo && slot < relro_hi;

	if (ro && sys(SYS_mprotect, (long)page, (long)PAGE, PROT_READ | PROT_WRITE, 0, 0, 0))
		return -1;
	__atomic_store_n((void **)slot, fn, __ATOMIC_RELEASE);
	if (ro)
		sys(SYS_mprotect, (long)page, (long)PAGE, PROT_READ, 0, 0, 0);
	return 0;
}

static int route_relocs(uintptr_t base, const Elf64_Rela *r, size_t bytes,
			const Elf64_Sym *symtab, const char *strtab, uintptr_t lo,
			uintptr_t hi)
{
	for (size_t i = 0; i < bytes / sizeof(*r); i++) {
		unsigned type = (unsigned)ELF64_R_TYPE(r[i].r_info);
		const char *name;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		name = strtab + symtab[ELF64_R_SYM(r[i].r_info)].st_name;
		for (size_t k = 0; k < sizeof(routes) / sizeof(routes[0]); k++) {
			if (strcmp(name, routes[k].name))
				continue;
			if (set_slot(base + r[i].r_offset, routes[k].fn, lo, hi) < 0)
				return -1;
			routed++;
		}
	}
	return 0;
}

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name, *slash;
	const Elf64_Dyn *dyn = NULL;
	uintptr_t base = info->dlpi_addr, lo = 0, hi = 0;
	uintptr_t jmprel = 0, rela = 0, symtab = 0, strtab = 0;
	size_t pltsz = 0, relasz = 0;
	int *failed = arg;

	(void)size;
	if (!name || !*name)
		return 0;
	slash = strrchr(name, '/');
	if (strncmp(slash ? slash + 1 : name, "libunwind", 9))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const Elf64_Phdr *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const Elf64_Dyn *)(base + ph->p_vaddr);
		else if (ph->p_type == PT_GNU_RELRO) {
			lo = base + ph->p_vaddr;
			hi = lo + ph->p_memsz;
		}
	}
	if (!dyn) {
		*failed = 1;
		return 0;
	}
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_JMPREL: jmprel = dyn_ptr(dyn->d_un.d_ptr, base); break;
		case DT_PLTRELSZ: pltsz = dyn->d_un.d_val; break;
		case DT_RELA: rela = dyn_ptr(dyn->d_un.d_ptr, base); break;
		case DT_RELASZ: relasz = dyn->d_un.d_val; break;
		case DT_SYMTAB: symtab = dyn_ptr(dyn->d_un.d_ptr, base); break;
		case DT_STRTAB: strtab = dyn_ptr(dyn->d_un.d_ptr, base); break;
		default: break;
		}
	}
	if (!symtab || !strtab) {
		*failed = 1;
		return 0;
	}
	objects++;
	if ((jmprel && route_relocs(base, (const Elf64_Rela *)jmprel, pltsz,
				    (const Elf64_Sym *)symtab, (const char *)strtab, lo, hi)) ||
	    (rela && route_relocs(base, (const Elf64_Rela *)rela, relasz,
				  (const Elf64_Sym *)symtab, (const char *)strtab, lo, hi)))
		*failed = 1;
	return 0;
}

int mt_unwind_sys_install(void)
{
	int failed = 0;

	if (state)
		return state > 0 ? 0 : -1;
#if defined(__x86_64__)
	dl_iterate_phdr(each_object, &failed);
#else
	failed = 1;
#endif
	state = failed || !objects ? -1 : 1;
	return state > 0 ? 0 : -1;
}

int mt_unwind_sys_routed(void)
{
	return routed;
}
