build/obj/analyzer/mt_integrity.o: analyzer/mt_integrity.c \
 analyzer/mt_integrity.h
analyzer/mt_integrity.h:
