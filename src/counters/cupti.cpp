// The CUPTI range profiler (CUDA 12.6+ API, cupti_range_profiler.h), loaded with dlopen so the
// binary runs where libcupti is missing (the cross-check is then waived). User ranges with user
// replay: every launch is one range; when the metrics need several passes the launches are
// replayed until CUPTI has them all.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "counters/counters.hpp"
#include "counters/profiler_error.hpp"

namespace gpuprobe::counters {
namespace {

struct Api {
  void* lib = nullptr;
  std::string error;  // why it could not be loaded
  std::string path;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiProfilerInitialize) initialize = nullptr;
  decltype(&cuptiDeviceGetChipName) chip_name = nullptr;
  decltype(&cuptiProfilerGetCounterAvailability) availability = nullptr;
  decltype(&cuptiProfilerHostInitialize) host_init = nullptr;
  decltype(&cuptiProfilerHostDeinitialize) host_deinit = nullptr;
  decltype(&cuptiProfilerHostConfigAddMetrics) add_metrics = nullptr;
  decltype(&cuptiProfilerHostGetConfigImageSize) config_size = nullptr;
  decltype(&cuptiProfilerHostGetConfigImage) config_image = nullptr;
  decltype(&cuptiProfilerHostGetNumOfPasses) num_passes = nullptr;
  decltype(&cuptiProfilerHostEvaluateToGpuValues) evaluate = nullptr;
  decltype(&cuptiRangeProfilerEnable) enable = nullptr;
  decltype(&cuptiRangeProfilerDisable) disable = nullptr;
  decltype(&cuptiRangeProfilerGetCounterDataSize) data_size = nullptr;
  decltype(&cuptiRangeProfilerCounterDataImageInitialize) data_init = nullptr;
  decltype(&cuptiRangeProfilerSetConfig) set_config = nullptr;
  decltype(&cuptiRangeProfilerStart) start = nullptr;
  decltype(&cuptiRangeProfilerStop) stop = nullptr;
  decltype(&cuptiRangeProfilerPushRange) push = nullptr;
  decltype(&cuptiRangeProfilerPopRange) pop = nullptr;
  decltype(&cuptiRangeProfilerDecodeData) decode = nullptr;
  decltype(&cuptiRangeProfilerGetCounterDataInfo) data_info = nullptr;
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
};

/// A CUPTI parameter block: zeroed, with its size set (how CUPTI tells versions apart).
template <typename T>
T params(std::size_t size) {
  T p{};
  p.structSize = size;
  return p;
}

template <typename F>
bool bind(Api& a, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(a.lib, name));
  if (!f && a.error.empty()) a.error = a.path + " has no " + name + " (CUPTI 12.6 or newer needed)";
  return f != nullptr;
}

Api load() {
  Api a;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("GPUPROBE_CUPTI")) candidates.push_back(env);
  for (const char* c :
       {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
        "/usr/local/cuda/lib64/libcupti.so", "/usr/local/cuda-13.0/extras/CUPTI/lib64/libcupti.so",
        "/usr/local/cuda-13.0/lib64/libcupti.so"})
    candidates.push_back(c);
  std::string tried;
  for (const auto& c : candidates) {
    a.lib = dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (a.lib) {
      a.path = c;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + c;
  }
  if (!a.lib) {
    a.error = "CUPTI not found (tried " + tried + "; set GPUPROBE_CUPTI to libcupti.so)";
    return a;
  }
  // libcupti loads the NVIDIA perf libraries at run time; those beside it are the matching ones.
  Dl_info where{};
  void* any = dlsym(a.lib, "cuptiGetResultString");
  if (any && dladdr(any, &where) && where.dli_fname) {
    const auto dir = std::filesystem::path(where.dli_fname).parent_path();
    for (const char* perf : {"libnvperf_host.so", "libnvperf_target.so"})
      if (std::filesystem::exists(dir / perf)) dlopen((dir / perf).c_str(), RTLD_NOW | RTLD_GLOBAL);
    a.path = where.dli_fname;
  }
  bool ok = bind(a, a.result_string, "cuptiGetResultString") &&
            bind(a, a.initialize, "cuptiProfilerInitialize") &&
            bind(a, a.chip_name, "cuptiDeviceGetChipName") &&
            bind(a, a.availability, "cuptiProfilerGetCounterAvailability") &&
            bind(a, a.host_init, "cuptiProfilerHostInitialize") &&
            bind(a, a.host_deinit, "cuptiProfilerHostDeinitialize") &&
            bind(a, a.add_metrics, "cuptiProfilerHostConfigAddMetrics") &&
            bind(a, a.config_size, "cuptiProfilerHostGetConfigImageSize") &&
            bind(a, a.config_image, "cuptiProfilerHostGetConfigImage") &&
            bind(a, a.num_passes, "cuptiProfilerHostGetNumOfPasses") &&
            bind(a, a.evaluate, "cuptiProfilerHostEvaluateToGpuValues") &&
            bind(a, a.enable, "cuptiRangeProfilerEnable") &&
            bind(a, a.disable, "cuptiRangeProfilerDisable") &&
            bind(a, a.data_size, "cuptiRangeProfilerGetCounterDataSize") &&
            bind(a, a.data_init, "cuptiRangeProfilerCounterDataImageInitialize") &&
            bind(a, a.set_config, "cuptiRangeProfilerSetConfig") &&
            bind(a, a.start, "cuptiRangeProfilerStart") &&
            bind(a, a.stop, "cuptiRangeProfilerStop") &&
            bind(a, a.push, "cuptiRangeProfilerPushRange") &&
            bind(a, a.pop, "cuptiRangeProfilerPopRange") &&
            bind(a, a.decode, "cuptiRangeProfilerDecodeData") &&
            bind(a, a.data_info, "cuptiRangeProfilerGetCounterDataInfo");
  // The driver is already loaded by the CUDA runtime; its current context is the one profiled.
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!cuda) cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (cuda)
    a.ctx_get_current = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(cuda, "cuCtxGetCurrent"));
  if (ok && !a.ctx_get_current) a.error = "libcuda.so.1 has no cuCtxGetCurrent";
  if (!ok || !a.ctx_get_current) {
    dlclose(a.lib);
    a.lib = nullptr;
  }
  return a;
}

class CuptiReader : public Reader {
 public:
  std::optional<std::string> unavailable(const device::DeviceInfo& info) override {
    if (info.kind != "cuda") return "a modelled GPU has no hardware counters";
    if (!api().lib) return api().error;
    return std::nullopt;
  }

  std::string method() const override {
    return "CUPTI range profiler (" + api_->path + "), one user range per launch, user replay";
  }

  std::vector<std::map<std::string, double>> read(
      const device::DeviceInfo& info, const std::vector<std::string>& metrics,
      const std::vector<std::function<void()>>& launches,
      const std::vector<std::function<void()>>& prepares) override {
    const Api& a = api();
    if (!a.lib) throw ProfilerError(a.error);
    if (cudaFree(nullptr) != cudaSuccess) throw ProfilerError("no CUDA context to profile");
    CUcontext ctx = nullptr;
    if (a.ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx)
      throw ProfilerError("cuCtxGetCurrent gave no context");
    if (!initialized_) {
      CUpti_Profiler_Initialize_Params p{CUpti_Profiler_Initialize_Params_STRUCT_SIZE, nullptr};
      check(a.initialize(&p), "cuptiProfilerInitialize");
      initialized_ = true;
    }
    auto chip =
        params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<std::size_t>(info.ordinal);
    check(a.chip_name(&chip), "cuptiDeviceGetChipName");

    auto av = params<CUpti_Profiler_GetCounterAvailability_Params>(
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    av.ctx = ctx;
    check(a.availability(&av), "cuptiProfilerGetCounterAvailability");
    std::vector<std::uint8_t> availability(av.counterAvailabilityImageSize);
    av.pCounterAvailabilityImage = availability.data();
    check(a.availability(&av), "cuptiProfilerGetCounterAvailability");

    auto hi = params<CUpti_Profiler_Host_Initialize_Params>(
        CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = chip.pChipName;
    hi.pCounterAvailabilityImage = availability.data();
    check(a.host_init(&hi), "cuptiProfilerHostInitialize");
    CUpti_Profiler_Host_Object* host = hi.pHostObject;
    CUpti_RangeProfiler_Object* profiler = nullptr;
    // Whatever fails below, the profiler is disabled and the host object released.
    struct Cleanup {
      const Api& a;
      CUpti_Profiler_Host_Object*& host;
      CUpti_RangeProfiler_Object*& profiler;
      ~Cleanup() {
        if (profiler) {
          auto d = params<CUpti_RangeProfiler_Disable_Params>(
              CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
          d.pRangeProfilerObject = profiler;
          a.disable(&d);
        }
        auto d = params<CUpti_Profiler_Host_Deinitialize_Params>(
            CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
        d.pHostObject = host;
        a.host_deinit(&d);
      }
    } cleanup{a, host, profiler};

    std::vector<const char*> names;
    for (const auto& m : metrics) names.push_back(m.c_str());
    std::vector<std::uint8_t> config = config_image(host, names);

    auto en =
        params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    en.ctx = ctx;
    check(a.enable(&en), "cuptiRangeProfilerEnable");
    profiler = en.pRangeProfilerObject;

    std::vector<std::uint8_t> data = counter_data_image(profiler, names, launches.size());
    set_config(profiler, config, data, launches.size());
    replay(profiler, launches, prepares);
    return evaluate_ranges(host, profiler, data, names, metrics);
  }

 private:
  /// The host object's configuration image for `names`.
  std::vector<std::uint8_t> config_image(CUpti_Profiler_Host_Object* host,
                                         std::vector<const char*>& names) const {
    const Api& a = api();
    auto am = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    am.pHostObject = host;
    am.ppMetricNames = names.data();
    am.numMetrics = names.size();
    check(a.add_metrics(&am), "cuptiProfilerHostConfigAddMetrics");
    auto cs = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    cs.pHostObject = host;
    check(a.config_size(&cs), "cuptiProfilerHostGetConfigImageSize");
    std::vector<std::uint8_t> config(cs.configImageSize);
    auto ci = params<CUpti_Profiler_Host_GetConfigImage_Params>(
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    ci.pHostObject = host;
    ci.configImageSize = config.size();
    ci.pConfigImage = config.data();
    check(a.config_image(&ci), "cuptiProfilerHostGetConfigImage");
    return config;
  }

  /// The counter data image for `ranges` ranges of `names`, initialised.
  std::vector<std::uint8_t> counter_data_image(CUpti_RangeProfiler_Object* profiler,
                                               std::vector<const char*>& names,
                                               std::size_t ranges) const {
    const Api& a = api();
    auto ds = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    ds.pRangeProfilerObject = profiler;
    ds.pMetricNames = names.data();
    ds.numMetrics = names.size();
    ds.maxNumOfRanges = ranges;
    ds.maxNumRangeTreeNodes = static_cast<std::uint32_t>(ranges);
    check(a.data_size(&ds), "cuptiRangeProfilerGetCounterDataSize");
    std::vector<std::uint8_t> data(ds.counterDataSize);
    auto di = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    di.pRangeProfilerObject = profiler;
    di.counterDataSize = data.size();
    di.pCounterData = data.data();
    check(a.data_init(&di), "cuptiRangeProfilerCounterDataImageInitialize");
    return data;
  }

  /// User ranges, user replay, one nesting level, `ranges` ranges per pass.
  void set_config(CUpti_RangeProfiler_Object* profiler, std::vector<std::uint8_t>& config,
                  std::vector<std::uint8_t>& data, std::size_t ranges) const {
    const Api& a = api();
    auto sc = params<CUpti_RangeProfiler_SetConfig_Params>(
        CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    sc.pRangeProfilerObject = profiler;
    sc.configSize = config.size();
    sc.pConfig = config.data();
    sc.counterDataImageSize = data.size();
    sc.pCounterDataImage = data.data();
    sc.range = CUPTI_UserRange;
    sc.replayMode = CUPTI_UserReplay;
    sc.maxRangesPerPass = ranges;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    check(a.set_config(&sc), "cuptiRangeProfilerSetConfig");
  }

  /// Replays every launch, each in its own range (its preparation outside), until CUPTI has
  /// every pass it needs.
  void replay(CUpti_RangeProfiler_Object* profiler,
              const std::vector<std::function<void()>>& launches,
              const std::vector<std::function<void()>>& prepares) const {
    const Api& a = api();
    constexpr int kMaxPasses = 64;
    bool all = false;
    for (int pass = 0; !all; ++pass) {
      if (pass == kMaxPasses)
        throw ProfilerError("the metrics needed more than " + std::to_string(kMaxPasses) +
                            " replay passes");
      auto st =
          params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
      st.pRangeProfilerObject = profiler;
      check(a.start(&st), "cuptiRangeProfilerStart");
      for (std::size_t i = 0; i < launches.size(); ++i) {
        // User ranges count only what runs between push and pop: preparation stays outside.
        if (i < prepares.size() && prepares[i]) prepares[i]();
        const std::string range = "launch" + std::to_string(i);
        auto pu = params<CUpti_RangeProfiler_PushRange_Params>(
            CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
        pu.pRangeProfilerObject = profiler;
        pu.pRangeName = range.c_str();
        check(a.push(&pu), "cuptiRangeProfilerPushRange");
        launches[i]();
        auto po = params<CUpti_RangeProfiler_PopRange_Params>(
            CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
        po.pRangeProfilerObject = profiler;
        check(a.pop(&po), "cuptiRangeProfilerPopRange");
      }
      auto sp =
          params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      sp.pRangeProfilerObject = profiler;
      check(a.stop(&sp), "cuptiRangeProfilerStop");
      all = sp.isAllPassSubmitted != 0;
    }
  }

  /// Decodes the passes and evaluates each range's metrics (one map per launch).
  std::vector<std::map<std::string, double>> evaluate_ranges(
      CUpti_Profiler_Host_Object* host, CUpti_RangeProfiler_Object* profiler,
      std::vector<std::uint8_t>& data, std::vector<const char*>& names,
      const std::vector<std::string>& metrics) const {
    const Api& a = api();
    auto dd = params<CUpti_RangeProfiler_DecodeData_Params>(
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    dd.pRangeProfilerObject = profiler;
    check(a.decode(&dd), "cuptiRangeProfilerDecodeData");
    if (dd.numOfRangeDropped)
      throw ProfilerError(std::to_string(dd.numOfRangeDropped) + " profiled ranges were dropped");
    auto info_p = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info_p.pCounterDataImage = data.data();
    info_p.counterDataImageSize = data.size();
    check(a.data_info(&info_p), "cuptiRangeProfilerGetCounterDataInfo");

    std::vector<std::map<std::string, double>> out;
    std::vector<double> values(names.size());
    for (std::size_t r = 0; r < info_p.numTotalRanges; ++r) {
      auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      ev.pHostObject = host;
      ev.pCounterDataImage = data.data();
      ev.counterDataImageSize = data.size();
      ev.rangeIndex = r;
      ev.ppMetricNames = names.data();
      ev.numMetrics = names.size();
      ev.pMetricValues = values.data();
      check(a.evaluate(&ev), "cuptiProfilerHostEvaluateToGpuValues");
      std::map<std::string, double> m;
      for (std::size_t k = 0; k < names.size(); ++k) m[metrics[k]] = values[k];
      out.push_back(std::move(m));
    }
    return out;
  }

  const Api& api() const {
    if (!api_) api_ = std::make_unique<Api>(load());
    return *api_;
  }
  void check(CUptiResult r, const char* call) const {
    if (r == CUPTI_SUCCESS) return;
    const char* text = nullptr;
    if (api_->result_string) api_->result_string(r, &text);
    std::string why = std::string(call) + " failed: " + (text ? text : "?") + " (" +
                      std::to_string(static_cast<int>(r)) + ")";
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
      why +=
          "; reading GPU performance counters needs administrator rights here "
          "(NVreg_RestrictProfilingToAdminUsers)";
    throw ProfilerError(why);
  }
  mutable std::unique_ptr<Api> api_;
  bool initialized_ = false;
};

}  // namespace

Reader& cupti_reader() {
  static CuptiReader reader;
  return reader;
}

}  // namespace gpuprobe::counters
