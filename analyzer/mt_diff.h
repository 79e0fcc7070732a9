/*
 * mt_diff: `memtrace diff BASE NEW [--threshold PCT] [--top N] [--json]`,
 * run-to-run comparison of two traces or summary files (any mix).
 *
 * Totals are compared field by field.  Sites are matched by their
 * symbolized stack, never by stack id or address (both change from run to
 * run): the sequence, innermost first, of each frame's symbol and the file
 * name of its module.  Sites of one run whose stacks read the same are
 * added together first.  The changed sites are listed by growth: the
 * change in live bytes, then in bytes allocated, then in allocations,
 * largest first.
 *
 * Returns the exit status: 0 when neither peak_live_bytes nor live_bytes
 * (leaked at exit) grew beyond PCT percent of BASE's (default 0: any
 * growth), 1 when one did, 2 either input is not valid evidence, 3 one is
 * missing or unreadable, 4 out of memory, 64 usage.  The report is text
 * for people on stdout, or with --json one JSON object on one line;
 * nothing is printed before everything is computed.
 */
#ifndef MT_DIFF_H
#define MT_DIFF_H

/* argv[0] is "diff". */
int mt_diff_cmd(int argc, char **argv);

#endif
