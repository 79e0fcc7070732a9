build/obj/analyzer/mt_parse.o: analyzer/mt_parse.c analyzer/mt_parse.h \
 analyzer/../common/mt_event.h analyzer/../common/mt_fmt.h \
 analyzer/mt_error.h analyzer/mt_mem.h
analyzer/mt_parse.h:
analyzer/../common/mt_event.h:
analyzer/../common/mt_fmt.h:
analyzer/mt_error.h:
analyzer/mt_mem.h:
