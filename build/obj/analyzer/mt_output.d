build/obj/analyzer/mt_output.o: analyzer/mt_output.c analyzer/mt_output.h \
 analyzer/mt_error.h analyzer/mt_mem.h
analyzer/mt_output.h:
analyzer/mt_error.h:
analyzer/mt_mem.h:
