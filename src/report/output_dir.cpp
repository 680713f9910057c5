#include "report/output_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_input.hpp"
#include "core/text_input.hpp"
#include "report/writer.hpp"

namespace gpuprobe::report {
namespace fs = std::filesystem;

namespace {

/// The pid written in an open lock file; 0 when it holds none.
long pid_in(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return 0;
  return std::strtol(buf, nullptr, 10);
}

UsageError locked(const std::string& dir, long pid) {
  return UsageError("output folder " + text_input::quoted(dir) +
                    " is being written by another gpuprobe run (" +
                    (pid > 0 ? "pid " + std::to_string(pid) : std::string("pid unknown")) +
                    "); wait for it to finish or give another --out");
}

bool plain_regular_file(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// A file name a result may name for its own files: one plain component.
bool plain_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos &&
         s.find('\0') == std::string::npos;
}

/// The folder of a result this command reads (replay r.json --out <r's folder>) is not
/// replaced: that would remove the input.
void refuse_input_folder(const std::string& dir, const fs::path& result) {
  if (files::is_input(result.string()))
    throw UsageError("output folder " + text_input::quoted(dir) +
                     " holds this command's input result; give another --out");
}

}  // namespace

long lock_holder(const std::string& dir) {
  const std::string path = (fs::path(dir) / kLockName).string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return 0;
  long pid = 0;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    const long p = pid_in(fd);
    pid = p > 0 ? p : -1;  // held, pid not yet written
  }
  ::close(fd);  // releases the shared lock taken to look
  return pid;
}

void check_result_folder(const std::string& dir) {
  check_writable(dir);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (const long pid = lock_holder(dir)) throw locked(dir, pid);
  bool empty = true;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename() != kLockName) empty = false;
  if (ec)
    throw UsageError("cannot list output folder " + text_input::quoted(dir) + ": " + ec.message());
  if (empty) return;
  const fs::path result = fs::path(dir) / "result.json";
  refuse_input_folder(dir, result);
  if (!fs::exists(result, ec))
    throw UsageError("output folder " + text_input::quoted(dir) +
                     " is not empty and holds no gpuprobe result; give an empty or new folder "
                     "(gpuprobe replaces only its own earlier results)");
  try {
    json_input::load_result(result.string());
  } catch (const UsageError& e) {
    files::forget_input(result.string());
    throw UsageError("output folder " + text_input::quoted(dir) +
                     " holds a result.json gpuprobe cannot read, so it cannot tell which files "
                     "are its own; give an empty or new folder (" +
                     e.what() + ")");
  }
  files::forget_input(result.string());  // read to be replaced, not an input
}

std::vector<fs::path> earlier_result_files(const std::string& dir) {
  std::vector<fs::path> found;
  const fs::path d(dir);
  const fs::path result = d / "result.json";
  if (!plain_regular_file(result)) return found;
  refuse_input_folder(dir, result);
  nlohmann::json r;
  try {
    r = json_input::load_file(result.string(), "result.json written by gpuprobe");
  } catch (const UsageError&) {
    r = nlohmann::json();  // its own name is all that is known
  }
  files::forget_input(result.string());
  std::vector<fs::path> named{result, d / "report.html"};
  // gpuprobe writes FINDINGS.md itself from result schema 2 on (earlier ones were made by hand).
  if (r.is_object() && r.contains("schema_version") && r["schema_version"].is_number_integer() &&
      r["schema_version"].get<long long>() >= 2)
    named.push_back(d / "FINDINGS.md");
  if (r.is_object() && r.contains("experiments") && r["experiments"].is_array())
    for (const auto& e : r["experiments"]) {
      if (!e.is_object()) continue;
      const auto id = e.find("id");
      if (id != e.end() && id->is_string() && plain_name(id->get<std::string>()))
        named.push_back(d / "experiments" / (id->get<std::string>() + ".json"));
      const auto curves = e.find("curves");
      if (curves == e.end() || !curves->is_array()) continue;
      for (const auto& c : *curves) {
        if (!c.is_object() || !c.contains("file") || !c["file"].is_string()) continue;
        const std::string f = c["file"].get<std::string>();
        if (plain_name(f) && f.size() > 4 && f.compare(f.size() - 4, 4, ".csv") == 0)
          named.push_back(d / f);
      }
    }
  for (const auto& p : named)
    if (plain_regular_file(p) && std::find(found.begin(), found.end(), p) == found.end())
      found.push_back(p);
  return found;
}

OutputLock::OutputLock(const std::string& dir) : path_((fs::path(dir) / kLockName).string()) {
  fs::create_directories(dir);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
      throw UsageError("cannot lock output folder " + text_input::quoted(dir) + " (" +
                       text_input::quoted(path_) + ": " + std::strerror(errno) + ")");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      const long pid = pid_in(fd);
      ::close(fd);
      if (e == EWOULDBLOCK) throw locked(dir, pid);
      throw UsageError("cannot lock output folder " + text_input::quoted(dir) + ": " +
                       std::strerror(e));
    }
    // Its holder may have removed the file between our open and flock: hold the one on disk.
    struct stat held {
    }, now{};
    if (::fstat(fd, &held) == 0 && ::stat(path_.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // The lock holds without the pid; a second run then says "pid unknown".
      }
      fd_ = fd;
      return;
    }
    ::close(fd);
  }
  throw UsageError("cannot lock output folder " + text_input::quoted(dir) +
                   ": its lock file keeps changing");
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // before close: a run waiting sees the file gone and makes its own
  ::close(fd_);
}

}  // namespace gpuprobe::report
