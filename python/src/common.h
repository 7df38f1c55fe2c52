// What every file of the binding shares: errors, MPI handles from mpi4py
// objects, and the functions that add each part to the module.
#pragma once

#include <mpi.h>
#include <nanobind/nanobind.h>

#include <string>

#include "starforest.h"

namespace nb = nanobind;

namespace stfpy {

// A failed starforest call, raised in Python as starforest.Error with the
// library's code and message.
struct Failure {
  int code;
  std::string message;
};

// Throw Failure for rc != STF_SUCCESS, with stf_last_error_message (core
// and apps calls alike).
void check(int rc);
[[noreturn]] void fail(int code, const std::string &message);

// Run call() (a library call returning stf_error) without the GIL; raise on error.
template <class F>
void run(F &&call) {
  int rc;
  {
    nb::gil_scoped_release unlocked;
    rc = call();
  }
  check(rc);
}

// True after MPI_Finalize: destructors then leave the library alone.
bool mpi_finalized();

// MPI handles inside mpi4py objects (through mpi4py's C API). to_op also
// takes an op's name ("sum", "replace", ...); None gives fallback.
MPI_Comm to_comm(nb::handle comm);
MPI_Op to_op(nb::handle op, MPI_Op fallback);
// A new mpi4py Comm object for comm (not freed by mpi4py).
nb::object from_comm(MPI_Comm comm);

void bind_errors(nb::module_ &m);
void bind_mpi(nb::module_ &m);
void bind_buffers(nb::module_ &m);
void bind_sf(nb::module_ &m);
void bind_device(nb::module_ &m);
void bind_apps(nb::module_ &m);
void bind_bench(nb::module_ &m);

}  // namespace stfpy
