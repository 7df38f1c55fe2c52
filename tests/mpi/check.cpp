#include "check.h"

#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace stft {

namespace {
constexpr int kMaxPrinted = 25;  // per rank: enough to diagnose, not a flood
char watchdog_message[256];
// The checker's context, as a line for the watchdog to print: where it hung.
char watchdog_context[512];

void on_alarm(int) {
  // Only async-signal-safe calls here.
  ssize_t ignored = write(2, watchdog_message, std::strlen(watchdog_message));
  ignored = write(2, watchdog_context, strnlen(watchdog_context, sizeof watchdog_context));
  (void)ignored;
  _exit(3);
}
}  // namespace

Checker::Checker(const char *name, std::uint64_t seed) : name_(name), seed_(seed) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  const char *trace = std::getenv("STF_TEST_TRACE");
  trace_ = trace && std::strcmp(trace, "1") == 0;
  start_ = MPI_Wtime();
}

void Checker::context(const std::string &ctx) {
  if (trace_ && ctx != context_) std::fprintf(stderr, "[rank %d] %.3f s: %s\n", rank_, MPI_Wtime() - start_, ctx.c_str());
  context_ = ctx;
  std::snprintf(watchdog_context, sizeof watchdog_context, "[rank %d] in: %s\n", rank_, ctx.c_str());
}

Checker::Checker(const char *name, int argc, char **argv, std::uint64_t dflt)
    : Checker(name, parse_seed(argc, argv, dflt)) {
  start_watchdog(name, seed_, 280);
}

bool Checker::check(bool ok, const char *fmt, ...) {
  if (ok) {
    ++passed_;
    return true;
  }
  ++failed_;
  if (printed_ < kMaxPrinted) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "[rank %d] FAIL %s (seed=%llu) [%s]: %s\n", rank_, name_.c_str(),
                 static_cast<unsigned long long>(seed_), context_.c_str(), msg);
    if (++printed_ == kMaxPrinted)
      std::fprintf(stderr, "[rank %d] further failures not printed\n", rank_);
  }
  return false;
}

bool Checker::code(int got, int want, const char *what) {
  return check(got == want, "%s returned %s, expected %s (message: \"%s\")", what,
               stf_error_name(got), stf_error_name(want), stf_last_error_message());
}

bool Checker::code_either(int got, int want1, int want2, const char *what) {
  return check(got == want1 || got == want2, "%s returned %s, expected %s or %s (message: \"%s\")",
               what, stf_error_name(got), stf_error_name(want1), stf_error_name(want2),
               stf_last_error_message());
}

bool Checker::has_message(const char *what) {
  const char *m = stf_last_error_message();
  return check(m != nullptr && m[0] != '\0', "%s: stf_last_error_message() is empty", what);
}

int Checker::finish() {
  long long local[2] = {passed_, failed_}, global[2] = {0, 0};
  MPI_Allreduce(local, global, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) {
    if (global[1] == 0)
      std::printf("%s: %lld checks passed\n", name_.c_str(), global[0]);
    else
      std::printf("%s: %lld checks FAILED, %lld passed (seed=%llu)\n", name_.c_str(), global[1],
                  global[0], static_cast<unsigned long long>(seed_));
    std::fflush(stdout);
  }
  return global[1] == 0 ? 0 : 1;
}

static const char *find_arg(int argc, char **argv, const char *name) {
  std::size_t len = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, len) != 0) continue;
    if (argv[i][len] == '=') return argv[i] + len + 1;
    if (argv[i][len] == '\0' && i + 1 < argc) return argv[i + 1];
  }
  return nullptr;
}

std::uint64_t parse_seed(int argc, char **argv, std::uint64_t dflt) {
  unsigned long long seed = dflt;
  const char *s = find_arg(argc, argv, "--seed");
  if (!s) s = std::getenv("STF_TEST_SEED");
  if (s && *s) seed = std::strtoull(s, nullptr, 0);
  MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  return seed;
}

std::string captured(Checker &ck, const std::function<int(std::FILE *)> &print, const char *what) {
  std::FILE *f = std::tmpfile();
  if (!ck.check(f != nullptr, "tmpfile for %s", what)) return "";
  ck.code(print(f), STF_SUCCESS, what);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::fclose(f);
  return text;
}

long parse_long(int argc, char **argv, const char *name, const char *env, long dflt) {
  long v = dflt;
  const char *s = find_arg(argc, argv, name);
  if (!s && env) s = std::getenv(env);
  if (s && *s) v = std::strtol(s, nullptr, 0);
  MPI_Bcast(&v, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return v;
}

void start_watchdog(const char *test, std::uint64_t seed, int seconds) {
  if (const char *s = std::getenv("STF_TEST_TIMEOUT")) seconds = std::atoi(s);
  if (seconds <= 0) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::snprintf(watchdog_message, sizeof watchdog_message,
                "[rank %d] %s: TIMEOUT after %d s (hang?) seed=%llu\n", rank, test, seconds,
                static_cast<unsigned long long>(seed));
  std::signal(SIGALRM, on_alarm);
  alarm(static_cast<unsigned>(seconds));
}

}  // namespace stft
