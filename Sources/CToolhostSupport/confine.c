#define _GNU_SOURCE
#include "CToolhostSupport.h"
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#endif

/* Landlock's kernel interface, written out here: Debian 12's headers (Linux 6.1) lack the network and scope parts,
   and the interface is stable, versioned by its ABI number. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REFER (1ULL << 13)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
};

/* Every file-system right the kernel of this ABI knows: ABI 1 has 13, 2 adds REFER, 3 TRUNCATE, 5 IOCTL_DEV. */
static uint64_t fs_rights(int abi) {
  uint64_t all = (1ULL << 13) - 1;
  if (abi >= 2) all |= LL_FS_REFER;
  if (abi >= 3) all |= LL_FS_TRUNCATE;
  if (abi >= 5) all |= LL_FS_IOCTL_DEV;
  return all;
}

/* The rights a rule on a file (not a folder) may carry. */
static uint64_t file_rights(int abi) {
  return fs_rights(abi) & (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV);
}

int toolhost_drop_capabilities(void) {
#if defined(__linux__)
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -1;
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  return (int)syscall(SYS_capset, &header, data);
#else
  errno = ENOSYS;
  return -1;
#endif
}

int toolhost_landlock_abi(void) {
#if defined(__linux__)
  return (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
#else
  errno = ENOSYS;
  return -1;
#endif
}

int toolhost_landlock_ruleset(int abi, int handle_tcp, int scope) {
#if defined(__linux__)
  struct ll_ruleset_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.handled_access_fs = fs_rights(abi);
  size_t size = offsetof(struct ll_ruleset_attr, handled_access_net);
  if (handle_tcp) {
    if (abi < 4) {
      errno = EOPNOTSUPP;
      return -1;
    }
    attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
  }
  if (abi >= 4) size = offsetof(struct ll_ruleset_attr, scoped);
  if (scope && abi >= 6) {
    attr.scoped = LL_SCOPE_SIGNAL | (scope > 1 ? LL_SCOPE_ABSTRACT_UNIX_SOCKET : 0);
    size = sizeof attr;
  }
  return (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
#else
  (void)abi;
  (void)handle_tcp;
  (void)scope;
  errno = ENOSYS;
  return -1;
#endif
}

int toolhost_landlock_allow_path(int ruleset, int abi, const char *path, int write) {
#if defined(__linux__)
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat info;
  if (fstat(fd, &info) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  uint64_t rights = write ? fs_rights(abi) : (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR);
  /* Device files (/dev/null and the like) may also be written and their ioctls used: they hold nothing. */
  if (S_ISCHR(info.st_mode)) rights |= LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV;
  if (!S_ISDIR(info.st_mode)) rights &= file_rights(abi);
  struct ll_path_beneath_attr rule = {rights, fd};
  int r = (int)syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
  int e = errno;
  close(fd);
  errno = e;
  return r;
#else
  (void)ruleset;
  (void)abi;
  (void)path;
  (void)write;
  errno = ENOSYS;
  return -1;
#endif
}

int toolhost_landlock_allow_tcp_port(int ruleset, unsigned port) {
#if defined(__linux__)
  struct ll_net_port_attr rule = {LL_NET_CONNECT_TCP, port};
  return (int)syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &rule, 0);
#else
  (void)ruleset;
  (void)port;
  errno = ENOSYS;
  return -1;
#endif
}

#if defined(__linux__)
#if defined(__x86_64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#endif

int toolhost_socket_filter_supported(void) {
#if defined(__linux__) && defined(THIS_AUDIT_ARCH)
  /* SECCOMP_GET_ACTION_AVAIL answers whether the kernel has filters (3.17+), changing nothing. */
  unsigned action = SECCOMP_RET_ERRNO;
  return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0 ? 1 : 0;
#else
  return 0;
#endif
}

#if defined(__linux__) && defined(THIS_AUDIT_ARCH)
/* A filter program under construction: jumps may name a label (one of the returns at its end) in jt or jf, and
   finish() turns labels into offsets. */
enum { L_ALLOW = 250, L_EACCES, L_EPERM, L_KILL };
struct filter_builder {
  struct sock_filter code[96];
  unsigned short count;
};

static void put(struct filter_builder *b, struct sock_filter instruction) { b->code[b->count++] = instruction; }

static void finish(struct filter_builder *b) {
  unsigned short base = b->count;
  put(b, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  put(b, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES));
  put(b, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
  put(b, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  for (unsigned short i = 0; i < base; i++) {
    struct sock_filter *f = &b->code[i];
    if (BPF_CLASS(f->code) != BPF_JMP || BPF_OP(f->code) == BPF_JA) continue;
    if (f->jt >= L_ALLOW) f->jt = (unsigned char)(base + (f->jt - L_ALLOW) - (i + 1));
    if (f->jf >= L_ALLOW) f->jf = (unsigned char)(base + (f->jf - L_ALLOW) - (i + 1));
  }
}

#define ARG(n) offsetof(struct seccomp_data, args[n])
#define LOAD(offset) put(&b, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (offset)))
#define IF_EQ(k, t, f) put(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f)))
#define IF_SET(k, t, f) put(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (k), (t), (f)))
#define RETURN(label) IF_EQ(0, label, label)

/* The system calls that change a file's mode or owner, which Landlock does not govern. */
static const unsigned ownership_calls[] = {
#ifdef SYS_chmod
  SYS_chmod,
#endif
#ifdef SYS_chown
  SYS_chown,
#endif
#ifdef SYS_lchown
  SYS_lchown,
#endif
  SYS_fchmod, SYS_fchmodat, SYS_fchown, SYS_fchownat,
  452 /* fchmodat2 */,
};
#endif

int toolhost_install_socket_filter(int mode) {
#if defined(__linux__) && defined(THIS_AUDIT_ARCH)
  /* Every mode: chmod(2), chown(2) and their kin fail with EPERM (Landlock governs reading and writing, not a file's
     mode or owner). Mode 1: socket(2) and io_uring_setup(2) (whose rings could open sockets without the call) fail
     with EACCES. Mode 2: Internet sockets only, TCP or UDP by family, type and protocol (no MPTCP, SCTP or raw
     socket, which Landlock's TCP rules would not see), no listen(2) and no TCP Fast Open (a sendto(2) with
     MSG_FASTOPEN connects without connect(2)). A process of another architecture (a 32-bit program, with
     socketcall(2)) is killed; on x86-64 the x32 numbers fail with EPERM. */
  struct filter_builder b = {.count = 0};
  LOAD(offsetof(struct seccomp_data, arch));
  IF_EQ(THIS_AUDIT_ARCH, 0, L_KILL);
  LOAD(offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
  put(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, L_EPERM, 0));
#endif
  for (size_t i = 0; i < sizeof ownership_calls / sizeof ownership_calls[0]; i++) IF_EQ(ownership_calls[i], L_EPERM, 0);
  if (mode == 1 || mode == 2) IF_EQ(SYS_io_uring_setup, L_EACCES, 0);
  if (mode == 1) IF_EQ(SYS_socket, L_EACCES, 0);
  if (mode == 2) {
    IF_EQ(SYS_listen, L_EACCES, 0);
    /* The flags are the fourth argument of sendto(2) and sendmmsg(2), the third of sendmsg(2). */
    IF_EQ(SYS_sendto, 5, 0);
    IF_EQ(SYS_sendmmsg, 4, 0);
    IF_EQ(SYS_sendmsg, 5, 0);
    IF_EQ(SYS_setsockopt, 6, 0);
    IF_EQ(SYS_socket, 9, 0);
    RETURN(L_ALLOW);
    LOAD(ARG(3));                                   /* sendto, sendmmsg */
    IF_SET(MSG_FASTOPEN, L_EACCES, L_ALLOW);
    LOAD(ARG(2));                                   /* sendmsg */
    IF_SET(MSG_FASTOPEN, L_EACCES, L_ALLOW);
    LOAD(ARG(1));                                   /* setsockopt: TCP_FASTOPEN_CONNECT */
    IF_EQ(IPPROTO_TCP, 0, L_ALLOW);
    LOAD(ARG(2));
    IF_EQ(30 /* TCP_FASTOPEN_CONNECT */, L_EACCES, L_ALLOW);
    LOAD(ARG(0));                                   /* socket: the family, */
    IF_EQ(AF_INET, 1, 0);
    IF_EQ(AF_INET6, 0, L_EACCES);
    LOAD(ARG(1));                                   /* the type without its flags, */
    put(&b, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xF));
    IF_EQ(SOCK_STREAM, 1, 0);
    IF_EQ(SOCK_DGRAM, 3, L_EACCES);
    LOAD(ARG(2));                                   /* and the protocol. */
    IF_EQ(0, L_ALLOW, 0);
    IF_EQ(IPPROTO_TCP, L_ALLOW, L_EACCES);
    LOAD(ARG(2));
    IF_EQ(0, L_ALLOW, 0);
    IF_EQ(IPPROTO_UDP, L_ALLOW, L_EACCES);
  }
  RETURN(L_ALLOW);
  finish(&b);
  struct sock_fprog program = {b.count, b.code};
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program);
#else
  errno = ENOSYS;
  return -1;
#endif
}
