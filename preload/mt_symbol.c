/*
 * mt_symbol: the module table (what is mapped where, from /proc/self/maps,
 * read again when the loader's adds and subs have changed, or after an
 * unload) and the naming of an address: its module and offset from the
 * table, its symbol from the module's ELF view (mt_elf.h, one private
 * mapping of the file kept per module; libunwind's get_proc_name re-reads
 * the maps and maps the file on every call), kept only when its extent
 * (st_size, when it has one) contains the address; a module whose file
 * cannot be read that way falls back to libunwind.  It must never call dladdr or dl_iterate_phdr
 * while the module lock is held, never be called with the table lock
 * held, and never malloc.
 */
#include "mt_symbol.h"

#include "mt_elf.h"
#include "mt_layout.h"
#include "mt_namecache.h"
#include "mt_nofd.h"
#include "mt_prefault.h"
#include "mt_real.h"
#include "mt_unwind_lib.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MODULES 2048
#define PATH_POOL (512u << 10)

typedef struct {
	uint64_t start, end; /* an executable mapping */
	uint64_t off;        /* its file offset */
	uint64_t dev, inode;
	uint64_t path_hash;
	uint64_t bias;       /* the module's load bias */
	uint32_t path;       /* offset in the path pool */
	uint32_t path_len;
	/* The whole file and its index, mapped once when the table is
	 * read; owned by this entry, handed on by a reload only to the same
	 * mapping of the same file. */
	mt_elf_view_t view;
} module_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* A module was unloaded since the table was read (mt_symbol_forget): an
 * address inside an entry may be another module's now. */
static atomic_int stale;
/* Set by mt_symbol_lock_down(): a reload reads in a child. */
static atomic_int locked;
static module_t modules[MAX_MODULES] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(modules);
static size_t nmodules;
/* The table before a reload, to hand its views on. */
static module_t old_modules[MAX_MODULES] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(old_modules);
static size_t nold;
static uint64_t maps_reads, fallbacks, indexed, headers_read;
static char pool[PATH_POOL] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(pool);
static size_t pool_used;
static char maps_buf[1 << 16] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(maps_buf);
/* The last mapping at file offset 0: where its ELF header is. */
static uint64_t hdr_start;
static char hdr_path[4096] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(hdr_path);
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

		if ((o->view.state != MT_ELF_UNTRIED || o->view.image) && o->start == start &&
		    o->end == stop &&
		    o->off == off && o->dev == dev && o->inode == inode &&
		    o->path_hash == hash && o->path_len == len) {
			m->view = o->view;
			memset(&o->view, 0, sizeof(o->view));
			break;
		}
	}
	nmodules++;
}

/* Unmap the views no entry of the new table took over. */
static void drop_old(void)
{
	for (size_t i = 0; i < nold; i++)
		mt_elf_drop(&old_modules[i].view);
	nold = 0;
}

/* mt_nofd_read_each's consumer, in its child: whole lines of the maps. */
static size_t maps_lines(void *arg, char *buf, size_t have)
{
	char *line = buf, *nl, *end = buf + have;

	(void)arg;
	while ((nl = memchr(line, '\n', (size_t)(end - line)))) {
		add_line(line, nl);
		line = nl + 1;
	}
	return (size_t)(line - buf);
}


/* The module's view, from the file its path names (a file's path starts
 * with '/'). */
static void view_open(module_t *m)
{
	if (m->view.image)
		headers_read++;
	mt_elf_open(&m->view, pool + m->path, m->start, m->off);
}

/* In mt_nofd's child: map the file of every module that has no view yet
 * (image and size; view_open() checks them). */
static long map_all(void *arg)
{
	(void)arg;
	for (size_t i = 0; i < nmodules; i++) {
		module_t *m = &modules[i];

		if (m->view.state == MT_ELF_UNTRIED && !m->view.image && pool[m->path] == '/' &&
		    mt_nofd_map_here(pool + m->path, (const void **)&m->view.image,
				     &m->view.size) < 0)
			m->view.image = NULL;
	}
	return 0;
}

/* The module table from /proc/self/maps, read with no descriptor in the
 * program's table; then the files of every module are mapped at once (one
 * child for all), so that a new frame later, even after the program has
 * locked its system calls down, opens nothing.  A mapped file's headers
 * are read when a frame in it is first named (view_open() at the lookup):
 * most processes name frames in a few of their modules, and each file's
 * headers are a page fault or two. */
static int reload(void)
{
	/* While no thread was ever made (glibc's word), the files are read
	 * in place, with no child: the first frame named, which reads them
	 * in most processes, comes before their first thread.  Not once the
	 * program has a filter: an open it refuses must not be the
	 * program's to see. */
	int in_place = !mt_nofd_alone() && __libc_single_threaded && !atomic_load(&locked);
	long rc;

	if (in_place)
		mt_nofd_set_alone(1);
	/* An unload told from now on is read by the next reload. */
	atomic_store(&stale, 0);

	memcpy(old_modules, modules, nmodules * sizeof(modules[0]));
	nold = nmodules;
	nmodules = 0;
	hdr_len = 0;
	pool_used = 0;
	maps_reads++;
	rc = mt_nofd_read_each("/proc/self/maps", maps_buf, sizeof(maps_buf), maps_lines,
			       NULL);
	drop_old();
	mt_nofd_run(map_all, NULL);
	for (size_t i = 0; i < nmodules; i++)
		if (modules[i].view.state == MT_ELF_UNTRIED && !modules[i].view.image)
			view_open(&modules[i]);
	if (in_place)
		mt_nofd_set_alone(0);
	return rc < 0 ? -1 : 0;
}


/* Whether the symbol libunwind's rule picked contains the address, dist
 * bytes past its start: a symbol with a size must reach it.  In a stripped
 * module the nearest exported function below a static one ends long
 * before it (python3.11's PySys_WriteStderr+0x417): that frame is named
 * by module and offset alone, as heaptrack prints an address.  A symbol
 * without a size (an assembly label) cannot say where it ends, and keeps
 * libunwind's answer. */
static int symbol_contains(uint64_t dist, uint64_t size)
{
	return size == 0 || dist < size;
}


/* The loader's count of objects loaded and unloaded: the module table is
 * read again only when it has changed (a dlopen or dlclose), never for an
 * address in no module (JIT code), so that a program that has locked its
 * system calls down never makes the tracer open a file for a new frame. */
static int loaded;
static uint64_t loaded_gen;

static int count_loads(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t *gen = arg, subs = mt_elf_unloads(info, size);

	/* dlpi_adds comes before dlpi_subs: both or neither. */
	if (subs != UINT64_MAX)
		*gen = (uint64_t)info->dlpi_adds * 0x100000001ull + subs;
	return 1;
}

static uint64_t loader_generation(void)
{
	uint64_t gen = 0;

	dl_iterate_phdr(count_loads, &gen);
	return gen;
}

static module_t *find(uint64_t ip)
{
	for (size_t i = 0; i < nmodules; i++)
		if (ip >= modules[i].start && ip < modules[i].end)
			return &modules[i];
	return NULL;
}

/* Name ip from m's file (its view, mapped now if it never was): the
 * symbol fields and build id of info, the symbol in symbol.  0 when the
 * file cannot be read that way (libunwind's to name). */
static int name_from_view(module_t *m, uint64_t ip, mt_symbol_info_t *info, char *symbol,
			  size_t symbol_cap)
{
	const char *name = NULL;
	size_t name_max = 0, len;
	uint64_t dist, size = 0;

	if (m->view.state == MT_ELF_UNTRIED)
		view_open(m);
	if (m->view.state != MT_ELF_OK)
		return 0;
	info->build_id_len = mt_elf_build_id(&m->view, info->build_id);
	dist = mt_elf_lookup(&m->view, ip - 1, &name, &name_max, &size);
	if (mt_elf_has_index(&m->view))
		indexed++;
	if (dist != UINT64_MAX && name && name[0] && symbol_contains(dist, size)) {
		/* Truncated at the buffer as libunwind's strncpy leaves
		 * it. */
		len = strnlen(name, name_max < symbol_cap - 1 ? name_max : symbol_cap - 1);
		memcpy(symbol, name, len);
		symbol[len] = '\0';
		info->has_symbol = 1;
		info->symbol_len = len;
		info->offset = dist + 1;
	}
	return 1;
}

void mt_symbol_resolve(uint64_t ip, mt_symbol_info_t *info, char *module,
		       size_t module_cap, char *symbol, size_t symbol_cap)
{
	module_t *m;
	unw_word_t off = 0;
	unw_accessors_t *acc;
	unw_addr_space_t space;
	int rc, fallback = 1, reread;
	uint64_t gen = 0;

	memset(info, 0, sizeof(*info));
	module[0] = '\0';
	symbol[0] = '\0';
	/* The loader is asked with no lock of ours held. */
	reread = atomic_load(&stale);
	if (reread)
		gen = loader_generation();
	pthread_mutex_lock(&lock);
	if (reread && atomic_load(&stale)) {
		/* The unloaded module's view is dropped here, under the
		 * lock, the only place its symbols are read. */
		loaded = reload() == 0;
		loaded_gen = gen;
	}
	/* The return address may be the first byte of the next function
	 * after a call that does not return: look up the call itself. */
	m = find(ip - 1);
	if (!m) {
		/* The loader is asked with no lock of ours held. */
		pthread_mutex_unlock(&lock);
		gen = loader_generation();
		pthread_mutex_lock(&lock);
		m = find(ip - 1);
		if (!m && (!loaded || gen != loaded_gen)) {
			/* A table that could not be read is read again at
			 * the next address it lacks. */
			loaded = reload() == 0;
			loaded_gen = gen;
			m = find(ip - 1);
		}
	}
	if (!m)
		fallback = 0; /* in no file: JIT code, anonymous memory */
	if (m) {
		size_t n = m->path_len < module_cap - 1 ? m->path_len : module_cap - 1;
		mt_namecache_key_t key = { ip, m->bias, m->dev, m->inode, m->path_hash };

		memcpy(module, pool + m->path, n);
		module[n] = '\0';
		info->has_module = 1;
		info->module_len = n;
		info->module_offset = ip - m->bias;
		if (mt_namecache_find(&key, info, symbol, symbol_cap)) {
			fallback = 0;
		} else if (name_from_view(m, ip, info, symbol, symbol_cap)) {
			fallback = 0;
			/* A name cut at the buffer is kept for no one: a
			 * larger buffer would hold more of it. */
			if (!info->has_symbol || info->symbol_len < symbol_cap - 1)
				mt_namecache_add(&key, info, symbol);
		}
	}
	if (fallback)
		fallbacks++;
	pthread_mutex_unlock(&lock);
	if (!fallback)
		return;

	acc = mt_unwind_lib_accessors(&space);
	if (!acc || !acc->get_proc_name)
		return;
	mt_real_owned++;
	rc = acc->get_proc_name(space, (unw_word_t)(ip - 1),
				symbol, symbol_cap, &off, NULL);
	mt_real_owned--;
	if ((rc == 0 || rc == -UNW_ENOMEM) && symbol[0]) {
		symbol[symbol_cap - 1] = '\0';
		info->has_symbol = 1;
		info->symbol_len = strlen(symbol);
		info->offset = off + 1;
	}
}

void mt_symbol_load(void)
{
	uint64_t gen = loader_generation();

	pthread_mutex_lock(&lock);
	if (!loaded || gen != loaded_gen) {
		loaded = reload() == 0;
		loaded_gen = gen;
	}
	pthread_mutex_unlock(&lock);
}

void mt_symbol_lock_down(void)
{
	mt_symbol_load();
	mt_namecache_lock_down();
	atomic_store(&locked, 1);
}

void mt_symbol_forget(void)
{
	atomic_store(&stale, 1);
}

void mt_symbol_stats(mt_symbol_stats_t *stats)
{
	pthread_mutex_lock(&lock);
	stats->maps_reads = maps_reads;
	stats->fallbacks = fallbacks;
	stats->indexed = indexed;
	stats->headers_read = headers_read;
	pthread_mutex_unlock(&lock);
}

int mt_symbol_probe(uint64_t at, uint64_t ip, mt_symbol_probe_t *scan,
		    mt_symbol_probe_t *via_index)
{
	module_t *m;
	int ok = 0;

	memset(scan, 0, sizeof(*scan));
	memset(via_index, 0, sizeof(*via_index));
	pthread_mutex_lock(&lock);
	m = find(at);
	if (!m) {
		reload();
		m = find(at);
	}
	if (m && m->view.state == MT_ELF_UNTRIED)
		view_open(m);
	if (m && m->view.state == MT_ELF_OK)
		ok = mt_elf_probe(&m->view, ip, scan, via_index);
	pthread_mutex_unlock(&lock);
	return ok;
}

void mt_symbol_reset(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nmodules; i++)
		mt_elf_drop(&modules[i].view);
	nmodules = 0;
	pool_used = 0;
	loaded = 0;
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
