build/obj/common/mt_event.o: common/mt_event.c common/mt_event.h
common/mt_event.h:
