/*
 * mt-bench-parse: the reading half of the analyzer alone, for the
 * benchmark's side-by-side figures (make bench).
 *
 *   mt-bench-parse MODE TRACE
 *
 *   tokener  json_tokener_parse_ex() on every line, nothing else: what
 *            reading JSON with json-c alone costs
 *   json-c   mt_any_json_parse(): json-c plus the field extraction and the
 *            validator, the analyzer's reference path
 *   parser   mt_parser_parse(): the exact-layout matcher, then the generic
 *            fast path, then json-c for what both decline
 *   generic  the generic fast path, json-c for what it declines: the
 *            parser without the exact-layout matcher
 *   window   the analyzer's own parse (mt_analysis.c): the exact matcher on
 *            the reader's buffer, finding each line's end itself, and
 *            mt_parser_parse_inexact() for what it declines; no heap
 *
 * Every mode reads the trace with mt_reader, as the analyzer does, and
 * prints the lines read and how many went to json-c.  Timing is left to
 * the caller, so all variants are measured the same way.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "../analyzer/parse/mt_flat.h"
#include "../analyzer/parse/mt_any_json.h"
#include "../analyzer/parse/mt_parse.h"
#include "../analyzer/read/mt_reader.h"

enum { TOKENER, JSON_C, PARSER, GENERIC, WINDOW };

int main(int argc, char **argv)
{
	mt_reader_t reader;
	mt_parser_t parser;
	mt_line_t line;
	mt_event_t ev;
	unsigned long long lines = 0, json_c = 0, ok = 0, bytes = 0;
	int mode, got;

	if (argc != 3)
		goto usage;
	if (!strcmp(argv[1], "tokener"))
		mode = TOKENER;
	else if (!strcmp(argv[1], "json-c"))
		mode = JSON_C;
	else if (!strcmp(argv[1], "parser"))
		mode = PARSER;
	else if (!strcmp(argv[1], "generic"))
		mode = GENERIC;
	else if (!strcmp(argv[1], "window"))
		mode = WINDOW;
	else
		goto usage;
	if (mt_reader_open(&reader, argv[2])) {
		perror(argv[2]);
		return 3;
	}
	if (mt_parser_init(&parser)) {
		fputs("mt-bench-parse: out of memory\n", stderr);
		return 4;
	}
	for (;;) {
		mt_parse_result_t r;
		int declined = 0;

		if (mode == WINDOW) {
			size_t avail, len;
			const char *w = mt_reader_window(&reader, &avail);

			if (avail >= MT_PARSE_EXACT_SPAN && reader.line_no) {
				if (mt_parse_exact_window(&parser, w, &ev, &len) ==
				    MT_PARSE_OK) {
					mt_reader_take(&reader, len);
					lines++;
					ok++;
					bytes += len + 1;
					continue;
				}
				declined = 1;
			}
		}
		if ((got = mt_reader_next(&reader, &line)) <= 0)
			break;
		lines++;
		bytes += line.len + line.terminated;
		if (mode == TOKENER) {
			struct json_object *o;

			json_tokener_reset(parser.tok);
			o = json_tokener_parse_ex(parser.tok, line.data,
						  (int)line.len);
			if (o) {
				ok++;
				json_object_put(o);
			}
			json_c++;
			continue;
		}
		if (mode == JSON_C) {
			r = mt_any_json_parse(&parser, line.data, line.len, &ev);
		} else if (mode == GENERIC) {
			r = mt_flat_parse(&parser, line.data, line.len, &ev);
			if (r == MT_PARSE_DECLINED)
				r = mt_any_json_parse(&parser, line.data,
						      line.len, &ev);
		} else if (declined) {
			r = mt_parser_parse_inexact(&parser, line.data, line.len,
						    &ev);
		} else {
			r = mt_parser_parse(&parser, line.data, line.len, &ev);
		}
		if (r == MT_PARSE_NOMEM) {
			fputs("mt-bench-parse: out of memory\n", stderr);
			return 4;
		}
		ok += r == MT_PARSE_OK;
		json_c += parser.used_json_c != 0;
	}
	mt_parser_release(&parser);
	mt_reader_release(&reader);
	if (got < 0) {
		perror(argv[2]);
		return 3;
	}
	printf("%s: %llu lines, %llu bytes, %llu ok, %llu through json-c\n",
	       argv[1], lines, bytes, ok, json_c);
	return 0;
usage:
	fputs("usage: mt-bench-parse tokener|json-c|parser|generic|window TRACE\n",
	      stderr);
	return 64;
}
