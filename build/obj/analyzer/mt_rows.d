build/obj/analyzer/mt_rows.o: analyzer/mt_rows.c analyzer/mt_rows.h \
 analyzer/mt_analysis.h analyzer/mt_heap.h analyzer/mt_map.h \
 analyzer/mt_parse.h analyzer/../common/mt_event.h \
 analyzer/mt_integrity.h analyzer/mt_buf.h analyzer/mt_error.h \
 analyzer/mt_summary.h
analyzer/mt_rows.h:
analyzer/mt_analysis.h:
analyzer/mt_heap.h:
analyzer/mt_map.h:
analyzer/mt_parse.h:
analyzer/../common/mt_event.h:
analyzer/mt_integrity.h:
analyzer/mt_buf.h:
analyzer/mt_error.h:
analyzer/mt_summary.h:
