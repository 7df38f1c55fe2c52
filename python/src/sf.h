// starforest.SF: one stf_sf with what the binding checks arrays against.
#pragma once

#include <cstdint>
#include <exception>

#include "common.h"

namespace stfpy {

struct SF {
  stf_sf sf = nullptr;
  bool owned = true;        // false: a multi-SF or an app's SF, destroyed by its owner
  nb::object owner;         // keeps the owner of a borrowed SF alive
  nb::object comm;          // the mpi4py communicator it was created on
  SF *multi = nullptr;      // the wrapper handed out for this SF's multi-SF
  SF *multi_of = nullptr;   // for a multi-SF's wrapper: the SF it belongs to
  stf_int nroots = -1;      // -1: no graph
  stf_int leafspan = 0;     // maxleaf + 1: entries a leaf array needs
  int64_t nmulti = -1;      // multi-roots (sum of degrees), once known
  bool agree = false;       // -stf_debug 1: argument checks agreed over the communicator

  SF() = default;
  SF(const SF &) = delete;
  SF &operator=(const SF &) = delete;
  ~SF();

  // The handle; starforest.Error if the SF was destroyed.
  stf_sf handle() const;
  // Read nroots and the leaf range again (after the graph changed).
  void refresh();
  // Run the local argument checks of a collective call. With agree, every
  // rank learns whether some rank's checks failed (one allreduce) and
  // raises ValueError too; without, only the rank with bad input raises.
  template <class F>
  void checked(const char *call, F &&checks) const {
    if (!agree) return checks();
    std::exception_ptr err;
    try {
      checks();
    } catch (...) {
      err = std::current_exception();
    }
    agree_on(call, err);
  }
  // Rethrows err; raises ValueError when err is empty but another rank failed.
  void agree_on(const char *call, std::exception_ptr err) const;
  void destroy();
};

// A Python SF for handle h (owned: destroyed with the object), on comm,
// inheriting agree.
nb::object wrap_sf(stf_sf h, nb::handle comm, bool agree, bool owned = true, nb::handle owner = nb::handle());
// Keep comm's shared duplicate alive for the life of comm (see sf.cpp): call
// before creating anything on a communicator from Python. Collective the
// first time for a communicator.
void keep_comm(MPI_Comm comm);
// -stf_debug as set for new SFs (environment, then starforest.set_options).
bool default_debug();
// The value of -stf_debug in an options string already accepted by the
// library, or current when the string does not set it.
bool debug_in(const char *options, bool current);

}  // namespace stfpy
