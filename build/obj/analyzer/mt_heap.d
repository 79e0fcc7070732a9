build/obj/analyzer/mt_heap.o: analyzer/mt_heap.c analyzer/mt_heap.h \
 analyzer/mt_map.h analyzer/mt_parse.h analyzer/../common/mt_event.h \
 analyzer/mt_error.h analyzer/mt_mem.h
analyzer/mt_heap.h:
analyzer/mt_map.h:
analyzer/mt_parse.h:
analyzer/../common/mt_event.h:
analyzer/mt_error.h:
analyzer/mt_mem.h:
