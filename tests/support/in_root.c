/* Runs a program inside a directory tree holding another distribution, the way a container
 * does: in a mount namespace of its own, after pivot_root, so the program's /proc/PID/maps,
 * /proc/PID/cwd and file names are paths inside the tree (the host reaches them only through
 * /proc/PID/root). The process keeps its PID: this program execs the target, it never forks,
 * so a sampler watching the PID sees no other interpreter before the real one.
 *
 *   in_root [--bind DIR]... ROOT PROGRAM [ARG]...
 *
 * /dev, /proc, /sys, /tmp, every --bind DIR and the current directory appear inside at the same
 * paths as outside, so files named by the caller (test fixtures, outputs) mean the same thing on
 * both sides. Needs CAP_SYS_ADMIN. No PID or network namespace: the program is an ordinary
 * process of the host that only sees another file system. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { MAX_BINDS = 32 };

static void die(const char *what, const char *path) {
  fprintf(stderr, "in_root: %s %s: %s\n", what, path ? path : "", strerror(errno));
  exit(125);
}

static int is_under(const char *path, const char *dir) {
  size_t n = strlen(dir);
  if (n == 1 && dir[0] == '/') return 1;
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* mkdir -p of ROOT/PATH: the mount point a bind needs. Concurrent launches race here. */
static void make_mount_point(const char *root, const char *path) {
  char target[PATH_MAX];
  if (snprintf(target, sizeof target, "%s%s", root, path) >= (int)sizeof target)
    die("path too long:", path);
  for (char *p = target + strlen(root) + 1;; ++p) {
    if (*p != '/' && *p != '\0') continue;
    const char saved = *p;
    *p = '\0';
    struct stat st;
    /* A symbolic link inside the tree would be resolved against the host's / here and could
     * put the mount outside the tree. */
    if (lstat(target, &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        die("not a directory in the root:", target);
      }
    } else if (mkdir(target, 0755) != 0 && errno != EEXIST) {
      die("cannot create", target);
    }
    *p = saved;
    if (saved == '\0') break;
  }
}

static void bind_into(const char *root, const char *path) {
  char target[PATH_MAX];
  make_mount_point(root, path);
  snprintf(target, sizeof target, "%s%s", root, path);
  if (mount(path, target, NULL, MS_BIND | MS_REC, NULL) != 0) die("cannot bind", path);
}

int main(int argc, char **argv) {
  const char *binds[MAX_BINDS + 5] = {"/dev", "/proc", "/sys", "/tmp"};
  int nbinds = 4;
  int i = 1;
  for (; i + 1 < argc && strcmp(argv[i], "--bind") == 0; i += 2) {
    if (nbinds == MAX_BINDS) {
      errno = E2BIG;
      die("too many --bind", NULL);
    }
    if (argv[i + 1][0] != '/') {
      errno = EINVAL;
      die("--bind needs an absolute path:", argv[i + 1]);
    }
    binds[nbinds++] = argv[i + 1];
  }
  if (argc - i < 2) {
    fprintf(stderr, "usage: in_root [--bind DIR]... ROOT PROGRAM [ARG]...\n");
    return 125;
  }
  char root[PATH_MAX];
  if (!realpath(argv[i], root)) die("no root", argv[i]);
  char **program = argv + i + 1;

  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) die("getcwd", NULL);
  int cwd_covered = strcmp(cwd, "/") == 0 || is_under(cwd, root);
  for (int b = 0; b < nbinds && !cwd_covered; ++b) cwd_covered = is_under(cwd, binds[b]);
  if (!cwd_covered) binds[nbinds++] = cwd;

  if (unshare(CLONE_NEWNS) != 0) die("unshare(CLONE_NEWNS)", NULL);
  /* Nothing mounted from here on may reach the host's namespace. */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("cannot make / private", NULL);
  /* pivot_root needs the new root to be a mount point. */
  if (mount(root, root, NULL, MS_BIND | MS_REC, NULL) != 0) die("cannot bind", root);
  for (int b = 0; b < nbinds; ++b) {
    /* A directory under one already bound comes with it (rbind). */
    int inside = 0;
    for (int a = 0; a < b && !inside; ++a) inside = is_under(binds[b], binds[a]);
    if (!inside) bind_into(root, binds[b]);
  }
  if (chdir(root) != 0) die("chdir", root);
  /* pivot_root(".", ".") stacks the old root on the new one; detaching it leaves only the
   * tree. */
  if (syscall(SYS_pivot_root, ".", ".") != 0) die("pivot_root", root);
  if (umount2(".", MNT_DETACH) != 0) die("cannot detach the old root", NULL);
  /* A directory of the tree itself is named as the program will see it. */
  const char *inner_cwd = is_under(cwd, root) && strcmp(root, "/") != 0 ? cwd + strlen(root) : cwd;
  if (chdir(*inner_cwd ? inner_cwd : "/") != 0) die("chdir", cwd);
  execv(program[0], program);
  die("cannot execute", program[0]);
  return 125;
}
