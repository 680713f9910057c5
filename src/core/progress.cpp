#include "core/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace gpuprobe::progress {
namespace {

using Clock = std::chrono::steady_clock;

struct State {
  std::ostream* out = nullptr;
  Clock::time_point run_start{}, experiment_start{}, last_draw{};
  int n = 0, m = 0;
  long points = 0;
  std::string id;
};
State g;

std::string duration(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof(buf), "%.0fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof(buf), "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else
    std::snprintf(buf, sizeof(buf), "%dh%02dm", static_cast<int>(s) / 3600,
                  static_cast<int>(s) % 3600 / 60);
  return buf;
}

void draw(bool force) {
  if (!g.out) return;
  const auto now = Clock::now();
  if (!force && now - g.last_draw < std::chrono::milliseconds(200)) return;
  g.last_draw = now;
  *g.out << "\r\033[K" << line() << std::flush;
}

}  // namespace

void enable(std::ostream* out) {
  g = State{};
  g.out = out;
  g.run_start = Clock::now();
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

std::string line() {
  if (!g.out || g.n == 0) return "";
  const double elapsed = std::chrono::duration<double>(Clock::now() - g.run_start).count();
  // The finished experiments' mean time stands for each one still to come.
  const int done = g.n - 1;
  std::string eta = "estimating";
  if (done > 0) eta = "~" + duration(elapsed / done * (g.m - done)) + " left";
  char buf[256];
  std::snprintf(buf, sizeof(buf), "[%d/%d] %s  point %ld  elapsed %s  %s", g.n, g.m, g.id.c_str(),
                g.points, duration(elapsed).c_str(), eta.c_str());
  return buf;
}

void begin(int n, int m, const std::string& id) {
  if (!g.out) return;
  g.n = n;
  g.m = m;
  g.id = id;
  g.points = 0;
  g.experiment_start = Clock::now();
  draw(true);
}

void point() {
  if (!g.out) return;
  ++g.points;
  draw(false);
}

void end() {
  if (!g.out) return;
  *g.out << "\r\033[K" << std::flush;
}

}  // namespace gpuprobe::progress
