/* countfs: a read-only FUSE view of a directory that counts the bytes read through it.
 * Tests put a layer store behind it to measure how much of an image a mount and a
 * read really fetch from the store (as from a network filesystem).
 *
 *   countfs BACKING MOUNTPOINT COUNTFILE
 *
 * Runs in the foreground until unmounted; after every read it rewrites COUNTFILE with
 * "<bytes> <requests>\n". Built by the tests with: cc countfs.c $(pkg-config --cflags --libs fuse3)
 */
#define FUSE_USE_VERSION 31
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *backing;
static const char *count_file;
static unsigned long long bytes_read, reads;

static void real_path(char *out, size_t n, const char *path) { snprintf(out, n, "%s%s", backing, path); }

static int c_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    (void)fi;
    char p[4096];
    real_path(p, sizeof p, path);
    return lstat(p, st) < 0 ? -errno : 0;
}

static int c_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                     enum fuse_readdir_flags flags) {
    (void)off, (void)fi, (void)flags;
    char p[4096];
    real_path(p, sizeof p, path);
    DIR *d = opendir(p);
    if (!d) return -errno;
    struct dirent *e;
    while ((e = readdir(d))) fill(buf, e->d_name, NULL, 0, 0);
    closedir(d);
    return 0;
}

static int c_open(const char *path, struct fuse_file_info *fi) {
    if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EROFS;
    char p[4096];
    real_path(p, sizeof p, path);
    int fd = open(p, O_RDONLY);
    if (fd < 0) return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int c_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)path;
    ssize_t n = pread((int)fi->fh, buf, size, off);
    if (n < 0) return -errno;
    bytes_read += (unsigned long long)n;
    reads++;
    FILE *f = fopen(count_file, "w");
    if (f) {
        fprintf(f, "%llu %llu\n", bytes_read, reads);
        fclose(f);
    }
    return (int)n;
}

static int c_release(const char *path, struct fuse_file_info *fi) {
    (void)path;
    close((int)fi->fh);
    return 0;
}

static const struct fuse_operations ops = {
    .getattr = c_getattr, .readdir = c_readdir, .open = c_open, .read = c_read, .release = c_release,
};

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: countfs BACKING MOUNTPOINT COUNTFILE\n");
        return 2;
    }
    backing = argv[1];
    count_file = argv[3];
    FILE *f = fopen(count_file, "w");
    if (f) fputs("0 0\n", f), fclose(f);
    char *args[] = {argv[0], "-f", "-s", "-o", "ro,fsname=countfs,allow_other", argv[2], NULL};
    return fuse_main(6, args, &ops, NULL);
}
