// The pattern experiments' table curves, rebuilt from the recorded H200 samples, match the CSV
// files the run wrote (results/h200): the curve code gives the same columns and cells.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "probes/bandwidth/bandwidth_common.hpp"

namespace gpuprobe::probes::bwhost {
namespace {

const json& recorded(const std::string& id) {
  static const json r = [] {
    std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json");
    return json::parse(in);
  }();
  for (const auto& e : r.at("experiments"))
    if (e.at("id") == id) return e;
  throw std::runtime_error("not recorded: " + id);
}

std::vector<std::vector<std::string>> read_csv(const std::string& file) {
  std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/" + file);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

void expect_matches(const Curve& c, const std::string& id) {
  const auto csv = read_csv(id + ".table.csv");
  ASSERT_FALSE(csv.empty()) << id;
  EXPECT_EQ(c.columns, csv[0]) << id;
  ASSERT_EQ(c.rows.size() + 1, csv.size()) << id;
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    ASSERT_EQ(c.rows[i].size(), csv[i + 1].size()) << id << " row " << i;
    for (std::size_t k = 0; k < c.rows[i].size(); ++k) {
      const json& v = c.rows[i][k];
      const std::string& want = csv[i + 1][k];
      if (v.is_string()) {
        EXPECT_EQ(v.get<std::string>(), want) << id << " row " << i << " " << c.columns[k];
      } else {
        const double x = v.get<double>(), y = std::stod(want);
        EXPECT_NEAR(x, y, 1e-8 * std::max(1.0, std::fabs(y)))
            << id << " row " << i << " " << c.columns[k];
      }
    }
  }
}

TEST(BandwidthTables, RebuildTheRecordedCsv) {
  for (const char* id :
       {"bandwidth.stride", "bandwidth.offset", "bandwidth.layout", "bandwidth.transpose"}) {
    const json& e = recorded(id);
    const json& rows = e.at("samples").at("rows");
    const double peak = e.at("parameters").at("peak_gb_s").get<double>();
    const std::string s = id;
    const Curve c = s == "bandwidth.stride"   ? stride_table(rows, peak)
                    : s == "bandwidth.offset" ? offset_table(rows, peak)
                    : s == "bandwidth.layout" ? layout_table(rows, peak)
                                              : transpose_table(rows, peak);
    EXPECT_EQ(c.name, "table");
    expect_matches(c, id);
  }
}

}  // namespace
}  // namespace gpuprobe::probes::bwhost

namespace gpuprobe::probes::bwhost {
namespace {

// The offset rows' expected XOR is the previous row's shifted: it must equal the full XOR of the
// shifted range whichever way it moves, and by however much (a wrong end would pass a read that
// missed or repeated elements).
TEST(BandwidthHostXor, ShiftedRangeEqualsTheFullXor) {
  const std::uint32_t seed = 4242;
  const std::uint64_t m = 100000;
  for (std::uint64_t lo : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{33}}) {
    const std::uint32_t x = host_xor(lo, 1, m, seed);
    for (std::uint64_t to :
         {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{32},
          std::uint64_t{33}, std::uint64_t{99999}, std::uint64_t{250000}})
      EXPECT_EQ(host_xor_shifted(x, lo, to, m, seed), host_xor(to, 1, m, seed)) << lo << " " << to;
  }
  EXPECT_NE(host_xor(1, 1, m, seed), host_xor(0, 1, m, seed));
}

}  // namespace
}  // namespace gpuprobe::probes::bwhost
