// The input boundary: one parser for integer lists and seeds, messages kept to one line, inputs
// that are not regular files refused before they are opened, outputs that would replace an
// input, a link or a device refused, and the output folder's lock.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text_input.hpp"
#include "report/output_dir.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  auto p = fs::temp_directory_path() /
           ("gpuprobe_test_safety_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

TEST(TextInput, IntegerListsRefuseEmptyElementsAndNonIntegers) {
  EXPECT_EQ(text_input::parse_int_list("1,2,8", "--strides"), (std::vector<int>{1, 2, 8}));
  EXPECT_EQ(text_input::parse_int_list("-1,50", "--carveouts"), (std::vector<int>{-1, 50}));
  for (const char* bad : {"", "1,,2", "1,", ",1", ",", "x", "1.5", "99999999999", "+1", "1 "})
    EXPECT_THROW(text_input::parse_int_list(bad, "--strides"), UsageError) << bad;
  EXPECT_THROW(text_input::parse_int_list("65", "--strides", 1, 64), UsageError);
  EXPECT_THROW(text_input::split_list("ca,,cg", "--loads"), UsageError);
}

TEST(TextInput, SeedsDoNotWrap) {
  EXPECT_EQ(text_input::parse_seed("0", "--seed"), 0u);
  EXPECT_EQ(text_input::parse_seed("18446744073709551615", "--seed"), ~std::uint64_t{0});
  for (const char* bad : {"-1", "18446744073709551616", "1e3", "", " 1", "0x10", "abc"})
    EXPECT_THROW(text_input::parse_seed(bad, "--seed"), UsageError) << bad;
}

TEST(TextInput, QuotedInputIsOneLine) {
  EXPECT_EQ(text_input::quoted("a\nb\tc"), "'a\\nb\\tc'");
  EXPECT_EQ(text_input::escape_controls(std::string("x\x01y", 3)), "x\\x01y");
  EXPECT_EQ(text_input::quoted(std::string(300, 'z')).size(), 205u);
}

TEST(Files, InputsMustBeRegularFiles) {
  const auto d = fresh_dir("inputs");
  const auto fifo = d / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(files::read_input(fifo.string(), "result"), UsageError);  // and does not block
  EXPECT_THROW(files::read_input("/dev/zero", "result"), UsageError);
  EXPECT_THROW(files::read_input(d.string(), "result"), UsageError);
  fs::create_symlink("loop", d / "loop");
  EXPECT_THROW(files::read_input((d / "loop").string(), "result"), UsageError);
  std::ofstream(d / "ok.json") << "{}";
  EXPECT_EQ(files::read_input((d / "ok.json").string(), "result"), "{}");
  fs::remove_all(d);
}

TEST(Files, OutputsReplaceNoInputLinkOrDevice) {
  files::forget_inputs();
  const auto d = fresh_dir("outputs");
  std::ofstream(d / "in.json") << "{}";
  std::ofstream(d / "other.json") << "{}";
  fs::create_symlink("in.json", d / "link.json");
  EXPECT_NO_THROW(files::check_output_target(d / "other.json"));
  EXPECT_NO_THROW(files::check_output_target(d / "new.json"));
  files::read_input((d / "link.json").string(), "result");  // the input, through a link
  EXPECT_THROW(files::check_output_target(d / "in.json"), UsageError);
  EXPECT_THROW(files::check_output_target(d / "link.json"), UsageError);
  EXPECT_THROW(files::check_output_target("/dev/null"), UsageError);
  EXPECT_THROW(files::check_output_target(d), UsageError);
  fs::permissions(d / "other.json", fs::perms::owner_read);
  EXPECT_THROW(files::check_output_target(d / "other.json"), UsageError);
  files::forget_inputs();
  EXPECT_NO_THROW(files::check_output_target(d / "in.json"));
  fs::remove_all(d);
}

TEST(OutputDir, ALockedFolderIsRefusedAndReleased) {
  const auto d = fresh_dir("lock");
  {
    const report::OutputLock held(d.string());
    EXPECT_TRUE(fs::exists(d / report::kLockName));
    EXPECT_EQ(report::lock_holder(d.string()), static_cast<long>(::getpid()));
    EXPECT_THROW(report::OutputLock second(d.string()), UsageError);
    EXPECT_THROW(report::check_result_folder(d.string()), UsageError);
  }
  EXPECT_FALSE(fs::exists(d / report::kLockName));
  std::ofstream(d / report::kLockName) << "999999999\n";  // left by a killed run
  EXPECT_EQ(report::lock_holder(d.string()), 0);
  EXPECT_NO_THROW(report::check_result_folder(d.string()));  // the stale lock does not count
  EXPECT_NO_THROW(report::OutputLock taken(d.string()));
  fs::remove_all(d);
}

TEST(OutputDir, OnlyEmptyFoldersOrEarlierResults) {
  const auto d = fresh_dir("folder");
  EXPECT_NO_THROW(report::check_result_folder(d.string()));
  std::ofstream(d / "notes.txt") << "mine";
  EXPECT_THROW(report::check_result_folder(d.string()), UsageError);
  fs::remove_all(d);
}

}  // namespace
}  // namespace gpuprobe
