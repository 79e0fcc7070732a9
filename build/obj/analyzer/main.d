build/obj/analyzer/main.o: analyzer/main.c analyzer/mt_cli.h \
 analyzer/mt_mem.h
analyzer/mt_cli.h:
analyzer/mt_mem.h:
