#include "core/experiment.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/error.hpp"
#include "core/text_input.hpp"

namespace gpuprobe {

nlohmann::json to_json(const Finding& f) {
  nlohmann::json j = {{"name", f.name},
                      {"value", f.value},
                      {"unit", f.unit},
                      {"confidence", f.confidence},
                      {"method", f.method}};
  for (auto it = f.extra.begin(); it != f.extra.end(); ++it) j[it.key()] = it.value();
  j["typed"] = typed_json(typed_value(j));  // derived: never read back (finding_from_json)
  return j;
}

Finding finding_from_json(const nlohmann::json& j) {
  Finding f;
  f.name = j.at("name").get<std::string>();
  f.value = j.at("value").get<double>();
  f.unit = j.at("unit").get<std::string>();
  f.confidence = j.at("confidence").get<double>();
  f.method = j.at("method").get<std::string>();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "name" && it.key() != "value" && it.key() != "unit" &&
        it.key() != "confidence" && it.key() != "method" && it.key() != "typed")
      f.extra[it.key()] = it.value();
  }
  return f;
}

nlohmann::json to_json(const CurveHints& h) {
  nlohmann::json j = {{"kind", h.kind},     {"title", h.title},
                      {"x", h.x},           {"y", h.y},
                      {"x_unit", h.x_unit}, {"y_unit", h.y_unit},
                      {"log_x", h.log_x},   {"log_y", h.log_y},
                      {"series", h.series}, {"model", h.model},
                      {"split", h.split},   {"reduce", h.reduce},
                      {"where", h.where},   {"mark_findings", h.mark_findings}};
  if (!h.band.empty()) j["band"] = h.band;  // written only where drawn: older hints unchanged
  return j;
}

CurveHints CurveHints::by(std::vector<std::string> columns) const {
  auto h = *this;
  h.series = std::move(columns);
  return h;
}
CurveHints CurveHints::with_model(std::vector<std::string> columns) const {
  auto h = *this;
  h.model = std::move(columns);
  return h;
}
CurveHints CurveHints::best(std::string max_or_min) const {
  auto h = *this;
  h.reduce = std::move(max_or_min);
  return h;
}
CurveHints CurveHints::only(nlohmann::json where_) const {
  auto h = *this;
  h.where = std::move(where_);
  return h;
}
CurveHints CurveHints::marked() const {
  auto h = *this;
  h.mark_findings = true;
  return h;
}
CurveHints CurveHints::points() const {
  auto h = *this;
  h.kind = "points";
  return h;
}

CurveHints CurveHints::split_by(std::vector<std::string> columns) const {
  auto h = *this;
  h.split = std::move(columns);
  return h;
}

CurveHints CurveHints::banded(std::string low, std::string high) const {
  auto h = *this;
  h.band = {std::move(low), std::move(high)};
  return h;
}

CurveHints chart_hints(std::string title, std::string x, std::string x_unit, std::string y,
                       std::string y_unit, bool log_x) {
  CurveHints h;
  h.title = std::move(title);
  h.x = std::move(x);
  h.x_unit = std::move(x_unit);
  h.y = std::move(y);
  h.y_unit = std::move(y_unit);
  h.log_x = log_x;
  return h;
}

CurveHints table_hints(std::string title) {
  CurveHints h;
  h.kind = "table";
  h.title = std::move(title);
  return h;
}

CurveHints curve_hints_from_json(const nlohmann::json& j) {
  CurveHints h;
  h.kind = j.value("kind", h.kind);
  h.title = j.value("title", "");
  h.x = j.value("x", "");
  h.y = j.value("y", "");
  h.x_unit = j.value("x_unit", "");
  h.y_unit = j.value("y_unit", "");
  h.log_x = j.value("log_x", false);
  h.log_y = j.value("log_y", false);
  h.series = j.value("series", std::vector<std::string>{});
  h.model = j.value("model", std::vector<std::string>{});
  h.split = j.value("split", std::vector<std::string>{});
  h.reduce = j.value("reduce", "");
  h.where = j.value("where", nlohmann::json::object());
  h.mark_findings = j.value("mark_findings", false);
  h.band = j.value("band", std::vector<std::string>{});
  if (h.band.size() != 2) h.band.clear();
  return h;
}

std::string to_string(Status s) {
  switch (s) {
    case Status::kPassed:
      return "passed";
    case Status::kWaived:
      return "waived";
    case Status::kError:
      return "error";
  }
  return "?";
}

nlohmann::json to_json(const ExperimentResult& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings) findings.push_back(to_json(f));
  nlohmann::json curves = nlohmann::json::array();
  for (const auto& c : r.curves) {
    // The rows travel in the result (the CSV beside it is an export): a lone result.json draws.
    curves.push_back({{"name", c.name}, {"columns", c.columns}, {"rows", c.rows}});
    if (!c.hints.empty()) curves.back()["hints"] = to_json(c.hints);
  }
  nlohmann::json j = {{"id", r.id},
                      {"status", to_string(r.status)},
                      {"reason", r.reason},
                      {"wall_s", r.wall_s},
                      {"protocol", r.protocol},
                      {"parameters", r.parameters},
                      {"clocks", r.clocks},
                      {"samples", r.samples},
                      {"statistics", r.statistics},
                      {"findings", findings},
                      {"curves", curves}};
  if (r.samples_version > 0) j["samples_version"] = r.samples_version;
  return j;
}

std::optional<Finding> FindingBoard::get(const FindingKey& key, double min_confidence) const {
  auto it = findings_.find(key.name);
  if (it == findings_.end() || it->second.confidence < min_confidence) return std::nullopt;
  return it->second;
}

nlohmann::json Experiment::axes() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& a : typed_axes()) j[a.name] = to_json(a);
  return j;
}

std::unique_ptr<Sweep> Experiment::begin_sweep(Context&, ExperimentResult&) const {
  throw std::logic_error(id() + " is a sweep but has no begin_sweep");
}

void Experiment::run(Context& ctx, ExperimentResult& result) const {
  if (!is_sweep()) throw std::logic_error(id() + " has neither run() nor a sweep");
  run_sweep(*this, ctx, result);
}

void run_sweep(const Experiment& e, Context& ctx, ExperimentResult& result) {
  const auto points = e.axis_values(ctx.options).product();
  auto sweep = e.begin_sweep(ctx, result);
  if (!sweep) return;
  for (const auto& p : points) sweep->run_point(p);
  sweep->finish(result);
}

void run_experiment(const Experiment& e, Context& ctx, ExperimentResult& result) {
  if (e.is_sweep())
    run_sweep(e, ctx, result);
  else
    e.run(ctx, result);
}

void check_axis_overrides(const Registry& registry, const std::vector<AxisOverride>& overrides) {
  for (const auto& o : overrides) {
    // A family option reaches every experiment with the axis; its values are checked against
    // the widest range by the CLI, and against each experiment's axis when that one runs.
    if (!o.option.empty()) continue;
    const auto* e = registry.find(o.experiment);
    if (!e) {
      std::vector<std::pair<std::size_t, std::string>> near;
      for (const auto& x : registry.all())
        near.emplace_back(edit_distance(o.experiment, x->id()), x->id());
      std::sort(near.begin(), near.end());
      throw UsageError("--axis: unknown experiment " + text_input::quoted(o.experiment) + "" +
                       (near.empty() ? std::string() : "; closest: " + near.front().second));
    }
    RunOptions one;
    one.axis_overrides = {o};
    e->axis_values(one);
  }
}

void Registry::add(std::unique_ptr<Experiment> e) { experiments_.push_back(std::move(e)); }

const Experiment* Registry::find(const std::string& id) const {
  for (const auto& e : experiments_)
    if (e->id() == id) return e.get();
  return nullptr;
}

std::optional<std::string> waive_on_model(const device::DeviceInfo& info,
                                          const std::string& reason) {
  if (info.kind == "model") return reason;
  return std::nullopt;
}

std::optional<std::string> waive_unless_sm90a(const device::DeviceInfo& info,
                                              const std::string& hopper_reason,
                                              const std::string& model_reason) {
  if (info.cc_major != 9 || info.cc_minor != 0) return hopper_reason;
  return waive_on_model(info, model_reason);
}

std::optional<ExperimentResult> replay_analysis(const nlohmann::json& recorded) {
  if (recorded.value("status", "") != "passed") return std::nullopt;
  const auto* exp = Registry::builtin().find(recorded.value("id", ""));
  if (!exp) return std::nullopt;
  // Results written before samples were versioned hold version 1.
  if (recorded.value("samples_version", 1) != exp->samples_version()) return std::nullopt;
  // Every experiment that passed recorded samples: none is a waived or failed one relabelled.
  if (recorded.at("samples").empty())
    throw UsageError(exp->id() +
                     ": passed with no samples (was it waived or an error?); nothing to analyse");
  ExperimentResult r;
  r.id = exp->id();
  r.samples_version = exp->samples_version();
  r.parameters = recorded.at("parameters");
  r.samples = recorded.at("samples");
  exp->analyze(r);
  return r;
}

bool glob_match(const std::string& p, const std::string& t) {
  // Iterative matcher with one backtrack point for the last '*'.
  std::size_t pi = 0, ti = 0, star = std::string::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<const Experiment*> Registry::select(const std::vector<std::string>& globs) const {
  std::vector<const Experiment*> chosen;
  for (const auto& g : globs) {
    bool any = false;
    for (const auto& e : experiments_) {
      if (!glob_match(g, e->id())) continue;
      any = true;
      if (std::find(chosen.begin(), chosen.end(), e.get()) == chosen.end())
        chosen.push_back(e.get());
    }
    if (!any) {
      std::vector<std::pair<std::size_t, std::string>> near;
      for (const auto& e : experiments_) near.emplace_back(edit_distance(g, e->id()), e->id());
      std::sort(near.begin(), near.end());
      std::string hint;
      for (std::size_t i = 0; i < near.size() && i < 3; ++i)
        hint += (i ? ", " : "") + near[i].second;
      throw UsageError("unknown experiment " + text_input::quoted(g) + "; closest: " + hint +
                       " ('gpuprobe list' shows all)");
    }
  }
  return in_registry_order(chosen);
}

std::vector<const Experiment*> Registry::in_registry_order(
    const std::vector<const Experiment*>& chosen) const {
  std::vector<const Experiment*> ordered;
  for (const auto& e : experiments_)
    if (std::find(chosen.begin(), chosen.end(), e.get()) != chosen.end())
      ordered.push_back(e.get());
  return ordered;
}

std::vector<std::string> Registry::add_required(std::vector<const Experiment*>& chosen) const {
  std::vector<std::string> added;
  auto has = [&](const Experiment* e) {
    return std::find(chosen.begin(), chosen.end(), e) != chosen.end();
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& e : experiments_) {
      if (has(e.get())) continue;
      std::string by;
      for (const Experiment* c : chosen) {
        const auto req = c->required();
        if (std::find(req.begin(), req.end(), e->id()) != req.end())
          by += (by.empty() ? "" : ", ") + c->id();
      }
      if (by.empty()) continue;
      chosen.push_back(e.get());
      added.push_back(e->id() + " (needed by " + by + ")");
      grew = true;
    }
  }
  chosen = in_registry_order(chosen);
  return added;
}

}  // namespace gpuprobe
