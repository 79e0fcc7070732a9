/*
 * wl_badregister: under memtrace record, sends record's collector a
 * registration whose trace name ends without its NUL (the message cut
 * short), with a memfd, and reads the one-byte answer a sender without a
 * pidfd reads.  Prints "refused" for MT_REGISTER_REFUSED, "taken" for
 * MT_REGISTER_TAKEN, "none" when the collector closed without one.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../common/mt_register.h"

int main(void)
{
	const char *sock = getenv(MT_REGISTER_ENV);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	mt_register_head_t head = { .magic = MT_REGISTER_MAGIC };
	char name[] = { 'a', 'b', 'c' };
	struct iovec iov[2] = { { &head, sizeof(head) }, { name, sizeof(name) } };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int fd, memfd = memfd_create("wl-ring", MFD_CLOEXEC);
	char a = 0;

	if (!sock || strlen(sock) > MT_REGISTER_SOCKET_MAX || memfd < 0)
		return 70;
	head.pid = getpid();
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
	memcpy(addr.sun_path + 1, sock, strlen(sock));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sock))) < 0 ||
	    sendmsg(fd, &mh, 0) < 0)
		return 70;
	if (read(fd, &a, 1) != 1)
		puts("none");
	else
		puts(a == MT_REGISTER_REFUSED ? "refused" : a == MT_REGISTER_TAKEN ? "taken" : "?");
	return 0;
}
