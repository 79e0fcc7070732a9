/*
 * mt_identity: the program a trace names in its trace.start line
 * (mt_identity.h), read once from line 1 in the analysis's pass, and the
 * one text every view names it with.  It must never read another line,
 * nor keep more than its fixed fields hold.
 */
#include "../model/mt_identity.h"

#include <json-c/json.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../../common/mt_utf8.h"

void mt_identity_init(mt_identity_t *id)
{
	id->has_pid = id->has_ppid = id->has_time = 0;
	id->pid = id->ppid = id->time_ns = 0;
	id->exe_len = 0;
	id->exe[0] = '\0';
	id->argc = 0;
	id->args_cut = 0;
	id->args_len = 0;
}

/* A non-negative integer member key of o into *v: 1, or 0 when there is
 * none (absent, another type, negative). */
static int get_u64(json_object *o, const char *key, uint64_t *v)
{
	json_object *m;

	if (!json_object_object_get_ex(o, key, &m) ||
	    !json_object_is_type(m, json_type_int))
		return 0;
	/* json-c keeps integers above INT64_MAX as uint64. */
	if (json_object_get_int64(m) < 0)
		return 0;
	*v = json_object_get_uint64(m);
	return 1;
}

/* Copy n bytes of s into dst, each control byte or NUL as '?': a name
 * from a trace must not break the line a view prints it on. */
static void copy_clean(char *dst, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
}

/* How many of s's first n bytes to keep within max: n, or less, on a
 * character's first byte. */
static size_t fit(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	while (max && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

static void read_argv(mt_identity_t *id, json_object *arr)
{
	size_t n = json_object_array_length(arr);

	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		const char *s;
		size_t len;

		if (!json_object_is_type(e, json_type_string))
			return; /* not an argv: keep what came before */
		s = json_object_get_string(e);
		len = (size_t)json_object_get_string_len(e);
		if (id->args_len + len + 1 > sizeof(id->args)) {
			id->args_cut = 1;
			return;
		}
		copy_clean(id->args + id->args_len, s, len);
		id->args_len += len;
		id->args[id->args_len++] = '\0';
		id->argc++;
	}
}

int mt_identity_read(mt_identity_t *id, const char *line, size_t len)
{
	json_tokener *tok;
	json_object *o, *m;

	mt_identity_init(id);
	if (len > (size_t)INT32_MAX)
		return MT_OK;
	tok = json_tokener_new();
	if (!tok)
		return MT_ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len);
	json_tokener_free(tok);
	if (!o)
		return MT_OK;
	if (json_object_is_type(o, json_type_object)) {
		id->has_pid = get_u64(o, "pid", &id->pid) && id->pid;
		id->has_ppid = get_u64(o, "ppid", &id->ppid) && id->ppid;
		id->has_time = get_u64(o, "time_ns", &id->time_ns);
		if (json_object_object_get_ex(o, "exe", &m) &&
		    json_object_is_type(m, json_type_string)) {
			const char *s = json_object_get_string(m);
			size_t n = (size_t)json_object_get_string_len(m);

			id->exe_len = fit(s, n, MT_IDENTITY_EXE_MAX);
			copy_clean(id->exe, s, id->exe_len);
			id->exe[id->exe_len] = '\0';
		}
		if (json_object_object_get_ex(o, "argv", &m) &&
		    json_object_is_type(m, json_type_array))
			read_argv(id, m);
	}
	json_object_put(o);
	return MT_OK;
}

int mt_identity_known(const mt_identity_t *id)
{
	return id->exe_len || id->argc;
}

const char *mt_identity_arg(const mt_identity_t *id, size_t i)
{
	const char *s = id->args;

	while (i--)
		s += strlen(s) + 1;
	return s;
}

/* The command's text, built in a fixed scratch one byte past the limit,
 * so that a cut is known and made on a character's start. */
typedef struct {
	char s[MT_IDENTITY_TEXT_MAX + 1];
	size_t len;
} text_t;

static void put(text_t *t, const char *s, size_t n)
{
	for (size_t i = 0; i < n && t->len < sizeof(t->s); i++)
		t->s[t->len++] = s[i];
}

/* A byte a shell reads as itself, outside quotes; any byte of a UTF-8
 * character beyond ASCII is text. */
static int plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c >= 0x80 || strchr("_@%+=:,./-", c);
}

/* s as a shell word: bare when every byte is plain, else single-quoted,
 * a quote inside as '\''. */
static void put_word(text_t *t, const char *s)
{
	const char *p;

	for (p = s; *p && plain((unsigned char)*p); p++)
		;
	if (*s && !*p) {
		put(t, s, strlen(s));
		return;
	}
	put(t, "'", 1);
	for (p = s; *p; p++)
		if (*p == '\'')
			put(t, "'\\''", 4);
		else
			put(t, p, 1);
	put(t, "'", 1);
}

int mt_identity_describe(const mt_identity_t *id, const char *fallback,
			 unsigned flags, mt_buf_t *out)
{
	text_t t = { .len = 0 };
	size_t mark = out->len, first = 0, n;
	int rc = MT_OK, any = 0, cut;

	if (id->exe_len) {
		put_word(&t, id->exe);
		first = 1; /* argv[0] is how it was called: exe says it */
	}
	for (size_t i = first; i < id->argc; i++) {
		if (t.len)
			put(&t, " ", 1);
		put_word(&t, mt_identity_arg(id, i));
	}
	if (!mt_identity_known(id))
		put(&t, fallback, strlen(fallback));
	for (size_t i = 0; i < t.len; i++)
		if ((unsigned char)t.s[i] < 0x20 || t.s[i] == 0x7f)
			t.s[i] = '?';
	/* Room for the "..." that says it was cut: the text, or the
	 * arguments read (a fallback has none to cut). */
	cut = id->args_cut && mt_identity_known(id);
	n = t.len;
	if (cut || n > MT_IDENTITY_TEXT_MAX)
		n = fit(t.s, n, MT_IDENTITY_TEXT_MAX - 3);
	if ((rc = mt_buf_add(out, t.s, n)))
		goto cleanup;
	if (n < t.len || cut)
		if ((rc = mt_buf_add_str(out, "...")))
			goto cleanup;
	if (!(flags & MT_IDENTITY_PIDS) || (!id->has_pid && !id->has_ppid))
		goto cleanup;
	if ((rc = mt_buf_add_str(out, " (")))
		goto cleanup;
	if (id->has_pid) {
		if ((rc = mt_buf_add_str(out, "pid ")) ||
		    (rc = mt_buf_add_u64(out, id->pid)))
			goto cleanup;
		any = 1;
	}
	if (id->has_ppid)
		if ((rc = mt_buf_add_str(out, any ? ", parent " : "parent ")) ||
		    (rc = mt_buf_add_u64(out, id->ppid)))
			goto cleanup;
	rc = mt_buf_add_str(out, ")");
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	return rc;
}
