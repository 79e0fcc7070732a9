build/obj/analyzer/mt_cli.o: analyzer/mt_cli.c analyzer/mt_cli.h \
 analyzer/mt_analysis.h analyzer/mt_heap.h analyzer/mt_map.h \
 analyzer/mt_parse.h analyzer/../common/mt_event.h \
 analyzer/mt_integrity.h analyzer/mt_buf.h analyzer/mt_error.h \
 analyzer/mt_mem.h analyzer/mt_output.h analyzer/mt_rows.h \
 analyzer/mt_summary.h
analyzer/mt_cli.h:
analyzer/mt_analysis.h:
analyzer/mt_heap.h:
analyzer/mt_map.h:
analyzer/mt_parse.h:
analyzer/../common/mt_event.h:
analyzer/mt_integrity.h:
analyzer/mt_buf.h:
analyzer/mt_error.h:
analyzer/mt_mem.h:
analyzer/mt_output.h:
analyzer/mt_rows.h:
analyzer/mt_summary.h:
