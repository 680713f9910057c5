// Gzipped results (result.json.gz): read by every command that reads a result, by their magic
// bytes; corrupt, cut short or oversized gzip refused with one line, like any bad input.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.hpp"
#include "core/error.hpp"
#include "core/gzip.hpp"

#if __has_include(<zlib.h>)
#include <zlib.h>
#define GP_TEST_ZLIB 1
#endif

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_all(const fs::path& p, const std::string& data) {
  std::ofstream(p, std::ios::binary) << data;
}

#ifdef GP_TEST_ZLIB
/// `data` as one gzip member.
std::string gzipped(const std::string& data) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}
#endif

class GzipInput : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef GP_TEST_ZLIB
    GTEST_SKIP() << "no zlib.h to write gzip with";
#else
    if (!gzip::available()) GTEST_SKIP() << "this gpuprobe was built without zlib";
    dir_ = test_cli::temp_dir("gzip");
    fs::create_directories(dir_);
    const auto run = dir_ / "run";
    ASSERT_EQ(
        test_cli::gp({"--device", "model:tiny", "--out", run.string(), "run", "latency.shared"})
            .code,
        0);
    plain_ = dir_ / "result.json";
    fs::copy_file(run / "result.json", plain_);
    gz_ = dir_ / "result.json.gz";
    write_all(gz_, gzipped(read_all(plain_)));
#endif
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_, plain_, gz_;
};

TEST_F(GzipInput, ReadsLikeThePlainFile) {
  for (const char* command : {"analyze", "summary"}) {
    const auto a = test_cli::gp({command, plain_.string()});
    const auto b = test_cli::gp({command, gz_.string()});
    EXPECT_EQ(a.code, 0) << command << ": " << a.err;
    EXPECT_EQ(b.code, 0) << command << ": " << b.err;
    EXPECT_EQ(a.out, b.out) << command;
  }
  // Two members (files joined with cat) read as their concatenation.
  const std::string text = read_all(plain_);
  const auto half = text.size() / 2;
  const auto joined = dir_ / "joined.json.gz";
  write_all(joined, gzipped(text.substr(0, half)) + gzipped(text.substr(half)));
  EXPECT_EQ(test_cli::gp({"analyze", joined.string()}).out,
            test_cli::gp({"analyze", plain_.string()}).out);
}

TEST_F(GzipInput, CorruptCutShortOrTrailedGzipIsOneLine) {
  const std::string gz = read_all(gz_);
  std::string corrupt = gz;
  for (std::size_t i = 20; i < 60; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  const auto bad = dir_ / "bad.json.gz";
  write_all(bad, corrupt);
  test_cli::expect_one_line_error(test_cli::gp({"analyze", bad.string()}), "bad.json.gz");
  write_all(bad, gz.substr(0, gz.size() / 2));
  test_cli::expect_one_line_error(test_cli::gp({"analyze", bad.string()}), "cut short");
  write_all(bad, gz.substr(0, gz.size() - 4));  // the length in the trailer missing
  test_cli::expect_one_line_error(test_cli::gp({"analyze", bad.string()}), "cut short");
  write_all(bad, gz + "trailing");
  test_cli::expect_one_line_error(test_cli::gp({"analyze", bad.string()}), "after its gzip");
  write_all(bad, std::string("\x1f\x8b", 2));
  test_cli::expect_one_line_error(test_cli::gp({"report", bad.string()}), "cut short");
  // What it holds must still be a result.
  write_all(bad, gzipped("not json"));
  test_cli::expect_one_line_error(test_cli::gp({"check", bad.string()}), "not valid JSON");
}

TEST_F(GzipInput, InflatingIsBoundedAndNonRegularFilesAreRefused) {
  const std::string zeros = gzipped(std::string(1 << 20, '\0'));  // 1 MiB in about 1 KiB
  EXPECT_EQ(gzip::inflate(zeros, 1 << 20, "z.gz").size(), std::size_t{1} << 20);
  try {
    gzip::inflate(zeros, 4096, "z.gz");
    ADD_FAILURE() << "inflated past the bound";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("inflates to more than 4096 bytes"), std::string::npos)
        << e.what();
  }
  const auto fifo = dir_ / "fifo.json.gz";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  test_cli::expect_one_line_error(test_cli::gp({"analyze", fifo.string()}), "a FIFO");
}

}  // namespace
}  // namespace gpuprobe
