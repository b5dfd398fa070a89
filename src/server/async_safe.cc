#include "server/async_safe.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

namespace muster::server::async_safe {
namespace {

// strerror may allocate (locales), so the common failures are spelled out here.
const char* ErrorName(int error) {
  switch (error) {
    case ENOENT:
      return "no such file or directory";
    case EACCES:
      return "permission denied";
    case EPERM:
      return "operation not permitted";
    case ENOEXEC:
      return "exec format error";
    case ENOTDIR:
      return "not a directory";
    case EISDIR:
      return "is a directory";
    case ENOMEM:
      return "out of memory";
    case E2BIG:
      return "argument list too long";
    case EAGAIN:
      return "resource temporarily unavailable";
    case EINVAL:
      return "invalid argument";
    case EBUSY:
      return "device or resource busy";
    case EROFS:
      return "read-only file system";
    case ENOSPC:
      return "no space left on device";
    default:
      return "error";
  }
}

// Sends SIGKILL to every pid listed in `path`; returns how many were listed.
int KillListed(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[4096];
  char carry[24];
  size_t carry_len = 0;
  int listed = 0;
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      char c = buf[i];
      if (c >= '0' && c <= '9') {
        if (carry_len < sizeof(carry) - 1) carry[carry_len++] = c;
        continue;
      }
      if (carry_len > 0) {
        const char* p = carry;
        long long pid = ParseInt(&p, carry + carry_len);
        if (pid > 1) ::kill(static_cast<pid_t>(pid), SIGKILL);
        ++listed;
        carry_len = 0;
      }
    }
  }
  if (carry_len > 0) {
    const char* p = carry;
    long long pid = ParseInt(&p, carry + carry_len);
    if (pid > 1) ::kill(static_cast<pid_t>(pid), SIGKILL);
    ++listed;
  }
  ::close(fd);
  return listed;
}

}  // namespace

size_t Strlen(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void WriteString(int fd, const char* s) { WriteAll(fd, s, Strlen(s)); }

void AppendInt(char* buf, size_t* len, long long value) {
  char digits[21];
  size_t n = 0;
  unsigned long long magnitude = value < 0 ? 0ull - static_cast<unsigned long long>(value)
                                           : static_cast<unsigned long long>(value);
  do {
    digits[n++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  if (value < 0) buf[(*len)++] = '-';
  while (n > 0) buf[(*len)++] = digits[--n];
}

void WriteFailure(int fd, const char* what, const char* subject, int error) {
  WriteString(fd, "muster: ");
  WriteString(fd, what);
  WriteString(fd, " ");
  WriteString(fd, subject);
  WriteString(fd, ": ");
  WriteString(fd, ErrorName(error));
  char buf[40] = " (errno ";
  size_t len = Strlen(buf);
  AppendInt(buf, &len, error);
  buf[len++] = ')';
  buf[len++] = '\n';
  WriteAll(fd, buf, len);
}

int WriteFile(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int error = 0;
  size_t size = Strlen(text);
  while (true) {
    ssize_t n = ::write(fd, text, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    break;
  }
  ::close(fd);
  return error;
}

long long ParseInt(const char** p, const char* end) {
  const char* s = *p;
  if (s >= end || *s < '0' || *s > '9') return -1;
  long long v = 0;
  while (s < end && *s >= '0' && *s <= '9') {
    if (v < (1ll << 60)) v = v * 10 + (*s - '0');
    ++s;
  }
  *p = s;
  return v;
}

bool KillCgroup(const char* const* procs_files, int count, const char* kill_file, int rounds) {
  const struct timespec tick = {0, 10 * 1000 * 1000};
  for (int round = 0; round < rounds; ++round) {
    if (kill_file != nullptr && kill_file[0] != '\0') WriteFile(kill_file, "1");
    int listed = 0;
    for (int i = 0; i < count; ++i) listed += KillListed(procs_files[i]);
    if (listed == 0) return true;
    ::nanosleep(&tick, nullptr);
  }
  return false;
}

}  // namespace muster::server::async_safe
