build/obj/analyzer/mt_buf.o: analyzer/mt_buf.c analyzer/mt_buf.h \
 analyzer/../common/mt_fmt.h analyzer/mt_error.h analyzer/mt_mem.h
analyzer/mt_buf.h:
analyzer/../common/mt_fmt.h:
analyzer/mt_error.h:
analyzer/mt_mem.h:
