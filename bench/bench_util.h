// Helpers shared by the benchmarks: argument parsing, the working directory with its generated
// table (made in a child process, reused when its shape matches), runs in fresh processes and
// the statistics reported. Header-only: every bench/*.cc becomes an executable of its own.
#pragma once

#include <arrow/status.h>
#include <fmt/core.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace deltacpp::bench {

// ---------------------------------------------------------------------------------------------
// Arguments

inline std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

/// Parses `--name value` pairs: `--dir` sets `*dir`, the options named in `ints` take an
/// integer value. False (after printing why, except for --help / -h) when the arguments are not
/// usable.
inline bool ParseFlags(int argc, char** argv, std::string* dir,
                       std::initializer_list<std::pair<std::string_view, int64_t*>> ints) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return false;
    if (i + 1 >= argc) {
      fmt::print(stderr, "missing value for {}\n", arg);
      return false;
    }
    std::string_view value = argv[++i];
    if (arg == "--dir") {
      *dir = std::string(value);
      continue;
    }
    auto n = ParseInt(value);
    if (!n) {
      fmt::print(stderr, "{} needs an integer, got '{}'\n", arg, value);
      return false;
    }
    auto option = std::find_if(ints.begin(), ints.end(),
                               [&](const auto& named) { return named.first == arg; });
    if (option == ints.end()) {
      fmt::print(stderr, "unknown option {}\n", arg);
      return false;
    }
    *option->second = *n;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The working directory and its table

/// Where a benchmark keeps its table: the --dir it was given (made absolute) or, when none was,
/// a fresh temporary directory that is removed again on destruction.
class WorkDir {
 public:
  WorkDir() = default;
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  ~WorkDir() {
    std::error_code ec;
    if (temporary_) std::filesystem::remove_all(path_, ec);
  }

  /// `requested` when not empty, else a new directory `<tmp>/<prefix>.XXXXXX`. False (after
  /// printing why) when the temporary directory cannot be made.
  bool Init(const std::string& requested, const std::string& prefix) {
    if (!requested.empty()) {
      path_ = std::filesystem::absolute(requested);
      return true;
    }
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (!mkdtemp(tmpl.data())) {
      fmt::print(stderr, "cannot create a temporary directory\n");
      return false;
    }
    path_ = tmpl;
    temporary_ = true;
    return true;
  }

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  bool temporary_ = false;
};

inline std::string ReadSmallFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool WriteSmallFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  return static_cast<bool>(out.flush());
}

/// Name of the file recording the shape of the table a benchmark generated in its directory.
inline constexpr const char* kMarkerName = "bench-shape.txt";

/// Makes `dir` hold a table of shape `shape` (the text recorded in its marker file), running
/// `generate` in a child process when the directory does not hold one already, so that the
/// generator's memory does not count towards the measured peak RSS. Only call this while the
/// calling process has no threads. Returns false (after printing why) when that is impossible.
/// Sets `*generated_s` to the generation time, or -1 when the table was reused.
inline bool PrepareTable(const std::filesystem::path& dir, const std::string& shape,
                         const std::function<arrow::Status()>& generate, double* generated_s) {
  namespace fs = std::filesystem;
  const fs::path marker = dir / kMarkerName;
  std::error_code ec;
  if (fs::exists(marker, ec)) {
    if (ReadSmallFile(marker) == shape) {
      *generated_s = -1;
      return true;
    }
    // A table this program generated with another shape (or left half-written): replace it.
    fs::remove_all(dir, ec);
    if (ec) {
      fmt::print(stderr, "cannot clear {}: {}\n", dir.string(), ec.message());
      return false;
    }
  } else if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    fmt::print(stderr, "{} is not empty and holds no {}; refusing to overwrite it\n",
               dir.string(), kMarkerName);
    return false;
  }
  fs::create_directories(dir, ec);
  if (ec || !WriteSmallFile(marker, "incomplete\n")) {
    fmt::print(stderr, "cannot create {}\n", marker.string());
    return false;
  }

  const auto start = std::chrono::steady_clock::now();
  // Nothing in this process has started a thread yet, so forking is safe.
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    fmt::print(stderr, "fork failed\n");
    return false;
  }
  if (pid == 0) {
    auto st = generate();
    if (!st.ok()) fmt::print(stderr, "generation failed: {}\n", st.ToString());
    fflush(stderr);
    _exit(st.ok() ? 0 : 1);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "table generation in {} failed\n", dir.string());
    return false;
  }
  *generated_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!WriteSmallFile(marker, shape)) {
    fmt::print(stderr, "cannot write {}\n", marker.string());
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Measuring and reporting

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

/// CPU seconds (user + system) this process has used so far, all threads.
inline double CpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(ru.ru_utime) + seconds(ru.ru_stime);
}

inline double PeakRssMiB() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

/// The runs, each multiplied by `scale`, with one decimal, separated by spaces.
inline std::string FormatRuns(const std::vector<double>& runs, double scale = 1) {
  std::string out;
  for (double r : runs) out += fmt::format("{}{:.1f}", out.empty() ? "" : " ", r * scale);
  return out;
}

/// Outcome of a run in a fresh process: what the run returned and the process's peak RSS.
template <typename T>
struct ColdResult {
  T value{};
  double peak_rss_mib = 0;
};

/// Runs `fn` (returning std::optional<T>, nullopt on failure; T trivially copyable) in a child
/// process, so that it starts without warmed-up memory, thread pools or caches of its own. Only
/// call this while the calling process has no threads.
template <typename F, typename T = typename std::invoke_result_t<F>::value_type>
std::optional<ColdResult<T>> RunInFreshProcess(F fn) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    close(fds[0]);
    const std::optional<T> value = fn();
    bool ok = value.has_value();
    if (ok) {
      const ColdResult<T> r{*value, PeakRssMiB()};
      ok = write(fds[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
    }
    fflush(stderr);
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  ColdResult<T> r;
  const ssize_t n = read(fds[0], &r, sizeof r);
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      n != static_cast<ssize_t>(sizeof r)) {
    return std::nullopt;
  }
  return r;
}


// ---------------------------------------------------------------------------------------------
// Additions for benchmarks with string options and many samples

/// As ParseFlags, and the options named in `strings` take a text value.
inline bool ParseFlagsWithStrings(
    int argc, char** argv, std::string* dir,
    std::initializer_list<std::pair<std::string_view, int64_t*>> ints,
    std::initializer_list<std::pair<std::string_view, std::string*>> strings) {
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto option = std::find_if(strings.begin(), strings.end(),
                               [&](const auto& named) { return named.first == arg; });
    if (option == strings.end()) {
      rest.push_back(argv[i]);
      continue;
    }
    if (i + 1 >= argc) {
      fmt::print(stderr, "missing value for {}\n", arg);
      return false;
    }
    *option->second = argv[++i];
  }
  return ParseFlags(static_cast<int>(rest.size()), rest.data(), dir, ints);
}

/// The nearest-rank percentile `p` (0 < p <= 100) of `v`; 0 for an empty vector.
inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return v[std::min(index, v.size() - 1)];
}

inline double Max(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

/// Runs `fn` (returning std::optional<std::vector<double>>, nullopt on failure) in a child
/// process and returns the values it produced, or nullopt when it failed. Only call this while
/// the calling process has no threads.
template <typename F>
std::optional<std::vector<double>> RunSamplesInFreshProcess(F fn) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    close(fds[0]);
    const std::optional<std::vector<double>> values = fn();
    bool ok = values.has_value();
    if (ok) {
      const char* p = reinterpret_cast<const char*>(values->data());
      size_t left = values->size() * sizeof(double);
      while (ok && left > 0) {
        const ssize_t n = write(fds[1], p, left);
        ok = n > 0;
        if (ok) {
          p += n;
          left -= static_cast<size_t>(n);
        }
      }
    }
    fflush(stdout);
    fflush(stderr);
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  std::string bytes;
  char buf[65536];
  while (true) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      bytes.size() % sizeof(double) != 0) {
    return std::nullopt;
  }
  std::vector<double> values(bytes.size() / sizeof(double));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

}  // namespace deltacpp::bench
