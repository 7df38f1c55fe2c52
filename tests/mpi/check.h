// Minimal check helper for the MPI tests: counts checks, prints failures
// with the current context and the seed, and turns the global failure count
// into the exit code. No GoogleTest: every test here is a plain MPI program.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "starforest.h"

namespace stft {

class Checker {
 public:
  // name: printed in the summary line ("test_ops: N checks passed").
  Checker(const char *name, std::uint64_t seed);
  // The usual start of a test program: the seed from the command line or
  // the environment (parse_seed, default dflt) and a 280 s watchdog.
  Checker(const char *name, int argc, char **argv, std::uint64_t dflt);

  // Free-form description of what is being tested right now; printed with
  // every failure (graph, unit, op, operation, form). STF_TEST_TRACE=1 also
  // prints each new one with the time since start (where a slow or hung
  // run is).
  void context(const std::string &ctx);
  const std::string &context() const { return context_; }
  std::uint64_t seed() const { return seed_; }
  int rank() const { return rank_; }

  // Record one check. On failure prints "[rank r] FAIL <context>: <msg>".
  bool check(bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
  void pass() { ++passed_; }  // a compound check that found nothing wrong
  // Check a return code: got must equal want; prints both names and the
  // library's last error message otherwise.
  bool code(int got, int want, const char *what);
  // got must be one of want1/want2 (for contract points that allow either).
  bool code_either(int got, int want1, int want2, const char *what);
  // A failing call must leave a message behind.
  bool has_message(const char *what);

  long long passed() const { return passed_; }
  long long failed() const { return failed_; }

  // Collective over MPI_COMM_WORLD: sums the counts, prints the summary on
  // rank 0 and returns the process exit code (0 iff nothing failed anywhere).
  int finish();

 private:
  std::string name_;
  std::string context_;
  std::uint64_t seed_;
  int rank_ = 0;
  long long passed_ = 0;
  long long failed_ = 0;
  int printed_ = 0;  // failure lines printed by this rank (capped)
  bool trace_ = false;
  double start_ = 0;
};

// What print (stf_view, stf_explain: rank 0 writes, the others nothing)
// writes into a temporary file, as text; print's return code is checked
// (STF_SUCCESS) under the name what. Collective as print is.
std::string captured(Checker &ck, const std::function<int(std::FILE *)> &print, const char *what);

// Seed from "--seed N" / "--seed=N" on the command line, else the
// STF_TEST_SEED environment variable, else dflt. Rank 0's value is broadcast
// so all ranks agree even if the environment differs.
std::uint64_t parse_seed(int argc, char **argv, std::uint64_t dflt);
// Integer option "--name N" / "--name=N" or environment variable env, else dflt.
long parse_long(int argc, char **argv, const char *name, const char *env, long dflt);

// Abort the whole job (with the seed in the message) if the test runs longer
// than `seconds` (env STF_TEST_TIMEOUT overrides): a hang in a collective
// should fail fast and say how to reproduce, not wait for CTest's timeout.
void start_watchdog(const char *test, std::uint64_t seed, int seconds);

}  // namespace stft
