/*
 * mt_symbol: module table from /proc/self/maps and symbol names from each
 * module's ELF symbol tables, read through one private mapping of the file
 * kept per module (libunwind's get_proc_name re-reads the maps and maps the
 * file on every call).  Names follow libunwind 1.6.2's rule exactly; a
 * module whose file cannot be read that way falls back to libunwind.  It
 * must never call dladdr or dl_iterate_phdr while the module lock is held,
 * never be called with the trace lock held, and never malloc.
 */
#include "mt_symbol.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MODULES 2048
#define PATH_POOL (512u << 10)

#if defined(__x86_64__)
#define MT_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define MT_ELF_MACHINE EM_AARCH64
#endif

enum { VIEW_UNTRIED, VIEW_OK, VIEW_FALLBACK };

typedef struct {
	uint64_t start, end; /* an executable mapping */
	uint64_t off;        /* its file offset */
	uint64_t dev, inode;
	uint64_t path_hash;
	uint64_t bias;       /* the module's load bias */
	uint32_t path;       /* offset in the path pool */
	uint32_t path_len;
	/* The whole file, mapped once on the first lookup; owned by this
	 * entry, handed on by a reload only to the same mapping of the
	 * same file. */
	int view;
	const unsigned char *image;
	size_t size;
} module_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static module_t modules[MAX_MODULES];
static size_t nmodules;
/* The table before a reload, to hand its views on. */
static module_t old_modules[MAX_MODULES];
static size_t nold;
static uint64_t maps_reads, fallbacks;
static char pool[PATH_POOL];
static size_t pool_used;
static char maps_buf[1 << 16];
/* The last mapping at file offset 0: where its ELF header is. */
static uint64_t hdr_start;
static char hdr_path[4096];
static size_t hdr_len;

static uint64_t parse_hex(const char **s)
{
	uint64_t v = 0;

	for (;; (*s)++) {
		char c = **s;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* The load bias of the ELF object whose header is mapped at header. */
static uint64_t load_bias(uint64_t header)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)header;
	const Elf64_Phdr *ph;
	uint64_t lowest = UINT64_MAX;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return header;
	if (eh->e_type == ET_EXEC)
		return 0;
	ph = (const Elf64_Phdr *)(header + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < lowest)
			lowest = ph[i].p_vaddr;
	if (lowest == UINT64_MAX)
		return header;
	return header - (lowest & ~(uint64_t)4095);
}

/* One line of /proc/self/maps:
 * start-end perms offset dev inode   path */
static void add_line(const char *s, const char *end)
{
	uint64_t start, stop, off, dev, inode = 0, hash = 1469598103934665603ull;
	const char *perms, *path;
	module_t *m;
	size_t len;

	start = parse_hex(&s);
	if (*s++ != '-')
		return;
	stop = parse_hex(&s);
	if (*s++ != ' ')
		return;
	perms = s;
	while (s < end && *s != ' ')
		s++;
	s++;
	off = parse_hex(&s);
	if (*s++ != ' ')
		return;
	dev = parse_hex(&s) << 32;
	if (*s++ != ':')
		return;
	dev |= parse_hex(&s);
	if (*s++ != ' ')
		return;
	while (s < end && *s >= '0' && *s <= '9')
		inode = inode * 10 + (uint64_t)(*s++ - '0');
	while (s < end && *s == ' ')
		s++;
	path = s;
	len = (size_t)(end - s);
	if (!len)
		return;
	if (off == 0 && perms[0] == 'r' && len < sizeof(hdr_path)) {
		hdr_start = start;
		memcpy(hdr_path, path, len);
		hdr_len = len;
	}
	if (perms[2] != 'x' || nmodules == MAX_MODULES)
		return;
	if (pool_used + len + 1 > sizeof(pool))
		return;
	for (size_t i = 0; i < len; i++)
		hash = (hash ^ (unsigned char)path[i]) * 1099511628211ull;
	m = &modules[nmodules];
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = stop;
	m->off = off;
	m->dev = dev;
	m->inode = inode;
	m->path_hash = hash;
	/* The header is the lowest mapping of the same file at offset 0,
	 * which /proc/self/maps lists before its executable segment. */
	if (hdr_len == len && !memcmp(hdr_path, path, len) && path[0] == '/')
		m->bias = load_bias(hdr_start);
	else
		m->bias = start;
	memcpy(pool + pool_used, path, len);
	pool[pool_used + len] = '\0';
	m->path = (uint32_t)pool_used;
	m->path_len = (uint32_t)len;
	pool_used += len + 1;
	/* Keep the view of the same mapping of the same file: a reload is
	 * a dlopen, and the modules already there have not changed. */
	for (size_t i = 0; i < nold; i++) {
		module_t *o = &old_modules[i];

		if (o->view != VIEW_UNTRIED && o->start == start && o->end == stop &&
		    o->off == off && o->dev == dev && o->inode == inode &&
		    o->path_hash == hash && o->path_len == len) {
			m->view = o->view;
			m->image = o->image;
			m->size = o->size;
			o->view = VIEW_UNTRIED;
			o->image = NULL;
			break;
		}
	}
	nmodules++;
}

static void drop_view(module_t *m)
{
	if (m->image)
		munmap((void *)m->image, m->size);
	m->image = NULL;
	m->view = VIEW_UNTRIED;
}

/* Unmap the views no entry of the new table took over. */
static void drop_old(void)
{
	for (size_t i = 0; i < nold; i++)
		drop_view(&old_modules[i]);
	nold = 0;
}

static void reload(void)
{
	size_t have = 0;
	int fd;

	memcpy(old_modules, modules, nmodules * sizeof(modules[0]));
	nold = nmodules;
	nmodules = 0;
	hdr_len = 0;
	pool_used = 0;
	maps_reads++;
	do
		fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		drop_old();
		return;
	}
	for (;;) {
		ssize_t n = read(fd, maps_buf + have, sizeof(maps_buf) - have);
		char *line, *nl, *end;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		end = maps_buf + have;
		line = maps_buf;
		while ((nl = memchr(line, '\n', (size_t)(end - line)))) {
			add_line(line, nl);
			line = nl + 1;
		}
		have = (size_t)(end - line);
		memmove(maps_buf, line, have);
		if (have == sizeof(maps_buf))
			have = 0; /* an absurd line: drop it */
	}
	close(fd);
	drop_old();
}

static int in_file(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

/* Section header i of a mapped ELF image whose section table usable()
 * has checked. */
static const Elf64_Shdr *section(const unsigned char *img, uint64_t i)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

	return (const Elf64_Shdr *)(img + eh->e_shoff + i * eh->e_shentsize);
}

/* Whether the section table names a .gnu_debugdata: libunwind would look
 * for a closer symbol in that MiniDebugInfo too, so leave such a file to
 * libunwind. */
static int has_minidebuginfo(const unsigned char *img, size_t size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *names;
	static const char want[] = ".gnu_debugdata";

	if (eh->e_shstrndx >= eh->e_shnum)
		return 1; /* cannot tell: not ours */
	names = section(img, eh->e_shstrndx);
	if (!in_file(names->sh_offset, names->sh_size, size))
		return 1;
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = section(img, (uint64_t)i);

		if (sh->sh_name < names->sh_size &&
		    names->sh_size - sh->sh_name >= sizeof(want) &&
		    !memcmp(img + names->sh_offset + sh->sh_name, want, sizeof(want)))
			return 1;
	}
	return 0;
}

/* Whether a mapped file is an ELF object of this machine whose headers and
 * symbol tables lie inside it, so a lookup never reads past the mapping. */
static int usable(const unsigned char *img, size_t size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT)
		return 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return 0;
#else
	if (eh->e_ident[EI_DATA] != ELFDATA2MSB)
		return 0;
#endif
#ifdef MT_ELF_MACHINE
	if (eh->e_machine != MT_ELF_MACHINE)
		return 0;
#else
	return 0;
#endif
	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !in_file(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), size))
		return 0;
	if (eh->e_shentsize < sizeof(Elf64_Shdr) ||
	    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * eh->e_shentsize, size))
		return 0;
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = section(img, (uint64_t)i);

		if (sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM)
			continue;
		if (sh->sh_entsize < sizeof(Elf64_Sym) ||
		    !in_file(sh->sh_offset, sh->sh_size, size))
			return 0;
	}
	return !has_minidebuginfo(img, size);
}

/* Map the module's file once: open, fstat, one private read-only mapping
 * (never malloc), kept until a reload finds the mapping gone. */
static void view_open(module_t *m)
{
	const char *path = pool + m->path;
	struct stat st;
	void *img;
	int fd;

	m->view = VIEW_FALLBACK;
	if (path[0] != '/')
		return; /* [vdso], [heap], anonymous memory */
	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return;
	}
	img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return;
	if (!usable(img, (size_t)st.st_size)) {
		munmap(img, (size_t)st.st_size);
		return;
	}
	m->image = img;
	m->size = (size_t)st.st_size;
	m->view = VIEW_OK;
}

/* Name ip with libunwind 1.6.2's rule (src/elfxx.c), so names and offsets
 * stay what they were: the load offset comes from the PT_LOAD whose file
 * offset is the mapping's (0 when none is); every defined STT_FUNC of
 * every SHT_SYMTAB and SHT_DYNSYM, in section order, is a candidate, at
 * st_value plus the load offset unless SHN_ABS; the nearest one at or
 * below ip wins, the first on a tie, st_size ignored; and nothing is
 * found when that distance is not below the file's size.  Returns the
 * distance, or UINT64_MAX. */
static uint64_t view_lookup(const module_t *m, uint64_t ip, const char **name,
			    size_t *name_max)
{
	const unsigned char *img = m->image;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);
	uint64_t load = 0, best = UINT64_MAX;

	*name = NULL;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == m->off) {
			load = m->start - ph[i].p_vaddr;
			break;
		}
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = section(img, (uint64_t)i);
		const Elf64_Shdr *str;
		uint64_t soff;

		if (sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM)
			continue;
		/* libunwind skips a table whose strings lie outside the file. */
		soff = eh->e_shoff + (uint64_t)sh->sh_link * eh->e_shentsize;
		if (!in_file(soff, eh->e_shentsize, m->size))
			continue;
		str = (const Elf64_Shdr *)(img + soff);
		if (!in_file(str->sh_offset, str->sh_size, m->size))
			continue;
		for (uint64_t o = 0; o + sizeof(Elf64_Sym) <= sh->sh_size; o += sh->sh_entsize) {
			const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh->sh_offset + o);
			uint64_t val;

			if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF)
				continue;
			val = sym->st_value;
			if (sym->st_shndx != SHN_ABS)
				val += load;
			if (ip - val < best && sym->st_name < str->sh_size) {
				best = ip - val;
				*name = (const char *)img + str->sh_offset + sym->st_name;
				*name_max = str->sh_size - sym->st_name;
			}
		}
	}
	if (best >= m->size)
		return UINT64_MAX;
	return best;
}

static module_t *find(uint64_t ip)
{
	for (size_t i = 0; i < nmodules; i++)
		if (ip >= modules[i].start && ip < modules[i].end)
			return &modules[i];
	return NULL;
}

void mt_symbol_resolve(uint64_t ip, mt_symbol_info_t *info, char *module,
		       size_t module_cap, char *symbol, size_t symbol_cap)
{
	module_t *m;
	unw_word_t off = 0;
	unw_accessors_t *acc;
	int rc, fallback = 1;

	memset(info, 0, sizeof(*info));
	module[0] = '\0';
	symbol[0] = '\0';
	pthread_mutex_lock(&lock);
	/* The return address may be the first byte of the next function
	 * after a call that does not return: look up the call itself. */
	m = find(ip - 1);
	if (!m) {
		reload();
		m = find(ip - 1);
	}
	if (m) {
		size_t n = m->path_len < module_cap - 1 ? m->path_len : module_cap - 1;
		const char *name = NULL;
		size_t name_max = 0, len;
		uint64_t dist;

		memcpy(module, pool + m->path, n);
		module[n] = '\0';
		info->has_module = 1;
		info->module_len = n;
		info->module_offset = ip - m->bias;
		if (m->view == VIEW_UNTRIED)
			view_open(m);
		if (m->view == VIEW_OK) {
			fallback = 0;
			dist = view_lookup(m, ip - 1, &name, &name_max);
			if (dist != UINT64_MAX && name && name[0]) {
				/* Truncated at the buffer as libunwind's
				 * strncpy leaves it. */
				len = strnlen(name, name_max < symbol_cap - 1 ? name_max : symbol_cap - 1);
				memcpy(symbol, name, len);
				symbol[len] = '\0';
				info->has_symbol = 1;
				info->symbol_len = len;
				info->offset = dist + 1;
			}
		}
	}
	if (fallback)
		fallbacks++;
	pthread_mutex_unlock(&lock);
	if (!fallback)
		return;

	acc = unw_get_accessors(unw_local_addr_space);
	if (!acc || !acc->get_proc_name)
		return;
	rc = acc->get_proc_name(unw_local_addr_space, (unw_word_t)(ip - 1),
				symbol, symbol_cap, &off, NULL);
	if ((rc == 0 || rc == -UNW_ENOMEM) && symbol[0]) {
		symbol[symbol_cap - 1] = '\0';
		info->has_symbol = 1;
		info->symbol_len = strlen(symbol);
		info->offset = off + 1;
	}
}

void mt_symbol_stats(mt_symbol_stats_t *stats)
{
	pthread_mutex_lock(&lock);
	stats->maps_reads = maps_reads;
	stats->fallbacks = fallbacks;
	pthread_mutex_unlock(&lock);
}

void mt_symbol_reset(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nmodules; i++)
		drop_view(&modules[i]);
	nmodules = 0;
	pool_used = 0;
	pthread_mutex_unlock(&lock);
}

void mt_symbol_fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void mt_symbol_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

void mt_symbol_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	lock = fresh;
}
