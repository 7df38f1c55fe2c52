// starforest.Request: an operation in flight (of an SF or an app object).
// It keeps its owner and arrays alive until end, so the library never writes
// into memory Python has freed.
#pragma once

#include <initializer_list>

#include "buffer.h"

namespace stfpy {

struct Request {
  using EndFn = int (*)(void *handle, stf_request *req);
  using TestFn = int (*)(void *handle, stf_request *req, int *done);
  stf_request req = nullptr;
  void *handle = nullptr;   // the stf_sf (or app object) the operation runs on
  EndFn end_fn = nullptr;
  TestFn test_fn = nullptr;  // an SF's operations only (stf_test)
  nb::object owner;         // the Python object of handle
  nb::object arrays[3];
  Buffer buffers[3];

  Request() = default;
  Request(const Request &) = delete;
  Request &operator=(const Request &) = delete;
  ~Request();
  void end();
  bool test();  // stf_test: ended (true) or still in flight

 private:
  void release();
};

// Start an operation with start(&req) and return its Request, which takes
// the buffers (in the order of arrays) and keeps owner and arrays alive.
template <class Start>
nb::object begin_request(nb::handle owner, void *handle, Request::EndFn end, Buffer *buffers,
                         std::initializer_list<nb::handle> arrays, Start &&start) {
  stf_request req = nullptr;
  run([&] { return start(&req); });
  auto *r = new Request;
  r->req = req, r->handle = handle, r->end_fn = end, r->owner = nb::borrow(owner);
  int i = 0;
  for (nb::handle h : arrays) r->arrays[i] = nb::borrow(h), r->buffers[i] = std::move(buffers[i]), ++i;
  return nb::cast(r, nb::rv_policy::take_ownership);
}

void bind_request(nb::module_ &m);

}  // namespace stfpy
