/* Runs a program inside a directory tree holding another distribution, the way a container
 * does: in a mount namespace of its own, after pivot_root, so the program's /proc/PID/maps,
 * /proc/PID/cwd and file names are paths inside the tree (the host reaches them only through
 * /proc/PID/root).
 *
 *   in_root [--bind DIR]... [--pid [--ns-pid N]] ROOT PROGRAM [ARG]...
 *
 * /dev, /proc, /sys, /tmp, every --bind DIR and the current directory appear inside at the same
 * paths as outside, so files named by the caller (test fixtures, outputs) mean the same thing on
 * both sides. Needs CAP_SYS_ADMIN. No network namespace.
 *
 * Without --pid the program is an ordinary process of the host that only sees another file
 * system: this program execs the target, it never forks, so the process keeps its PID and a
 * sampler watching it sees no other interpreter before the real one.
 *
 * With --pid the program also gets a PID namespace of its own, as Docker and Kubernetes give it:
 * it is pid 1 there (the child of this process, which waits for it and exits with its status),
 * and /proc inside is that namespace's. --ns-pid N makes its PID there N instead: pid 1 is then a
 * small init that waits for it, and N may be chosen to be the PID of some process of the host.
 * The namespace dies with this process (SIGKILL of it kills everything inside). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_BINDS = 32 };

static void die(const char* what, const char* path) {
  fprintf(stderr, "in_root: %s %s: %s\n", what, path ? path : "", strerror(errno));
  exit(125);
}

static int is_under(const char* path, const char* dir) {
  size_t n = strlen(dir);
  if (n == 1 && dir[0] == '/') return 1;
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* mkdir -p of ROOT/PATH: the mount point a bind needs. Concurrent launches race here. */
static void make_mount_point(const char* root, const char* path) {
  char target[PATH_MAX];
  if (snprintf(target, sizeof target, "%s%s", root, path) >= (int)sizeof target)
    die("path too long:", path);
  for (char* p = target + strlen(root) + 1;; ++p) {
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

static void bind_into(const char* root, const char* path) {
  char target[PATH_MAX];
  make_mount_point(root, path);
  snprintf(target, sizeof target, "%s%s", root, path);
  if (mount(path, target, NULL, MS_BIND | MS_REC, NULL) != 0) die("cannot bind", path);
}

/* The exit status of a child as a shell gives it: its code, or 128 + the signal. */
static int wait_status(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) die("waitpid", NULL);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static pid_t forwarded_to;
static void forward(int sig) {
  if (forwarded_to > 0) kill(forwarded_to, sig);
}

/* The next process made in this PID namespace gets `pid`. */
static void set_next_pid(int pid) {
  const int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
  if (fd < 0) die("cannot open", "/proc/sys/kernel/ns_last_pid");
  char text[32];
  const int n = snprintf(text, sizeof text, "%d", pid - 1);
  if (write(fd, text, (size_t)n) != n) die("cannot write", "/proc/sys/kernel/ns_last_pid");
  close(fd);
}

int main(int argc, char** argv) {
  const char* binds[MAX_BINDS + 5] = {"/dev", "/proc", "/sys", "/tmp"};
  int nbinds = 4;
  int pid_namespace = 0;
  long ns_pid = 1;
  int i = 1;
  for (; i + 1 < argc;) {
    if (strcmp(argv[i], "--pid") == 0) {
      pid_namespace = 1;
      i += 1;
    } else if (strcmp(argv[i], "--ns-pid") == 0 && i + 2 < argc) {
      char* end = NULL;
      ns_pid = strtol(argv[i + 1], &end, 10);
      if (*end != '\0' || ns_pid < 1 || ns_pid > 4194304) {
        errno = EINVAL;
        die("--ns-pid needs a PID:", argv[i + 1]);
      }
      pid_namespace = 1;
      i += 2;
    } else if (strcmp(argv[i], "--bind") == 0) {
      if (nbinds == MAX_BINDS) {
        errno = E2BIG;
        die("too many --bind", NULL);
      }
      if (argv[i + 1][0] != '/') {
        errno = EINVAL;
        die("--bind needs an absolute path:", argv[i + 1]);
      }
      binds[nbinds++] = argv[i + 1];
      i += 2;
    } else {
      break;
    }
  }
  if (argc - i < 2) {
    fprintf(stderr, "usage: in_root [--bind DIR]... [--pid [--ns-pid N]] ROOT PROGRAM [ARG]...\n");
    return 125;
  }
  char root[PATH_MAX];
  if (!realpath(argv[i], root)) die("no root", argv[i]);
  char** program = argv + i + 1;

  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) die("getcwd", NULL);
  int cwd_covered = strcmp(cwd, "/") == 0 || is_under(cwd, root);
  for (int b = 0; b < nbinds && !cwd_covered; ++b) cwd_covered = is_under(cwd, binds[b]);
  if (!cwd_covered) binds[nbinds++] = cwd;

  if (unshare(CLONE_NEWNS | (pid_namespace ? CLONE_NEWPID : 0)) != 0) die("unshare", NULL);
  /* Nothing mounted from here on may reach the host's namespace. */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("cannot make / private", NULL);
  /* pivot_root needs the new root to be a mount point. */
  if (mount(root, root, NULL, MS_BIND | MS_REC, NULL) != 0) die("cannot bind", root);
  for (int b = 0; b < nbinds; ++b) {
    /* The PID namespace's own /proc is mounted by its first process, below. */
    if (pid_namespace && strcmp(binds[b], "/proc") == 0) continue;
    /* A directory under one already bound comes with it (rbind). */
    int inside = 0;
    for (int a = 0; a < b && !inside; ++a) inside = is_under(binds[b], binds[a]);
    if (!inside) bind_into(root, binds[b]);
  }
  if (pid_namespace) {
    /* Only children enter the new PID namespace; the first is its pid 1. */
    const pid_t first = fork();
    if (first < 0) die("fork", NULL);
    if (first > 0) {
      forwarded_to = first;
      signal(SIGTERM, forward);
      signal(SIGINT, forward);
      signal(SIGHUP, forward);
      return wait_status(first);
    }
    /* This process dying (SIGKILL) takes the namespace with it. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) die("prctl", NULL);
    make_mount_point(root, "/proc");
    char proc[PATH_MAX];
    if (snprintf(proc, sizeof proc, "%s/proc", root) >= (int)sizeof proc)
      die("path too long:", root);
    if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
      die("cannot mount proc on", proc);
  }
  if (chdir(root) != 0) die("chdir", root);
  /* pivot_root(".", ".") stacks the old root on the new one; detaching it leaves only the
   * tree. */
  if (syscall(SYS_pivot_root, ".", ".") != 0) die("pivot_root", root);
  if (umount2(".", MNT_DETACH) != 0) die("cannot detach the old root", NULL);
  /* A directory of the tree itself is named as the program will see it. */
  const char* inner_cwd = is_under(cwd, root) && strcmp(root, "/") != 0 ? cwd + strlen(root) : cwd;
  if (chdir(*inner_cwd ? inner_cwd : "/") != 0) die("chdir", cwd);
  if (pid_namespace && ns_pid != 1) {
    set_next_pid((int)ns_pid);
    const pid_t target = fork();
    if (target < 0) die("fork", NULL);
    if (target > 0) {
      /* pid 1: reaps orphans until the program ends. */
      forwarded_to = target;
      signal(SIGTERM, forward);
      signal(SIGINT, forward);
      signal(SIGHUP, forward);
      for (;;) {
        int status = 0;
        const pid_t done = wait(&status);
        if (done == target) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (done < 0 && errno != EINTR) return 125;
      }
    }
    if (getpid() != (pid_t)ns_pid) {
      fprintf(stderr, "in_root: got pid %d in the namespace, not %ld\n", (int)getpid(), ns_pid);
      _exit(125);
    }
  }
  execv(program[0], program);
  die("cannot execute", program[0]);
  return 125;
}
