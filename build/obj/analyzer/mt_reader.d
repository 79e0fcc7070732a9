build/obj/analyzer/mt_reader.o: analyzer/mt_reader.c analyzer/mt_reader.h \
 analyzer/mt_error.h analyzer/mt_mem.h
analyzer/mt_reader.h:
analyzer/mt_error.h:
analyzer/mt_mem.h:
