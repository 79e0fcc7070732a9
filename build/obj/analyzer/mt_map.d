build/obj/analyzer/mt_map.o: analyzer/mt_map.c analyzer/mt_map.h \
 analyzer/mt_error.h analyzer/mt_mem.h
analyzer/mt_map.h:
analyzer/mt_error.h:
analyzer/mt_mem.h:
