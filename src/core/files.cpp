#include "core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "core/text_input.hpp"

namespace gpuprobe::files {
namespace {

std::mutex& inputs_mutex() {
  static std::mutex m;
  return m;
}
std::set<std::pair<dev_t, ino_t>>& inputs() {
  static std::set<std::pair<dev_t, ino_t>> s;
  return s;
}

std::string errno_reason(int e) {
  switch (e) {
    case ENOENT:
      return "does not exist";
    case ELOOP:
      return "is a loop of symbolic links (or too many of them)";
    case ENAMETOOLONG:
      return "has a name too long for the file system";
    case ENOTDIR:
      return "has a part that is not a directory";
    case EACCES:
      return "cannot be reached (permission denied)";
    default:
      return std::strerror(e);
  }
}

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

std::string gib(std::uintmax_t bytes) { return std::to_string(bytes >> 30) + " GiB"; }

/// Checks the file behind an open descriptor: regular and not too large.
void check_regular(const struct stat& st, const std::string& path, const std::string& what) {
  if (S_ISDIR(st.st_mode))
    throw UsageError(text_input::quoted(path) + " is a directory; give the " + what +
                     " file itself");
  if (!S_ISREG(st.st_mode))
    throw UsageError(text_input::quoted(path) + " is " + kind_of(st.st_mode) +
                     ", not a regular file; give a " + what);
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxInputBytes)
    throw UsageError(text_input::quoted(path) + " is larger than " + gib(kMaxInputBytes) +
                     " (the most " + "gpuprobe reads); give a " + what);
}

}  // namespace

std::string stat_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 || errno == ENOENT) return "";
  return errno_reason(errno);
}

std::string read_input(const std::string& path, const std::string& what) {
  if (path.empty()) throw UsageError("the path of " + what + " is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw UsageError("cannot read " + text_input::quoted(path) + ": it " + errno_reason(errno) +
                     "; give a " + what);
  check_regular(st, path, what);  // before open: opening a FIFO without a writer blocks
  // O_NONBLOCK: were it swapped for a FIFO since, open returns at once and fstat says so.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw UsageError("cannot read " + text_input::quoted(path) + ": " + errno_reason(errno) +
                     "; give a " + what);
  std::string text;
  try {
    if (::fstat(fd, &st) != 0)
      throw UsageError("cannot read " + text_input::quoted(path) + ": " + errno_reason(errno));
    check_regular(st, path, what);
    text.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        throw UsageError("cannot read " + text_input::quoted(path) + ": " + errno_reason(errno));
      if (n == 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > kMaxInputBytes)  // a file that grows while it is read
        throw UsageError(text_input::quoted(path) + " is larger than " + gib(kMaxInputBytes) +
                         " (the most gpuprobe reads); give a " + what);
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  std::lock_guard<std::mutex> lock(inputs_mutex());
  inputs().insert({st.st_dev, st.st_ino});
  return text;
}

void note_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  std::lock_guard<std::mutex> lock(inputs_mutex());
  inputs().insert({st.st_dev, st.st_ino});
}

bool is_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  std::lock_guard<std::mutex> lock(inputs_mutex());
  return inputs().count({st.st_dev, st.st_ino}) > 0;
}

void forget_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  std::lock_guard<std::mutex> lock(inputs_mutex());
  inputs().erase({st.st_dev, st.st_ino});
}

void forget_inputs() {
  std::lock_guard<std::mutex> lock(inputs_mutex());
  inputs().clear();
}

void check_output_target(const std::filesystem::path& path) {
  const std::string p = path.string();
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) {
    if (errno == ENOENT) return;  // a new file
    throw UsageError("cannot write " + text_input::quoted(p) + ": it " + errno_reason(errno));
  }
  if (S_ISLNK(st.st_mode))
    throw UsageError("will not write " + text_input::quoted(p) +
                     ": it is a symbolic link (gpuprobe writes no file through a link); give "
                     "another path or remove the link");
  if (!S_ISREG(st.st_mode))
    throw UsageError("will not write " + text_input::quoted(p) + ": it is " + kind_of(st.st_mode) +
                     "; gpuprobe replaces only regular files");
  {
    std::lock_guard<std::mutex> lock(inputs_mutex());
    if (inputs().count({st.st_dev, st.st_ino}))
      throw UsageError("will not write " + text_input::quoted(p) +
                       ": it is an input of this command; give another path for the output");
  }
  if ((st.st_mode & 0222) == 0)
    throw UsageError("will not write " + text_input::quoted(p) +
                     ": it is read-only; make it writable or give another path");
}

std::string describe(const std::filesystem::filesystem_error& e) {
  std::string where = e.path1().empty() ? std::string() : text_input::quoted(e.path1().string());
  if (!e.path2().empty()) where += " -> " + text_input::quoted(e.path2().string());
  const int code = e.code().category() == std::generic_category() ||
                           e.code().category() == std::system_category()
                       ? e.code().value()
                       : 0;
  const std::string reason = code ? errno_reason(code) : e.code().message();
  return (where.empty() ? std::string("a file") : where) + ": " + reason;
}

}  // namespace gpuprobe::files
