// starforest.PreparedRequest.
#include "prepared.h"

namespace stfpy {

void Prepared::need_prepared() const {
  if (!req) fail(STF_ERR_REQUEST, "the prepared request has been freed");
}

void Prepared::start() {
  need_prepared();
  run([&] { return stf_start(sf, &req); });
  started = true;
}

void Prepared::end() {
  need_prepared();
  started = false;  // a failed end leaves the request prepared, not in flight, as a completed one
  run([&] { return end_fn(sf, &req); });
}

bool Prepared::test() {
  need_prepared();
  int done = 0;
  run([&] { return stf_test(sf, &req, &done); });
  if (done) started = false;
  return done != 0;
}

void Prepared::free() {
  need_prepared();
  run([&] { return stf_request_free(sf, &req); });
  owner.reset();
  for (int i = 0; i < 2; ++i) arrays[i].reset(), buffers[i] = Buffer();
}

// Dropped without free: ended and freed here (errors cannot be raised from a destructor).
Prepared::~Prepared() {
  if (!req || mpi_finalized()) return;
  nb::gil_scoped_release unlocked;
  if (started) end_fn(sf, &req);
  stf_request_free(sf, &req);
}

void bind_prepared(nb::module_ &m) {
  nb::class_<Prepared>(m, "PreparedRequest",
                       "A bcast or reduce made once on the same arrays (SF.bcast_init, SF.reduce_init): start() "
                       "begins it, end() or test() ends it and leaves it prepared, free() releases it; as a "
                       "context manager, freed at exit.")
      .def("start", &Prepared::start, "Begin the operation on the arrays' current values (collective, as a begin).")
      .def("end", &Prepared::end, "Complete the started operation; the request stays prepared.")
      .def("test", &Prepared::test,
           "Whether the started operation has completed, without waiting (stf_test): True ends it as end() would.")
      .def("free", &Prepared::free, "Release the request (not while started); the SF may then be reset or destroyed.")
      .def_prop_ro("active", [](const Prepared &p) { return p.started; },
                   "Whether an operation is in flight (started and not yet ended).")
      .def_prop_ro("freed", [](const Prepared &p) { return p.req == nullptr; }, "Whether free() has released it.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](Prepared &p, nb::args) {
        if (p.req && p.started) p.end();
        if (p.req) p.free();
      });
}

}  // namespace stfpy
