/*
 * mt_xml: text for the SVG documents (the flame graph, the plot).  It must
 * never write a byte that makes the document ill-formed XML 1.0, whatever
 * the bytes of a frame's name or a trace's path.
 */
#ifndef MT_XML_H
#define MT_XML_H

#include <stddef.h>

#include "../base/mt_buf.h"

/*
 * Append n bytes of s as XML text, fit for an attribute too: & < > " '
 * escaped; what XML 1.0 cannot hold (control bytes, bytes that are not
 * UTF-8, U+FFFE, U+FFFF) as U+FFFD.  When max is not 0 and s has more
 * than max characters, its first max - 2 and "..", as a frame's label is
 * cut to its box.  MT_OK or MT_ENOMEM (b then as it was).
 */
int mt_xml_add_text(mt_buf_t *b, const char *s, size_t n, size_t max);

#endif
