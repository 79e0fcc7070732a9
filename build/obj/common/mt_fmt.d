build/obj/common/mt_fmt.o: common/mt_fmt.c common/mt_fmt.h
common/mt_fmt.h:
