/* Linked into programs that take libarchive statically (see CMakeLists.txt).
 *
 * libarchive's tar and pax writers call this one helper from archive_write_set_format.o,
 * which also holds the table of every writer libarchive has; pulling it in would pull in
 * the xar writer and with it libxml2 and ICU, the very libraries static linking is meant
 * to keep out. The definition below does what libarchive's does (set the error, refuse
 * the entry), so the linker never needs that object. If a future libarchive needs more
 * of it, the link fails with a duplicate symbol rather than behaving differently. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>

/* Not in libarchive's public headers; declared as libarchive's own sources declare it. */
int __archive_write_entry_filetype_unsupported(struct archive *a, struct archive_entry *entry, const char *format);

int __archive_write_entry_filetype_unsupported(struct archive *a, struct archive_entry *entry, const char *format) {
    const char *name = NULL;
    switch (archive_entry_filetype(entry)) {
    case AE_IFSOCK: name = "socket"; break;
    case AE_IFCHR: name = "character device"; break;
    case AE_IFBLK: name = "block device"; break;
    case AE_IFIFO: name = "named pipe"; break;
    default: name = "unknown file type"; break;
    }
    archive_set_error(a, EINVAL, "%s: %s format cannot archive this (%s)", archive_entry_pathname(entry), format,
                      name);
    return ARCHIVE_FAILED;
}
