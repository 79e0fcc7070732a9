/*
 * mt_xml: escaping text into an XML document.  It must never write markup
 * that came from the text, nor a character XML 1.0 cannot hold.
 */
#include "../render/mt_xml.h"

#include <stdint.h>

#include "../../common/mt_utf8.h"
#include "../base/mt_error.h"

int mt_xml_add_text(mt_buf_t *b, const char *s, size_t n, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t mark = b->len, chars = 0, total = 0, keep = SIZE_MAX;
	int rc = MT_OK;

	if (max) {
		for (size_t i = 0; i < n; total++) {
			size_t len = mt_utf8_len(p + i, n - i);

			i += len ? len : 1;
		}
		if (total > max)
			keep = max > 2 ? max - 2 : 0;
	}
	while (n && !rc) {
		size_t len = mt_utf8_len(p, n);

		if (chars == keep) {
			rc = mt_buf_add_str(b, "..");
			break;
		}
		chars++;
		if (*p == '&')
			rc = mt_buf_add_str(b, "&amp;");
		else if (*p == '<')
			rc = mt_buf_add_str(b, "&lt;");
		else if (*p == '>')
			rc = mt_buf_add_str(b, "&gt;");
		else if (*p == '"')
			rc = mt_buf_add_str(b, "&quot;");
		else if (*p == '\'')
			rc = mt_buf_add_str(b, "&apos;");
		else if (!len || *p < 0x20 || *p == 0x7f ||
			 (len == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe))
			rc = mt_buf_add_str(b, "\xef\xbf\xbd");
		else
			rc = mt_buf_add(b, p, len);
		if (!len)
			len = 1;
		p += len;
		n -= len;
	}
	if (rc)
		mt_buf_truncate(b, mark);
	return rc;
}
