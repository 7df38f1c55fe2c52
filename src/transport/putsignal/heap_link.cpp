// The heap links (heap_link.h): each step is a load or a store on the ring.
#include "transport/putsignal/heap_link.h"

#include <cstring>

namespace stf::putsignal {

bool HeapSendLink::writable(std::uint64_t n, std::uint64_t previous) { return credits_.writable(ring_, n, previous); }

char *HeapSendLink::in_place(std::uint64_t n, std::uint64_t previous) {
  return credits_.writable(ring_, n, previous) ? ring_.region(n) : nullptr;
}

int HeapSendLink::write(std::uint64_t n, const void *packed, std::size_t bytes) {
  if (packed) std::memcpy(ring_.region(n), packed, bytes);
  ring_.publish(n, bytes);
  return STF_SUCCESS;
}

int HeapSendLink::mark(std::uint64_t n, std::size_t bytes) {
  ring_.publish(n, bytes, true);
  return STF_SUCCESS;
}

bool HeapReceiveLink::arrived(std::uint64_t n) { return ring_.arrived(n); }

int HeapReceiveLink::return_credit(std::uint64_t n) {
  ring_.consumed(n);
  return STF_SUCCESS;
}

}  // namespace stf::putsignal
