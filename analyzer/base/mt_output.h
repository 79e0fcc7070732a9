/*
 * mt_output: writes the analyzer's outputs so that a reader never sees
 * half of one (format.md section 7): a new file goes through a temporary file
 * in the same directory and rename(2); an appended row is one write(2) on
 * an O_APPEND descriptor.
 *
 * Each function returns MT_OK or MT_EOUTPUT with errno set (and
 * mt_output_replace MT_ENOMEM when it cannot name its temporary file), and
 * on error leaves the destination as it was.
 */
#ifndef MT_OUTPUT_H
#define MT_OUTPUT_H

#include <stddef.h>

/* Replace path's content with data (creating it, mode 0666 & ~umask).  A
 * path that exists and is not a regular file or a directory (/dev/null, a
 * FIFO) is written through instead, and stays what it is; a symbolic link
 * to a file stays a link, and the file it names is replaced. */
int mt_output_replace(const char *path, const char *data, size_t len);

/* Append data to path (creating it) in one write(2). */
int mt_output_append(const char *path, const char *data, size_t len);

/* Write data to standard output, retrying short writes. */
int mt_output_stdout(const char *data, size_t len);

#endif
