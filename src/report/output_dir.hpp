#pragma once
// The output folder of a command: what may be written into it, what an earlier gpuprobe result
// there leaves behind, and the lock that keeps two runs out of one folder.
//
// The rule: a command that writes a whole result (run, characterize, repeat's runs, fleet's
// GPUs, replay) writes into a folder that does not exist, is empty, or holds an earlier gpuprobe
// result; the earlier result's own files (result.json, experiments/<id>.json, the CSVs it names,
// report.html) are removed first, and nothing gpuprobe did not make is touched. A folder that
// holds other things and no result is refused. Commands that write named files (report.html,
// repeat.json, fleet.json) replace only those.
#include <filesystem>
#include <string>
#include <vector>

namespace gpuprobe::report {

/// The name of the lock file inside an output folder.
inline constexpr const char* kLockName = ".gpuprobe.lock";

/// Throws UsageError (one line) when a whole result may not be written into `dir`: not
/// writable (check_writable), not empty and without a gpuprobe result, holding a result.json
/// gpuprobe cannot read, or locked by another live run. Creates nothing.
void check_result_folder(const std::string& dir);

/// The files an earlier gpuprobe result in `dir` made that are there now (regular files only):
/// result.json, experiments/<id>.json, the CSVs its curves name, report.html.
std::vector<std::filesystem::path> earlier_result_files(const std::string& dir);

/// The pid in `dir`'s lock file when a live process holds the lock; 0 otherwise.
long lock_holder(const std::string& dir);

/// Holds `dir`/.gpuprobe.lock (flock(2), this process's pid inside) from construction to
/// destruction, creating `dir` when needed. Throws UsageError naming the other run's pid when a
/// live run holds it. A lock its run left behind (killed) is not held and is taken over.
class OutputLock {
 public:
  explicit OutputLock(const std::string& dir);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace gpuprobe::report
