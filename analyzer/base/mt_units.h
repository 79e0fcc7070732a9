/*
 * mt_units: the numbers people type and read in CI gates: sizes with
 * K/M/G suffixes, counts, percentages, and sizes and changes printed for a
 * person (gate, diff, repetitions), durations and counts in words
 * (report, plot).
 *
 * Sizes are 1024-based everywhere, as memtrace-run prints them: 1K is
 * 1024 bytes, 1M 1024 K, 1G 1024 M, 1T 1024 G.  A printed size is in B
 * below 1 KiB, else with one decimal in KiB, MiB or GiB (the largest unit,
 * however big), rounded to nearest: memtrace-run's lines are printed with
 * it (mt_run_lines).
 *
 * Invariants: a parser either fills *out and returns 0, or leaves it and
 * returns -1; the appenders append a whole item or nothing (mt_buf).
 */
#ifndef MT_UNITS_H
#define MT_UNITS_H

#include <stdint.h>

#include "../base/mt_buf.h"

/*
 * A size in bytes: digits, an optional fraction (".5"), then an optional
 * suffix K, M, G or T (either case, optionally followed by "iB"), or "B".
 * "1.5K" is 1536; a fraction of a byte is dropped.  "KB" and the like are
 * refused (they could mean 1000).  Returns -1 for anything else, or a
 * value beyond 64 bits.
 */
int mt_units_parse_size(const char *s, uint64_t *out);

/* A whole number: digits only, no sign, no suffix, at most 64 bits. */
int mt_units_parse_count(const char *s, uint64_t *out);

/* A percentage, 0 or more: digits with at most three decimals and an
 * optional '%', as thousandths of a percent ("2.5" is 2500). */
int mt_units_parse_pct(const char *s, uint64_t *milli);

/* "512 B", "16.1 KiB". */
int mt_units_add_size(mt_buf_t *b, uint64_t bytes);

/* "16.1 KiB (16510 bytes)", as a report writes a total ("512 B" below
 * 1 KiB). */
int mt_units_add_size_exact(mt_buf_t *b, uint64_t bytes);

/* "  LABEL" and spaces up to width columns after the indent (at least
 * one, at most 32): the label column of report's and top's figures. */
int mt_units_add_label(mt_buf_t *b, const char *label, size_t width);

/* The change from base to now as a signed size: "+8.0 KiB", "-512 B",
 * "0 B". */
int mt_units_add_size_change(mt_buf_t *b, uint64_t base, uint64_t now);

/* The change as a signed count: "+3", "-1", "0". */
int mt_units_add_count_change(mt_buf_t *b, uint64_t base, uint64_t now);

/* The change in percent of base, one decimal, rounded toward zero:
 * "+49.6%", "-0.5%", "0.0%"; "new" when base is 0 and now is not. */
int mt_units_add_pct_change(mt_buf_t *b, uint64_t base, uint64_t now);

/* Thousandths of a percent as typed back: 2500 is "2.5", 0 is "0". */
int mt_units_add_milli(mt_buf_t *b, uint64_t milli);

/* Whether now grew beyond base by more than milli thousandths of a
 * percent, in exact arithmetic; growth from 0 is beyond any threshold. */
int mt_units_grew_beyond(uint64_t base, uint64_t now, uint64_t milli);

/* A duration for a person: "850 ns", "3.4 ms", "12.0 s": one decimal
 * above nanoseconds, rounded to nearest. */
int mt_units_add_duration(mt_buf_t *b, uint64_t ns);

/* n and then one or the other word: "1 call", "2 calls". */
int mt_units_add_count(mt_buf_t *b, uint64_t n, const char *one,
		       const char *many);

/* A sampled estimate's standard error after its figure: " +- 4.0 KiB"
 * beside a size (as mt_units_add_size()), " +- 64" beside a count. */
int mt_units_add_pm_size(mt_buf_t *b, uint64_t bytes);
int mt_units_add_pm_count(mt_buf_t *b, uint64_t n);

#endif
