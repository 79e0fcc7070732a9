/*
 * mt_flamesvg: `memtrace flamegraph TRACE [--metric M] [-o f.svg]`, the
 * trace's stacks as a self-contained interactive flame graph in SVG, in
 * the manner of flamegraph.pl: the root ("all") at the bottom, each
 * frame above its caller, as wide as its share of the metric.
 *
 * Its stacks are mt_flame_render()'s folded lines, read back: the graph
 * holds exactly the frames of the folded output (each inlined level its
 * own frame, "[no stack]", "[truncated]"), and a frame's width is the
 * sum of the folded figures of the lines through it, over their total,
 * times the graph's width; frames narrower than MT_FLAMESVG_MIN_WIDTH
 * pixels are left out with everything above them.  Siblings are sorted
 * bytewise by name.
 *
 * Each frame is a <g class="f"> holding a <title> (its name, then, in
 * parentheses, its figure in human units and its share of the total), a
 * <rect> and a <text> (its name, cut to the width with ".."); its colour
 * is a hash of its name in greens and blues, the same in every graph.
 * Names are XML-escaped; bytes that are not UTF-8 and characters XML
 * cannot hold become U+FFFD.  The script and style are inline
 * (mt_flamesvg_script, mt_flamesvg_style; analyzer/render/html/flame.*):
 * a click on a frame zooms to it (its ancestors stay, full width), a click
 * on the root or on "Reset zoom" zooms out, "Search" (or Ctrl-F) takes a
 * regular expression, paints the matching frames and prints the share
 * they cover.  Nothing is fetched: no link, no font, no image.
 *
 * The command line is cmd/flamegraph.c's; this module renders and prints
 * nothing.
 */
#ifndef MT_FLAMESVG_H
#define MT_FLAMESVG_H

#include "../base/mt_buf.h"
#include "../export/mt_flame.h"
#include "../model/mt_analysis.h"

/* The graph's width in pixels, its margin, and the narrowest frame drawn. */
#define MT_FLAMESVG_WIDTH 1200
#define MT_FLAMESVG_XPAD 10
#define MT_FLAMESVG_MIN_WIDTH 0.1

/*
 * Append the flame graph of a (valid evidence) by metric; name is the
 * trace's name for the title.  MT_OK or MT_ENOMEM (out then as it was).
 */
int mt_flamesvg_render(const mt_analysis_t *a, mt_flame_metric_t metric,
		       const char *name, mt_buf_t *out);

#endif
