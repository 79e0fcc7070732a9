/*
 * mt_complete: the bash completion of memtrace and memtrace-run, from
 * their usage texts: memtrace's commands (the ones a user runs), each
 * one's options, and what their values are (TRACE a trace file, *.jsonl,
 * *.jsonl.zst or *.jsonl.gz; FILE and SUMMARY any file; DIR a directory);
 * memtrace-run's options, then the program it runs.
 */
#ifndef MT_COMPLETE_H
#define MT_COMPLETE_H

/* The completion script on stdout; run_help is the shell command that
 * prints memtrace-run's --help. */
void mt_complete_write(const char *run_help);

#endif
