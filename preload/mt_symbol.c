/*
 * mt_symbol: module table from /proc/self/maps and symbol names from
 * libunwind.  It must never call dladdr or dl_iterate_phdr while the
 * module lock is held, and never be called with the trace lock held.
 */
#include "mt_symbol.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define MAX_MODULES 2048
#define PATH_POOL (512u << 10)

typedef struct {
	uint64_t start, end; /* an executable mapping */
	uint64_t bias;       /* the module's load bias */
	uint32_t path;       /* offset in the path pool */
	uint32_t path_len;
} module_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static module_t modules[MAX_MODULES];
static size_t nmodules;
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
	uint64_t start, stop, off;
	const char *perms, *path;
	size_t len;
	int spaces = 0;

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
	/* Skip dev and inode to the path. */
	while (s < end && spaces < 3) {
		if (*s == ' ')
			spaces++;
		s++;
	}
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
	modules[nmodules].start = start;
	modules[nmodules].end = stop;
	/* The header is the lowest mapping of the same file at offset 0,
	 * which /proc/self/maps lists before its executable segment. */
	if (hdr_len == len && !memcmp(hdr_path, path, len) && path[0] == '/')
		modules[nmodules].bias = load_bias(hdr_start);
	else
		modules[nmodules].bias = start;
	memcpy(pool + pool_used, path, len);
	pool[pool_used + len] = '\0';
	modules[nmodules].path = (uint32_t)pool_used;
	modules[nmodules].path_len = (uint32_t)len;
	pool_used += len + 1;
	nmodules++;
}

static void reload(void)
{
	size_t have = 0;
	int fd;

	nmodules = 0;
	hdr_len = 0;
	pool_used = 0;
	do
		fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return;
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
}

static const module_t *find(uint64_t ip)
{
	for (size_t i = 0; i < nmodules; i++)
		if (ip >= modules[i].start && ip < modules[i].end)
			return &modules[i];
	return NULL;
}

void mt_symbol_resolve(uint64_t ip, mt_symbol_info_t *info, char *module,
		       size_t module_cap, char *symbol, size_t symbol_cap)
{
	const module_t *m;
	unw_word_t off = 0;
	unw_accessors_t *acc;
	int rc;

	memset(info, 0, sizeof(*info));
	module[0] = '\0';
	symbol[0] = '\0';
	pthread_mutex_lock(&lock);
	m = find(ip - 1);
	if (!m) {
		reload();
		m = find(ip - 1);
	}
	if (m) {
		size_t n = m->path_len < module_cap - 1 ? m->path_len : module_cap - 1;

		memcpy(module, pool + m->path, n);
		module[n] = '\0';
		info->has_module = 1;
		info->module_len = n;
		info->module_offset = ip - m->bias;
	}
	pthread_mutex_unlock(&lock);

	/* The return address may be the first byte of the next function
	 * after a call that does not return: look up the call itself. */
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

void mt_symbol_reset(void)
{
	pthread_mutex_lock(&lock);
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
