build/obj/analyzer/mt_mem.o: analyzer/mt_mem.c analyzer/mt_mem.h
analyzer/mt_mem.h:
