// starforest.PreparedRequest: a bcast or reduce made once (stf_bcast_init,
// stf_reduce_init) and started many times. It keeps its SF and arrays alive
// until free, so the library never touches memory Python has freed.
#pragma once

#include "buffer.h"

namespace stfpy {

struct Prepared {
  using EndFn = int (*)(stf_sf sf, stf_request *req);
  stf_request req = nullptr;
  stf_sf sf = nullptr;
  EndFn end_fn = nullptr;
  bool started = false;
  nb::object owner;  // the Python SF
  nb::object arrays[2];
  Buffer buffers[2];

  Prepared() = default;
  Prepared(const Prepared &) = delete;
  Prepared &operator=(const Prepared &) = delete;
  ~Prepared();
  void start();
  void end();
  bool test();  // stf_test: ended (true) or still in flight
  void free();

 private:
  void need_prepared() const;
};

// The Python object of a prepared request that make(&req) made, holding
// the buffers (in the order of arrays) and keeping owner and arrays alive.
template <class Make>
nb::object prepare_request(nb::handle owner, stf_sf sf, Prepared::EndFn end, Buffer *buffers,
                           std::initializer_list<nb::handle> arrays, Make &&make) {
  stf_request req = nullptr;
  run([&] { return make(&req); });
  auto *p = new Prepared;
  p->req = req, p->sf = sf, p->end_fn = end, p->owner = nb::borrow(owner);
  int i = 0;
  for (nb::handle h : arrays) p->arrays[i] = nb::borrow(h), p->buffers[i] = std::move(buffers[i]), ++i;
  return nb::cast(p, nb::rv_policy::take_ownership);
}

void bind_prepared(nb::module_ &m);

}  // namespace stfpy
