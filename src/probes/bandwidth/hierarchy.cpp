// bandwidth.hierarchy: register file, shared memory, L1, L2 and DRAM read bandwidth beside each
// level's latency.
#include "core/confidence.hpp"
#include "core/finding_names.hpp"
#include "core/samples.hpp"
#include "measure/search.hpp"
#include "probes/bandwidth/sweep_rig.hpp"

namespace gpuprobe::probes::bandwidth_rig {
namespace {

// ---------------------------------------------------------------------------------------------
// bandwidth.hierarchy

/// The L1 or L2 point a finding is made from: the confirmation of the search's winner; for
/// older records the best verified variant, or their single point. A failed confirmation is
/// null, its reason appended to `failed`.
const RigPoint* chosen_point(const HierarchyMeasured& measured, const std::string& level,
                             std::string& failed) {
  const bool l1 = level == "l1";
  const auto& variants = l1 ? measured.l1_variants : measured.l2_variants;
  const auto& confirmation = l1 ? measured.l1_confirmation : measured.l2_confirmation;
  if (!variants) return l1 ? &*measured.l1 : &*measured.l2;  // HierarchySamples::check
  if (confirmation) {
    if (confirmation->status.value_or("") == "passed") return &*confirmation;
    failed += (failed.empty() ? "" : "; ") + level + " winner (kernel " +
              confirmation->variant.value_or("?") +
              ") failed its confirmation: " + confirmation->reason.value_or("?");
    return nullptr;
  }
  const int best = bwsweep::best_variant(*variants);
  if (best < 0)
    throw VerificationError("bandwidth.hierarchy: no verified " + level + " kernel variant");
  return &(*variants)[static_cast<std::size_t>(best)];
}

/// The table of bandwidth and latency per level, with the latencies from earlier findings.
struct HierarchyTable {
  const std::map<std::string, PriorFinding>& prior;  ///< earlier experiments' findings by name
  Curve curve{"table",
              {"level", "bandwidth_b_per_clk_per_sm", "bandwidth_gb_s_total", "bandwidth_source",
               "latency_cycles", "latency_ns", "latency_source", "note"},
              {}};

  const PriorFinding* prior_finding(const FindingKey& key) const {
    const auto it = prior.find(key.name);
    return it == prior.end() ? nullptr : &it->second;
  }
  void add_latency_cells(const FindingKey& key, std::vector<json>& row) const {
    const std::string name = key.name;
    if (const PriorFinding* f = prior_finding(key)) {
      row.push_back(f->value);
      row.push_back(f->value_ns ? json(*f->value_ns) : json(""));
      row.push_back(name);
    } else {
      row.push_back("");
      row.push_back("");
      row.push_back(name + " absent (run the latency family first)");
    }
  }
  void add_measured_row(const std::string& level, const RigPoint* p, const FindingKey& latency,
                        const std::string& note) {
    if (!p) {
      std::vector<json> row{level, "", "", "confirmation failed: not reported"};
      add_latency_cells(latency, row);
      row.push_back(note);
      curve.rows.push_back(row);
      return;
    }
    const std::string variant = p->variant ? "kernel " + *p->variant + ", " : "";
    std::vector<json> row{
        level, RigPoint::median_of(p->bytes_per_clk_per_sm), RigPoint::median_of(p->gb_s),
        "measured here (" + variant + p->load.value_or("") + ", " +
            units::format_bytes(*p->working_set_bytes) + (level == "l1" ? " per SM)" : ")")};
    add_latency_cells(latency, row);
    row.push_back(note);
    curve.rows.push_back(row);
  }
  /// Shared memory: from smem.bandwidth only.
  void add_shared_row() {
    const std::string smem = finding::kSmemBandwidth.name;
    std::vector<json> row{"shared"};
    const PriorFinding* f = prior_finding(finding::kSmemBandwidth);
    if (f) {
      row.push_back(f->value);
      row.push_back(f->total_tb_per_s ? json(*f->total_tb_per_s * 1e3) : json(""));
      row.push_back(smem);
    } else {
      row.insert(row.end(), {"", "", smem + " absent (run the compute family first)"});
    }
    add_latency_cells(finding::kSharedLatency, row);
    row.push_back(f ? "" : "shared-memory bandwidth not measured here");
    curve.rows.push_back(row);
  }
};

/// The register file's row and its read-bandwidth finding, from register-only FFMA throughput.
void add_register_row_and_finding(HierarchyTable& table, const RigPoint& p, ExperimentResult& r) {
  const double ffma = RigPoint::median_of(p.bytes_per_clk_per_sm);  // lane FFMA/clk/SM
  const double gops = RigPoint::median_of(p.gb_s);                  // lane FFMA per ns
  std::vector<json> row{"register", ffma * bwsweep::kRegisterBytesReadPerFfma,
                        gops * bwsweep::kRegisterBytesReadPerFfma,
                        "measured here (register-only FFMA, 12 B read per lane FFMA)"};
  table.add_latency_cells(finding::kComputeFfmaLatency, row);
  char note[200];
  std::snprintf(note, sizeof note,
                "%.6g lane FFMA/clk/SM; latency column is the FFMA dependent-issue latency "
                "(a register operand has no load latency of its own)",
                ffma);
  row.push_back(note);
  table.curve.rows.push_back(row);
  Finding f{"register.read_bandwidth",
            ffma * bwsweep::kRegisterBytesReadPerFfma,
            "B/clk/SM",
            point_confidence(p),
            "register-only FFMA throughput x 12 B (3 source operands x 4 B)",
            json::object()};
  f.extra["ffma_per_clk_per_sm"] = ffma;
  f.extra["gb_s_total"] = gops * bwsweep::kRegisterBytesReadPerFfma;
  f.extra["write_b_per_clk_per_sm"] = ffma * bwsweep::kRegisterBytesWrittenPerFfma;
  r.findings.push_back(f);
}

/// How the chosen point `p` (value `v`) stands among the kernel variants `rows` its level
/// searched.
void describe_variants(Finding& f, const RigPoint& p, const std::vector<RigPoint>& rows, double v) {
  int verified = 0;
  json medians = json::object(), failed = json::object();
  for (const auto& row : rows) {
    const std::string& name = *row.variant;
    if (row.verified) {
      ++verified;
      medians[name] = row.primary_median();
    } else {
      failed[name] = row.error.value_or("not verified");
    }
  }
  const bool confirmed = p.winner_row.has_value();
  if (confirmed) {
    f.extra["search_median"] = *p.search_value;
    f.extra["confirmation_repetitions"] = p.measurement->n.value_or(0);
  }
  f.method = (confirmed ? "confirmation pass (fresh buffers and data) of the best of "
                        : "best median over ") +
             std::to_string(verified) + " verified of " + std::to_string(rows.size()) +
             " kernel variants (kernel " + *p.variant + "): " + f.method;
  f.extra["variant"] = *p.variant;
  f.extra["variant_fold"] = p.fold.value_or("");
  f.extra["variant_threads_per_block"] = p.threads_per_block.value_or(0);
  f.extra["variant_blocks_per_sm"] = p.blocks_per_sm.value_or(0);
  f.extra["variant_unroll"] = p.unroll.value_or(0);
  f.extra["variants_verified"] = verified;
  f.extra["variant_medians"] = medians;
  f.extra["variants_failed"] = failed;
  if (!rows.empty() && rows[0].verified) {
    const double base = rows[0].primary_median();
    f.extra["baseline_variant"] = *rows[0].variant;
    f.extra["baseline_median"] = base;
    if (base > 0) f.extra["gain_over_baseline_percent"] = (v / base - 1.0) * 100.0;
  }
}

/// One measured level's finding: B/clk/SM (`per_sm`) or GB/s at its chosen point, the variants
/// it was chosen from (`variants`, when its level searched them) beside it.
void add_level_finding(ExperimentResult& r, const std::string& name, const RigPoint* p,
                       const std::optional<std::vector<RigPoint>>& variants, bool per_sm) {
  if (!p) return;  // a failed confirmation: no finding
  if (p->winner_row && p->measurement->n.value_or(0) < 3) {
    // Too few samples for any precision: no evidence, no finding.
    r.statistics["findings_not_emitted"].push_back(name +
                                                   ": the confirmation has fewer than 3 samples");
    return;
  }
  const double bpc = RigPoint::median_of(p->bytes_per_clk_per_sm);
  const double gbs = RigPoint::median_of(p->gb_s);
  const double v = per_sm ? bpc : gbs;
  Finding f{name,
            v,
            per_sm ? "B/clk/SM" : "GB/s",
            point_confidence(*p),
            "bandwidth.hierarchy point: " + p->load.value_or("") + " at " +
                units::format_bytes(*p->working_set_bytes),
            json::object()};
  f.extra[per_sm ? "gb_s_total" : "bytes_per_clk_per_sm"] = per_sm ? gbs : bpc;
  if (variants) describe_variants(f, *p, *variants, v);
  r.findings.push_back(f);
}

class BandwidthHierarchy : public RigExperiment {
 public:
  std::string id() const override { return "bandwidth.hierarchy"; }
  int samples_version() const override { return HierarchySamples::kVersion; }
  std::string description() const override {
    return "one table: register file, shared memory, L1, L2 and DRAM read bandwidth beside each "
           "level's latency from earlier findings (latency.*, smem.bandwidth): L1, L2, DRAM and "
           "register bandwidth measured at full occupancy at one working set well inside each "
           "level (repeated, verified), shared-memory bandwidth and the latencies taken from the "
           "experiments that measure them, a missing one left empty with a note";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(string_axis("level", {"register", "shared", "l1", "l2", "dram"},
                              "the levels of the table")),
            fixed(int_axis(
                "l1_working_set_bytes_per_sm", {}, "B",
                "whole 128 KiB steps of the L1 variants within 3/4 of the measured l1.capacity "
                "(fallback: half of it, half the unified L1, or steps within 3/4 of the "
                "shared-memory carveout)")),
            fixed(int_axis("l2_working_set_bytes", {}, "B", "min(16 MiB, L2 / 4)")),
            fixed(int_axis("dram_working_set_bytes", {}, "B", "16 x L2")),
            fixed(string_axis("l1_variant", variant_names(bws::kL1Variants),
                              "the L1 kernels searched; the fastest is confirmed")),
            fixed(string_axis("l2_variant", variant_names(bws::kL2Variants),
                              "the L2 kernels searched; the fastest is confirmed"))};
  }
  std::vector<std::string> depends_on() const override {
    return {"latency.sweep",   "latency.shared", "smem.bandwidth",
            "compute.latency", "bandwidth.read", "bandwidth.sweep"};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& d = ctx.device.info();
    const bwsweep::L1WorkingSet l1 = bwsweep::l1_working_set(d, ctx.prior);
    const std::uint64_t l1_ws = l1.bytes;
    const auto bytes = [&](std::uint32_t nsmid) { return data_bytes_for(d, nsmid, l1_ws); };
    const std::uint64_t l2_ws = align_down(
        std::min<double>(16.0 * kMiB, static_cast<double>(d.l2_bytes) / 4), kRegionAlign);
    json m;
    measure::Confirmation c1, c2;
    json s1_summary, s2_summary;
    {
      // L1 and L2: every kernel variant, each verified on every launch; a failed one is a row
      // error with its reason. The search only picks the winners.
      Rig rig(ctx, bytes);
      VariantSearch s1 = search_variants(
          "L1", bws::kL1VariantCount, [&](int i) { return rig.variant_blocks_per_sm(0, i); },
          [&](int i) { return rig.slices_point(l1_ws, i); });
      VariantSearch s2 = search_variants(
          "L2", bws::kL2VariantCount, [&](int i) { return rig.variant_blocks_per_sm(1, i); },
          [&](int i) { return rig.shared_point(l2_ws, i); });
      m["l1_variants"] = variant_rows(s1, describe_l1_variant);
      m["l2_variants"] = variant_rows(s2, describe_l2_variant);
      s1_summary = s1.status_summary();
      s2_summary = s2.status_summary();
      c1.winner = *s1.best();
      c1.search_value = s1.rows()[c1.winner].value();
      c2.winner = *s2.best();
      c2.search_value = s2.rows()[c2.winner].value();
    }
    {
      // Confirmation of the two winners on fresh buffers with other data and every repetition
      // the protocol allows; DRAM and register points are measured once (nothing is selected).
      Rig rig(ctx, bytes, 1);
      m["dram"] =
          rig.shared_point(align_down(16.0 * static_cast<double>(d.l2_bytes), kRegionAlign));
      m["register"] = rig.fma_point();
      ProtocolOptions p = ctx.options.protocol;
      p.min_repetitions = std::max(p.min_repetitions, p.max_repetitions);
      rig.set_protocol(p);
      c1.outcome =
          measure::run_guarded([&] { return measured(rig.slices_point(l1_ws, c1.winner)); });
      c2.outcome =
          measure::run_guarded([&] { return measured(rig.shared_point(l2_ws, c2.winner)); });
      m["l1_confirmation"] =
          confirmation_json(c1, describe_l1_variant(static_cast<int>(c1.winner)));
      m["l2_confirmation"] =
          confirmation_json(c2, describe_l2_variant(static_cast<int>(c2.winner)));
    }
    // Earlier findings, copied so that analyze stays pure.
    json prior = json::object();
    for (const FindingKey& key :
         {finding::kL1HitLatency, finding::kL2HitLatency, finding::kL2FarHitLatency,
          finding::kDramLatency, finding::kSharedLatency, finding::kSmemBandwidth,
          finding::kComputeFfmaLatency, finding::kDramReadBandwidth, finding::kL1ReadBandwidth,
          finding::kL2ReadBandwidth, finding::kDramReadBandwidthSweep}) {
      if (const auto f = ctx.prior.get(key, 0.0)) prior[key.name] = to_json(*f);
    }
    r.parameters = {
        {"sm_count", d.sm_count},
        {"l2_bytes_reported", d.l2_bytes},
        {"sm_clock_max_mhz", d.sm_clock_max_mhz},
        {"register_convention",
         "register-file read bandwidth = lane FFMAs per clock per SM x 3 source "
         "operands x 4 B (12 B per FFMA; the 4 B written are shown separately); "
         "operand reuse caches are ignored, so this is the operand bandwidth the "
         "datapath consumes, not a count of register-file bank reads"},
        {"l1_working_set_bytes_per_sm", l1_ws},
        {"l1_working_set_source", l1.source},
        {"l1", "each SM reads its own " + units::format_bytes(l1_ws) +
                   " slice (shared out among its blocks), 16-B ld.global.ca; " +
                   std::to_string(bws::kL1VariantCount) +
                   " kernel variants (fold, addressing, unroll, block shape); the winner is "
                   "re-measured on fresh buffers and that confirmation is reported"},
        {"l2", "all SMs read one region of " + units::format_bytes(l2_ws) + ", 16-B loads; " +
                   std::to_string(bws::kL2VariantCount) +
                   " kernel variants (load operator, unroll, rotations, block shape); the winner "
                   "is re-measured on fresh buffers and that confirmation is reported"},
        {"variant_search",
         "every variant is measured with the same protocol and verified on every launch (the "
         "fold of every word read against the host's fold of the same words); a variant that "
         "fails verification is a row error with its reason (listed in the statistics and the "
         "experiment's reason) and never wins; a confirmation that fails makes the experiment an "
         "error"},
        {"dram", "all SMs read one region of 16 x L2, 16-B ld.global.cg"},
        {"latency_source",
         "findings of earlier experiments (latency.sweep, latency.shared, "
         "compute.latency); nothing extra is measured when one is missing"},
        {"gb", "1e9 bytes"}};
    r.samples = {{"measured", m}, {"prior", prior}};
    r.statistics = {{"l1_search", s1_summary}, {"l2_search", s2_summary}};
    std::string failed;
    for (const json* sm : {&s1_summary, &s2_summary})
      for (const auto& e : sm->at("errors"))
        failed += (failed.empty() ? "" : "; ") + e.get<std::string>();
    if (!failed.empty()) r.reason = "search rows failed (never reported): " + failed;
  }

  void analyze(ExperimentResult& r) const override {
    const auto s = samples_as<HierarchySamples>(r);
    const HierarchyMeasured& measured = s.measured;
    HierarchyTable table{s.prior};
    // L1 / L2: the confirmation of the search's winner; a failed one is null (no finding, an
    // error).
    std::string failed;
    const RigPoint* l1 = chosen_point(measured, "l1", failed);
    const RigPoint* l2 = chosen_point(measured, "l2", failed);
    add_register_row_and_finding(table, measured.reg, r);
    table.add_shared_row();
    table.add_measured_row("l1", l1, finding::kL1HitLatency, "");
    const PriorFinding* far_hit = table.prior_finding(finding::kL2FarHitLatency);
    table.add_measured_row(
        "l2", l2, finding::kL2HitLatency,
        far_hit ? "far L2 partition latency: " + json(far_hit->value).dump() + " cycles" : "");
    std::string dram_note;
    if (const PriorFinding* f = table.prior_finding(finding::kDramReadBandwidth))
      dram_note = "bandwidth.read streaming: " + json(f->value).dump() + " GB/s";
    table.add_measured_row("dram", &measured.dram, finding::kDramLatency, dram_note);
    table.curve.hints = table_hints("bandwidth and latency per level");
    r.curves.push_back(table.curve);
    if (measured.l1_variants) r.curves.push_back(variant_curve("l1", *measured.l1_variants));
    if (measured.l2_variants) r.curves.push_back(variant_curve("l2", *measured.l2_variants));
    // Findings of the measured levels (hierarchy-specific names: the sweep owns the plain ones).
    add_level_finding(r, finding::kHierarchyL1ReadBandwidth, l1, measured.l1_variants, true);
    add_level_finding(r, finding::kHierarchyL2ReadBandwidth, l2, measured.l2_variants, false);
    add_level_finding(r, "hierarchy.dram.read_bandwidth", &measured.dram, std::nullopt, false);
    if (!failed.empty()) {
      r.status = Status::kError;
      r.reason = failed;
    }
  }

 private:
  template <class V, std::size_t N>
  static std::vector<std::string> variant_names(const V (&variants)[N]) {
    std::vector<std::string> names;
    for (const auto& v : variants) names.push_back(v.name);
    return names;
  }

  using VariantSearch = measure::Search<int>;

  /// The search row of a Rig point: its primary samples, their median, the point.
  static measure::Measured measured(json point) {
    const auto m = point.get<RigPoint>().measurement.value();
    return {m.values.value(), m.median, std::move(point)};
  }

  /// Measures every variant of one regime (variant index = configuration); a variant that
  /// cannot be resident is skipped, one that fails verification is a row error with its reason.
  /// Throws VerificationError when no variant passed.
  static VariantSearch search_variants(const std::string& regime, int count,
                                       const std::function<int(int)>& resident,
                                       const std::function<json(int)>& measure_one) {
    VariantSearch s(
        [&](const int& i) {
          if (resident(i) < 1) throw measure::SkipRow("cannot be resident");
          return measured(measure_one(i));
        },
        [](const int& i) { return std::to_string(i); });
    for (int i = 0; i < count; ++i) s.try_config("variants", i);
    if (!s.best()) {
      std::string errors;
      for (const auto& row : s.rows()) errors += "; variant " + row.key + ": " + row.outcome.reason;
      throw VerificationError("bandwidth.hierarchy " + regime + ": no kernel variant verified" +
                              errors);
    }
    return s;
  }

  /// The rows as recorded: what each variant is, its status and reason, and its point when it
  /// passed (verified true) or verified false with the error.
  static json variant_rows(const VariantSearch& s, const std::function<json(int)>& describe) {
    json rows = s.rows_json(describe);
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (!s.rows()[i].passed()) {
        rows[i]["verified"] = false;
        rows[i]["error"] = s.rows()[i].outcome.reason;
      }
    return rows;
  }

  static json confirmation_json(const measure::Confirmation& c, const json& describe) {
    json j = describe;
    j.update(measure::to_json(c));
    return j;
  }

  /// A cell of a table: the value, or "" when the row does not hold it.
  template <class V>
  static json cell(const std::optional<V>& v) {
    return v ? json(*v) : json("");
  }

  /// One row per variant: what it is, its numbers (empty when it did not verify), its error.
  static Curve variant_curve(const std::string& level, const std::vector<RigPoint>& rows) {
    Curve c{level + "_variants",
            {"variant",
             "fold",
             "addressing",
             "load",
             "unroll",
             "rotations",
             "threads_per_block",
             "blocks_per_sm_requested",
             "blocks_per_sm",
             "max_blocks_on_one_sm",
             "bytes_per_clk_per_sm_median",
             "bytes_per_clk_per_sm_mad",
             "gb_s_median",
             "gb_s_mad",
             "primary",
             "n",
             "sm_clock_mhz_measured",
             "timed_passes_per_launch",
             "verified",
             "error"},
            {}};
    for (const auto& row : rows) {
      const bool ok = row.verified && row.measurement.has_value();
      auto num = [&](const std::optional<RigStat>& rate, std::optional<double> RigStat::*stat) {
        if (!ok || !rate) return json("");
        return json((*rate).*stat ? *((*rate).*stat) : 0.0);
      };
      c.rows.push_back({*row.variant,
                        cell(row.fold),
                        cell(row.addressing),
                        cell(row.load),
                        cell(row.unroll),
                        cell(row.rotations),
                        cell(row.threads_per_block),
                        cell(row.blocks_per_sm_requested),
                        ok ? cell(row.blocks_per_sm) : json(""),
                        ok ? cell(row.max_blocks_on_one_sm) : json(""),
                        num(row.bytes_per_clk_per_sm, &RigStat::median),
                        num(row.bytes_per_clk_per_sm, &RigStat::mad),
                        num(row.gb_s, &RigStat::median),
                        num(row.gb_s, &RigStat::mad),
                        ok ? cell(row.primary) : json(""),
                        ok ? json(static_cast<double>(row.measurement->n.value_or(0))) : json(""),
                        ok ? cell(row.sm_clock_mhz_measured) : json(""),
                        ok ? cell(row.timed_passes_per_launch) : json(""),
                        json(ok),
                        json(row.error.value_or(""))});
    }
    c.hints = table_hints(level + " kernel variants");
    return c;
  }

  std::uint64_t data_bytes(const device::DeviceInfo& d, std::uint32_t nsmid) const override {
    return data_bytes_for(d, nsmid, bwsweep::l1_fallback(d).bytes);
  }
  static std::uint64_t data_bytes_for(const device::DeviceInfo& d, std::uint32_t nsmid,
                                      std::uint64_t l1_ws) {
    return std::max<std::uint64_t>(16 * d.l2_bytes + kMiB, l1_ws * nsmid) / (64 * kKiB) *
               (64 * kKiB) +
           64 * kKiB;
  }
};

}  // namespace

std::unique_ptr<Experiment> make_hierarchy_experiment() {
  return std::make_unique<BandwidthHierarchy>();
}

}  // namespace gpuprobe::probes::bandwidth_rig
