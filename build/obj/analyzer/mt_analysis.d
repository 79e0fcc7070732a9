build/obj/analyzer/mt_analysis.o: analyzer/mt_analysis.c \
 analyzer/mt_analysis.h analyzer/mt_heap.h analyzer/mt_map.h \
 analyzer/mt_parse.h analyzer/../common/mt_event.h \
 analyzer/mt_integrity.h analyzer/mt_error.h analyzer/mt_reader.h
analyzer/mt_analysis.h:
analyzer/mt_heap.h:
analyzer/mt_map.h:
analyzer/mt_parse.h:
analyzer/../common/mt_event.h:
analyzer/mt_integrity.h:
analyzer/mt_error.h:
analyzer/mt_reader.h:
