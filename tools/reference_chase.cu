// An independent pointer chase used to cross-check gpuprobe's latency numbers: its own chain
// generator (Sattolo's algorithm, a different RNG), its own kernel (CUDA load intrinsics, not
// inline PTX) and its own timing loop. Usage: reference_chase <bytes> <ca|cg> [steps] [hot|cold]
// Prints: bytes op cycles_per_load (median of 7 runs).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

template <bool kBypassL1>
__global__ void walk(unsigned long long* head, long long warm, long long steps,
                     unsigned long long* result) {
  unsigned long long* q = head;
  for (long long k = 0; k < warm; ++k)
    q = reinterpret_cast<unsigned long long*>(kBypassL1 ? __ldcg(q) : __ldca(q));
  // Consume q before the first clock read so the warm-up has finished.
  if (reinterpret_cast<unsigned long long>(q) == 1ull) result[2] = 1;
  long long begin = clock64();
  for (long long k = 0; k < steps; ++k)
    q = reinterpret_cast<unsigned long long*>(kBypassL1 ? __ldcg(q) : __ldca(q));
  if (reinterpret_cast<unsigned long long>(q) == 1ull) result[2] = 1;
  long long end = clock64();
  result[0] = reinterpret_cast<unsigned long long>(q);
  result[1] = static_cast<unsigned long long>(end - begin);
}

__global__ void evict(const float4* junk, size_t n, float* sink) {
  float acc = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    acc += __ldcg(junk + i).x;
  if (acc == 12345.0f) *sink = acc;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <bytes> <ca|cg> [steps] [hot|cold]\n", argv[0]);
    return 2;
  }
  const size_t bytes = std::strtoull(argv[1], nullptr, 10);
  const bool cg = std::strcmp(argv[2], "cg") == 0;
  const long long steps = argc > 3 ? std::atoll(argv[3]) : 16384;
  const bool cold = argc > 4 && std::strcmp(argv[4], "cold") == 0;
  const size_t line = 128, n = bytes / line;
  // Sattolo: a uniformly random single cycle.
  std::vector<size_t> succ(n);
  for (size_t i = 0; i < n; ++i) succ[i] = i;
  std::minstd_rand rng(12345);
  for (size_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<size_t> d(0, i - 1);
    std::swap(succ[i], succ[d(rng)]);
  }
  unsigned long long* buf;
  CHECK(cudaMalloc(&buf, bytes));
  std::vector<unsigned long long> host(bytes / 8, 0);
  const auto base = reinterpret_cast<unsigned long long>(buf);
  for (size_t i = 0; i < n; ++i) host[i * (line / 8)] = base + succ[i] * line;
  CHECK(cudaMemcpy(buf, host.data(), bytes, cudaMemcpyHostToDevice));
  unsigned long long* res;
  CHECK(cudaMalloc(&res, 3 * sizeof(unsigned long long)));
  float4* junk;
  const size_t junk_n = (256ull << 20) / sizeof(float4);
  CHECK(cudaMalloc(&junk, junk_n * sizeof(float4)));
  CHECK(cudaMemset(junk, 0, junk_n * sizeof(float4)));
  std::vector<double> cycles;
  size_t start = 0;
  for (int run = 0; run < 8; ++run) {
    long long warm = cold ? 0 : static_cast<long long>(n);
    if (cold) {
      evict<<<528, 512>>>(junk, junk_n, reinterpret_cast<float*>(res + 2));
      CHECK(cudaGetLastError());
      start = (start + 7919 * 1024) % n;  // a fresh region of the cycle
    }
    unsigned long long* head = reinterpret_cast<unsigned long long*>(base + start * line);
    if (cg)
      walk<true><<<1, 1>>>(head, warm, steps, res);
    else
      walk<false><<<1, 1>>>(head, warm, steps, res);
    CHECK(cudaGetLastError());
    unsigned long long r[2];
    CHECK(cudaMemcpy(r, res, sizeof(r), cudaMemcpyDeviceToHost));
    // Verify: walk the host copy.
    size_t at = start;
    for (long long k = 0; k < warm + steps; ++k) at = succ[at];
    if (r[0] != base + at * line) {
      std::fprintf(stderr, "verification failed\n");
      return 1;
    }
    if (run > 0) cycles.push_back(static_cast<double>(r[1]) / static_cast<double>(steps));
  }
  std::sort(cycles.begin(), cycles.end());
  std::printf("%zu %s %.2f\n", bytes, cg ? "cg" : "ca", cycles[cycles.size() / 2]);
  return 0;
}
