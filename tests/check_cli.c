/*
 * check_cli: the memtrace command line: --help, usage errors (exit 64,
 * usage on stderr), the exit status of every command (format.md section 7
 * and docs/decisions.md), whole-or-nothing outputs (temporary file and rename,
 * one appended row), the 8 KiB limits of summary and site lines, and the
 * site options --top and --include-zero-live with the site ranking; and
 * that the command table, `memtrace --help` and each command's --help
 * agree.
 */
#include <dirent.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mt_test.h"
#include "../analyzer/cmd/mt_commands.h"


#define STATUS_USAGE 64
#define STATUS_CANTCREAT 73

/* The smallest trace of format.md, caveated by a missing trace.stop. */
#define KILLED_TRACE                                     \
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n" \
	"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n"
#define INVALID_TRACE "{\"v\":2,\"seq\":1,\"kind\":\"trace.start\"}\n"


static void write_file(const char *dir, const char *name, const char *text)
{
	char *path = mt_test_path(dir, name);

	mt_test_write(path, text, strlen(text));
	free(path);
}

static char *read_file(const char *dir, const char *name, size_t *len)
{
	char *path = mt_test_path(dir, name);
	char *data = mt_test_read(path, len);

	free(path);
	return data;
}

static void assert_file(const char *dir, const char *name,
			const char *expected)
{
	char *path = mt_test_path(dir, name);

	mt_test_assert_file_eq(path, expected);
	free(path);
}

static int exists(const char *dir, const char *name)
{
	char *path = mt_test_path(dir, name);
	int yes = mt_test_exists(path);

	free(path);
	return yes;
}

/* The names in dir, sorted, joined by spaces. */
static char *list_dir(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	size_t cap = 1, len = 0;
	char *out;

	ck_assert_int_ge(n, 0);
	for (int i = 0; i < n; i++)
		cap += strlen(names[i]->d_name) + 1;
	out = malloc(cap);
	mt_quiet_ptr_nonnull(out);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		if (strcmp(name, ".") && strcmp(name, ".."))
			len += (size_t)sprintf(out + len, "%s%s", len ? " " : "",
					       name);
		free(names[i]);
	}
	free(names);
	return out;
}

static void assert_listing(const char *dir, const char *expected)
{
	char *got = list_dir(dir);

	mt_quiet(!strcmp(got, expected), "%s holds '%s', expected '%s'",
		 dir, got, expected);
	free(got);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The nth line of s (from 0), malloc'd without its newline. */
static char *nth_line(const char *s, size_t n)
{
	const char *end;

	while (n--) {
		s = strchr(s, '\n');
		mt_quiet_ptr_nonnull(s);
		s++;
	}
	end = strchr(s, '\n');
	mt_quiet_ptr_nonnull(end);
	return strndup(s, (size_t)(end - s));
}

static struct json_object *parse_line(const char *s, size_t n)
{
	char *line = nth_line(s, n);
	struct json_object *o = json_tokener_parse(line);

	mt_quiet(o != NULL, "line %zu is not JSON: %s", n, line);
	free(line);
	return o;
}

static uint64_t num(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	mt_quiet(json_object_object_get_ex(o, key, &v), "no %s", key);
	ck_assert(json_object_is_type(v, json_type_int));
	return json_object_get_uint64(v);
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	mt_quiet(json_object_object_get_ex(o, key, &v), "no %s", key);
	ck_assert(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* A usage error: exit 64, nothing on stdout, the reason then the usage
 * on stderr. */
static void assert_usage_error(const mt_test_run_t *r, const char *reason,
			       const char *usage)
{
	mt_quiet(r->status == STATUS_USAGE, "exit %d, stderr: %s",
		 r->status, r->err);
	ck_assert_str_eq(r->out, "");
	mt_quiet(strstr(r->err, reason) != NULL,
		 "stderr does not say '%s': %s", reason, r->err);
	mt_quiet(strstr(r->err, usage) != NULL,
		 "stderr has no '%s': %s", usage, r->err);
}

/* ---- --help ---- */

START_TEST(test_help_prints_program_usage_on_stdout)
{
	static const char *const spellings[] = { "--help", "-h", "help" };
	char *dir = mt_test_scratch();

	for (size_t i = 0; i < 3; i++) {
		mt_test_run_t r;

		mt_test_memtrace_in(&r, dir, spellings[i], NULL);
		mt_quiet_int_eq(r.status, 0);
		ck_assert_str_eq(r.err, "");
		mt_quiet(starts_with(r.out, "usage: memtrace <command>"),
			 "%s printed %s", spellings[i], r.out);
		for (size_t c = 0; c < 4; c++) {
			static const char *const cmds[] = {
				"  check ", "  summary ", "  capture ",
				"  repetition "
			};

			mt_quiet_ptr_nonnull(strstr(r.out, cmds[c]));
		}
		mt_test_run_release(&r);
	}
}
END_TEST

START_TEST(test_help_prints_each_command_usage_on_stdout)
{
	static const char *const cmds[] = { "check", "summary", "capture",
					    "repetition" };
	char *dir = mt_test_scratch();

	for (size_t i = 0; i < 4; i++) {
		char usage[64];
		mt_test_run_t r;

		snprintf(usage, sizeof(usage), "usage: memtrace %s ", cmds[i]);
		/* No other argument needed, not even the required ones. */
		mt_test_memtrace_in(&r, dir, cmds[i], "--help", NULL);
		mt_quiet_int_eq(r.status, 0);
		ck_assert_str_eq(r.err, "");
		mt_quiet(starts_with(r.out, usage), "%s --help printed %s",
			 cmds[i], r.out);
		mt_test_run_release(&r);
	}
	assert_listing(dir, "");
}
END_TEST

/* The table's commands are the ones `memtrace --help` lists, in its
 * order: the first word of each line under "Commands:". */
START_TEST(test_help_lists_the_commands_of_the_table)
{
	char *dir = mt_test_scratch();
	const char *p;
	size_t n = 0;
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "--help", NULL);
	mt_quiet_int_eq(r.status, 0);
	p = strstr(r.out, "\nCommands:\n");
	mt_quiet_ptr_nonnull(p);
	p += strlen("\nCommands:\n");
	while (p[0] == ' ' && p[1] == ' ') {
		const char *name = p + 2;
		size_t len = strcspn(name, " \n");

		mt_quiet(n < mt_ncommands, "--help lists more than the table's "
			 "%zu commands: %s", mt_ncommands, r.out);
		mt_quiet(len == strlen(mt_commands[n]->name) &&
			 !memcmp(name, mt_commands[n]->name, len),
			 "--help's command %zu is '%.*s', the table's '%s'", n,
			 (int)len, name, mt_commands[n]->name);
		n++;
		p = strchr(p, '\n');
		mt_quiet_ptr_nonnull(p);
		p++;
	}
	mt_quiet(n == mt_ncommands, "--help lists %zu commands, the table %zu",
		 n, mt_ncommands);
	mt_quiet(mt_ncommands == 15, "the table has %zu commands", mt_ncommands);
	/* Only what users run: no step of a script. */
	mt_quiet(mt_nuser_commands == mt_ncommands, "%zu of %zu are users'",
		 mt_nuser_commands, mt_ncommands);
	mt_quiet_ptr_null(strstr(r.out, "  run-"));
	mt_quiet_ptr_null(strstr(r.out, "  oom-fail"));
	mt_test_run_release(&r);
}
END_TEST

/* Every command of the table: `memtrace NAME --help` exits 0 and prints
 * its usage, whole, on stdout, and nothing else. */
START_TEST(test_every_command_help_prints_its_usage)
{
	char *dir = mt_test_scratch();

	for (size_t i = 0; i < mt_ncommands; i++) {
		const mt_cmd_t *cmd = mt_commands[i];
		char head[64];
		mt_test_run_t r;

		snprintf(head, sizeof(head), "usage: memtrace %s", cmd->name);
		mt_quiet(starts_with(cmd->usage, head), "%s's usage begins %.40s",
			 cmd->name, cmd->usage);
		mt_quiet(mt_commands_find(cmd->name) == cmd, "%s not found",
			 cmd->name);
		mt_test_memtrace_in(&r, dir, cmd->name, "--help", NULL);
		mt_quiet(r.status == 0, "%s --help exited %d", cmd->name,
			 r.status);
		ck_assert_str_eq(r.err, "");
		ck_assert_str_eq(r.out, cmd->usage);
		mt_test_run_release(&r);
	}
	assert_listing(dir, "");
}
END_TEST

/* ---- usage errors ---- */

START_TEST(test_no_command_is_usage_error)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, NULL);
	assert_usage_error(&r, "no command given", "usage: memtrace <command>");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_unknown_command_is_usage_error)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "sumary", "trace.jsonl", NULL);
	assert_usage_error(&r, "unknown command 'sumary'",
			   "usage: memtrace <command>");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_unknown_option_is_usage_error)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--bogus", NULL);
	assert_usage_error(&r, "unknown option '--bogus'",
			   "usage: memtrace summary ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "check", "-x", "t.jsonl", NULL);
	assert_usage_error(&r, "unknown option '-x'", "usage: memtrace check ");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_option_of_another_command_is_usage_error_naming_it)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	/* The message names the option, not its value. */
	mt_test_memtrace_in(&r, dir, "check", "t.jsonl", "--top", "3", NULL);
	assert_usage_error(&r, "option '--top' does not apply here",
			   "usage: memtrace check ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "check", "t.jsonl", "-o", "out.jsonl", NULL);
	assert_usage_error(&r, "option '-o' does not apply here",
			   "usage: memtrace check ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "t.jsonl", "--out", "r.jsonl",
	       "--index", "1", "--summary", "s.jsonl", NULL);
	assert_usage_error(&r, "option '--summary' does not apply here",
			   "usage: memtrace repetition ");
	mt_test_run_release(&r);
	assert_listing(dir, "t.jsonl");
}
END_TEST

START_TEST(test_missing_trace_argument_is_usage_error)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "check", NULL);
	assert_usage_error(&r, "missing TRACE argument", "usage: memtrace check ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "summary", "--top", "3", NULL);
	assert_usage_error(&r, "missing TRACE argument",
			   "usage: memtrace summary ");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_extra_argument_is_usage_error)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	mt_test_memtrace_in(&r, dir, "check", "t.jsonl", "u.jsonl", NULL);
	assert_usage_error(&r, "unexpected argument 'u.jsonl'",
			   "usage: memtrace check ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl", "--summary", "s.jsonl",
	       "extra", NULL);
	assert_usage_error(&r, "unexpected argument 'extra'",
			   "usage: memtrace capture ");
	mt_test_run_release(&r);
	assert_listing(dir, "t.jsonl");
}
END_TEST

START_TEST(test_option_without_value_is_usage_error)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--top", NULL);
	assert_usage_error(&r, "option '--top' needs a value",
			   "usage: memtrace summary ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "-o", NULL);
	assert_usage_error(&r, "option '-o' needs a value",
			   "usage: memtrace summary ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "t.jsonl", "--out", "r.jsonl",
	       "--index", NULL);
	assert_usage_error(&r, "option '--index' needs a value",
			   "usage: memtrace repetition ");
	mt_test_run_release(&r);
	assert_listing(dir, "t.jsonl");
}
END_TEST

START_TEST(test_bad_numbers_are_usage_errors)
{
	static const char *const tops[] = {
		"abc", "-1", "+1", "1.5", "", "3x", "0x10",
		"99999999999999999999",
	};
	static const char *const indexes[] = { "x", "-1", "1e3", "" };
	static const char *const exit_codes[] = {
		"1x", "", "one", "99999999999999999999", "+1", " 1", "-", "--1",
		"9223372036854775808", "-9223372036854775809",
	};
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	for (size_t i = 0; i < sizeof(tops) / sizeof(*tops); i++) {
		mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--top", tops[i], NULL);
		assert_usage_error(&r, "--top needs a number",
				   "usage: memtrace summary ");
		mt_test_run_release(&r);
	}
	for (size_t i = 0; i < sizeof(indexes) / sizeof(*indexes); i++) {
		mt_test_memtrace_in(&r, dir, "repetition", "--capture", "t.jsonl", "--out",
		       "r.jsonl", "--index", indexes[i], NULL);
		assert_usage_error(&r, "--index needs a number",
				   "usage: memtrace repetition ");
		mt_test_run_release(&r);
	}
	for (size_t i = 0; i < sizeof(exit_codes) / sizeof(*exit_codes); i++) {
		mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl", "--summary",
		       "s.jsonl", "--exit-code", exit_codes[i], NULL);
		assert_usage_error(&r, "--exit-code needs an integer",
				   "usage: memtrace capture ");
		mt_test_run_release(&r);
	}
	assert_listing(dir, "t.jsonl");
}
END_TEST

START_TEST(test_index_zero_is_usage_error_and_writes_nothing)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;
	char *rows;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	write_file(dir, "r.jsonl", "{\"kept\":true}\n");
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "t.jsonl", "--out", "r.jsonl",
	       "--index", "0", NULL);
	assert_usage_error(&r, "--index counts runs from 1",
			   "usage: memtrace repetition ");
	mt_test_run_release(&r);
	rows = read_file(dir, "r.jsonl", NULL);
	ck_assert_str_eq(rows, "{\"kept\":true}\n");
	free(rows);
	assert_listing(dir, "r.jsonl t.jsonl");
}
END_TEST

START_TEST(test_missing_required_options_are_usage_errors)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	mt_test_memtrace_in(&r, dir, "capture", "--summary", "s.jsonl", NULL);
	assert_usage_error(&r, "--capture TRACE is required",
			   "usage: memtrace capture ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl", NULL);
	assert_usage_error(&r, "--summary SUMMARY is required",
			   "usage: memtrace capture ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "repetition", "--out", "r.jsonl", "--index", "1", NULL);
	assert_usage_error(&r, "--capture TRACE is required",
			   "usage: memtrace repetition ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "t.jsonl", "--index", "1", NULL);
	assert_usage_error(&r, "--out FILE is required",
			   "usage: memtrace repetition ");
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "t.jsonl", "--out", "r.jsonl",
	       NULL);
	assert_usage_error(&r, "--index I is required",
			   "usage: memtrace repetition ");
	mt_test_run_release(&r);
	assert_listing(dir, "t.jsonl");
}
END_TEST

/* ---- exit statuses: check ---- */

static int check_status(const char *trace, mt_test_run_t *r, char *dir)
{
	write_file(dir, "t.jsonl", trace);
	mt_test_memtrace_in(r, dir, "check", "t.jsonl", NULL);
	return r->status;
}

START_TEST(test_check_exits_0_when_complete)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	mt_quiet_int_eq(check_status(MT_TEST_MINIMAL_TRACE, &r, dir), 0);
	ck_assert_str_eq(r.out, "{\"status\":\"complete\",\"message\":null,"
				"\"caveats\":[]}\n");
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_check_exits_1_when_caveated)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	mt_quiet_int_eq(check_status(KILLED_TRACE, &r, dir), 1);
	ck_assert(starts_with(r.out, "{\"status\":\"missing_stop_event\","));
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_check_exits_2_when_not_valid_evidence)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	mt_quiet_int_eq(check_status(INVALID_TRACE, &r, dir), 2);
	ck_assert(starts_with(r.out, "{\"status\":\"invalid\",\"message\":\""));
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_check_exits_3_when_trace_missing)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "check", "absent.jsonl", NULL);
	mt_quiet_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot read 'absent.jsonl'"));
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_check_exits_3_when_trace_unreadable)
{
	char *dir = mt_test_scratch();
	char *sub = mt_test_path(dir, "traces");
	mt_test_run_t r;

	mt_quiet_int_eq(mkdir(sub, 0755), 0);
	mt_test_memtrace_in(&r, dir, "check", "traces", NULL);
	mt_quiet_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot read 'traces'"));
	mt_test_run_release(&r);
	free(sub);
}
END_TEST

/* ---- exit statuses: summary ---- */

START_TEST(test_summary_exits_0_for_caveated_trace_without_strict)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", KILLED_TRACE);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert(starts_with(r.out, "{\"schema\":\"memtrace.summary/v1\","
				     "\"status\":\"missing_stop_event\","));
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_summary_strict_exits_1_for_caveated_trace_after_writing)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r, plain;

	write_file(dir, "t.jsonl", KILLED_TRACE);
	mt_test_memtrace_in(&plain, dir, "summary", "t.jsonl", NULL);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--strict", NULL);
	mt_quiet_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, plain.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--strict", "-o", "s.jsonl", NULL);
	mt_quiet_int_eq(r.status, 1);
	mt_test_run_release(&r);
	{
		char *written = read_file(dir, "s.jsonl", NULL);

		mt_quiet_ptr_nonnull(written);
		ck_assert_str_eq(written, plain.out);
		free(written);
	}
	mt_test_run_release(&plain);
}
END_TEST

START_TEST(test_summary_strict_exits_0_for_complete_trace)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--strict", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_uint_eq(count_lines(r.out), 1);
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_summary_exits_2_for_invalid_trace_and_writes_nothing)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", INVALID_TRACE);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", NULL);
	mt_quiet_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	mt_quiet_ptr_nonnull(strstr(r.err, "not valid memtrace evidence"));
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "-o", "s.jsonl", NULL);
	mt_quiet_int_eq(r.status, 2);
	mt_test_run_release(&r);
	assert_listing(dir, "t.jsonl");
}
END_TEST

START_TEST(test_summary_exits_3_for_missing_trace_and_writes_nothing)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "summary", "absent.jsonl", "-o", "s.jsonl", NULL);
	mt_quiet_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot read 'absent.jsonl'"));
	mt_test_run_release(&r);
	assert_listing(dir, "");
}
END_TEST

/* ---- exit statuses: outputs that cannot be written ---- */

START_TEST(test_unwritable_output_exits_73)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "-o", "no/such/dir/s.jsonl", NULL);
	mt_quiet_int_eq(r.status, STATUS_CANTCREAT);
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot write 'no/such/dir/s.jsonl'"));
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl", "--summary",
	       "no/s.jsonl", NULL);
	mt_quiet_int_eq(r.status, STATUS_CANTCREAT);
	/* The summary could not be written: no row claims it was. */
	ck_assert_str_eq(r.out, "");
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl", "--summary",
	       "s.jsonl", "--append", "no/rows.jsonl", NULL);
	mt_quiet_int_eq(r.status, STATUS_CANTCREAT);
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "t.jsonl", "--out",
	       "no/r.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, STATUS_CANTCREAT);
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "t.jsonl", "--out",
	       "no/r.jsonl", "--index", "2", NULL);
	mt_quiet_int_eq(r.status, STATUS_CANTCREAT);
	mt_test_run_release(&r);

	/* A missing trace's row is still a row to write. */
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "absent.jsonl", "--out",
	       "no/r.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, STATUS_CANTCREAT);
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_failed_replace_leaves_no_temporary_file)
{
	char *dir = mt_test_scratch();
	char *sub = mt_test_path(dir, "out");
	mt_test_run_t r;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	mt_quiet_int_eq(mkdir(sub, 0755), 0);
	/* The temporary file is made beside "out", then cannot replace a
	 * directory. */
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "-o", "out", NULL);
	mt_quiet_int_eq(r.status, STATUS_CANTCREAT);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "t.jsonl", "--out", "out",
	       "--index", "1", NULL);
	mt_quiet_int_eq(r.status, STATUS_CANTCREAT);
	mt_test_run_release(&r);
	assert_listing(dir, "out t.jsonl");
	assert_listing(sub, "");
	free(sub);
}
END_TEST

/* ---- exit statuses: capture and repetition ---- */

START_TEST(test_capture_of_failed_workload_writes_nothing_and_exits_0)
{
	static const char *const codes[] = { "1", "-1", "139",
					     "-9223372036854775808",
					     "9223372036854775807" };
	char *dir = mt_test_scratch();

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	for (size_t i = 0; i < sizeof(codes) / sizeof(*codes); i++) {
		mt_test_run_t r;

		mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl", "--summary",
		       "s.jsonl", "--exit-code", codes[i], NULL);
		mt_quiet_int_eq(r.status, 0);
		ck_assert_str_eq(r.out, "");
		ck_assert_str_eq(r.err, "");
		mt_test_run_release(&r);
		mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl", "--summary",
		       "s.jsonl", "--append", "rows.jsonl", "--exit-code",
		       codes[i], "--strict", NULL);
		mt_quiet_int_eq(r.status, 0);
		ck_assert_str_eq(r.out, "");
		mt_test_run_release(&r);
	}
	assert_listing(dir, "t.jsonl");
}
END_TEST

/* Write the four kinds of trace: complete, caveated, invalid; "absent"
 * stays missing. */
static void write_four_traces(const char *dir)
{
	write_file(dir, "complete.jsonl", MT_TEST_MINIMAL_TRACE);
	write_file(dir, "caveated.jsonl", KILLED_TRACE);
	write_file(dir, "invalid.jsonl", INVALID_TRACE);
}

static const char *const four_traces[] = { "complete.jsonl", "caveated.jsonl",
					   "invalid.jsonl", "absent.jsonl" };
static const char *const four_states[] = { "summary_written", "summary_written",
					   "summary_invalid", "capture_missing" };

START_TEST(test_capture_exits_0_whatever_the_state)
{
	char *dir = mt_test_scratch();

	write_four_traces(dir);
	for (size_t i = 0; i < 4; i++) {
		struct json_object *row;
		mt_test_run_t r;

		mt_test_memtrace_in(&r, dir, "capture", "--capture", four_traces[i],
		       "--summary", "s.jsonl", NULL);
		mt_quiet(r.status == 0, "%s: exit %d", four_traces[i],
			 r.status);
		row = parse_line(r.out, 0);
		ck_assert_str_eq(str(row, "state"), four_states[i]);
		json_object_put(row);
		mt_test_run_release(&r);
	}
}
END_TEST

START_TEST(test_repetition_exits_0_whatever_the_state)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;
	struct json_object *row;

	write_four_traces(dir);
	for (size_t i = 0; i < 4; i++) {
		mt_test_memtrace_in(&r, dir, "repetition", "--capture", four_traces[i],
		       "--out", "r.jsonl", "--index", "1", NULL);
		mt_quiet(r.status == 0, "%s: exit %d", four_traces[i],
			 r.status);
		mt_test_run_release(&r);
		{
			char *rows = read_file(dir, "r.jsonl", NULL);

			row = parse_line(rows, 0);
			free(rows);
		}
		ck_assert_str_eq(str(row, "state"), four_states[i]);
		json_object_put(row);
	}
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "complete.jsonl", "--out",
	       "r.jsonl", "--index", "1", "--exit-code", "2", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	assert_file(
		dir, "r.jsonl",
		"{\"schema\":\"tiny.profiling.allocation-repetition/v1\","
		"\"execution_index\":1,\"exit_code\":2,"
		"\"state\":\"workload_failed\",\"summary\":null}\n");
}
END_TEST

START_TEST(test_rows_of_unreadable_trace_are_summary_invalid)
{
	char *dir = mt_test_scratch();
	char *sub = mt_test_path(dir, "trace.d");
	struct json_object *row;
	mt_test_run_t r;
	char *rows;

	/* Only a missing file is capture_missing; a trace that exists but
	 * cannot be read is invalid, with the reason on stderr. */
	mt_quiet_int_eq(mkdir(sub, 0755), 0);
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "trace.d", "--summary",
	       "s.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot read 'trace.d'"));
	row = parse_line(r.out, 0);
	ck_assert_str_eq(str(row, "state"), "summary_invalid");
	json_object_put(row);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "trace.d", "--out",
	       "r.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot read 'trace.d'"));
	mt_test_run_release(&r);
	rows = read_file(dir, "r.jsonl", NULL);
	row = parse_line(rows, 0);
	ck_assert_str_eq(str(row, "state"), "summary_invalid");
	json_object_put(row);
	free(rows);
	free(sub);
}
END_TEST

START_TEST(test_rows_of_trace_under_a_file_are_capture_missing)
{
	char *dir = mt_test_scratch();
	struct json_object *row;
	mt_test_run_t r;

	/* ENOTDIR: a path through a file names no file at all. */
	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl/trace.jsonl",
	       "--summary", "s.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	row = parse_line(r.out, 0);
	ck_assert_str_eq(str(row, "state"), "capture_missing");
	json_object_put(row);
	mt_test_run_release(&r);
	assert_listing(dir, "t.jsonl");
}
END_TEST

START_TEST(test_capture_strict_exits_with_trace_status_after_row)
{
	static const int statuses[] = { 0, 1, 2, 3 };
	char *dir = mt_test_scratch();

	write_four_traces(dir);
	for (size_t i = 0; i < 4; i++) {
		struct json_object *row;
		mt_test_run_t r;

		mt_test_memtrace_in(&r, dir, "capture", "--capture", four_traces[i],
		       "--summary", "s.jsonl", "--strict", NULL);
		mt_quiet(r.status == statuses[i], "%s: exit %d",
			 four_traces[i], r.status);
		/* The row is written first. */
		row = parse_line(r.out, 0);
		ck_assert_str_eq(str(row, "state"), four_states[i]);
		json_object_put(row);
		mt_test_run_release(&r);
	}
}
END_TEST

START_TEST(test_repetition_strict_exits_with_trace_status_after_row)
{
	static const int statuses[] = { 0, 1, 2, 3 };
	char *dir = mt_test_scratch();
	mt_test_run_t r;
	char *rows;

	write_four_traces(dir);
	for (size_t i = 0; i < 4; i++) {
		char index[24];

		snprintf(index, sizeof(index), "%zu", i + 1);
		mt_test_memtrace_in(&r, dir, "repetition", "--capture", four_traces[i],
		       "--out", "r.jsonl", "--index", index, "--strict", NULL);
		mt_quiet(r.status == statuses[i], "%s: exit %d",
			 four_traces[i], r.status);
		mt_test_run_release(&r);
	}
	/* A failed workload is not a complete capture. */
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "complete.jsonl", "--out",
	       "r.jsonl", "--index", "5", "--exit-code", "1", "--strict", NULL);
	mt_quiet_int_eq(r.status, 1);
	mt_test_run_release(&r);
	rows = read_file(dir, "r.jsonl", NULL);
	mt_quiet_ptr_nonnull(rows);
	mt_quiet_uint_eq(count_lines(rows), 5);
	for (size_t i = 0; i < 5; i++) {
		struct json_object *row = parse_line(rows, i);

		mt_quiet_uint_eq(num(row, "execution_index"), i + 1);
		ck_assert_str_eq(str(row, "state"),
				 i < 4 ? four_states[i] : "workload_failed");
		json_object_put(row);
	}
	free(rows);
}
END_TEST

/* ---- whole-or-nothing outputs ---- */

/*
 * A new file goes through a temporary file and rename(2): a hard link to
 * the old file keeps the old content (an in-place rewrite would change
 * both), the new file has the mode open(2) gives (0666 & ~022), and no
 * temporary file is left.
 */
static void assert_replaced_by_rename(const char *dir, const char *name,
				      const char *expected)
{
	char *path = mt_test_path(dir, name);
	char *link_path = mt_test_path(dir, "old-link");
	char *old;
	struct stat st;

	mt_test_assert_file_eq(path, expected);
	old = mt_test_read(link_path, NULL);
	mt_quiet_ptr_nonnull(old);
	ck_assert_str_eq(old, "old content\n");
	mt_quiet_int_eq(stat(path, &st), 0);
	mt_quiet_uint_eq(st.st_mode & 07777, 0644);
	mt_quiet_uint_eq(st.st_nlink, 1);
	free(old);
	free(link_path);
	free(path);
}

static void prepare_old_output(const char *dir, const char *name)
{
	char *path = mt_test_path(dir, name);
	char *link_path = mt_test_path(dir, "old-link");

	mt_test_write(path, "old content\n", 12);
	mt_quiet_int_eq(link(path, link_path), 0);
	free(link_path);
	free(path);
}

START_TEST(test_summary_output_replaces_file_by_rename)
{
	char *dir = mt_test_scratch();
	mt_test_run_t plain, r;

	write_file(dir, "t.jsonl", KILLED_TRACE);
	prepare_old_output(dir, "s.jsonl");
	mt_test_memtrace_in(&plain, dir, "summary", "t.jsonl", NULL);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "-o", "s.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "");
	assert_replaced_by_rename(dir, "s.jsonl", plain.out);
	mt_test_run_release(&r);
	/* --output is -o. */
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--output", "s2.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	assert_file(dir, "s2.jsonl", plain.out);
	mt_test_run_release(&r);
	mt_test_run_release(&plain);
	assert_listing(dir, "old-link s.jsonl s2.jsonl t.jsonl");
}
END_TEST

/* -o to a FIFO, as to /dev/null or a terminal: written through, and the
 * FIFO is still a FIFO (a rename over it left a regular file there, and
 * over /dev/null, as root, a regular /dev/null). */
START_TEST(test_summary_output_to_a_fifo_writes_through_it)
{
	char *dir = mt_test_scratch(), *mt = mt_test_memtrace(), cmd[8192];
	char *fifo = mt_test_path(dir, "pipe"), *got_path = mt_test_path(dir, "got");
	char *got;
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	mt_test_run_t plain, r;
	struct stat st;
	size_t len;

	write_file(dir, "t.jsonl", KILLED_TRACE);
	mt_test_memtrace_in(&plain, dir, "summary", "t.jsonl", NULL);
	mt_quiet_int_eq(mkfifo(fifo, 0600), 0);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && { cat pipe > got & '%s' summary t.jsonl -o pipe; "
		 "s=$?; wait; exit $s; }", dir, mt);
	mt_test_run(&r, argv, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	mt_quiet_int_eq(lstat(fifo, &st), 0);
	mt_quiet(S_ISFIFO(st.st_mode), "pipe is no longer a FIFO (mode %o)",
		 (unsigned)st.st_mode);
	got = mt_test_read(got_path, &len);
	mt_quiet_ptr_nonnull(got);
	ck_assert_str_eq(got, plain.out);
	assert_listing(dir, "got pipe t.jsonl");
	free(got);
	free(got_path);
	mt_test_run_release(&r);
	mt_test_run_release(&plain);
	free(fifo);
	free(mt);
}
END_TEST

/* -o onto a symbolic link to a file: the file is replaced (through a
 * temporary file in its own directory), the link stays a link. */
START_TEST(test_summary_output_through_a_symlink_replaces_the_file_it_names)
{
	char *dir = mt_test_scratch(), *runs = mt_test_path(dir, "runs");
	char *link_path = mt_test_path(dir, "latest.jsonl");
	mt_test_run_t plain, r;
	struct stat st;

	write_file(dir, "t.jsonl", KILLED_TRACE);
	mt_quiet_int_eq(mkdir(runs, 0700), 0);
	write_file(runs, "42.jsonl", "old content\n");
	mt_quiet_int_eq(symlink("runs/42.jsonl", link_path), 0);
	mt_test_memtrace_in(&plain, dir, "summary", "t.jsonl", NULL);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "-o", "latest.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	mt_quiet_int_eq(lstat(link_path, &st), 0);
	mt_quiet(S_ISLNK(st.st_mode), "latest.jsonl is no longer a link");
	assert_file(runs, "42.jsonl", plain.out);
	assert_listing(runs, "42.jsonl");
	assert_listing(dir, "latest.jsonl runs t.jsonl");
	mt_test_run_release(&r);
	mt_test_run_release(&plain);
	free(link_path);
	free(runs);
}
END_TEST

START_TEST(test_capture_summary_replaces_file_by_rename)
{
	char *dir = mt_test_scratch();
	mt_test_run_t plain, r;

	write_file(dir, "t.jsonl", KILLED_TRACE);
	prepare_old_output(dir, "s.jsonl");
	mt_test_memtrace_in(&plain, dir, "summary", "t.jsonl", "--top", "0",
	       "--include-zero-live", NULL);
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl", "--summary",
	       "s.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	assert_replaced_by_rename(dir, "s.jsonl", plain.out);
	mt_test_run_release(&r);
	mt_test_run_release(&plain);
	assert_listing(dir, "old-link s.jsonl t.jsonl");
}
END_TEST

START_TEST(test_repetition_first_row_replaces_file_by_rename)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", MT_TEST_MINIMAL_TRACE);
	prepare_old_output(dir, "r.jsonl");
	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "absent.jsonl", "--out",
	       "r.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, 0);
	assert_replaced_by_rename(
		dir, "r.jsonl",
		"{\"schema\":\"tiny.profiling.allocation-repetition/v1\","
		"\"execution_index\":1,\"exit_code\":0,"
		"\"state\":\"capture_missing\",\"summary\":null}\n");
	mt_test_run_release(&r);
	assert_listing(dir, "old-link r.jsonl t.jsonl");
}
END_TEST

START_TEST(test_append_adds_exactly_one_row)
{
	char *dir = mt_test_scratch();
	char *rows, *expected = NULL;
	mt_test_run_t plain, r;

	write_file(dir, "t.jsonl", KILLED_TRACE);
	write_file(dir, "rows.jsonl", "{\"earlier\":1}\n");
	mt_test_memtrace_in(&plain, dir, "capture", "--capture", "t.jsonl", "--summary",
	       "s.jsonl", NULL);
	mt_quiet_uint_eq(count_lines(plain.out), 1);
	for (int i = 0; i < 2; i++) {
		mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl", "--summary",
		       "s.jsonl", "--append", "rows.jsonl", NULL);
		mt_quiet_int_eq(r.status, 0);
		ck_assert_str_eq(r.out, "");
		mt_test_run_release(&r);
	}
	ck_assert_int_ne(asprintf(&expected, "{\"earlier\":1}\n%s%s", plain.out,
				  plain.out), -1);
	rows = read_file(dir, "rows.jsonl", NULL);
	ck_assert_str_eq(rows, expected);
	free(rows);
	free(expected);
	/* --append creates the file when it is not there. */
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "t.jsonl", "--summary",
	       "s.jsonl", "--append", "new.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	rows = read_file(dir, "new.jsonl", NULL);
	ck_assert_str_eq(rows, plain.out);
	free(rows);
	mt_test_run_release(&plain);
	assert_listing(dir, "new.jsonl rows.jsonl s.jsonl t.jsonl");
}
END_TEST

START_TEST(test_rows_escape_paths_as_json_strings)
{
	static const char name[] = "odd \"name\" \\ with\ttab.jsonl";
	char *dir = mt_test_scratch();
	struct json_object *row;
	mt_test_run_t r;

	write_file(dir, name, MT_TEST_MINIMAL_TRACE);
	mt_test_memtrace_in(&r, dir, "capture", "--capture", name, "--summary", "s\"1.jsonl",
	       NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(
		r.out, "\"capture_path\":\"odd \\\"name\\\" \\\\ with\\ttab.jsonl\","));
	row = parse_line(r.out, 0);
	ck_assert_str_eq(str(row, "capture_path"), name);
	ck_assert_str_eq(str(row, "summary_path"), "s\"1.jsonl");
	ck_assert_str_eq(str(row, "state"), "summary_written");
	json_object_put(row);
	mt_test_run_release(&r);
}
END_TEST

/* ---- the 8 KiB lines ---- */

/* A trace whose one allocator, never used, has a name of len bytes. */
static void write_named_allocator_trace(const char *dir, const char *file,
					size_t len)
{
	char *name = malloc(len + 1);
	char *trace = NULL;

	mt_quiet_ptr_nonnull(name);
	memset(name, 'n', len);
	name[len] = '\0';
	ck_assert_int_ne(asprintf(&trace,
				  "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n"
				  "{\"v\":1,\"seq\":2,\"kind\":\"allocator\","
				  "\"allocator_id\":1,\"name\":\"%s\"}\n"
				  "{\"v\":1,\"seq\":3,\"kind\":\"trace.stop\"}\n",
				  name), -1);
	write_file(dir, file, trace);
	free(trace);
	free(name);
}

START_TEST(test_summary_line_is_at_most_8_kib)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;
	size_t base, fit;

	/* The line's length grows byte for byte with the name. */
	write_named_allocator_trace(dir, "t.jsonl", 1);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--include-zero-live", NULL);
	mt_quiet_int_eq(r.status, 0);
	base = r.out_len - 1;
	mt_test_run_release(&r);
	fit = 8192 - base;

	write_named_allocator_trace(dir, "t.jsonl", fit);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--include-zero-live", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_uint_eq(r.out_len, 8192); /* the newline included */
	mt_test_run_release(&r);

	write_named_allocator_trace(dir, "t.jsonl", fit + 1);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--include-zero-live", NULL);
	mt_quiet_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	mt_quiet_ptr_nonnull(strstr(r.err, "longer than 8192 bytes"));
	mt_test_run_release(&r);
	/* Without --include-zero-live the unused allocator is not listed
	 * and the line fits. */
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_rows_of_oversized_summary_are_summary_invalid)
{
	char *dir = mt_test_scratch();
	struct json_object *row;
	mt_test_run_t r;
	size_t base;
	char *rows;

	write_named_allocator_trace(dir, "t.jsonl", 1);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--top", "0",
	       "--include-zero-live", NULL);
	base = r.out_len - 1;
	mt_test_run_release(&r);

	/* One byte too long for the capture's summary: --include-zero-live
	 * is always on there. */
	write_named_allocator_trace(dir, "big.jsonl", 8192 - base + 1);
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "big.jsonl", "--summary",
	       "s.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	row = parse_line(r.out, 0);
	ck_assert_str_eq(str(row, "state"), "summary_invalid");
	ck_assert_str_eq(str(row, "caveat_kind"), "invalid_allocation_trace");
	json_object_put(row);
	mt_test_run_release(&r);
	ck_assert(!exists(dir, "s.jsonl"));

	mt_test_memtrace_in(&r, dir, "repetition", "--capture", "big.jsonl", "--out",
	       "r.jsonl", "--index", "1", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	rows = read_file(dir, "r.jsonl", NULL);
	ck_assert_str_eq(rows,
			 "{\"schema\":\"tiny.profiling.allocation-repetition/v1\","
			 "\"execution_index\":1,\"exit_code\":0,"
			 "\"state\":\"summary_invalid\",\"summary\":null}\n");
	free(rows);

	/* Exactly 8 KiB is still a summary. */
	write_named_allocator_trace(dir, "fit.jsonl", 8192 - base);
	mt_test_memtrace_in(&r, dir, "capture", "--capture", "fit.jsonl", "--summary",
	       "s.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	row = parse_line(r.out, 0);
	ck_assert_str_eq(str(row, "state"), "summary_written");
	json_object_put(row);
	mt_test_run_release(&r);
	{
		size_t len;
		char *summary = read_file(dir, "s.jsonl", &len);

		mt_quiet_uint_eq(len, 8192);
		free(summary);
	}
}
END_TEST

#define DEEP_FRAMES 100
#define SYMBOL_LEN 200

/* A trace with one stack of n frames, each with a long symbol
 * "fNNN_xxx...", innermost first. */
static void write_deep_stack_trace(const char *dir, size_t n)
{
	size_t cap = n * (SYMBOL_LEN + 160) + n * 8 + 512;
	char *trace = malloc(cap), *p = trace;
	char filler[SYMBOL_LEN + 1];
	uint64_t seq = 1;

	mt_quiet_ptr_nonnull(trace);
	memset(filler, 'x', SYMBOL_LEN);
	filler[SYMBOL_LEN] = '\0';
	p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.start\"}\n",
		     seq++);
	p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"allocator\","
		     "\"allocator_id\":0}\n", seq++);
	for (size_t i = 1; i <= n; i++)
		p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"frame\","
			     "\"frame_id\":%zu,\"ip\":\"0x%zx\",\"symbol\":"
			     "\"f%03zu_%s\",\"offset\":%zu,\"module\":\"/lib/m.so\"}\n",
			     seq++, i, 0x1000 + i, i, filler, i);
	p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"stack\","
		     "\"stack_id\":1,\"frames\":[", seq++);
	for (size_t i = 1; i <= n; i++)
		p += sprintf(p, "%s%zu", i > 1 ? "," : "", i);
	p += sprintf(p, "]}\n");
	p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\","
		     "\"allocator_id\":0,\"ptr\":\"0x10\",\"size\":64,"
		     "\"fn\":\"malloc\",\"stack\":1}\n", seq++);
	p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.stop\"}\n",
		     seq++);
	ck_assert_uint_lt((size_t)(p - trace), cap);
	write_file(dir, "deep.jsonl", trace);
	free(trace);
}

START_TEST(test_long_site_line_keeps_innermost_frames_and_counts_omitted)
{
	char *dir = mt_test_scratch();
	struct json_object *site, *frames;
	mt_test_run_t r;
	char *line, *tail = NULL;
	size_t kept, len;

	write_deep_stack_trace(dir, DEEP_FRAMES);
	mt_test_memtrace_in(&r, dir, "summary", "deep.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_uint_eq(count_lines(r.out), 2);
	line = nth_line(r.out, 1);
	len = strlen(line) + 1;
	mt_quiet_uint_le(len, 8192);
	site = parse_line(r.out, 1);
	ck_assert(json_object_object_get_ex(site, "frames", &frames));
	kept = json_object_array_length(frames);
	mt_quiet_uint_gt(kept, 0);
	ck_assert_uint_lt(kept, DEEP_FRAMES);
	mt_quiet_uint_eq(num(site, "frames_omitted"), DEEP_FRAMES - kept);
	/* The innermost frames, in order. */
	for (size_t i = 0; i < kept; i++) {
		char prefix[32];
		struct json_object *f = json_object_array_get_idx(frames, i);

		snprintf(prefix, sizeof(prefix), "f%03zu_", i + 1);
		ck_assert(starts_with(str(f, "symbol"), prefix));
	}
	/* As many as fit: less than one more frame (about SYMBOL_LEN + 60
	 * bytes) and the closing of the line are left over. */
	mt_quiet_uint_gt(len, 8192 - 64 - (SYMBOL_LEN + 60));
	/* frames_omitted comes right after frames, and ends the line. */
	ck_assert_int_ne(asprintf(&tail, "}],\"frames_omitted\":%zu}",
				  DEEP_FRAMES - kept), -1);
	ck_assert_str_eq(line + strlen(line) - strlen(tail), tail);
	free(tail);
	json_object_put(site);
	free(line);
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_site_line_that_fits_has_no_frames_omitted)
{
	char *dir = mt_test_scratch();
	struct json_object *site, *frames;
	mt_test_run_t r;

	write_deep_stack_trace(dir, 3);
	mt_test_memtrace_in(&r, dir, "summary", "deep.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	site = parse_line(r.out, 1);
	ck_assert(json_object_object_get_ex(site, "frames", &frames));
	mt_quiet_uint_eq(json_object_array_length(frames), 3);
	ck_assert(!json_object_object_get_ex(site, "frames_omitted", NULL));
	json_object_put(site);
	mt_test_run_release(&r);
}
END_TEST

/* ---- site options and ranking ---- */

/* Stacks 1..n, one frame each; stack i holds i * 10 live bytes. */
static void write_sites_trace(const char *dir, size_t n)
{
	char *trace = malloc(n * 400 + 256), *p = trace;
	uint64_t seq = 1;

	mt_quiet_ptr_nonnull(trace);
	p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.start\"}\n"
		     "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"allocator\","
		     "\"allocator_id\":0}\n", seq, seq + 1);
	seq += 2;
	for (size_t i = 1; i <= n; i++) {
		p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"frame\","
			     "\"frame_id\":%zu,\"ip\":\"0x%zx\"}\n", seq++, i,
			     0x1000 + i);
		p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"stack\","
			     "\"stack_id\":%zu,\"frames\":[%zu]}\n", seq++, i, i);
		p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\","
			     "\"allocator_id\":0,\"ptr\":\"0x%zx\",\"size\":%zu,"
			     "\"fn\":\"malloc\",\"stack\":%zu}\n", seq++,
			     0x10000 + i * 0x100, i * 10, i);
	}
	p += sprintf(p, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.stop\"}\n",
		     seq);
	write_file(dir, "sites.jsonl", trace);
	free(trace);
}

/* The stack ids of the site lines of out, and their ranks. */
static void assert_site_order(const char *out, const uint64_t *ids, size_t n)
{
	mt_quiet_uint_eq(count_lines(out), n + 1);
	for (size_t i = 0; i < n; i++) {
		struct json_object *site = parse_line(out, i + 1);

		ck_assert_str_eq(str(site, "schema"), "memtrace.site/v1");
		mt_quiet_uint_eq(num(site, "rank"), i + 1);
		mt_quiet(num(site, "stack_id") == ids[i],
			 "site %zu is stack %" PRIu64 ", expected %" PRIu64,
			 i + 1, num(site, "stack_id"), ids[i]);
		json_object_put(site);
	}
}

START_TEST(test_top_limits_site_lines)
{
	static const uint64_t by_live[] = { 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 };
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_sites_trace(dir, 12);
	mt_test_memtrace_in(&r, dir, "summary", "sites.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	assert_site_order(r.out, by_live, 10); /* the default is 10 */
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "summary", "sites.jsonl", "--top", "3", NULL);
	assert_site_order(r.out, by_live, 3);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "summary", "sites.jsonl", "--top", "100", NULL);
	assert_site_order(r.out, by_live, 12);
	mt_test_run_release(&r);
	/* --top 0: exactly one line, the summary. */
	mt_test_memtrace_in(&r, dir, "summary", "sites.jsonl", "--top", "0", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_uint_eq(count_lines(r.out), 1);
	ck_assert(starts_with(r.out, "{\"schema\":\"memtrace.summary/v1\","));
	mt_test_run_release(&r);
}
END_TEST

#define EV(...) "{\"v\":1," __VA_ARGS__ "}\n"
#define FRAME(seq, id) \
	EV("\"seq\":" #seq ",\"kind\":\"frame\",\"frame_id\":" #id ",\"ip\":\"0x" #id "0\"")
#define STACK(seq, id) \
	EV("\"seq\":" #seq ",\"kind\":\"stack\",\"stack_id\":" #id ",\"frames\":[" #id "]")
#define SALLOC(seq, ptr, size, stack)                                         \
	EV("\"seq\":" #seq ",\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"" \
	   ptr "\",\"size\":" #size ",\"fn\":\"malloc\"" stack)
#define SFREE(seq, ptr) \
	EV("\"seq\":" #seq ",\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"" ptr "\"")

/*
 * Six sites:        live  allocated
 *   stack 2          30     30
 *   stack 3          10     50   (40 freed)
 *   site 0           10     10
 *   stack 1          10     10
 *   stack 4          10     10
 *   stack 5           0      5   (freed)
 * and stack 6, declared but never allocated from.
 */
static const char ranking_trace[] =
	EV("\"seq\":1,\"kind\":\"trace.start\"")
	EV("\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0")
	FRAME(3, 4) FRAME(4, 1) FRAME(5, 5) FRAME(6, 3) FRAME(7, 2) FRAME(8, 6)
	STACK(9, 4) STACK(10, 1) STACK(11, 5) STACK(12, 3) STACK(13, 2)
	STACK(14, 6)
	SALLOC(15, "0x100", 10, ",\"stack\":4")
	SALLOC(16, "0x200", 10, ",\"stack\":1")
	SALLOC(17, "0x300", 40, ",\"stack\":3")
	SFREE(18, "0x300")
	SALLOC(19, "0x310", 10, ",\"stack\":3")
	SALLOC(20, "0x400", 30, ",\"stack\":2")
	SALLOC(21, "0x500", 5, ",\"stack\":5")
	SFREE(22, "0x500")
	SALLOC(23, "0x600", 10, "")
	EV("\"seq\":24,\"kind\":\"trace.stop\"");

START_TEST(test_sites_ranked_by_live_then_allocated_then_stack_id)
{
	static const uint64_t order[] = { 2, 3, 0, 1, 4 };
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	write_file(dir, "t.jsonl", ranking_trace);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	assert_site_order(r.out, order, 5);
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_sites_without_live_bytes_only_with_include_zero_live)
{
	static const uint64_t order[] = { 2, 3, 0, 1, 4, 5 };
	char *dir = mt_test_scratch();
	struct json_object *site;
	mt_test_run_t r;

	write_file(dir, "t.jsonl", ranking_trace);
	mt_test_memtrace_in(&r, dir, "summary", "t.jsonl", "--include-zero-live", NULL);
	mt_quiet_int_eq(r.status, 0);
	/* Stack 5 comes last; stack 6 never allocated: no site at all. */
	assert_site_order(r.out, order, 6);
	site = parse_line(r.out, 6);
	mt_quiet_uint_eq(num(site, "live_bytes"), 0);
	mt_quiet_uint_eq(num(site, "bytes_allocated"), 5);
	mt_quiet_uint_eq(num(site, "peak_live_bytes"), 5);
	json_object_put(site);
	mt_test_run_release(&r);
}
END_TEST

Suite *mt_suite_cli(void)
{
	Suite *s = suite_create("cli");
	TCase *help = tcase_create("help");
	TCase *usage = tcase_create("usage");
	TCase *status = tcase_create("status");
	TCase *output = tcase_create("output");
	TCase *limits = tcase_create("limits");
	TCase *sites = tcase_create("sites");

	tcase_add_test(help, test_help_prints_program_usage_on_stdout);
	tcase_add_test(help, test_help_prints_each_command_usage_on_stdout);
	tcase_add_test(help, test_help_lists_the_commands_of_the_table);
	tcase_add_test(help, test_every_command_help_prints_its_usage);
	suite_add_tcase(s, help);

	tcase_add_test(usage, test_no_command_is_usage_error);
	tcase_add_test(usage, test_unknown_command_is_usage_error);
	tcase_add_test(usage, test_unknown_option_is_usage_error);
	tcase_add_test(usage, test_option_of_another_command_is_usage_error_naming_it);
	tcase_add_test(usage, test_missing_trace_argument_is_usage_error);
	tcase_add_test(usage, test_extra_argument_is_usage_error);
	tcase_add_test(usage, test_option_without_value_is_usage_error);
	tcase_add_test(usage, test_bad_numbers_are_usage_errors);
	tcase_add_test(usage, test_index_zero_is_usage_error_and_writes_nothing);
	tcase_add_test(usage, test_missing_required_options_are_usage_errors);
	suite_add_tcase(s, usage);

	tcase_add_test(status, test_check_exits_0_when_complete);
	tcase_add_test(status, test_check_exits_1_when_caveated);
	tcase_add_test(status, test_check_exits_2_when_not_valid_evidence);
	tcase_add_test(status, test_check_exits_3_when_trace_missing);
	tcase_add_test(status, test_check_exits_3_when_trace_unreadable);
	tcase_add_test(status, test_summary_exits_0_for_caveated_trace_without_strict);
	tcase_add_test(status, test_summary_strict_exits_1_for_caveated_trace_after_writing);
	tcase_add_test(status, test_summary_strict_exits_0_for_complete_trace);
	tcase_add_test(status, test_summary_exits_2_for_invalid_trace_and_writes_nothing);
	tcase_add_test(status, test_summary_exits_3_for_missing_trace_and_writes_nothing);
	tcase_add_test(status, test_unwritable_output_exits_73);
	tcase_add_test(status, test_capture_of_failed_workload_writes_nothing_and_exits_0);
	tcase_add_test(status, test_capture_exits_0_whatever_the_state);
	tcase_add_test(status, test_repetition_exits_0_whatever_the_state);
	tcase_add_test(status, test_rows_of_unreadable_trace_are_summary_invalid);
	tcase_add_test(status, test_rows_of_trace_under_a_file_are_capture_missing);
	tcase_add_test(status, test_capture_strict_exits_with_trace_status_after_row);
	tcase_add_test(status, test_repetition_strict_exits_with_trace_status_after_row);
	suite_add_tcase(s, status);

	tcase_add_test(output, test_failed_replace_leaves_no_temporary_file);
	tcase_add_test(output, test_summary_output_replaces_file_by_rename);
	tcase_add_test(output, test_summary_output_to_a_fifo_writes_through_it);
	tcase_add_test(output, test_summary_output_through_a_symlink_replaces_the_file_it_names);
	tcase_add_test(output, test_capture_summary_replaces_file_by_rename);
	tcase_add_test(output, test_repetition_first_row_replaces_file_by_rename);
	tcase_add_test(output, test_append_adds_exactly_one_row);
	tcase_add_test(output, test_rows_escape_paths_as_json_strings);
	suite_add_tcase(s, output);

	tcase_add_test(limits, test_summary_line_is_at_most_8_kib);
	tcase_add_test(limits, test_rows_of_oversized_summary_are_summary_invalid);
	tcase_add_test(limits, test_long_site_line_keeps_innermost_frames_and_counts_omitted);
	tcase_add_test(limits, test_site_line_that_fits_has_no_frames_omitted);
	suite_add_tcase(s, limits);

	tcase_add_test(sites, test_top_limits_site_lines);
	tcase_add_test(sites, test_sites_ranked_by_live_then_allocated_then_stack_id);
	tcase_add_test(sites, test_sites_without_live_bytes_only_with_include_zero_live);
	suite_add_tcase(s, sites);
	return s;
}
